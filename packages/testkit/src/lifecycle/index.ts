/**
 * The lifecycle simulator: GitHub Actions' routing and runner, on the test world. Events the emulator records
 * (`gh.events`) are routed to the repository's real workflow files the way GitHub routes them — GITHUB_TOKEN events
 * start nothing but workflow_dispatch, `on:`/`types:`/`branches:` filters, job `if:`, `concurrency` groups with the
 * one-pending-run rule (or `queue: max`, every pending run in order) — and each job runs its steps for real.
 *
 * What it models:
 * - Jobs in `needs` order, each on a machine of its own: a fresh runner directory holding the job's workspace
 *   (GITHUB_WORKSPACE), HOME and RUNNER_TEMP (`runner.temp`), never seen by another job (removed when the lifecycle
 *   closes). Jobs share only what GitHub shares: the repository (the bare remote), artifacts, and job outputs.
 * - Job `outputs:`, evaluated when the job ends, as `needs.<job>.outputs` (and `needs.<job>.result`) of later jobs; a
 *   skipped job's result is `skipped`, its outputs empty; an output holding a secret (or an `::add-mask::` value) is
 *   dropped, as GitHub drops it. `permissions:` are kept (not enforced); `timeout-minutes` bounds the steps.
 * - Orphan processes: every step runs with the job's RUNNER_TRACKING_ID; when the job ends every process still
 *   carrying it is killed (SIGKILL), as the runner's "Cleaning up orphan processes" does — `setsid` daemons included.
 *   A step ends when its process exits, even if a daemon it started holds its stdout.
 * - Steps: `actions/checkout` clones the bare repository; `actions/upload-artifact` / `actions/download-artifact`
 *   (./artifacts.ts) keep artifacts per workflow run outside every runner, also on the emulator's REST API; HydraFlow's
 *   node action (`hydraflow/hydraflow@*`, `./`) runs the built `dist/index.js`; HydraFlow's composite actions
 *   (`<owner>/<repo>/actions/<name>@*`) run their steps for real — bash/sh `run:` steps with `inputs`,
 *   `github.action_path`, `env:`, `if:`, ids and `outputs:`, nested `uses:` resolved as above; `run:` steps run bash in
 *   the workspace. What a step appends to GITHUB_ENV and GITHUB_PATH applies to the job's later steps, as on a runner.
 *   Any other `uses:` is an error naming what is supported.
 * - After each job, pushes to the bare repository become events (`gh.syncGit`) and the job reports a check run, so
 *   the next phase sees what a user would.
 *
 * What it does not: jobs run one at a time on this machine, as this user, with this machine's tools on PATH (no
 * runner image, no containers, no network isolation); a process that replaced its environment (dropping
 * RUNNER_TRACKING_ID) survives its job here, while on GitHub the VM is discarded; permissions are not enforced;
 * matrices, services, reusable workflows and caches are not simulated.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { TemplateToken } from '@actions/workflow-parser/templates/tokens/index';
import { buildEvent, exampleEvent, type EventOverrides } from '../events/index';
import type { GitHubEmulator } from '../github/server';
import { serveArtifacts } from '../github/routes';
import { checkRunJson, pullJson, repoJson, reviewJson, userJson } from '../github/serialize';
import { BOT_LOGIN, type EmulatedAnnotation, type EmulatedEvent, type TokenKind } from '../github/world';
import { GitRepo, runGit, runGitAsync, ZERO_SHA } from '../github/git';
import type { ModelServer } from '../models/index';
import { REPO_ROOT, parseOutputFile, readRunnerFiles, runAction, runnerEnv, waitForStep } from '../runner/run-action';
import { killTrackedProcesses, newTrackingId } from '../runner/processes';
import {
  ArtifactStoreImpl,
  downloadArtifact,
  uploadArtifact,
  type ArtifactStepContext,
  type ArtifactStore,
} from './artifacts';
import { evaluateBoolean, evaluateString, interpolate, type Contexts } from './expressions';
import { loadWorkflows, tokenHelpers, type LoadedJob, type LoadedWorkflow } from './workflows';

import { formatTimeline } from './timeline';
import { workflowCommandAnnotations } from './annotations';

export { formatTimeline };
export * from './expressions';
export * from './workflows';
export { findFilesToUpload, artifactDigest, type ArtifactStore, type StoredArtifact } from './artifacts';

type Json = Record<string, unknown>;

/** What a job's steps appended to GITHUB_ENV and GITHUB_PATH so far (the runner applies them to the later steps). */
interface JobRunnerFiles {
  env: Record<string, string>;
  /** Directories to put first on PATH, most recent first. */
  path: string[];
}

/** The job's event file, as the runner lays it out. */
const eventPathOf = (rt: { temp: string }) => join(rt.temp, '_github_workflow', 'event.json');

/** One job's machine. */
interface JobRunner {
  run: Run;
  job: LoadedJob;
  /** the runner directory: everything below is the job's alone, removed when it ends */
  dir: string;
  /** GITHUB_WORKSPACE, `<dir>/work/<repo>/<repo>` */
  workspace: string;
  /** HOME of every step */
  home: string;
  /** RUNNER_TEMP and runner.temp */
  temp: string;
  /** RUNNER_TRACKING_ID of every step: what is left running with it when the job ends is killed */
  trackingId: string;
  files: JobRunnerFiles;
  /** epoch ms by which the job's steps must end (timeout-minutes, default 360) */
  deadline: number;
  /** the user the job's steps run as (LifecycleOptions.runAs); none: the simulator's own */
  user?: { uid: string; gid: string };
  /** whether the run was cancelled while this job ran (its steps' cancelled()) */
  cancelled: () => boolean;
}

function jobUserOf(user: string): { uid: string; gid: string } {
  const id = (flag: string) => execFileSync('id', [flag, user], { encoding: 'utf8' }).trim();
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * The launcher of a step's process. A job that runs as another user owns its runner directory, as the runner's user
 * does on a runner; what the simulator wrote there itself (the checkout, a downloaded artifact, the step's files) is
 * handed over before each process starts.
 */
function jobUser(rt: JobRunner): string[] {
  if (!rt.user) return [];
  const { uid, gid } = rt.user;
  execFileSync('chown', ['-R', `${uid}:${gid}`, rt.dir]);
  // setpriv to the user with its own groups (initgroups), as a login would give them
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--'];
}

/** A step ready to run: its inputs and script already evaluated. */
interface StepSpec {
  uses?: string;
  with: Record<string, string>;
  run?: string;
  /** `shell:` (bash when absent) */
  shell?: string;
  /** the step's environment: workflow, job and step `env:` (or, in a composite action, the outer step's and its own) */
  env: Record<string, string>;
  /** in a composite action: its directory (GITHUB_ACTION_PATH) */
  actionPath?: string;
  /** where the step is, for errors ("action actions/agent: step 0: ") */
  where: string;
}

type StepResult = Omit<StepRecord, 'id' | 'name' | 'startedAt' | 'endedAt'>;

/** The parts of an action.yml the simulator reads. */
interface ActionMeta {
  inputs?: Record<string, { default?: unknown } | null>;
  outputs?: Record<string, { value?: unknown } | null>;
  runs?: {
    using?: string;
    main?: string;
    steps?: {
      id?: string;
      name?: string;
      if?: unknown;
      uses?: string;
      with?: Record<string, unknown>;
      run?: string;
      shell?: string;
      env?: Record<string, unknown>;
      'continue-on-error'?: unknown;
    }[];
  };
}

export interface LifecycleOptions {
  gh: GitHubEmulator;
  /** the model server HydraFlow steps talk to (HYDRAFLOW_BASE_URL), unless actionEnv says otherwise */
  models?: ModelServer;
  /** `.github/workflows` of the default branch */
  workflowsDir: string;
  /** the bare repository (the emulator's `git.bareRepo`) */
  repoDir: string;
  /** repository secrets; GITHUB_TOKEN is added (the emulator's bot token) */
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  /** executed jobs (not skipped or cancelled) before runUntilQuiet gives up: a loop is a bug (default 50) */
  maxJobs?: number;
  /** extra environment for HydraFlow steps (default: HYDRAFLOW_BASE_URL of the model server for the given key) */
  actionEnv?: Record<string, string>;
  /**
   * The runner machine's own environment, for every step of every job (lowest precedence): e.g. `npm_config_registry`
   * of a registry mirror, as an organization's runner image may set it.
   */
  machineEnv?: Record<string, string>;
  /** who pushed what a job left in the bare repository (default: the job's GITHUB_TOKEN) */
  pusher?: (job: { workflow: string; job: string; event: string }) => { actor: string; viaToken: TokenKind };
  /** HydraFlow's checkout (action.yml, actions/, dist/); default the repository this testkit lives in */
  actionRoot?: string;
  /** per step (default 120 s) */
  stepTimeoutMs?: number;
  /** keep each job's runner directory (workspace, HOME, RUNNER_TEMP): JobRecord.runnerDir and .workspace */
  keepWorkspaces?: boolean;
  /**
   * A simulated clock (its `stepEnv()` at each step's start) for HydraFlow's steps: their waits advance it and their
   * "now" is its time (packages/testkit/src/clock/simulated-clock.ts). Give the emulator the same clock.
   */
  clock?: { stepEnv(): Record<string, string> };
  /**
   * Jobs whose steps run as another user of this machine, with that user's groups, the way a runner runs every step
   * as its own user (GitHub's hosted runner user has passwordless sudo and the docker group). The simulator itself
   * must run as root; the job's runner directory is the user's.
   */
  runAs?: { jobs: readonly string[]; user: string };
}

export type JobStatusName = 'success' | 'failure' | 'skipped' | 'cancelled';

export interface StepRecord {
  id: string;
  name: string;
  /** `cancelled`: the run was cancelled while the step ran, and the step did not succeed (GitHub's word for it) */
  outcome: 'success' | 'failure' | 'skipped' | 'cancelled';
  outputs: Record<string, string>;
  stdout: string;
  stderr?: string;
  /** What the step wrote to GITHUB_STEP_SUMMARY (actions only). */
  summary?: string;
  /** A failed `run:` step's exit code (a composite action's: its first failed `run:` step's). */
  exitCode?: number;
  /** Wall-clock span of the step (epoch ms), to attribute GitHub requests and time to it. */
  startedAt?: number;
  endedAt?: number;
}

export interface JobRecord {
  runId: number;
  /** GITHUB_RUN_ATTEMPT of the run this job ran in. */
  attempt: number;
  workflow: string;
  job: string;
  event: string;
  action?: string;
  actor: string;
  viaToken: TokenKind;
  /** seq of the event in gh.events */
  eventSeq: number;
  status: JobStatusName;
  steps: StepRecord[];
  durationMs: number;
  group?: string;
  /** why a job was skipped or cancelled */
  reason?: string;
  /** with keepWorkspaces: the job's GITHUB_WORKSPACE and its whole runner directory (HOME, RUNNER_TEMP) */
  workspace?: string;
  runnerDir?: string;
  /** the job's `outputs:`, evaluated when it ended (what later jobs see as `needs.<job>.outputs`); {} when skipped */
  outputs?: Record<string, string>;
  /** processes left running by its steps that the job's end killed (RUNNER_TRACKING_ID) */
  orphansKilled?: number;
}

export interface Lifecycle {
  readonly workflows: LoadedWorkflow[];
  /** every job so far, in execution order (skipped and cancelled ones included) */
  readonly jobs: JobRecord[];
  /** routing decisions, in order ("ignored: ...", "queued: ...", "cancelled: ..."), and orphan clean-ups */
  readonly log: string[];
  /** artifacts uploaded by jobs (actions/upload-artifact), kept outside every runner until close() */
  readonly artifacts: ArtifactStore;
  /**
   * Something a user did in the world (created with the world's builders): record the event as theirs and snapshot
   * its payload now. `overrides.sender` is the user (default: the issue/comment/pull author).
   */
  dispatch(eventName: string, action?: string, overrides?: EventOverrides & { viaToken?: TokenKind }): EmulatedEvent;
  /** Route events and run jobs until nothing is left; returns the jobs this call ran. */
  runUntilQuiet(): Promise<JobRecord[]>;
  /**
   * "Re-run all jobs" on a finished run: the same event payload and run id, the next attempt (run it with
   * runUntilQuiet). `failedJobs`: "Re-run failed jobs" — the jobs that succeeded keep their result and outputs (their
   * artifacts stay the run's); the others and every job that needs one of them run again.
   */
  rerun(runId: number, options?: { failedJobs?: boolean }): void;
  /**
   * "Cancel workflow" on a run, as GitHub does it: a queued run is dropped; in a running one the step in progress gets
   * SIGINT at its entry process (bash for `run:`, node for an action), SIGTERM 7.5 s later and the kill 2.5 s after
   * that; the job's later steps run only if their `if:` holds with cancelled() (always()), and so do later jobs. False
   * when the run is not queued or running.
   */
  cancel(runId: number): boolean;
  close(): void;
}

interface EventInfo {
  payload: Json;
  ref: string;
  sha: string;
  /** head sha checks are reported on */
  headSha: string;
  headRef?: string;
  baseRef?: string;
  /** pull_request activity on a conflicting PR starts no workflow */
  conflict?: boolean;
}

interface Run {
  id: number;
  number: number;
  workflow: LoadedWorkflow;
  event: EmulatedEvent;
  info: EventInfo;
  group?: string;
  cancelInProgress: boolean;
  /** `queue: max`: pending runs wait in order instead of the newest replacing the one pending. */
  queueMax: boolean;
  state: 'queued' | 'running' | 'done' | 'cancelled';
  /** GITHUB_RUN_ATTEMPT: 1, then one more per re-run. */
  attempt: number;
  /** Re-run failed jobs: the jobs of the previous attempt that are not run again, with their result and outputs. */
  kept?: Record<string, { result: string; outputs: Json }>;
  /** someone cancelled the run while it ran (Lifecycle.cancel) */
  cancelRequested?: boolean;
  /** the entry process of the step running now: what a cancellation signals */
  active?: ChildProcess;
}

/** GitHub's cancellation of a step in progress: SIGINT, then SIGTERM after 7.5 s, then the kill 2.5 s later. */
const CANCEL_SIGTERM_AFTER_MS = 7_500;
const CANCEL_KILL_AFTER_MS = 2_500;

function interruptStep(child: ChildProcess): void {
  child.kill('SIGINT');
  const term = setTimeout(() => child.kill('SIGTERM'), CANCEL_SIGTERM_AFTER_MS);
  const kill = setTimeout(() => child.kill('SIGKILL'), CANCEL_SIGTERM_AFTER_MS + CANCEL_KILL_AFTER_MS);
  child.once('exit', () => {
    clearTimeout(term);
    clearTimeout(kill);
  });
}

const DISPATCH_EVENTS = new Set(['workflow_dispatch', 'repository_dispatch']);
/** GitHub's default activity types when `types:` is absent */
const DEFAULT_TYPES: Record<string, string[]> = {
  pull_request: ['opened', 'synchronize', 'reopened'],
  pull_request_target: ['opened', 'synchronize', 'reopened'],
};

function glob(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '.';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function filterMatches(name: string, include?: string[], exclude?: string[]): boolean {
  if (include && !include.some((p) => glob(p).test(name))) return false;
  if (exclude && exclude.some((p) => glob(p).test(name))) return false;
  return true;
}

export async function createLifecycle(options: LifecycleOptions): Promise<Lifecycle> {
  const { gh } = options;
  const w = gh.world;
  const workflows = await loadWorkflows(options.workflowsDir);
  const tokens = await tokenHelpers();
  const actionRoot = options.actionRoot ?? REPO_ROOT;
  const maxJobs = options.maxJobs ?? 50;
  const secrets: Record<string, string> = { ...options.secrets, GITHUB_TOKEN: gh.botToken };
  const vars = { ...options.vars };
  const actionEnv: Record<string, string> = options.actionEnv ?? {};
  if (!options.actionEnv && options.models) {
    actionEnv.HYDRAFLOW_BASE_URL = secrets.ANTHROPIC_API_KEY
      ? options.models.anthropicBaseUrl
      : options.models.openaiBaseUrl;
  }
  const pusher = options.pusher ?? (() => ({ actor: BOT_LOGIN, viaToken: 'GITHUB_TOKEN' as TokenKind }));
  const jobs: JobRecord[] = [];
  const log: string[] = [];
  const artifacts = new ArtifactStoreImpl(mkdtempSync(join(tmpdir(), 'hydraflow-artifacts-')));
  serveArtifacts(w, () => artifacts.all);
  const infos = new Map<number, EventInfo>();
  const runs: Run[] = [];
  const active = new Map<string, Run>();
  /** Pending runs per group, oldest first: one at most (GitHub's default), up to 100 with `queue: max`. */
  const pending = new Map<string, Run[]>();
  const runNumbers = new Map<string, number>();
  let processed = 0;
  let nextRunId = 7_000_000_001;
  let executed = 0;
  /** Runner directories of finished jobs: removed when the lifecycle closes, off the jobs' path (a runner is thrown away). */
  const finishedRunners: string[] = [];

  // -- payloads, snapshotted when the event happens ---------------------------------------------------------------

  function generic(name: string, action?: string): Json {
    let payload: Json;
    try {
      payload = exampleEvent(name, action);
    } catch {
      payload = {};
    }
    if (action !== undefined) payload.action = action;
    payload.repository = repoJson(w);
    return payload;
  }

  function headCommit(sha: string): Json | null {
    if (sha === ZERO_SHA) return null;
    const out = runGit(['--git-dir', options.repoDir, 'log', '-1', '--format=%T%x00%s%x00%an%x00%ae%x00%aI', sha], {
      okCodes: [128],
    }).stdout;
    const [tree, message, name, email, date] = out.trim().split('\0');
    if (!tree) return null;
    return {
      id: sha,
      tree_id: tree,
      distinct: true,
      message,
      timestamp: date,
      url: `https://github.com/${w.owner}/${w.repo}/commit/${sha}`,
      author: { name, email },
      committer: { name, email },
      added: [],
      removed: [],
      modified: [],
    };
  }

  /** refs/pull/N/merge as last made, by pull request: the base and head it merged, and its commit */
  const testMerges = new Map<number, { key: string; sha: string }>();

  /**
   * GitHub runs pull_request workflows on a test merge commit (refs/pull/N/merge); none when it conflicts. Like GitHub,
   * it is made again only when the base or the head moved (an event such as ready_for_review reuses it); this runs
   * inside the request that caused the event, which a workflow step may be waiting on.
   */
  function testMerge(number: number): { sha?: string; conflict: boolean } {
    const pull = w.pulls.get(number);
    const git = w.git;
    if (!pull || !git) return { conflict: false };
    const key = `${pull.base.sha} ${pull.head.sha}`;
    const made = testMerges.get(number);
    if (made?.key === key) return { sha: made.sha, conflict: false }; // refs/pull/ is read-only to pushes
    const merged = git.mergeTree(pull.base.sha, pull.head.sha);
    if (!merged.clean) return { conflict: true };
    const who = { name: 'GitHub', email: 'noreply@github.com', date: Math.floor(w.clock() / 1000) };
    const sha = git.commitTree(
      merged.tree,
      [pull.base.sha, pull.head.sha],
      `Merge ${pull.head.sha} into ${pull.base.sha}\n`,
      who,
      who,
    );
    git.updateRef(`refs/pull/${number}/merge`, sha);
    testMerges.set(number, { key, sha });
    return { sha, conflict: false };
  }

  function snapshot(e: EmulatedEvent): EventInfo {
    const sender = e.actor;
    const defaultRef = `refs/heads/${w.defaultBranch}`;
    const defaultSha = w.refs.get(defaultRef) ?? ZERO_SHA;
    const info: EventInfo = { payload: {}, ref: defaultRef, sha: defaultSha, headSha: defaultSha };
    switch (e.name) {
      case 'issues':
        info.payload = buildEvent(gh, 'issues', e.action, {
          issue: e.issue,
          label: e.label,
          sender,
          ...(e.changes ? { changes: e.changes } : {}),
        });
        break;
      case 'issue_comment':
        info.payload = buildEvent(gh, 'issue_comment', e.action, { issue: e.issue, comment: e.comment, sender });
        break;
      case 'pull_request': {
        const sync = e.action === 'synchronize' ? { payload: { before: e.before, after: e.after } } : {};
        info.payload = buildEvent(gh, 'pull_request', e.action, { pull: e.pull, label: e.label, sender, ...sync });
        const pull = w.pulls.get(e.pull!)!;
        info.headSha = pull.head.sha;
        info.headRef = pull.head.ref;
        info.baseRef = pull.base.ref;
        info.ref = `refs/pull/${pull.number}/merge`;
        if (e.action !== 'closed') {
          const m = testMerge(pull.number);
          info.conflict = m.conflict;
          info.sha = m.sha ?? pull.head.sha;
        } else {
          info.sha = pull.merge_commit_sha ?? pull.head.sha;
        }
        break;
      }
      case 'pull_request_review': {
        const pull = w.pulls.get(e.pull!)!;
        const review = w.reviews.get(e.review!)!;
        info.payload = {
          ...generic('pull_request_review', e.action),
          review: reviewJson(w, review),
          pull_request: pullJson(w, pull),
        };
        info.headSha = pull.head.sha;
        info.sha = pull.head.sha;
        info.ref = `refs/pull/${pull.number}/merge`;
        info.headRef = pull.head.ref;
        info.baseRef = pull.base.ref;
        break;
      }
      case 'workflow_dispatch': {
        const file = e.workflow ? basename(e.workflow) : '';
        info.payload = buildEvent(gh, 'workflow_dispatch', undefined, {
          inputs: e.inputs ?? {},
          ref: e.ref ?? defaultRef,
          workflow: `.github/workflows/${file}`,
          sender,
        });
        info.ref = e.ref ?? defaultRef;
        info.sha = e.sha ?? defaultSha;
        info.headSha = info.sha;
        break;
      }
      case 'push': {
        info.payload = {
          ...generic('push'),
          ref: e.ref,
          before: e.before,
          after: e.after,
          created: e.created === true,
          deleted: e.deleted === true,
          forced: false,
          base_ref: null,
          compare: `https://github.com/${w.owner}/${w.repo}/compare/${e.before!.slice(0, 12)}...${e.after!.slice(0, 12)}`,
          commits: [],
          head_commit: headCommit(e.after!),
          pusher: { name: sender, email: null },
        };
        info.ref = e.ref!;
        info.sha = e.after!;
        info.headSha = e.after!;
        break;
      }
      case 'workflow_run': {
        // A workflow_run event runs on the default branch; the completed run's branch and pull request are in it.
        const example = generic('workflow_run', e.action);
        const completed = (example.workflow_run ?? {}) as Json;
        const pull = e.pull !== undefined ? w.pulls.get(e.pull) : undefined;
        info.payload = {
          ...example,
          workflow_run: {
            ...completed,
            name: e.workflow,
            head_branch: e.ref ?? null,
            head_sha: e.sha,
            event: e.state,
            status: 'completed',
            conclusion: e.conclusion ?? null,
            head_repository: { ...((completed.head_repository ?? {}) as Json), full_name: `${w.owner}/${w.repo}` },
            pull_requests: pull
              ? [
                  {
                    number: pull.number,
                    head: { ref: pull.head.ref, sha: pull.head.sha },
                    base: { ref: pull.base.ref, sha: pull.base.sha },
                  },
                ]
              : [],
          },
        };
        break;
      }
      case 'check_run': {
        const run = w.checkRuns.get(e.checkRun!);
        info.payload = { ...generic('check_run', e.action), ...(run ? { check_run: checkRunJson(w, run) } : {}) };
        info.sha = e.sha ?? defaultSha;
        info.headSha = info.sha;
        break;
      }
      case 'status':
        info.payload = { ...generic('status'), sha: e.sha, state: e.state, context: e.checkName };
        info.sha = e.sha ?? defaultSha;
        info.headSha = info.sha;
        break;
      default:
        info.payload = generic(e.name, e.action);
    }
    if (
      !('sender' in info.payload) ||
      e.name === 'push' ||
      e.name === 'status' ||
      e.name === 'check_run' ||
      e.name === 'pull_request_review'
    )
      info.payload.sender = userJson(w, sender);
    return info;
  }

  function record(e: EmulatedEvent) {
    if (infos.has(e.seq)) return;
    const info = snapshot(e);
    infos.set(e.seq, info);
    e.payload = info.payload;
  }
  const unsubscribe = gh.onEvent(record);

  // -- routing ----------------------------------------------------------------------------------------------------

  function describe(e: EmulatedEvent) {
    return `#${e.seq} ${e.name}${e.action ? `.${e.action}` : ''} by ${e.actor} (${e.viaToken})`;
  }

  function triggers(wf: LoadedWorkflow, e: EmulatedEvent, info: EventInfo): boolean {
    const cfg = wf.template.events[e.name] as
      | {
          types?: string[];
          branches?: string[];
          'branches-ignore'?: string[];
          tags?: string[];
          'tags-ignore'?: string[];
        }
      | undefined;
    if (cfg === undefined) return false;
    if (e.name === 'workflow_dispatch') {
      const target = String(e.workflow ?? '');
      return target === wf.file || basename(target) === wf.file || target === wf.path;
    }
    // workflow_run: only for the workflows it names (by their `name:`), and never for a run of this very workflow
    if (e.name === 'workflow_run') {
      const names = (cfg as { workflows?: string[] }).workflows ?? [];
      if (!names.includes(String(e.workflow)) || e.workflow === wf.name) return false;
    }
    const types = cfg.types ?? DEFAULT_TYPES[e.name];
    if (types && e.action && !types.includes(e.action)) return false;
    if (e.name === 'pull_request' || e.name === 'pull_request_target') {
      if (!filterMatches(info.baseRef ?? '', cfg.branches, cfg['branches-ignore'])) return false;
    }
    if (e.name === 'push') {
      const ref = e.ref ?? '';
      if (ref.startsWith('refs/heads/')) {
        const hasTagFilterOnly = (cfg.tags || cfg['tags-ignore']) && !cfg.branches && !cfg['branches-ignore'];
        if (hasTagFilterOnly) return false;
        if (!filterMatches(ref.slice('refs/heads/'.length), cfg.branches, cfg['branches-ignore'])) return false;
      } else if (ref.startsWith('refs/tags/')) {
        const hasBranchFilterOnly = (cfg.branches || cfg['branches-ignore']) && !cfg.tags && !cfg['tags-ignore'];
        if (hasBranchFilterOnly) return false;
        if (!filterMatches(ref.slice('refs/tags/'.length), cfg.tags, cfg['tags-ignore'])) return false;
      }
      if (e.deleted) return false;
    }
    return true;
  }

  function githubContext(run: Run, job?: LoadedJob, workspace?: string): Json {
    const { event: e, info, workflow: wf } = run;
    const ref = info.ref;
    return {
      event_name: e.name,
      event: info.payload,
      action: '',
      actor: e.actor,
      triggering_actor: e.actor,
      repository: `${w.owner}/${w.repo}`,
      repository_owner: w.owner,
      repositoryUrl: `git://github.com/${w.owner}/${w.repo}.git`,
      ref,
      ref_name: ref.replace(/^refs\/(heads|tags)\//, '').replace(/^refs\/pull\/(\d+)\/merge$/, '$1/merge'),
      ref_type: ref.startsWith('refs/tags/') ? 'tag' : 'branch',
      sha: info.sha,
      head_ref: info.headRef ?? '',
      base_ref: info.baseRef ?? '',
      run_id: String(run.id),
      run_number: String(run.number),
      run_attempt: String(run.attempt),
      workflow: wf.name,
      workflow_ref: `${w.owner}/${w.repo}/${wf.path}@refs/heads/${w.defaultBranch}`,
      job: job?.id ?? '',
      token: gh.botToken,
      server_url: 'https://github.com',
      api_url: gh.url,
      graphql_url: `${gh.url}/graphql`,
      workspace: workspace ?? '',
      retention_days: '90',
    };
  }

  function inputsContext(run: Run): Json {
    if (run.event.name !== 'workflow_dispatch') return {};
    const defs = run.workflow.template.events.workflow_dispatch?.inputs ?? {};
    const given = run.event.inputs ?? {};
    const out: Json = {};
    for (const [name, def] of Object.entries(defs)) {
      const raw = given[name] ?? (def.default !== undefined ? String(def.default) : '');
      out[name] = def.type === 'boolean' ? raw === 'true' : raw;
    }
    for (const [k, v] of Object.entries(given)) if (!(k in out)) out[k] = v;
    return out;
  }

  function tokenValue(token: TemplateToken, contexts: Contexts): string {
    const expr = tokens.expression(token);
    return expr !== undefined ? evaluateString(expr, contexts) : token.toString();
  }

  function tokenBoolean(token: TemplateToken | undefined, contexts: Contexts): boolean {
    if (!token) return false;
    const expr = tokens.expression(token);
    return expr !== undefined ? evaluateBoolean(expr, contexts) : token.toString() === 'true';
  }

  function concurrencyOf(token: TemplateToken | undefined, contexts: Contexts) {
    if (!token) return undefined;
    if (tokens.isMapping(token)) {
      const m = tokens.mapping(token);
      if (!m.group) return undefined;
      return {
        group: tokenValue(m.group, contexts),
        cancelInProgress: tokenBoolean(m['cancel-in-progress'], contexts),
        queueMax: m.queue !== undefined && tokenValue(m.queue, contexts) === 'max',
      };
    }
    return { group: tokenValue(token, contexts), cancelInProgress: false, queueMax: false };
  }

  function cancelRun(run: Run, reason: string) {
    run.state = 'cancelled';
    log.push(`cancelled: run ${run.id} (${run.workflow.file} on ${describe(run.event)}): ${reason}`);
    for (const job of run.workflow.jobs) {
      jobs.push({
        runId: run.id,
        attempt: run.attempt,
        workflow: run.workflow.file,
        job: job.id,
        event: run.event.name,
        ...(run.event.action ? { action: run.event.action } : {}),
        actor: run.event.actor,
        viaToken: run.event.viaToken,
        eventSeq: run.event.seq,
        status: 'cancelled',
        steps: [],
        durationMs: 0,
        ...(run.group !== undefined ? { group: run.group } : {}),
        reason,
      });
    }
  }

  function enqueue(run: Run) {
    runs.push(run);
    const g = run.group;
    if (g === undefined) return;
    const current = active.get(g);
    if (!current) {
      active.set(g, run);
      return;
    }
    const waiting = pending.get(g) ?? [];
    if (run.cancelInProgress && current.state === 'queued') {
      // not started yet in our sequential world: GitHub would cancel it in progress
      cancelRun(current, `cancel-in-progress in group ${g} (run ${run.id} arrived)`);
      active.set(g, run);
      for (const older of waiting) cancelRun(older, `replaced by run ${run.id} in group ${g}`);
      pending.delete(g);
      return;
    }
    if (!run.queueMax) {
      for (const older of waiting) cancelRun(older, `a newer run (${run.id}) is pending in concurrency group ${g}`);
      waiting.length = 0;
    } else if (waiting.length >= 100) {
      cancelRun(run, `the queue of concurrency group ${g} is full (100 pending)`);
      return;
    }
    waiting.push(run);
    pending.set(g, waiting);
    log.push(`pending: run ${run.id} waits for run ${current.id} in group ${g}`);
  }

  function release(run: Run) {
    const g = run.group;
    if (g === undefined || active.get(g) !== run) return;
    active.delete(g);
    const next = pending.get(g)?.shift();
    if (next) active.set(g, next);
  }

  function routeNewEvents() {
    while (processed < gh.events.length) {
      const e = gh.events[processed++]!;
      record(e);
      const info = infos.get(e.seq)!;
      if (e.viaToken === 'GITHUB_TOKEN' && !DISPATCH_EVENTS.has(e.name)) {
        log.push(`ignored: ${describe(e)}: events made with the GITHUB_TOKEN start no workflow`);
        continue;
      }
      const matched = workflows.filter((wf) => triggers(wf, e, info));
      if (matched.length === 0) {
        log.push(`ignored: ${describe(e)}: no workflow listens`);
        continue;
      }
      for (const wf of matched) {
        if (info.conflict) {
          log.push(`ignored: ${describe(e)} for ${wf.file}: the pull request has a merge conflict`);
          continue;
        }
        const number = (runNumbers.get(wf.file) ?? 0) + 1;
        runNumbers.set(wf.file, number);
        const run: Run = {
          id: nextRunId++,
          number,
          workflow: wf,
          event: e,
          info,
          cancelInProgress: false,
          queueMax: false,
          state: 'queued',
          attempt: 1,
        };
        const contexts: Contexts = { github: githubContext(run), inputs: inputsContext(run), vars };
        const c = concurrencyOf(wf.concurrency, contexts);
        if (c) {
          run.group = c.group;
          run.cancelInProgress = c.cancelInProgress;
          run.queueMax = c.queueMax;
        }
        w.workflowRuns.push({
          id: run.id,
          name: wf.name,
          workflow_id: 100_000 + workflows.indexOf(wf),
          head_branch: info.headRef ?? info.ref.replace(/^refs\/heads\//, ''),
          head_sha: info.sha,
          event: e.name,
          status: 'queued',
          conclusion: null,
          actor: e.actor,
          created_at: w.now(),
        });
        log.push(`queued: run ${run.id} of ${wf.file} for ${describe(e)}${run.group ? ` in group ${run.group}` : ''}`);
        enqueue(run);
      }
    }
  }

  // -- running ----------------------------------------------------------------------------------------------------

  /**
   * GITHUB_ENV and GITHUB_PATH as the runner applies them to a job's later steps, with its refusals: NODE_OPTIONS is
   * not accepted, and the default GITHUB_* and RUNNER_* variables cannot be overwritten.
   */
  function applyRunnerFiles(job: JobRunnerFiles, files: { envFile: Record<string, string>; pathFile: string[] }) {
    for (const [name, value] of Object.entries(files.envFile))
      if (name !== 'NODE_OPTIONS' && !/^(GITHUB|RUNNER)_/.test(name)) job.env[name] = value;
    job.path.unshift(...[...files.pathFile].reverse());
  }

  function readActionMeta(dir: string): ActionMeta {
    const file = ['action.yml', 'action.yaml'].map((f) => join(dir, f)).find((f) => existsSync(f));
    if (!file) throw new Error(`no action.yml in ${dir}`);
    try {
      return (parseYaml(readFileSync(file, 'utf8')) ?? {}) as ActionMeta;
    } catch (err) {
      throw new Error(`${file}: the action's metadata does not parse: ${(err as Error).message}`);
    }
  }

  function actionDefaults(meta: ActionMeta, contexts: Contexts): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, def] of Object.entries(meta.inputs ?? {})) {
      if (def?.default === undefined || def.default === null) continue;
      out[name] = interpolate(String(def.default), contexts);
    }
    return out;
  }

  /** The HydraFlow action a `uses:` names: the root action or one under actions/; undefined if it is not HydraFlow. */
  function hydraflowAction(uses: string): { dir: string; phase?: string } | undefined {
    if (/^hydraflow\/hydraflow@/i.test(uses) || uses === './' || uses === '.') return { dir: actionRoot };
    const phase = /^(?:[\w.-]+\/[\w.-]+\/|\.\/)actions\/([\w-]+)(?:@.+)?$/.exec(uses);
    if (phase) {
      const dir = join(actionRoot, 'actions', phase[1]!);
      if (!existsSync(join(dir, 'action.yml'))) throw new Error(`uses: ${uses}: HydraFlow has no actions/${phase[1]}`);
      return { dir, phase: phase[1]! };
    }
    return undefined;
  }

  const SHELLS: Record<string, string[]> = {
    bash: ['bash', '--noprofile', '--norc', '-eo', 'pipefail'],
    sh: ['sh', '-e'],
  };

  async function runShell(
    rt: JobRunner,
    script: string,
    shell: string,
    env: Record<string, string>,
    timeoutMs: number,
    stepDir: string,
  ) {
    const file = join(stepDir, 'step.sh');
    writeFileSync(file, script);
    const [cmd, ...args] = [...jobUser(rt), ...SHELLS[shell]!];
    const child = spawn(cmd!, [...args, file], { cwd: rt.workspace, env });
    rt.run.active = child;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await waitForStep(child, timeoutMs, () => {
      stderr += `\nthe step did not finish within ${timeoutMs} ms: killed\n`;
      return 1;
    }).finally(() => {
      if (rt.run.active === child) rt.run.active = undefined;
    });
    return { code, stdout, stderr };
  }

  function artifactContext(rt: JobRunner, uses: string, inputs: Record<string, string>): ArtifactStepContext {
    const { run } = rt;
    return {
      store: artifacts,
      owner: w.owner,
      repo: w.repo,
      runId: run.id,
      attempt: run.attempt,
      job: rt.job.id,
      headBranch: run.info.headRef ?? run.info.ref.replace(/^refs\/heads\//, ''),
      headSha: run.info.headSha,
      workspace: rt.workspace,
      home: rt.home,
      uses,
      inputs,
      now: () => new Date(w.clock()),
    };
  }

  /**
   * One step, its inputs and script already evaluated: `uses:` an action the simulator knows, or `run:` a script in
   * the job's workspace, with the job's HOME, RUNNER_TEMP and RUNNER_TRACKING_ID.
   */
  async function runStep(rt: JobRunner, spec: StepSpec, contexts: Contexts, depth = 0): Promise<StepResult> {
    const { run, job } = rt;
    // What earlier steps appended to GITHUB_ENV and GITHUB_PATH applies to this one; the step's own env: wins.
    const env: Record<string, string> = {
      ...options.machineEnv,
      ...rt.files.env,
      ...(rt.files.path.length > 0 ? { PATH: [...rt.files.path, process.env.PATH ?? ''].join(':') } : {}),
      ...spec.env,
    };
    const timeoutMs = Math.max(1_000, Math.min(options.stepTimeoutMs ?? 120_000, rt.deadline - Date.now()));
    const stepDir = mkdtempSync(join(rt.dir, '_runner_file_commands', 'step-'));
    const base = {
      gh,
      event: run.event.name,
      payload: run.info.payload,
      runId: String(run.id),
      runAttempt: run.attempt,
      workflowFile: run.workflow.path,
      workspace: rt.workspace,
      timeoutMs,
      stepDir,
      eventPath: eventPathOf(rt),
    };
    const runnerVars: Record<string, string> = {
      GITHUB_REF: run.info.ref,
      GITHUB_REF_NAME: String((contexts.github as Json).ref_name),
      GITHUB_SHA: run.info.sha,
      GITHUB_HEAD_REF: run.info.headRef ?? '',
      GITHUB_BASE_REF: run.info.baseRef ?? '',
      GITHUB_ACTOR: run.event.actor,
      GITHUB_TRIGGERING_ACTOR: run.event.actor,
      GITHUB_JOB: job.id,
      GITHUB_WORKFLOW: run.workflow.name,
      GITHUB_RUN_NUMBER: String(run.number),
    };
    // What the runner sets for every step and no step can change.
    const machine: Record<string, string> = {
      ...(options.clock ? options.clock.stepEnv() : {}),
      RUNNER_TEMP: rt.temp,
      RUNNER_TRACKING_ID: rt.trackingId,
      ...(spec.actionPath !== undefined ? { GITHUB_ACTION_PATH: spec.actionPath } : {}),
    };
    // The step's file-command files stay in the job's runner directory, as on a runner, until the lifecycle closes.
    if (spec.uses !== undefined) {
      const uses = spec.uses;
      if (/^actions\/checkout@/i.test(uses)) {
        // A local clone: no credentials exist anywhere (persist-credentials has nothing to persist). Its git runs
        // without blocking this process: on GitHub the checkout runs on the job's machine while the model provider
        // answers what the job's model proxy sent (the simulator once held the first turn's request ~80 ms here).
        rmSync(rt.workspace, { recursive: true, force: true });
        const ref = spec.with.ref || run.info.sha;
        const isSha = /^[0-9a-f]{40}$/.test(ref);
        // One git process where it can (a branch): each costs ~10 ms of the lifecycle the bench measures.
        const branchSha = isSha ? undefined : new GitRepo(options.repoDir).refs().get(`refs/heads/${ref}`);
        if (branchSha) await runGitAsync(['clone', '--quiet', '--branch', ref, options.repoDir, rt.workspace]);
        else {
          await runGitAsync(['clone', '--quiet', '--no-checkout', options.repoDir, rt.workspace]);
          await runGitAsync(['checkout', '--quiet', '--detach', ref], { cwd: rt.workspace });
        }
        const head =
          branchSha ?? (isSha ? ref : (await runGitAsync(['rev-parse', 'HEAD'], { cwd: rt.workspace })).stdout.trim());
        return { outcome: 'success', outputs: { ref, commit: head }, stdout: `checked out ${ref} at ${head}\n` };
      }
      if (/^actions\/upload-artifact@/i.test(uses)) return uploadArtifact(artifactContext(rt, uses, spec.with));
      if (/^actions\/download-artifact@/i.test(uses)) return downloadArtifact(artifactContext(rt, uses, spec.with));
      const hf = hydraflowAction(uses);
      if (!hf) {
        throw new Error(
          `${run.workflow.file}: job ${job.id}: ${spec.where}uses: ${uses} is not simulated (supported: ` +
            `actions/checkout@*, actions/upload-artifact@*, actions/download-artifact@*, hydraflow/hydraflow@*, ./, ` +
            `<owner>/<repo>/actions/<name>@*)`,
        );
      }
      const meta = readActionMeta(hf.dir);
      const inputs = { ...actionDefaults(meta, contexts), ...spec.with };
      if (meta.runs?.using === 'composite') {
        return await runComposite(rt, hf.dir, meta, inputs, spec.env, contexts, depth);
      }
      // A node action: the built bundle as a child process of node, the way the runner starts it.
      const result = await runAction({
        ...base,
        inputs,
        entry: join(hf.dir, meta.runs?.main ?? 'dist/index.js'),
        launcher: jobUser(rt),
        onSpawn: (child) => (rt.run.active = child),
        env: {
          HOME: rt.home,
          ...env,
          ...actionEnv,
          ...runnerVars,
          ...machine,
          ...(hf.phase ? { INPUT_PHASE: hf.phase } : {}),
        },
      }).finally(() => (rt.run.active = undefined));
      applyRunnerFiles(rt.files, result);
      return {
        outcome: result.exitCode === 0 ? 'success' : 'failure',
        outputs: result.outputs,
        stdout: result.stdout,
        ...(result.stderr ? { stderr: result.stderr } : {}),
        ...(result.summary ? { summary: result.summary } : {}),
      };
    }

    // run: (inside a HydraFlow composite action, with the environment HydraFlow's steps get)
    const shell = spec.shell ?? 'bash';
    if (!SHELLS[shell]) {
      throw new Error(`${run.workflow.file}: job ${job.id}: ${spec.where}shell: ${shell} is not simulated (bash, sh)`);
    }
    const stepEnv = {
      ...runnerEnv({ ...base, env: { HOME: rt.home } }, stepDir),
      ...runnerVars,
      ...env,
      ...(spec.actionPath !== undefined ? actionEnv : {}),
      ...machine,
    };
    const r = await runShell(rt, spec.run ?? '', shell, stepEnv, timeoutMs, stepDir);
    applyRunnerFiles(rt.files, readRunnerFiles(stepEnv));
    const summary = readFileSync(stepEnv.GITHUB_STEP_SUMMARY!, 'utf8');
    return {
      outcome: r.code === 0 ? 'success' : 'failure',
      ...(r.code !== 0 ? { exitCode: r.code } : {}),
      outputs: parseOutputFile(readFileSync(stepEnv.GITHUB_OUTPUT!, 'utf8')),
      stdout: r.stdout,
      ...(r.stderr ? { stderr: r.stderr } : {}),
      ...(summary ? { summary } : {}),
    };
  }

  /** A composite step's `if:` as the runner reads it: `${{ }}` optional, `success() &&` unless a status function. */
  function compositeCondition(raw: unknown): string {
    if (raw === undefined || raw === null || String(raw).trim() === '') return 'success()';
    let expr = String(raw).trim();
    const wrapped = /^\$\{\{([\s\S]*)\}\}$/.exec(expr);
    if (wrapped) expr = wrapped[1]!.trim();
    return /\b(success|failure|always|cancelled)\s*\(/.test(expr) ? expr : `success() && (${expr})`;
  }

  /**
   * A composite action's steps, for real: `inputs` (with: over the defaults), `github.action_path`, the outer step's
   * env under each step's own env:, `if:`, `id`s and their outputs, continue-on-error, and the action's `outputs:`
   * (`value: ${{ steps.x.outputs.y }}`) as the outer step's outputs. No `secrets` context, as on GitHub.
   */
  async function runComposite(
    rt: JobRunner,
    dir: string,
    meta: ActionMeta,
    inputs: Record<string, string>,
    outerEnv: Record<string, string>,
    outer: Contexts,
    depth: number,
  ): Promise<StepResult> {
    const where = `action ${relative(actionRoot, dir) || '.'}: `;
    if (depth >= 9)
      throw new Error(`${rt.run.workflow.file}: job ${rt.job.id}: ${where}composite actions nest too deep`);
    const stepsCtx: Record<string, { outputs: Record<string, string>; outcome: string; conclusion: string }> = {};
    const github = { ...(outer.github as Json), action_path: dir };
    const contextsFor = (env: Record<string, string>): Contexts => ({
      github,
      inputs,
      steps: stepsCtx,
      runner: outer.runner,
      job: outer.job,
      strategy: {},
      matrix: {},
      env,
    });
    let failed = false;
    let exitCode: number | undefined;
    let stdout = '';
    let stderr = '';
    let summary = '';
    for (const [i, s] of (meta.runs?.steps ?? []).entries()) {
      const id = s.id ?? `__composite_${i}`;
      const label = `${where}step ${s.name ?? s.id ?? i}: `;
      const fail = (what: string, err: unknown) =>
        new Error(`${rt.run.workflow.file}: job ${rt.job.id}: ${label}${what}: ${(err as Error).message}`);
      const env: Record<string, string> = { ...outerEnv };
      try {
        for (const [k, v] of Object.entries(s.env ?? {})) env[k] = interpolate(String(v ?? ''), contextsFor(env));
      } catch (err) {
        throw fail('env', err);
      }
      const contexts = contextsFor(env);
      let runIt: boolean;
      try {
        // As GitHub's runner evaluates a composite's own steps: success() and failure() are the composite's status
        // (github.action_status: whether one of its own steps failed), not the job's; cancelled() is the job's. A
        // composite entered by an outer `if: always()` after a failed step runs its steps under the default success().
        runIt = evaluateBoolean(compositeCondition(s.if), contexts, { failed, cancelled: rt.cancelled() });
      } catch (err) {
        throw fail(`if: ${String(s.if)}`, err);
      }
      if (!runIt) {
        stepsCtx[id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' };
        continue;
      }
      let spec: StepSpec;
      try {
        if (s.uses !== undefined) {
          const withInputs: Record<string, string> = {};
          for (const [k, v] of Object.entries(s.with ?? {})) withInputs[k] = interpolate(String(v ?? ''), contexts);
          spec = { uses: String(s.uses), with: withInputs, env, actionPath: dir, where: label };
        } else if (s.run !== undefined) {
          if (!s.shell) throw new Error('a run step of a composite action needs shell:');
          spec = {
            run: interpolate(String(s.run), contexts),
            shell: s.shell,
            with: {},
            env,
            actionPath: dir,
            where: label,
          };
        } else throw new Error('neither uses: nor run:');
      } catch (err) {
        throw fail('step', err);
      }
      const r = await runStep(rt, spec, contexts, depth + 1);
      stdout += r.stdout;
      if (r.stderr) stderr += r.stderr;
      if (r.summary) summary += r.summary;
      const continueOnError = s['continue-on-error'] === true || String(s['continue-on-error']) === 'true';
      const conclusion = r.outcome === 'failure' && continueOnError ? 'success' : r.outcome;
      stepsCtx[id] = { outputs: r.outputs, outcome: r.outcome, conclusion };
      if (conclusion === 'failure') failed = true;
      if (r.outcome === 'failure') exitCode ??= r.exitCode;
    }
    const outputs: Record<string, string> = {};
    for (const [name, def] of Object.entries(meta.outputs ?? {})) {
      try {
        outputs[name] = interpolate(String(def?.value ?? ''), contextsFor({ ...outerEnv }));
      } catch (err) {
        throw new Error(
          `${rt.run.workflow.file}: job ${rt.job.id}: ${where}outputs.${name}: ${(err as Error).message}`,
        );
      }
    }
    return {
      outcome: failed ? 'failure' : 'success',
      ...(failed && exitCode !== undefined ? { exitCode } : {}),
      outputs,
      stdout,
      ...(stderr ? { stderr } : {}),
      ...(summary ? { summary } : {}),
    };
  }

  function evalEnv(map: Record<string, TemplateToken>, contexts: Contexts): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, t] of Object.entries(map))
      out[k] = tokenValue(t, { ...contexts, env: { ...(contexts.env as Json), ...out } });
    return out;
  }

  /**
   * A job's `outputs:` when it ends; a value that holds a secret or a value a step masked (`::add-mask::`) is dropped,
   * as GitHub drops it (with a warning).
   */
  function jobOutputs(rt: JobRunner, contexts: Contexts, masked: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    const secretValues = [...Object.values(secrets), ...masked].filter((v) => v && v.length >= 4);
    for (const [name, token] of Object.entries(rt.job.outputs)) {
      let value: string;
      try {
        value = tokenValue(token, contexts);
      } catch (err) {
        throw new Error(`${rt.run.workflow.file}: job ${rt.job.id}: outputs.${name}: ${(err as Error).message}`);
      }
      if (secretValues.some((s) => value.includes(s))) {
        log.push(`warning: run ${rt.run.id} job ${rt.job.id}: Skip output '${name}' since it may contain secret.`);
        continue;
      }
      out[name] = value;
    }
    return out;
  }

  async function runJob(run: Run, job: LoadedJob, needs: Record<string, { result: string; outputs: Json }>) {
    const started = performance.now();
    const rec: JobRecord = {
      runId: run.id,
      attempt: run.attempt,
      workflow: run.workflow.file,
      job: job.id,
      event: run.event.name,
      ...(run.event.action ? { action: run.event.action } : {}),
      actor: run.event.actor,
      viaToken: run.event.viaToken,
      eventSeq: run.event.seq,
      status: 'success',
      steps: [],
      durationMs: 0,
      ...(run.group !== undefined ? { group: run.group } : {}),
      outputs: {},
    };
    const needsFailed = job.needs.some((n) => needs[n]?.result !== 'success');
    const baseContexts: Contexts = {
      github: githubContext(run, job),
      inputs: inputsContext(run),
      vars,
      needs,
    };
    let shouldRun: boolean;
    try {
      shouldRun = evaluateBoolean(job.if, baseContexts, {
        failed: needsFailed,
        cancelled: Boolean(run.cancelRequested),
      });
    } catch (err) {
      throw new Error(`${run.workflow.file}: job ${job.id}: if: ${job.if}: ${(err as Error).message}`);
    }
    if (!shouldRun) {
      rec.status = run.cancelRequested ? 'cancelled' : 'skipped';
      rec.reason = run.cancelRequested ? 'the run was cancelled' : `if: ${job.if}`;
      jobs.push(rec);
      return rec;
    }
    executed++;
    if (executed > maxJobs) {
      jobs.push({ ...rec, status: 'cancelled', reason: `maxJobs (${maxJobs}) exceeded` });
      throw new Error(
        `lifecycle: more than ${maxJobs} jobs ran; a workflow loop is a bug. Jobs so far:\n${formatTimeline(jobs)}`,
      );
    }
    // A machine of its own: a fresh runner directory with the (empty) workspace actions/checkout clones into, HOME and
    // RUNNER_TEMP; nothing in it is seen by another job.
    const dir = mkdtempSync(join(tmpdir(), `hydraflow-runner-${job.id}-`));
    const cancelledAtStart = Boolean(run.cancelRequested);
    const rt: JobRunner = {
      run,
      job,
      dir,
      workspace: join(dir, 'work', w.repo, w.repo),
      home: join(dir, 'home'),
      temp: join(dir, 'temp'),
      trackingId: newTrackingId(),
      files: { env: {}, path: [] },
      deadline: Date.now() + (job.timeoutMinutes ?? 360) * 60_000,
      ...(options.runAs?.jobs.includes(job.id) ? { user: jobUserOf(options.runAs.user) } : {}),
      // a job that started after the run was cancelled (its `if:` held: always()) runs its steps as any job does
      cancelled: () => Boolean(run.cancelRequested) && !cancelledAtStart,
    };
    for (const d of [rt.workspace, rt.home, rt.temp, join(dir, '_runner_file_commands')])
      mkdirSync(d, { recursive: true });
    // The event payload, once per job where the runner keeps it (RUNNER_TEMP/_github_workflow/event.json): every step
    // of the job reads this one file, so what one step's processes write to it, the later steps read.
    mkdirSync(join(rt.temp, '_github_workflow'));
    writeFileSync(eventPathOf(rt), JSON.stringify(run.info.payload));
    const stepsCtx: Record<string, { outputs: Record<string, string>; outcome: string; conclusion: string }> = {};
    const runnerContext = { os: 'Linux', arch: 'X64', name: 'hydraflow-simulator', temp: rt.temp };
    const masked: string[] = [];
    let failed = false;
    /** The expression contexts as they stand now: for a step's `if:`/`with:`/`env:`, and for the job's outputs. */
    const jobContexts = (): Contexts => ({
      ...baseContexts,
      github: githubContext(run, job, rt.workspace),
      secrets,
      steps: stepsCtx,
      job: { status: failed ? 'failure' : 'success' },
      runner: runnerContext,
      matrix: {},
      strategy: {},
      env: {},
    });
    try {
      for (const step of job.steps) {
        const contexts = jobContexts();
        const env = evalEnv({ ...run.workflow.env, ...job.env, ...step.env }, contexts);
        contexts.env = env;
        let runIt: boolean;
        try {
          runIt = evaluateBoolean(step.if, contexts, { failed, cancelled: rt.cancelled() });
        } catch (err) {
          throw new Error(
            `${run.workflow.file}: job ${job.id}: step ${step.name}: if: ${step.if}: ${(err as Error).message}`,
          );
        }
        if (!runIt) {
          rec.steps.push({ id: step.id, name: step.name, outcome: 'skipped', outputs: {}, stdout: '' });
          stepsCtx[step.id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' };
          continue;
        }
        const withInputs: Record<string, string> = {};
        for (const [k, t] of Object.entries(step.with)) withInputs[k] = tokenValue(t, contexts);
        const spec: StepSpec = {
          ...(step.uses !== undefined ? { uses: step.uses } : { run: tokenValue(step.run!, contexts) }),
          with: withInputs,
          env,
          where: '',
        };
        const startedAt = Date.now();
        const cancelledBefore = rt.cancelled();
        const ran = await runStep(rt, spec, contexts);
        // a step the cancellation interrupted is `cancelled` on GitHub, not `failure`
        const r =
          !cancelledBefore && rt.cancelled() && ran.outcome === 'failure'
            ? { ...ran, outcome: 'cancelled' as const }
            : ran;
        rec.steps.push({ id: step.id, name: step.name, ...r, startedAt, endedAt: Date.now() });
        for (const m of r.stdout.matchAll(/^::add-mask::(.*)$/gm)) masked.push(m[1]!.trim());
        const conclusion = r.outcome === 'failure' && step.continueOnError ? 'success' : r.outcome;
        stepsCtx[step.id] = { outputs: r.outputs, outcome: r.outcome, conclusion };
        if (conclusion === 'failure') failed = true;
      }
      rec.outputs = jobOutputs(rt, jobContexts(), masked);
    } finally {
      rec.status = rt.cancelled() ? 'cancelled' : failed ? 'failure' : 'success';
      // "Cleaning up orphan processes": whatever the job's steps left running dies with the job.
      rec.orphansKilled = killTrackedProcesses(rt.trackingId);
      if (rec.orphansKilled > 0) {
        log.push(`cleaned up ${rec.orphansKilled} orphan process(es) of run ${run.id} job ${job.id}`);
      }
      rec.durationMs = Math.round(performance.now() - started);
      jobs.push(rec);
      if (options.keepWorkspaces) {
        rec.workspace = rt.workspace;
        rec.runnerDir = rt.dir;
      } else finishedRunners.push(rt.dir);
    }
    // what the job pushed becomes events; the job reports a check run on the event's head commit
    gh.syncGit(pusher({ workflow: run.workflow.file, job: job.id, event: run.event.name }));
    const checkRun = reportCheck(run, job, rec.status);
    recordJob(run, job, rec, checkRun, masked);
    return rec;
  }

  /**
   * The job as GitHub's API reports it once it ended (GET /actions/runs/{run_id}/attempts/{n}/jobs): its steps between
   * "Set up job" and "Complete job", and its check run's annotations — each `::error::`, `::warning::` and `::notice::`
   * line of its steps, masked as the log is, "Process completed with exit code N." for a failed `run:` step and "The
   * operation was canceled." for a step a cancellation interrupted.
   */
  function recordJob(run: Run, job: LoadedJob, rec: JobRecord, checkRunId: number, masked: readonly string[]) {
    const mask = (text: string) => masked.reduce((t, m) => (m ? t.split(m).join('***') : t), text);
    const annotations: EmulatedAnnotation[] = [];
    for (const step of rec.steps) {
      annotations.push(...workflowCommandAnnotations(step.stdout));
      if (step.outcome === 'failure' && step.exitCode !== undefined)
        annotations.push({
          level: 'failure',
          title: null,
          message: `Process completed with exit code ${step.exitCode}.`,
        });
      if (step.outcome === 'cancelled')
        annotations.push({ level: 'failure', title: null, message: 'The operation was canceled.' });
    }
    if (annotations.length > 0)
      w.checkRunAnnotations.set(
        checkRunId,
        annotations.map((a) => ({ ...a, message: mask(a.message), title: a.title === null ? null : mask(a.title) })),
      );
    const at = w.now();
    const stepName = (s: StepRecord) => {
      const loaded = job.steps.find((l) => l.id === s.id);
      return loaded?.uses !== undefined && s.name === loaded.uses ? `Run ${s.name}` : s.name;
    };
    w.workflowJobs.push({
      id: checkRunId,
      runId: run.id,
      runAttempt: run.attempt,
      name: job.name,
      workflowName: run.workflow.name,
      headSha: run.info.headSha,
      headBranch: run.info.headRef ?? null,
      conclusion: rec.status === 'success' || rec.status === 'failure' ? rec.status : 'cancelled',
      startedAt: at,
      completedAt: at,
      steps: [
        { name: 'Set up job', conclusion: 'success' },
        ...rec.steps.map((s) => ({ name: stepName(s), conclusion: s.outcome })),
        { name: 'Complete job', conclusion: 'success' },
      ],
      checkRunId,
    });
  }

  function reportCheck(run: Run, job: LoadedJob, status: JobStatusName): number {
    const id = w.nextId('checkRun');
    const now = w.now();
    const check = {
      id,
      node_id: w.nodeId('CR', id),
      name: job.name,
      head_sha: run.info.headSha,
      status: 'completed' as const,
      conclusion: status,
      started_at: now,
      completed_at: now,
      output: { title: `${run.workflow.name} / ${job.name}`, summary: null, text: null },
      external_id: String(run.id),
      details_url: `https://github.com/${w.owner}/${w.repo}/actions/runs/${run.id}`,
      app: 'github-actions',
    };
    w.checkRuns.set(id, check);
    w.emit({
      name: 'check_run',
      action: 'completed',
      checkRun: id,
      checkName: job.name,
      sha: check.head_sha,
      conclusion: status,
      actor: BOT_LOGIN,
      viaToken: 'GITHUB_TOKEN',
    });
    return id;
  }

  async function executeRun(run: Run) {
    run.state = 'running';
    const wfRun = w.workflowRuns.find((r) => r.id === run.id);
    if (wfRun) wfRun.status = 'in_progress';
    const needs: Record<string, { result: string; outputs: Json }> = { ...run.kept };
    const remaining = run.workflow.jobs.filter((j) => !(j.id in needs));
    let anyFailed = false;
    while (remaining.length) {
      const idx = remaining.findIndex((j) => j.needs.every((n) => n in needs));
      if (idx < 0)
        throw new Error(
          `${run.workflow.file}: jobs with unsatisfiable needs: ${remaining.map((j) => j.id).join(', ')}`,
        );
      const job = remaining.splice(idx, 1)[0]!;
      const rec = await runJob(run, job, needs);
      needs[job.id] = { result: rec.status, outputs: rec.outputs ?? {} };
      if (rec.status === 'failure') anyFailed = true;
    }
    run.state = 'done';
    const conclusion = run.cancelRequested ? 'cancelled' : anyFailed ? 'failure' : 'success';
    if (wfRun) {
      wfRun.status = 'completed';
      wfRun.conclusion = conclusion;
    }
    reportCompleted(run, conclusion);
  }

  /**
   * GitHub's workflow_run.completed for a finished run, as the actor (and token kind) of the event that started it;
   * runs of workflow_run events themselves report none (GitHub stops such chains after a few levels; one is enough here).
   */
  function reportCompleted(run: Run, conclusion: string) {
    if (run.event.name === 'workflow_run') return;
    const headRef = run.info.headRef ?? run.info.ref.replace(/^refs\/heads\//, '');
    const pull = [...w.pulls.values()].find((p) => p.head.ref === headRef && !p.merged);
    w.emit({
      name: 'workflow_run',
      action: 'completed',
      workflow: run.workflow.name,
      ref: headRef,
      sha: run.info.headSha,
      state: run.event.name,
      conclusion,
      ...(pull ? { pull: pull.number } : {}),
      actor: run.event.actor,
      viaToken: run.event.viaToken,
    });
  }

  return {
    workflows,
    jobs,
    log,
    artifacts,
    dispatch(eventName, action, overrides = {}) {
      const { viaToken, ...rest } = overrides;
      const payload = buildEvent(gh, eventName, action, rest);
      const actor = String((payload.sender as { login?: string } | undefined)?.login ?? rest.sender ?? w.owner);
      const pull =
        eventName === 'pull_request' ? ((payload.pull_request as Json | undefined)?.number as number) : undefined;
      const issue =
        eventName === 'issues' || eventName === 'issue_comment'
          ? ((payload.issue as Json | undefined)?.number as number)
          : undefined;
      const comment = eventName === 'issue_comment' ? ((payload.comment as Json | undefined)?.id as number) : undefined;
      const label = (payload.label as Json | undefined)?.name as string | undefined;
      return w.emit({
        name: eventName,
        ...(action !== undefined ? { action } : {}),
        ...(issue !== undefined ? { issue } : {}),
        ...(pull !== undefined ? { pull } : {}),
        ...(comment !== undefined ? { comment } : {}),
        ...(label !== undefined ? { label } : {}),
        ...(eventName === 'workflow_dispatch'
          ? {
              workflow: rest.workflow ?? 'hydraflow.yml',
              inputs: rest.inputs ?? {},
              ref: rest.ref ?? `refs/heads/${w.defaultBranch}`,
            }
          : {}),
        actor,
        viaToken: viaToken ?? (w.appLogins.has(actor) ? 'app' : actor === BOT_LOGIN ? 'GITHUB_TOKEN' : 'user'),
      });
    },
    cancel(runId) {
      const run = runs.find((r) => r.id === runId && (r.state === 'queued' || r.state === 'running'));
      if (!run) return false;
      if (run.state === 'queued') {
        cancelRun(run, 'cancelled by a human');
        return true;
      }
      run.cancelRequested = true;
      log.push(`cancelling: run ${run.id} (${run.workflow.file} on ${describe(run.event)}) in progress`);
      if (run.active) interruptStep(run.active);
      return true;
    },
    rerun(runId, options = {}) {
      const original = [...runs].reverse().find((r) => r.id === runId);
      if (!original || (original.state !== 'done' && original.state !== 'cancelled')) {
        throw new Error(`run ${runId} has not finished: only a finished run can be re-run`);
      }
      const kept: Record<string, { result: string; outputs: Json }> = {};
      if (options.failedJobs) {
        const last = new Map(
          jobs.filter((j) => j.runId === runId && j.attempt === original.attempt).map((j) => [j.job, j]),
        );
        // a job is kept when it succeeded and every job it needs is kept (until nothing more is)
        for (let more = true; more;) {
          more = false;
          for (const job of original.workflow.jobs) {
            const rec = last.get(job.id);
            if (job.id in kept || rec?.status !== 'success' || !job.needs.every((n) => n in kept)) continue;
            kept[job.id] = { result: rec.status, outputs: rec.outputs ?? {} };
            more = true;
          }
        }
      }
      const again: Run = { ...original, attempt: original.attempt + 1, state: 'queued', kept };
      log.push(
        `queued: re-run of ${options.failedJobs ? 'the failed jobs of ' : ''}run ${runId} (attempt ${again.attempt})`,
      );
      enqueue(again);
    },
    async runUntilQuiet() {
      const from = jobs.length;
      for (;;) {
        routeNewEvents();
        const next = runs.find((r) => r.state === 'queued' && (r.group === undefined || active.get(r.group) === r));
        if (!next) break;
        await executeRun(next);
        routeNewEvents(); // events that happened while it ran: the run still holds its group
        release(next);
      }
      const stuck = runs.filter((r) => r.state === 'queued');
      if (stuck.length) throw new Error(`lifecycle: runs left queued: ${stuck.map((r) => r.id).join(', ')}`);
      return jobs.slice(from);
    },
    close() {
      unsubscribe();
      serveArtifacts(w, () => []);
      artifacts.close();
      for (const dir of finishedRunners.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
