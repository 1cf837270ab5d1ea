/**
 * The clear-issue lifecycle, shared by `pnpm demo` and `pnpm bench`: the world and the RECORDED model answers of
 * tests/lifecycle/scenario.ts (imported, not copied), the real workflow template run by the lifecycle simulator, the
 * built dist/, and a real bare git remote with a sample project whose tests really run. Opened → triage → plan →
 * implement (agent session + publish) → review → alice approves → merge.
 *
 * Runs under plain tsx: tsx's loader already accepts @actions/workflow-parser's JSON imports without import attributes
 * (vitest needs `server.deps.inline` for them; tsx does not), so no loader hook is needed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeStateBlock, ledgerTotals, type LedgerEntry } from '@hydraflow/core';
import {
  BOT_LOGIN,
  TEST_STATE_KEY,
  type JobRecord,
  type Script,
  type ScriptValue,
  type StepRecord,
} from '@hydraflow/testkit';
import { AVERAGE_ISSUE, clearIssueScript, lifecycleWorld, type LifecycleWorld } from '../../tests/lifecycle/scenario';
import { readPhaseSpans } from '../../src/phases/phase-context';

export { AVERAGE_ISSUE };

export interface ClearLifecycle {
  world: LifecycleWorld;
  issue: number;
  pull: number;
  /** jobs until quiet after the issue opened, then jobs after alice's approval */
  before: JobRecord[];
  after: JobRecord[];
  /** dispatch of issues.opened → quiet after the merge run (world setup excluded, everything else included) */
  wallMs: number;
  startedAt: number;
  endedAt: number;
  /** index in gh.requests of alice's approval (a human's request, not HydraFlow's) */
  approvalIndex: number;
}

/** Every recorded answer, with `latencyMs` when given (the model server sleeps that long before answering). */
function recordedScript(latencyMs: number): Script {
  const slow = (value: ScriptValue): ScriptValue => {
    if (latencyMs <= 0) return value;
    if (typeof value === 'function') return (request) => ({ ...value(request), latencyMs });
    return Array.isArray(value) ? value.map((e) => ({ ...e, latencyMs })) : { ...value, latencyMs };
  };
  return Object.fromEntries(Object.entries(clearIssueScript()).map(([role, value]) => [role, slow(value)]));
}

/** Runs the whole lifecycle; the caller closes `world`. Throws (after closing) if the pull request did not merge. */
export async function runClearLifecycle(
  options: {
    latencyMs?: number;
    /** every GitHub request's added latency (the emulator answers at once otherwise) */
    githubLatencyMs?: number;
    onJob?: (job: JobRecord) => void;
    actionRoot?: string;
  } = {},
): Promise<ClearLifecycle> {
  // another version of HydraFlow runs with its own template when it has one (bench/lib/lifecycle-ab.ts)
  const template = options.actionRoot && join(options.actionRoot, 'workflows-templates/hydraflow.yml');
  const world = await lifecycleWorld(
    recordedScript(options.latencyMs ?? 0),
    {},
    options.actionRoot
      ? {
          actionRoot: options.actionRoot,
          ...(template && existsSync(template)
            ? { sample: { hydraflowWorkflow: readFileSync(template, 'utf8') } }
            : {}),
        }
      : {},
  );
  try {
    world.gh.faults.latencyMs = options.githubLatencyMs ?? 0;
    const startedAt = Date.now();
    const t0 = performance.now();
    const issue = world.gh.world.issue({ ...AVERAGE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const before = await world.lc.runUntilQuiet();
    const pull = [...world.gh.world.pulls.values()][0];
    if (!pull) throw new Error('no pull request was opened');
    const approvalIndex = world.gh.requests.length;
    await world.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, {
      event: 'APPROVE',
      body: 'Ship it.',
    });
    const after = await world.lc.runUntilQuiet();
    const wallMs = performance.now() - t0;
    if (!world.gh.world.pulls.get(pull.number)!.merged) throw new Error('the pull request did not merge');
    return {
      world,
      issue: issue.number,
      pull: pull.number,
      before,
      after,
      wallMs,
      startedAt,
      endedAt: Date.now(),
      approvalIndex,
    };
  } catch (error) {
    await world.close();
    throw error;
  }
}

/** publish is implement's last step; the agent job's steps are implement's too. */
const asLifecyclePhase = (phase: string) => (phase === 'publish' ? 'implement' : phase);
const inAgentJob = (step: StepRecord) => /actions\/(agent|model-proxy)/.test(step.name);

/**
 * The phase a HydraFlow step was working on at `at` (epoch ms): the phase whose span had not ended yet (a step can go
 * on from one phase into the next), the last one after the last span; the agent step is implement's.
 */
export function phaseAt(step: StepRecord, at: number): string | undefined {
  if (inAgentJob(step)) return 'implement';
  const spans = readPhaseSpans(step.summary);
  const span = spans.find((s) => at <= s.endedAt) ?? spans.at(-1);
  return span ? asLifecyclePhase(span.phase) : undefined;
}

/** What a HydraFlow step did, as phases: "plan+implement", "implement" (agent, publish). */
export function phasesOf(step: StepRecord): string | undefined {
  if (inAgentJob(step)) return 'implement';
  const phases = [...new Set(readPhaseSpans(step.summary).map((s) => asLifecyclePhase(s.phase)))];
  return phases.length ? phases.join('+') : undefined;
}

export const isHydraflowStep = (step: StepRecord) => step.name.startsWith('hydraflow/hydraflow');

/** HydraFlow's GitHub requests (its bot identity; not alice's approval). */
export function hydraflowRequests(run: ClearLifecycle) {
  return run.world.gh.requests.filter((r, i) => r.actor === BOT_LOGIN && i !== run.approvalIndex);
}

/** The signed ledger of the issue's progress comment (the state HydraFlow carries from phase to phase). */
export function finalLedger(run: ClearLifecycle): LedgerEntry[] {
  const progress = run.world.gh.world
    .commentsOn(run.issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!progress) return [];
  const decoded = decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue: run.issue });
  return decoded.status === 'valid' ? decoded.state.ledger : [];
}

export function progressComment(run: ClearLifecycle) {
  return run.world.gh.world
    .commentsOn(run.issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
}

export { ledgerTotals };
