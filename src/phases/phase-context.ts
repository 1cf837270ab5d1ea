import type { HydraflowConfig } from '@hydraflow/core';
import type { GroomingPort, Issue, IssuesPort, PullsPort } from '@hydraflow/github';
import type { EarlyCall, ModelGateway } from '../agents/model-gateway';
import type { IssueSession } from '../session/issue-session';
import type { DaySpend } from '../budget/day-spend';
import type { Memory } from '../memory/memory';
import type { AgentJobResult } from '../inputs';

/** Everything a phase needs, built once by the entry and handed in: phases never read the environment themselves. */
export interface PhaseContext {
  issue: Issue;
  session: IssueSession;
  models: ModelGateway;
  /** The repository's day (budgets.per_day), when a daily limit is set. */
  daySpend: DaySpend | undefined;
  /** The repository's memory (docs/adr/0015-memory-store.md), when memory.enabled; absent in hand-made contexts. */
  memory?: Memory;
  /** The phase's model call, already started before the session opened (early-calls.ts, or the phase itself), if it was. */
  early?: EarlyCall;
  config: HydraflowConfig;
  /** Where the next phase is dispatched: the user's workflow file and the default branch. */
  next: { workflow: string; ref: string };
  /** Whether this run can run `phase` itself, right after the current one, instead of dispatching it (next-phase.ts). */
  canContinueWith: (phase: string) => boolean;
  /** The human whose action started this chain (carried across dispatches for the record; it grants nothing). */
  actor: string | undefined;
  /** True when a human explicitly asked for this phase (e.g. /triage): redo work even if state says it is done. */
  forced: boolean;
  /**
   * Started by the hourly sweep (handlers/sweep.ts) for an issue that still carries hydraflow-find: a triage its run
   * could not start (GitHub's rate limit) or could not finish. Not a human's go: untrusted state stays held.
   */
  swept?: boolean;
  /**
   * The stage label a cut move left beside the state's stage, taken off by this run before its phase started
   * (handlers/phase.ts finishCutMove): `issue.labels` no longer shows it, and the phase knows the cut was there.
   */
  cutFinished?: string;
  /**
   * The comment that started this run (a slash command, or a reply the router sent to the phase, such as a reply to
   * shape's directions): handled once per comment (handlers/phase.ts); the phase reads it from `session.comments`.
   */
  comment?: number;
  /**
   * GITHUB_WORKSPACE: where the repository's files are — the job's checkout, or fetched there by HydraFlow when the job
   * left it empty. Every phase that reads code awaits `workingTreeOf(ctx)` (src/runner/working-tree.ts) first.
   */
  workspace: string;
  /** Issue comments beyond the progress comment (the plan comment): plan and review need it. */
  issues: IssuesPort;
  /** Pull requests and reviews: the review phase needs it. */
  pulls: PullsPort;
  /** Where pull requests are opened: as the push token's identity when one is set (app.ts says why). */
  pullsToOpen: PullsPort;
  /** Grooming's GraphQL reads and sub-issue creation. */
  grooming: GroomingPort;
  /** RUNNER_TEMP: where the implement steps hand each other their files. */
  tempDir: string;
  /**
   * The repository's git URL, derived from GITHUB_SERVER_URL and the repository name — never read from .git/config,
   * which the agent's commands could have rewritten to send the push token elsewhere.
   */
  remoteUrl: string;
  /** This repository, `owner/name` (GITHUB_REPOSITORY): HydraFlow's pull requests have their head branch here. */
  repository: string;
  /**
   * Makes sure `requests` GitHub requests are left in the token's hourly budget before the phase writes anything: waits
   * for the reset when that fits the run, else throws RateLimitedError (ADR 0014). Optional: tests' hand-made contexts.
   */
  ensureRequests?: (requests: number, what: string) => Promise<void>;
  /** Token for git fetch/push (the push token if one is configured, else the GitHub token); never given to agents. */
  gitToken: string | undefined;
  /**
   * The publish step's view of the agent job before it: its result (input agent-result), this run's page, and the key
   * its model proxy signed the count of its model calls with (input meter-key; absent with an older template).
   */
  agentJob?: { result: AgentJobResult | undefined; runUrl: string; meterKey?: string };
}

/** What a phase reports back to the entry, for outputs, the job summary and logs. */
export interface PhaseOutcome {
  /** Short, one line. */
  summary: string;
  stage: string | null;
  /** The run should fail (red X) so the problem is visible in the Actions UI too. */
  failed?: boolean;
  /** Markdown for the job summary. */
  details?: string;
  /** Step outputs for the workflow (e.g. `agent: implement` starts the agent step). */
  outputs?: Record<string, string>;
  /** The phase this run goes on with (started by `startNextPhase`, which found it can run here). */
  continueWith?: string;
  /** That phase's first model call, already begun by this one (adopted by key, else cancelled): the review after publish. */
  nextCall?: EarlyCall;
  /** The phases this step ran, in order, with their wall-clock spans (epoch ms): for outputs and the job summary. */
  phases?: PhaseSpan[];
}

export interface PhaseSpan {
  phase: string;
  startedAt: number;
  endedAt: number;
}

/** The spans, machine-readable in a job summary (hidden in the rendered markdown), for tools that read summaries. */
export function phaseSpansBlock(spans: readonly PhaseSpan[]): string {
  return `<!-- hydraflow:phases ${JSON.stringify(spans)} -->`;
}

/** The spans `phaseSpansBlock` wrote into `text` (a job summary); none when it holds no block. */
export function readPhaseSpans(text: string | undefined): PhaseSpan[] {
  const m = /<!-- hydraflow:phases (\[.*?\]) -->/.exec(text ?? '');
  return m ? (JSON.parse(m[1]!) as PhaseSpan[]) : [];
}
