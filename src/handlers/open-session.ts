import { isBuiltPhase, isTrustedAuthor, phaseFacts, type Witness } from '@hydraflow/core';
import type { Issue, IssueComment } from '@hydraflow/github';
import { ModelGateway, type EarlyCall } from '../agents/model-gateway';
import type { App } from '../app';
import type { PhaseContext } from '../phases/phase-context';
import { openedIssue } from '../runner/event-issue';
import { remoteUrlOf, runUrlOf } from '../runner/context';
import { canHaveWorkingTree } from '../runner/working-tree';
import { gitTokenOf } from '../inputs';
import { IssueSession, type SessionOptions } from '../session/issue-session';
import { belowSteering } from './may-steer';

/**
 * The issue as the event delivered it, so the common case costs no GET; dispatched runs fetch it. So do re-runs: a
 * re-run replays the ORIGINAL payload, which may be days old — the issue may be closed since (property test
 * tests/property/pipeline-histories: a re-run of a crashed triage labelled a closed issue).
 */
export async function loadIssue(app: App, issueNumber: number): Promise<Issue> {
  return openedIssue(app.runner, issueNumber, app.inputs.phase) ?? app.issues.getIssue(issueNumber);
}

/**
 * `loadIssue`, and when that costs a GET, the issue's comments read at the same time (one round trip instead of two
 * before the session opens); hand `comments` to openPhase. Unused if the issue turns out closed: nothing is lost.
 *
 * `lockFirst`: for a run that takes the per-issue lock whatever it finds (a dispatched phase, the issue's own `opened`
 * run, the merge gate), the 👀 is put on first and the comments read once GitHub answered it, so the state is read
 * under the run's lock when it got it (ADR 0007: a state read before the lock may be written over meanwhile, and
 * reading it again under the lock would cost a request). Hand `locked` to openPhase, or to releaseFirstLock when the
 * run stops before it opens a session.
 */
export async function loadIssueAndComments(
  app: App,
  issueNumber: number,
  options: { lockFirst?: boolean } = {},
): Promise<{ issue: Issue; comments?: Promise<IssueComment[]>; locked?: Promise<Reaction | undefined> }> {
  // An issue that is gone stops the run here (one line, run.ts); any other failure leaves the lock to the phase, which
  // asks again and escalates what it meets, as before.
  const locked = options.lockFirst
    ? app.issues.reactToIssue(issueNumber, 'eyes').catch((error: unknown) => {
        if ((error as { status?: unknown } | null)?.status === 404) throw error;
        return undefined;
      })
    : undefined;
  locked?.catch(() => undefined); // its failure surfaces where the session awaits it
  const fromEvent = openedIssue(app.runner, issueNumber, app.inputs.phase);
  if (fromEvent) return { issue: fromEvent, ...(locked ? { locked } : {}) };
  const comments = locked
    ? locked.then(() => app.issues.readComments(issueNumber))
    : app.issues.readComments(issueNumber);
  comments.catch(() => undefined); // its failure surfaces where the session awaits it, if it does
  return { issue: await app.issues.getIssue(issueNumber), comments, ...(locked ? { locked } : {}) };
}

type Reaction = Awaited<ReturnType<App['issues']['reactToIssue']>>;

/** Frees the 👀 loadIssueAndComments put on first, for a run that stops before it opens a session (a closed issue). */
export async function releaseFirstLock(
  app: App,
  issue: number,
  locked: Promise<Reaction | undefined> | undefined,
): Promise<void> {
  const reaction = await locked;
  if (reaction?.created) await app.issues.removeIssueReaction(issue, reaction.id);
}

/**
 * A re-run (attempt > 1) that finds nothing to do must still free the 👀 lock its dead earlier attempt may have left
 * (no claim is published before a run's end), unless the lock was handed to the next phase — and on a closed issue
 * even then, since no phase will run on it. Property test tests/property/pipeline-histories found such locks leaked
 * after crash + re-run.
 */
export async function freeLockOfDeadAttempt(app: App, issue: Pick<Issue, 'number' | 'state'>): Promise<void> {
  if (app.runner.runAttempt <= 1) return;
  const session = await IssueSession.open(app.issues, sessionOptions(app, issue.number, 'cleanup', []));
  await (issue.state === 'closed' ? session.dropLock() : session.freeDeadAttemptsLock());
}

/** What every session of this run on `issue` shares: the run, HydraFlow's identities, the state keys, the repository. */
export function sessionOptions(
  app: App,
  issue: number,
  phase: string,
  labelsAtStart: readonly string[],
): SessionOptions {
  const witnesses = eventWitnesses(app, issue);
  return {
    issue,
    repo: app.runner.repositoryId,
    phase,
    runId: app.runner.runId,
    runAttempt: app.runner.runAttempt,
    botLogins: app.config.bot_logins,
    stateKey: app.inputs.stateKey,
    previousStateKey: app.inputs.previousStateKey,
    ...(witnesses.length > 0 ? { witnesses } : {}),
    labelsAtStart,
    now: app.now,
    maySteer: async (login) => (await belowSteering(app, login)) === undefined,
  };
}

/**
 * The text GitHub sent with this run's event when it is an edit or a deletion, by someone else, of one of HydraFlow's
 * comments on `issue`: the body before the edit (`changes.body.from`), or the deleted body. HydraFlow's newest block,
 * usually, which trust.ts weighs against what the comment holds now.
 */
function eventWitnesses(app: App, issue: number): Witness[] {
  const { eventName, payload } = app.runner;
  const comment = payload.comment as
    { id?: number; body?: unknown; user?: { login: string; type?: string } } | undefined;
  const by: unknown = payload.sender?.login;
  if (eventName !== 'issue_comment' || payload.issue?.number !== issue || !comment || typeof by !== 'string') return [];
  if (!isTrustedAuthor({ id: comment.id ?? 0, user: comment.user ?? null }, app.config.bot_logins)) return [];
  const body: unknown = payload.action === 'deleted' ? comment.body : payload.changes?.body?.from;
  if (typeof body !== 'string' || (payload.action !== 'edited' && payload.action !== 'deleted')) return [];
  const at: unknown = (comment as { updated_at?: unknown }).updated_at;
  return [
    {
      body,
      by,
      deleted: payload.action === 'deleted',
      commentId: Number(comment.id),
      ...(typeof at === 'string' ? { at } : {}),
    },
  ];
}

/**
 * The repository's web URL, from the issue's own (GitHub's answer, so right on GitHub Enterprise too), else from the
 * server URL: HydraFlow's links there are the only ones its progress comment keeps.
 */
function repositoryUrl(app: App, issue: Issue): string {
  const fromIssue = /^(https?:\/\/.+?)\/(?:issues|pull)\/\d+$/.exec(issue.htmlUrl ?? '')?.[1];
  return fromIssue ?? `${app.runner.serverUrl.replace(/\/$/, '')}/${app.runner.owner}/${app.runner.repo}`;
}

export async function openPhase(
  app: App,
  args: {
    issue: Issue;
    phase: string;
    actor: string | undefined;
    dispatched: boolean;
    forced: boolean;
    swept?: boolean;
    comment?: number | undefined;
    early?: EarlyCall | undefined;
    /** The issue's comments, if they are being read already (loadIssueAndComments). */
    comments?: Promise<IssueComment[]> | undefined;
    /** The lock, taken before the comments were read (loadIssueAndComments with lockFirst). */
    locked?: Promise<Reaction | undefined> | undefined;
  },
): Promise<PhaseContext> {
  const session = await IssueSession.open(
    app.issues,
    {
      ...sessionOptions(app, args.issue.number, args.phase, args.issue.labels),
      dispatched: args.dispatched,
      repositoryUrl: repositoryUrl(app, args.issue),
    },
    args.comments,
    args.locked,
  );
  return phaseContext(app, { ...args, session });
}

/** The context of one phase on an opened session (a fresh one, or the session the previous phase continued with). */
export function phaseContext(
  app: App,
  args: {
    issue: Issue;
    session: IssueSession;
    phase: string;
    actor: string | undefined;
    forced: boolean;
    swept?: boolean;
    comment?: number | undefined;
    early?: EarlyCall | undefined;
  },
): PhaseContext {
  const { session } = args;
  return {
    issue: args.issue,
    session,
    models: ModelGateway.forRun(app, args.phase, session, app.daySpend?.guard(session.options.issue)),
    daySpend: app.daySpend,
    ...(app.memory ? { memory: app.memory } : {}),
    ...(args.early ? { early: args.early } : {}),
    config: app.config,
    next: { workflow: app.workflow, ref: app.runner.defaultBranch },
    canContinueWith: (phase) => canContinueWith(app, phase),
    ensureRequests: app.ensureRequests,
    actor: args.actor,
    forced: args.forced,
    ...(args.swept ? { swept: true } : {}),
    ...(args.comment !== undefined ? { comment: args.comment } : {}),
    workspace: app.runner.workspace,
    issues: app.issues,
    pulls: app.pulls,
    pullsToOpen: app.pullsAsPusher ?? app.pulls,
    grooming: app.grooming,
    tempDir: app.runner.tempDir,
    remoteUrl: remoteUrlOf(app.runner),
    repository: `${app.runner.owner}/${app.runner.repo}`,
    gitToken: gitTokenOf(app.inputs),
    ...(app.inputs.phase === 'publish'
      ? {
          agentJob: {
            result: app.inputs.agentResult,
            runUrl: runUrlOf(app.runner),
            ...(app.inputs.meterKey ? { meterKey: app.inputs.meterKey } : {}),
          },
        }
      : {}),
  };
}

/**
 * Which phases this step can run after the current one, in the same job (the rest are dispatched). The routing step
 * (no explicit phase input) runs any phase: for implement it only prepares the task, and the workflow's agent and
 * publish steps follow it in this job. The publish step can go on with the review (and the merge gate it leads to)
 * when it holds a model key; never with implement, whose agent step is behind it. Steps that run one named phase
 * (a custom workflow using actions/plan, say) dispatch, since nothing is known of the steps around them. The chain
 * ends: implement is the routing step's last phase, and the publish step's review dispatches its refiner.
 */
export function canContinueWith(app: App, phase: string): boolean {
  // a phase of another job (publish) runs only there; one that has a run of its own (grooming, shape) is
  // dispatched; the hourly sweep goes on with no issue's next phase itself
  if (!isBuiltPhase(phase) || phaseFacts(phase).job !== 'routing' || phaseFacts(phase).ownRun || !app.chain)
    return false;
  const step = app.inputs.phase;
  // implement's hand-off works on the repository: the job's checkout, or one HydraFlow fetches into an empty workspace
  // (a job whose workspace holds something else, a workflow of the user's own, dispatches it)
  if (!step) return phase !== 'implement' || canHaveWorkingTree(app.runner.workspace);
  if (step !== 'publish' || phase === 'implement') return false;
  const key = app.config.provider === 'anthropic' ? app.inputs.anthropicApiKey : app.inputs.openaiApiKey;
  return Boolean(key);
}
