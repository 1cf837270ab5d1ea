/**
 * How a property history is played: a short sequence of human steps on one issue (sometimes two) and, once HydraFlow
 * opened one, its pull request. HydraFlow runs IN-PROCESS through `run(env, { io, fetch })` against a fresh GitHub
 * emulator per history (backed by a real git repository, ./repository.ts) and one shared scripted model server
 * (./scripts.ts). People of every permission level (./people.ts) act through the emulator's REST API with their own
 * token, exactly as on GitHub, and the matching webhook payload is snapshotted at that moment (re-runs and
 * redeliveries replay the snapshot, as GitHub does).
 *
 * A delivery is one attempt of a workflow run as the template lays it out: the routing job, and when it hands the
 * coding agent a task (output `agent=implement`), the agent job (on the start commit, no GitHub token) and the publish
 * job (applies the agent's patch, pushes, opens the pull request, reviews it); the jobs hand each other their files
 * as the artifacts would. A routing job gets a checkout of the repository when its run may work on the tree (a
 * dispatched implement, `/retry`, `/fix`); any other gets the config file alone, which is all it reads.
 *
 * Time: `Date` is faked (timers are real) so a history can let time pass: a step may come "seconds" after the previous
 * one (GitHub's timestamps have whole seconds), "long" after it (more than the 30-minute claim/lock TTL) or an "hour"
 * after it (past shape's 60-minute timeout). When the
 * only live run gets 200 on the 👀 lock (the lock is held by a run that died), nothing but time can free it, so the
 * test's clock jumps 121 s — what a 2-minute wait would see.
 *
 * Crash: a run's `fetch` performs its k-th write (counted over the run's jobs) and then never answers again (the
 * process died right after that write; a *throwing* fetch would instead let the client retry with real sleeps and let
 * HydraFlow's error handling go on writing, which a dead process does not do). A re-run starts again at the job that
 * died (GitHub's "Re-run failed jobs": the agent's artifact is kept).
 *
 * Dispatches: in a world that runs them (`runsDispatches`: all, or the phases listed), every workflow_dispatch HydraFlow
 * sends becomes an event that a later step (or the end of the history) delivers; otherwise it is recorded, not run.
 *
 * Sweep: the template's hourly `schedule` (a `sweep` action) — it resumes hand-offs whose claim expired and triages
 * issues left at hydraflow-find, by dispatch.
 */
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { decodeStateBlock, parseCommand, PIPELINE_LABELS, PROGRESS_MARKER } from '@hydraflow/core';
import {
  BOT_LOGIN,
  MODEL_API_KEY,
  TEST_STATE_KEY,
  buildEvent,
  commitToBranch,
  exampleEvent,
  parseOutputFile,
  runnerEnv,
  type EmulatedComment,
  type EmulatedPull,
  type GitHubEmulator,
  type ModelServer,
} from '@hydraflow/testkit';
import { run, type RunResult } from '../../src/run';
import { createRunnerIO } from '../../src/runner/io';
import { LEVELS, PEOPLE, labels, steers, type Level } from './people';
import { CONFIG, type HistoryRepository } from './repository';

export const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const LONG_GAP_MS = 31 * 60 * 1000;
/** Past shape_timeout_minutes (60 by default): a sweep then escalates a conversation nobody answered. */
const HOUR_GAP_MS = 61 * 60 * 1000;
/** Past the next whole second, at least: a /ship-it "seconds" after a push is written after HydraFlow saw it. */
const SECONDS_GAP_MS = 2_500;
export const isPipeline = (l: string) => (PIPELINE_LABELS as readonly string[]).includes(l);
/** Labels a permitted human sets to send an issue on (hitl and fixed stop it). */
const GO_LABELS = new Set<string>(PIPELINE_LABELS.filter((l) => l !== 'hydraflow-hitl' && l !== 'hydraflow-fixed'));
/** Commands that start work. */
const GO_COMMANDS = new Set(['triage', 'retry', 'groom']);

// ---------------------------------------------------------------------------------------------------------------
// The history model

export type IssueRef = 0 | 1;
export type Gap = 'short' | 'seconds' | 'long' | 'hour';
export type Delivery = 'now' | 'later';
export type Action =
  /** `by` opens it (default: write); `labels` are applied as an issue form applies them, whoever opens it. */
  | { kind: 'open'; issue: IssueRef; labels: string[]; by?: Level }
  | { kind: 'label'; issue: IssueRef; op: 'add' | 'remove'; label: string; deliver: Delivery; by?: Level }
  /** A pending event (only HydraFlow's dispatches, with `dispatch`) is delivered now. */
  | { kind: 'deliver'; pick: number; dispatch?: boolean }
  | { kind: 'rerun'; pick: number; mode: 'attempt' | 'redelivery' }
  /** On the issue, or (`on: 'pull'`) on HydraFlow's pull request for it. */
  | { kind: 'comment'; issue: IssueRef; body: string; by?: Level; on?: 'issue' | 'pull'; deliver?: Delivery }
  | { kind: 'close'; issue: IssueRef }
  /**
   * A HydraFlow run died inside an adversarial stage (the layer on in an earlier configuration) and left the phase's
   * transient label: HydraFlow's own label, never a pipeline label; the next run of a phase that hosts a stage, or the
   * close, takes it off (src/phases/adversarial/running-label.ts).
   */
  | { kind: 'leftover'; issue: IssueRef; phase: 'discover' | 'shape' | 'plan' }
  /** The template's hourly schedule fires (the sweep). */
  | { kind: 'sweep' }
  /** A review of HydraFlow's pull request for issue 0, on its head or on the head before it (a superseded one). */
  | {
      kind: 'review';
      by: Level;
      event: 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT';
      on: 'head' | 'previous';
      deliver: Delivery;
    }
  /** Someone with write access pushes a commit to HydraFlow's branch of issue 0. */
  | { kind: 'push'; by: Level }
  /** CI finished on the head of HydraFlow's branch of issue 0 (workflow_run.completed). */
  | { kind: 'ci' }
  /**
   * A writer changes HydraFlow's progress comment (ADR 0007): puts its first version back (an older genuine block, from
   * the comment's edit history), breaks its block, or deletes it; GitHub's `issue_comment` event (with the text from
   * before) is delivered now or later.
   */
  | { kind: 'tamper'; issue: IssueRef; how: 'older' | 'break' | 'delete'; deliver: Delivery };
export type Op =
  | Action
  /** `b` starts once `a`'s run has made `after` GitHub requests: both runs overlap. */
  | { kind: 'concurrent'; a: Action; b: Action; after: number }
  /** The inner action's run(s) die right after their k-th GitHub write. */
  | { kind: 'crash'; inner: Action; k: number };
export interface Step {
  gap: Gap;
  op: Op;
}
export interface History {
  seed: number;
  provider: 'anthropic' | 'openai';
  /** `product`: triage finds the issue vague every time (the product track's histories). */
  track?: 'product';
  steps: Step[];
  quiesce: { gap: Gap; order: 'crashed-first' | 'pending-first' };
}

// ---------------------------------------------------------------------------------------------------------------
// What the test remembers while it plays a history (the oracle's input)

/** What the humans who may steer last asked of an issue's pipeline membership (invariant 1). */
export type Intent =
  | 'in' // opened (triage labels it), a pipeline label added, or removed while another stays: exactly one label
  | 'out' // the human removed the last pipeline label: zero labels
  | 'either'; // /triage after 'out': it runs (one label) unless refused by a held lock (zero)

export interface CommandComment {
  id: number;
  /** The issue or pull request it was posted on. */
  on: number;
  level: Level;
  name: string;
}

export interface IssueModel {
  number: number;
  author: Level;
  /**
   * When (fake clock, ms) a person who may steer first gave the issue a go: opened it, set a pipeline label that sends
   * it on, or commented a command that starts work. Undefined: nobody did (the outsider rule holds it after triage).
   */
  goAt?: number;
  intent: Intent;
  /** Non-pipeline labels as the humans left them (HydraFlow must never remove one). */
  humanLabels: Set<string>;
  /** Command comments on the issue and its pull request (at most one HydraFlow reply each; none to strangers). */
  commands: CommandComment[];
  /**
   * KNOWN RESIDUAL (reported, not fixed): the issue was closed while another HydraFlow run on it was in flight, or an
   * `issues` payload from before the close was redelivered (new run id, attempt 1) after it. Such a run trusts its
   * payload's "open" and may label the closed issue; the close clean-up cannot see a label added after it ran. And the
   * close run writes the progress comment without the lock (a close is never refused), from the state it read: a run
   * that wrote beside it may lose that write, its spend included (found by invariant 6, fast-check seed 20261127).
   */
  closeRaced: boolean;
  /**
   * KNOWN RESIDUAL (reported, not fixed): a pending run for a human's pipeline-label change was cancelled by the
   * concurrency group (a newer issues event on the issue, e.g. a `bug` label, replaced it). The run that does go
   * ahead only looks at its own event, so nothing reconciles the labels: the issue may keep two pipeline labels.
   */
  eventLost: boolean;
  /**
   * KNOWN RESIDUAL (reported, not fixed): after the human took the issue out of the pipeline, a re-run or redelivery
   * of an event from before that ran triage again (its payload cannot know) and put the issue back in.
   */
  staleAfterOut: boolean;
  /**
   * KNOWN RESIDUAL (reported, not fixed): a human's label change was refused by a held lock — triage does not wait
   * for it, an override gives up after 2 minutes (e.g. on the 👀 of a run that died and is re-run only later) — and
   * nothing applies it afterwards: the labels (two, or none) and the state's stage may disagree.
   */
  refusedByLock: boolean;
  /**
   * KNOWN RESIDUAL (reported, not fixed): in a `concurrent` step a human changed a pipeline label while a run was
   * working on the issue. Labels have no compare-and-swap on GitHub, so the run and the human can undo each other:
   * 0 or 2 labels. (Two HydraFlow runs at once are NOT relaxed: the 👀 lock's take-over is a compare-and-swap on the
   * reaction's id, so they serialise.)
   */
  raced: boolean;
  /** Events recorded before the human's last 'out' (for staleAfterOut). */
  outAfterEvents: number;
  /** The most HydraFlow had counted as spent when a writer changed its progress comment (invariant 6). */
  spentBeforeTamper: number;
}

/** What a crashed publish job's re-run starts from: the routing job's outputs and the agent's result. */
interface Carried {
  issue: string;
  runConfig: string;
  resultDir: string;
}

interface RunAttempt {
  runId: string;
  attempt: number;
  outcome: 'ok' | 'crashed';
  /** Set when the publish job died: a re-run of failed jobs starts there. */
  carried?: Carried;
}

export interface EventRecord {
  /** The issue or pull request the event is about. */
  issue: number;
  name: string;
  payload: Record<string, unknown>;
  runs: RunAttempt[];
  /**
   * `pending`: queued behind the issue's concurrency group (the template's `hydraflow-<issue>` group keeps ONE pending
   * run and cancels older pending ones, so a newer issues event on the same issue makes it `cancelled`).
   */
  status: 'delivered' | 'pending' | 'cancelled';
}

export interface RunLog {
  issue: number;
  label: string;
  crashed: boolean;
  /** The event it ran (its name, and for a comment who wrote it). */
  event: EventRecord;
  /** Model calls this run made (by its own model key). */
  modelCalls: number;
  /** Their roles (the model server's record: triage, discover, shape, ...). */
  modelRoles: string[];
  /** Each job's result, in order (routing, agent, publish). */
  results: (RunResult & { job: string })[];
}

export interface WorldOptions {
  /**
   * Deliver HydraFlow's workflow_dispatch events (else they are recorded, not run): all of them, or those of the phases
   * listed (the pipeline histories run the product track's, and the sweep's triage, but no coding agent).
   */
  runsDispatches: boolean | readonly string[];
}

/** The issue number of an event about no issue (the schedule). */
export const NO_ISSUE = 0;

export class Ctx {
  readonly issues: (IssueModel | undefined)[] = [undefined, undefined];
  readonly events: EventRecord[] = [];
  readonly log: RunLog[] = [];
  /** Routing jobs that handed the coding agent a task: which issue, when (fake clock). */
  readonly agentStarts: { issue: number; at: number }[] = [];
  /** The head of the pull request a comment was written on, when it was written (for /ship-it). */
  readonly headAtComment = new Map<number, string>();
  /** Heads of HydraFlow's pull request for issue 0, in the order they were seen. */
  readonly heads: string[] = [];
  /** Comments a writer deleted (`tamper`), with every version of them: what HydraFlow had written there. */
  readonly deletedComments: EmulatedComment[] = [];
  liveRuns = 0;
  private nextRunId = 5_000;
  private runDirs = 0;
  private dispatchesSeen = 0;
  private pushes = 0;
  constructor(
    readonly gh: GitHubEmulator,
    readonly models: ModelServer,
    readonly history: History,
    readonly tokens: Readonly<Record<Level, string>>,
    readonly dir: string,
    readonly repo: HistoryRepository,
    readonly options: WorldOptions,
  ) {
    gh.onEvent((e) => {
      if (e.name !== 'issue_comment' || e.action !== 'created' || e.issue === undefined) return;
      const pull = gh.world.pulls.get(e.issue);
      if (pull && e.comment !== undefined) this.headAtComment.set(e.comment, pull.head.sha);
    });
  }

  newRunId(): string {
    return String(this.nextRunId++);
  }

  /** A job's runner directory (RUNNER_TEMP, the step's files). */
  runDir(): string {
    const dir = join(this.dir, `run-${this.runDirs++}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  model(number: number): IssueModel | undefined {
    return this.issues.find((i) => i?.number === number);
  }

  async api(method: string, path: string, body?: unknown, as: Level = 'write'): Promise<{ status: number; data: any }> {
    const res = await fetch(`${this.gh.url}/repos/${this.gh.world.owner}/${this.gh.world.repo}${path}`, {
      method,
      headers: {
        authorization: `token ${this.tokens[as]}`,
        accept: 'application/vnd.github+json',
        'content-type': 'application/json',
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, data: text ? JSON.parse(text) : undefined };
  }

  event(
    issue: number,
    name: string,
    action: string,
    overrides: Record<string, unknown> = {},
    deferred = false,
  ): EventRecord {
    const sender = PEOPLE.write.login;
    return this.record(issue, name, buildEvent(this.gh, name, action, { issue, sender, ...overrides }), deferred);
  }

  record(issue: number, name: string, payload: Record<string, unknown>, deferred = false): EventRecord {
    if (name === 'issues') {
      for (const e of this.events) {
        if (e.issue !== issue || e.name !== 'issues' || e.status !== 'pending') continue;
        e.status = 'cancelled';
        const label = (e.payload.label as { name?: string } | undefined)?.name;
        if (label && isPipeline(label)) this.model(issue)!.eventLost = true;
      }
    }
    const record: EventRecord = { issue, name, payload, runs: [], status: deferred ? 'pending' : 'delivered' };
    this.events.push(record);
    return record;
  }

  /** HydraFlow's dispatches since the last look become events to deliver (in a world that runs them). */
  collectDispatches(): void {
    const all = this.gh.world.dispatches;
    for (; this.dispatchesSeen < all.length; this.dispatchesSeen++) {
      const d = all[this.dispatchesSeen]!;
      const runs = this.options.runsDispatches;
      if (runs === false || (Array.isArray(runs) && !runs.includes(String(d.inputs.phase)))) continue;
      const payload = buildEvent(this.gh, 'workflow_dispatch', undefined, {
        inputs: d.inputs,
        ref: d.ref,
        workflow: String(d.workflow_id),
        sender: d.actor,
      });
      this.record(Number(d.inputs.issue), 'workflow_dispatch', payload, true);
    }
  }

  /** HydraFlow's open pull request for issue 0 (fresh from git), if it opened one. */
  pull(): EmulatedPull | undefined {
    const issue = this.issues[0];
    if (!issue) return undefined;
    this.gh.world.refreshFromGit();
    const pull = [...this.gh.world.pulls.values()].find((p) => p.head.ref === `hydraflow/issue-${issue.number}`);
    if (pull && !this.heads.includes(pull.head.sha)) this.heads.push(pull.head.sha);
    return pull;
  }

  /** A human's commit on `branch`, pushed as `level` would (the files are theirs alone). */
  pushAs(level: Level, branch: string): void {
    const { login } = PEOPLE[level];
    const n = ++this.pushes;
    commitToBranch(this.repo.bare, branch, { [`notes/${login}-${n}.md`]: `Note ${n} by ${login}.\n` }, `Note ${n}`, {
      author: { name: login, email: `${login}@example.com` },
      date: Math.floor(Date.now() / 1000),
    });
  }

  /** Human API calls are serialized so each sees the issue as it is (HydraFlow never opens or closes issues). */
  private humanQueue: Promise<unknown> = Promise.resolve();
  human<T>(act: () => Promise<T>): Promise<T> {
    const next = this.humanQueue.then(act);
    this.humanQueue = next.catch(() => {});
    return next;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Playing a history

interface RunControl {
  /** Die right after this many GitHub writes. */
  crashAfter?: number;
  /** Called after each GitHub request the run makes (for `concurrent`). */
  onRequest?: () => void;
}

/** A routing job needs the repository's tree when it may work on it: implement runs (dispatched, or a /retry, /fix). */
function needsCheckout(event: EventRecord): boolean {
  if (event.name === 'workflow_dispatch') return (event.payload.inputs as { phase?: string }).phase === 'implement';
  if (event.name !== 'issue_comment') return false;
  const name = parseCommand((event.payload.comment as { body?: string }).body)?.name;
  return name === 'retry' || name === 'fix';
}

/**
 * Runs one attempt of the workflow on `event` (from the job that died, for a re-run of a crashed publish job);
 * resolves when the run ends or dies.
 */
async function deliver(
  ctx: Ctx,
  event: EventRecord,
  runId: string,
  attempt: number,
  control: RunControl = {},
  resume?: Carried,
): Promise<void> {
  const { history, models, gh } = ctx;
  // Each attempt calls the model with a key of its own, so that calls are charged to the run that made them: a crashed
  // run's process lives on in this one (its parallel grooming agents still call the model after its GitHub side died),
  // which no clock can tell apart from the next run's (seed -489489584).
  const modelKey = `${MODEL_API_KEY}-run-${runId}-${attempt}`;
  const modelInputs = {
    provider: history.provider,
    'base-url': history.provider === 'anthropic' ? models.anthropicBaseUrl : models.openaiBaseUrl,
    [history.provider === 'anthropic' ? 'anthropic-api-key' : 'openai-api-key']: modelKey,
  };
  const githubInputs = { 'github-token': gh.botToken, 'state-key': TEST_STATE_KEY };
  const job = (dir: string, inputs: Record<string, string>, extra: { workspace?: string; config?: boolean } = {}) =>
    runnerEnv(
      {
        gh,
        event: event.name,
        payload: event.payload,
        runId,
        runAttempt: attempt,
        inputs,
        ...(extra.config ? { config: CONFIG } : {}),
        ...(extra.workspace ? { workspace: extra.workspace } : {}),
        env: { GITHUB_SERVER_URL: ctx.repo.serverUrl },
      },
      dir,
    );

  let writes = 0;
  let dead = false;
  let died!: () => void;
  const death = new Promise<'crashed'>((resolve) => (died = () => resolve('crashed')));
  const never = () => new Promise<never>(() => {});
  const crashingFetch: typeof fetch = async (input, init) => {
    if (dead) return never();
    const method = String(init?.method ?? 'GET').toUpperCase();
    const res = await fetch(input, init);
    if (WRITES.has(method) && control.crashAfter !== undefined && ++writes >= control.crashAfter) {
      await res.arrayBuffer();
      dead = true;
      died();
      return never();
    }
    // The lock (👀) is held and no other run of this history is alive: it belongs to a run that died, and only time
    // frees it. Let the 2 minutes an override waits pass at once.
    if (
      method === 'POST' &&
      /\/issues\/\d+\/reactions$/.test(String(input)) &&
      res.status === 200 &&
      ctx.liveRuns === 1
    ) {
      vi.setSystemTime(Date.now() + 121_000);
    }
    control.onRequest?.();
    return res;
  };
  // A run waiting for another's lock waits on the history's fake clock (up to 120 s of it), yielding a moment of real
  // time per step so the runs it waits for can go on.
  const sleep = async (ms: number) => {
    vi.setSystemTime(Date.now() + ms);
    await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const model = ctx.model(event.issue);
  if (model && model.intent !== 'in' && ctx.events.indexOf(event) < model.outAfterEvents) model.staleAfterOut = true;
  const entry: RunLog = {
    issue: event.issue,
    label: `${event.name}.${String(event.payload.action ?? (event.payload.inputs as { phase?: string })?.phase)} #${event.issue} run ${runId}/${attempt}${resume ? ' (publish)' : ''}`,
    crashed: false,
    event,
    modelCalls: 0,
    modelRoles: [],
    results: [],
  };
  ctx.log.push(entry);
  const record: RunAttempt = { runId, attempt, outcome: 'ok' };
  event.runs.push(record);
  const step = async (env: NodeJS.ProcessEnv, name: string, githubSide: boolean) => {
    const outcome = await Promise.race([
      run(env, { io: createRunnerIO(env, () => {}), ...(githubSide ? { fetch: crashingFetch, sleep } : {}) }),
      ...(githubSide ? [death] : []),
    ]);
    if (outcome === 'crashed') return undefined;
    entry.results.push({ ...outcome, job: name });
    return { outcome, outputs: parseOutputFile(readFileSync(env.GITHUB_OUTPUT!, 'utf8')) };
  };

  ctx.liveRuns++;
  try {
    let carried = resume;
    if (!carried) {
      const dir = ctx.runDir();
      const routed = await step(
        job(
          dir,
          { ...githubInputs, ...modelInputs },
          { config: true, ...(needsCheckout(event) ? { workspace: ctx.repo.checkout() } : {}) },
        ),
        'routing',
        true,
      );
      if (!routed) {
        entry.crashed = true;
        record.outcome = 'crashed';
        return;
      }
      const label = (event.payload.label as { name?: string } | undefined)?.name;
      if (model && label && isPipeline(label) && /^(skipped|override not applied):/.test(routed.outcome.message))
        model.refusedByLock = true;
      if (routed.outputs.agent !== 'implement') return;
      const issue = routed.outputs.issue!;
      ctx.agentStarts.push({ issue: Number(issue), at: Date.now() });
      // the agent job: the start commit, the task artifact, the model key (through no proxy here) and no GitHub token
      const agentDir = ctx.runDir();
      cpSync(routed.outputs['task-path']!, join(agentDir, 'hydraflow-task'), { recursive: true });
      const agent = await step(
        job(
          agentDir,
          { phase: 'agent', 'run-config': routed.outputs['run-config']!, ...modelInputs },
          { workspace: ctx.repo.checkout(routed.outputs['start-sha']) },
        ),
        'agent',
        false,
      );
      const resultDir = agent?.outputs['artifact-path'];
      carried = {
        issue,
        runConfig: routed.outputs['run-config']!,
        resultDir: resultDir && existsSync(resultDir) ? resultDir : '',
      };
    }
    const publishDir = ctx.runDir();
    if (carried.resultDir) cpSync(carried.resultDir, join(publishDir, 'hydraflow-result'), { recursive: true });
    const published = await step(
      job(publishDir, {
        phase: 'publish',
        issue: carried.issue,
        'run-config': carried.runConfig,
        'result-artifact-id': carried.resultDir ? '1' : '',
        ...githubInputs,
        ...modelInputs,
      }),
      'publish',
      true,
    );
    if (!published) {
      entry.crashed = true;
      record.outcome = 'crashed';
      record.carried = carried;
    }
  } finally {
    ctx.liveRuns--;
    const calls = models.calls.filter((c) => c.apiKey === modelKey);
    entry.modelCalls = calls.length;
    entry.modelRoles = calls.map((c) => c.role ?? '?');
    ctx.collectDispatches();
  }
}

/** A fresh run (new run id) of an event. */
const deliverFresh = (ctx: Ctx, event: EventRecord, control?: RunControl) =>
  deliver(ctx, event, ctx.newRunId(), 1, control);

/**
 * Re-run a run as GitHub's "Re-run jobs" does: same run id, next attempt, same payload; a run whose publish job died
 * starts again there.
 */
function deliverAgain(ctx: Ctx, event: EventRecord, control?: RunControl): Promise<void> {
  const last = event.runs.at(-1)!;
  const attempts = event.runs.filter((r) => r.runId === last.runId);
  const latest = attempts.at(-1)!;
  return deliver(
    ctx,
    event,
    last.runId,
    latest.attempt + 1,
    control,
    latest.outcome === 'crashed' ? latest.carried : undefined,
  );
}

/** Records that a person who may steer gave issue `model` a go now. */
function go(model: IssueModel, level: Level): void {
  if (steers(level)) model.goAt ??= Date.now();
}

/** What a human does on GitHub for an action, and the events GitHub then delivers right away. */
async function humanAct(ctx: Ctx, action: Action): Promise<EventRecord[]> {
  const open = (ref: IssueRef) => {
    const issue = ctx.issues[ref];
    return issue && ctx.gh.world.issues.get(issue.number)!.state === 'open' ? issue : undefined;
  };
  switch (action.kind) {
    case 'open': {
      if (ctx.issues[action.issue]) return []; // already opened
      const by = action.by ?? 'write';
      // GitHub drops the labels of someone without the triage role; an issue form applies its labels for anyone
      const viaForm = action.labels.length > 0 && !labels(by);
      const { data } = await ctx.api(
        'POST',
        '/issues',
        {
          title: action.issue === 0 ? 'Paginate GET /users' : 'Make onboarding nicer',
          body:
            action.issue === 0 ? 'GET /users returns every user at once. Return 50 per page.' : 'New users get lost.',
          ...(viaForm ? {} : { labels: action.labels }),
        },
        by,
      );
      // GitHub records the form's labels as the opener's labeled events (GET /issues/{n}/events names them)
      if (viaForm) ctx.gh.world.setLabelsAs(data.number, PEOPLE[by].login, { add: action.labels });
      const model: IssueModel = {
        number: data.number,
        author: by,
        intent: 'in',
        humanLabels: new Set(action.labels.filter((l) => !isPipeline(l))),
        commands: [],
        closeRaced: false,
        eventLost: false,
        staleAfterOut: false,
        outAfterEvents: 0,
        refusedByLock: false,
        raced: false,
        spentBeforeTamper: 0,
      };
      go(model, by);
      ctx.issues[action.issue] = model;
      // GitHub fires opened, then labeled once per label the issue was created with.
      const sender = PEOPLE[by].login;
      return [
        ctx.event(model.number, 'issues', 'opened', { sender }),
        ...action.labels.map((label) => ctx.event(model.number, 'issues', 'labeled', { label, sender })),
      ];
    }
    case 'label': {
      const issue = open(action.issue);
      if (!issue) return [];
      const by = action.by ?? 'write';
      const path =
        action.op === 'add'
          ? `/issues/${issue.number}/labels`
          : `/issues/${issue.number}/labels/${encodeURIComponent(action.label)}`;
      if (!labels(by)) {
        // GitHub refuses: labels need the triage role
        const res = await ctx.api(action.op === 'add' ? 'POST' : 'DELETE', path, { labels: [action.label] }, by);
        expect(res.status, `${PEOPLE[by].login} set a label`).toBe(403);
        return [];
      }
      const had = ctx.gh.world.issues.get(issue.number)!.labels.includes(action.label);
      let changed: boolean;
      // Only people who may steer move the pipeline: below that, HydraFlow undoes the change (label-steering.ts).
      const steering = isPipeline(action.label) && steers(by);
      if (action.op === 'add') {
        expect((await ctx.api('POST', path, { labels: [action.label] }, by)).status).toBe(200);
        changed = !had;
        if (steering) issue.intent = 'in';
        if (!isPipeline(action.label)) issue.humanLabels.add(action.label);
        if (steering && GO_LABELS.has(action.label)) go(issue, by);
      } else {
        const res = await ctx.api('DELETE', path, undefined, by);
        changed = res.status === 200;
        if (changed && steering) {
          const remaining = (res.data as { name: string }[]).map((l) => l.name);
          issue.intent = remaining.some(isPipeline) ? 'in' : 'out';
          issue.outAfterEvents = ctx.events.length;
        }
        if (changed && !isPipeline(action.label)) issue.humanLabels.delete(action.label);
      }
      if (!changed) return []; // GitHub sends no event for a change that did not happen
      const e = ctx.event(
        issue.number,
        'issues',
        action.op === 'add' ? 'labeled' : 'unlabeled',
        { label: action.label, sender: PEOPLE[by].login },
        action.deliver === 'later',
      );
      return action.deliver === 'now' ? [e] : [];
    }
    case 'comment': {
      const issue = open(action.issue);
      if (!issue) return [];
      const by = action.by ?? 'write';
      const pull = action.on === 'pull' ? ctx.pull() : undefined;
      if (action.on === 'pull' && (!pull || pull.merged || ctx.gh.world.issues.get(pull.number)!.state !== 'open'))
        return [];
      const target = pull?.number ?? issue.number;
      const { status, data } = await ctx.api('POST', `/issues/${target}/comments`, { body: action.body }, by);
      expect(status).toBe(201);
      const name = parseCommand(action.body)?.name;
      if (name !== undefined) {
        issue.commands.push({ id: data.id, on: target, level: by, name });
        if (steers(by) && GO_COMMANDS.has(name)) {
          go(issue, by);
          if (issue.intent === 'out' && target === issue.number) issue.intent = 'either';
        }
      }
      const e = ctx.event(
        target,
        'issue_comment',
        'created',
        { comment: data.id, sender: PEOPLE[by].login },
        action.deliver === 'later',
      );
      return action.deliver === 'later' ? [] : [e];
    }
    case 'close': {
      const issue = open(action.issue);
      if (!issue) return [];
      expect((await ctx.api('PATCH', `/issues/${issue.number}`, { state: 'closed' })).status).toBe(200);
      return [ctx.event(issue.number, 'issues', 'closed')];
    }
    case 'leftover': {
      const issue = open(action.issue);
      if (!issue) return [];
      // the bot's own label: GitHub's labeled event is HydraFlow's, which its router ignores; none is delivered
      ctx.gh.world.setLabelsAs(issue.number, BOT_LOGIN, { add: [`hydraflow-adv-${action.phase}-running`] });
      return [];
    }
    case 'tamper':
      return tamper(ctx, action);
    case 'sweep': {
      if (!ctx.issues.some(Boolean)) return [];
      const base = buildEvent(ctx.gh, 'issues', 'opened', { sender: PEOPLE.write.login });
      const payload = {
        schedule: '17 * * * *',
        workflow: '.github/workflows/hydraflow.yml',
        repository: base.repository,
        sender: base.sender,
      };
      return [ctx.record(NO_ISSUE, 'schedule', payload)];
    }
    case 'review': {
      const pull = ctx.pull();
      if (!pull || pull.merged || ctx.gh.world.issues.get(pull.number)!.state !== 'open') return [];
      const commit = action.on === 'previous' ? (ctx.heads.at(-2) ?? pull.head.sha) : pull.head.sha;
      const { status, data } = await ctx.api(
        'POST',
        `/pulls/${pull.number}/reviews`,
        {
          event: action.event,
          commit_id: commit,
          ...(action.event === 'APPROVE' ? {} : { body: 'Please name the change after the plan.' }),
        },
        action.by,
      );
      expect(status, JSON.stringify(data)).toBe(200);
      const base = buildEvent(ctx.gh, 'pull_request', 'opened', { pull: pull.number, sender: PEOPLE[action.by].login });
      const payload = {
        action: 'submitted',
        review: data,
        pull_request: base.pull_request,
        repository: base.repository,
        sender: base.sender,
      };
      const e = ctx.record(pull.number, 'pull_request_review', payload, action.deliver === 'later');
      return action.deliver === 'later' ? [] : [e];
    }
    case 'push': {
      const pull = ctx.pull();
      if (!pull || pull.merged || ctx.gh.world.issues.get(pull.number)!.state !== 'open') return [];
      ctx.pushAs(action.by, pull.head.ref);
      ctx.pull(); // the new head
      return [
        ctx.record(
          pull.number,
          'pull_request',
          buildEvent(ctx.gh, 'pull_request', 'synchronize', { pull: pull.number, sender: PEOPLE[action.by].login }),
        ),
      ];
    }
    case 'ci': {
      const pull = ctx.pull();
      if (!pull || pull.merged) return [];
      const completed = exampleEvent('workflow_run', 'completed').workflow_run as Record<string, unknown>;
      const base = buildEvent(ctx.gh, 'workflow_run', 'completed', { sender: PEOPLE.write.login });
      const payload = {
        ...base,
        workflow_run: {
          ...completed,
          name: 'CI',
          head_branch: pull.head.ref,
          head_sha: pull.head.sha,
          status: 'completed',
          conclusion: 'success',
          head_repository: {
            ...(completed.head_repository as Record<string, unknown>),
            full_name: `${ctx.gh.world.owner}/${ctx.gh.world.repo}`,
          },
          pull_requests: [
            {
              number: pull.number,
              head: { ref: pull.head.ref, sha: pull.head.sha },
              base: { ref: pull.base.ref, sha: pull.base.sha },
            },
          ],
        },
      };
      return [ctx.record(pull.number, 'workflow_run', payload)];
    }
    default:
      return [];
  }
}

/** HydraFlow's progress comment (two after a race: see end-state.ts, invariant 3). */
export const isProgress = (c: { user: string; body: string }) =>
  c.user === BOT_LOGIN && c.body.includes(PROGRESS_MARKER);
export const spendOf = (state: { ledger: readonly { costUsd: number }[] }) =>
  state.ledger.reduce((a, e) => a + e.costUsd, 0);

/** A writer changes HydraFlow's progress comment (Action `tamper`); the events GitHub delivers right away. */
async function tamper(ctx: Ctx, action: Extract<Action, { kind: 'tamper' }>): Promise<EventRecord[]> {
  const issue = ctx.issues[action.issue];
  const progress = issue && ctx.gh.world.commentsOn(issue.number).find((c) => isProgress(c));
  if (!issue || !progress) return [];
  const body =
    action.how === 'older'
      ? progress.revisions[0]!.body
      : action.how === 'break'
        ? progress.body.replace(/"seq":(\d+)/, (_, n: string) => `"seq":${Number(n) + 100}`)
        : undefined;
  if (body === progress.body) return []; // GitHub sends no event for an edit that changes nothing
  // what HydraFlow counts: the newest genuine block among its comments that it edited last (two after a race)
  for (const c of ctx.gh.world.commentsOn(issue.number).filter((c) => isProgress(c))) {
    const current = decodeStateBlock(c.body, { key: TEST_STATE_KEY, issue: issue.number });
    if (current.status === 'valid' && c.revisions.at(-1)!.by === BOT_LOGIN)
      issue.spentBeforeTamper = Math.max(issue.spentBeforeTamper, spendOf(current.state));
  }
  // the hold for a human sets hydraflow-hitl even on an issue a human had taken out of the pipeline
  if (issue.intent === 'out') issue.intent = 'either';
  // A writer edits at least a second after what HydraFlow did that they saw (GitHub's clock has whole seconds): a lock
  // taken before the change can then be told from one a run took since (session/issue-session.ts).
  vi.setSystemTime(Date.now() + 1_000);
  const path = `/issues/comments/${progress.id}`;
  if (action.how === 'delete') {
    // the payload carries the deleted body: snapshot it first
    const e = ctx.event(issue.number, 'issue_comment', 'deleted', { comment: progress.id }, action.deliver === 'later');
    ctx.deletedComments.push({ ...progress, revisions: [...progress.revisions] });
    expect((await ctx.api('DELETE', path)).status).toBe(204);
    return action.deliver === 'now' ? [e] : [];
  }
  const from = progress.body;
  expect((await ctx.api('PATCH', path, { body: body! })).status).toBe(200);
  const e = ctx.event(
    issue.number,
    'issue_comment',
    'edited',
    { comment: progress.id, changes: { body: { from } } },
    action.deliver === 'later',
  );
  return action.deliver === 'now' ? [e] : [];
}

async function perform(ctx: Ctx, action: Action, control: RunControl = {}): Promise<void> {
  switch (action.kind) {
    case 'deliver': {
      const pending = ctx.events.filter(
        (e) => e.status === 'pending' && (!action.dispatch || e.name === 'workflow_dispatch'),
      );
      if (pending.length === 0) return;
      const event = pending[action.pick % pending.length]!;
      event.status = 'delivered';
      return deliverFresh(ctx, event, control);
    }
    case 'rerun': {
      const ran = ctx.events.filter((e) => e.runs.length > 0);
      if (ran.length === 0) return;
      const event = ran[action.pick % ran.length]!;
      const model = ctx.model(event.issue);
      const stale = event.name === 'issues' && (event.payload.issue as { state?: string }).state === 'open';
      // closed before the redelivery or while it ran (a close a dead run had in flight lands late)
      const closed = () => ctx.gh.world.issues.get(event.issue)!.state === 'closed';
      if (action.mode === 'redelivery' && stale && closed()) model!.closeRaced = true;
      await (action.mode === 'attempt' ? deliverAgain(ctx, event, control) : deliverFresh(ctx, event, control));
      if (action.mode === 'redelivery' && stale && closed()) model!.closeRaced = true;
      return;
    }
    default: {
      const events = await ctx.human(() => humanAct(ctx, action));
      for (const e of events) await deliverFresh(ctx, e, control);
    }
  }
}

/** Which issue model an action steers (a pull request action: issue 0's). */
function actionIssue(ctx: Ctx, a: Action): IssueModel | undefined {
  if (a.kind === 'label') return ctx.issues[a.issue];
  if (a.kind === 'push' || a.kind === 'review') return ctx.issues[0];
  return undefined;
}

async function play(ctx: Ctx, op: Op): Promise<void> {
  if (op.kind === 'crash') return perform(ctx, op.inner, { crashAfter: op.k });
  if (op.kind !== 'concurrent') return perform(ctx, op);
  const logStart = ctx.log.length;
  let requests = 0;
  let startB!: () => void;
  const bMayStart = new Promise<void>((resolve) => (startB = resolve));
  const tick = () => {
    if (++requests >= op.after) startB();
  };
  if (op.after === 0) startB();
  // GitHub re-runs a run only after it ended: a concurrent copy of a run is a redelivery (new run id).
  const concurrently = (a: Action): Action => (a.kind === 'rerun' ? { ...a, mode: 'redelivery' } : a);
  await Promise.all([
    perform(ctx, concurrently(op.a), { onRequest: tick }).finally(startB),
    bMayStart.then(() => perform(ctx, concurrently(op.b))),
  ]);
  for (const a of [op.a, op.b]) if (a.kind === 'close' && ctx.issues[a.issue]) ctx.issues[a.issue]!.closeRaced = true;
  // A human label change beside a run: see IssueModel.raced.
  for (const model of ctx.issues) {
    if (!model) continue;
    const humanLabel = [op.a, op.b].some(
      (a) => a.kind === 'label' && actionIssue(ctx, a) === model && isPipeline(a.label) && labels(a.by ?? 'write'),
    );
    // Two HydraFlow runs at once are serialised by the 👀 lock (take-overs are a compare-and-swap on its id); only a
    // human's label edit beside a run has no compare-and-swap on GitHub.
    if (humanLabel && ctx.log.slice(logStart).some((r) => r.issue === model.number)) model.raced = true;
  }
}

/** Everything still owed: re-run each event whose last run crashed, deliver every deferred event (and what they send). */
async function quiesce(ctx: Ctx): Promise<void> {
  if (ctx.history.quiesce.gap !== 'short') advance(ctx.history.quiesce.gap);
  const crashed = async () => {
    for (const e of ctx.events) {
      for (const last of crashedRuns(e)) await deliver(ctx, e, last.runId, last.attempt + 1, {}, last.carried);
    }
  };
  const pending = async () => {
    for (const e of ctx.events) {
      if (e.status !== 'pending') continue;
      e.status = 'delivered';
      await deliverFresh(ctx, e);
    }
  };
  // Dispatched phases send more (a refine round, a fix): until nothing is owed. Review rounds are capped, so this ends.
  for (let round = 0; round < 10; round++) {
    if (ctx.history.quiesce.order === 'crashed-first') {
      await crashed();
      await pending();
    } else {
      await pending();
      await crashed();
    }
    if (!ctx.events.some((e) => e.status === 'pending' || crashedRuns(e).length > 0)) return;
  }
  throw new Error('the history did not settle: events still owed after 10 rounds');
}

/** The last attempt of each of the event's runs whose last attempt died. */
function crashedRuns(e: EventRecord): RunAttempt[] {
  const runIds = [...new Set(e.runs.map((r) => r.runId))];
  return runIds.map((id) => e.runs.filter((r) => r.runId === id).at(-1)!).filter((r) => r.outcome === 'crashed');
}

function advance(gap: Gap): void {
  if (gap === 'long') vi.setSystemTime(Date.now() + LONG_GAP_MS);
  else if (gap === 'hour') vi.setSystemTime(Date.now() + HOUR_GAP_MS);
  else if (gap === 'seconds') vi.setSystemTime(Date.now() + SECONDS_GAP_MS);
}

/** Every person, with their own token. */
export function addPeople(gh: GitHubEmulator): Record<Level, string> {
  return Object.fromEntries(
    LEVELS.map((level) => {
      const { login, permission, association } = PEOPLE[level];
      return [level, gh.addUser({ login, permission, association }).token];
    }),
  ) as Record<Level, string>;
}

/** Plays every step, then lets the dust settle. */
export async function playSteps(ctx: Ctx): Promise<void> {
  for (const step of ctx.history.steps) {
    advance(step.gap);
    await play(ctx, step.op);
  }
  await quiesce(ctx);
}
