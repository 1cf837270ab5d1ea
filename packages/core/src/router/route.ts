/**
 * The router: a pure function from a GitHub event to one Decision. Rules (see docs/state-machine.md):
 *
 * - HydraFlow's own writes never start work: events whose sender is one of `botLogins`, or any Bot not in
 *   `commands.allowed_bots`, are skipped (no self-loops). Exceptions: `workflow_dispatch` (HydraFlow's deliberate hop
 *   between phases; the original actor travels in the inputs, for the record only: it grants nothing) and `issues.closed` cleanup.
 * - Pull requests seen as issues, and closed issues, are skipped except for `issues.closed` cleanup.
 * - issues.opened → triage when auto_triage (unless it was opened with a pipeline label: its `labeled` event acts).
 * - issues.labeled hydraflow-find by a human → triage; another pipeline label → override to that stage.
 * - issues.unlabeled of a pipeline label by a human → override to null, only when no other pipeline label remains.
 * - issues.edited → groom again when the issue waits in grooming (hydraflow-groom) and a human changed its body
 *   materially or checked a question's box (`materialBodyEdit`); other edits are skipped.
 * - issue_comment.created → slash command from the first line; `edited` and `deleted` carry no command (an edit must
 *   not replay or smuggle one in — post a new comment), but one by someone else of HydraFlow's own comment holding its
 *   state → state-check (ADR 0007: HydraFlow acts only on state it wrote last). A comment that is not a command re-runs grooming when the
 *   issue waits in grooming, it likely answers an open question (`likelyAnswers`: the seed's "not on every comment"),
 *   and the author is the issue's author or holds commands.min_permission (the decision's `minPermission`, asked of
 *   the permission API before any work: author_association is not access, and strangers cannot make the repository
 *   pay for model calls).
 * - issue_comment.created, not a command, on an issue waiting in shape (hydraflow-shape) → shape, with the comment's id
 *   (a choice of direction or a conversation turn; the phase checks the author's permission, so a stranger's reply
 *   gets a visible reason: docs/adr/0016-shape.md).
 * - workflow_dispatch with inputs {issue, phase, actor} → that phase; phase doctor, resume-paused or sweep needs no
 *   issue.
 * - schedule (the template's hourly run) → sweep: resume the issues budgets.per_day paused on an earlier UTC day, then
 *   triage the issues still waiting with hydraflow-find (ADR 0014).
 * - Pull requests are mapped to issues by HydraFlow's branch name `hydraflow/issue-<n>` (same repository, never a
 *   fork). The decision carries the pull request number when the event names one; the phase then checks that it is
 *   the pull request recorded in the issue's state (`implement.pull`), so a human's lookalike branch changes nothing.
 *   - pull_request_review.submitted, approved, by a human → merge (the phase checks the reviewer's permission);
 *   - pull_request_review.submitted, changes requested or commented, by a human → feedback (a refine round);
 *   - issue_comment.created on a pull request: `/ship-it` → a command for the merge phase (permission-checked like
 *     every command), `/help` → the help reply; other commands are skipped;
 *   - workflow_run.completed, check_suite.completed, status (not pending) on HydraFlow's branch → merge (CI
 *     finished; the sender does not matter: these carry no instruction, the merge gate re-reads everything);
 *   - pull_request.synchronize by a human (someone pushed to HydraFlow's branch) → review (a new round);
 *   - every other pull-request event, and check_run → skip with a reason.
 */
import { hasLogin } from '../config/logins';
import type { HydraflowConfig, Permission } from '../config/schema';
import { isPipelineLabel, stageOf, type PipelineStage } from '../pipeline/labels';
import { ISSUE_PHASES, isIssuePhase, type IssuePhase } from '../pipeline/phases';
import { labelNames, pipelineLabelsOf } from '../pipeline/transitions';
import { likelyAnswers, materialBodyEdit } from '../groom/triggers';
import { openQuestions, parseQuestionsSection } from '../groom/questions';
import { defaultCommands, parseCommand, type CommandRegistry } from './commands';
import { stricterPermission } from './permissions';
import { hasStateBlock } from '../state/codec';
import { staleRunningLabels } from '../adversarial/labels';

export interface RouterEvent {
  /** The event name (GITHUB_EVENT_NAME), e.g. `issues`, `issue_comment`, `workflow_dispatch`. */
  name: string;
  /** payload.action, when the caller has it separately; defaults to payload.action. */
  action?: string;

  payload: any;
}

export type Decision =
  | { kind: 'skip'; reason: string }
  | {
      kind: 'phase';
      phase: IssuePhase;
      issue: number;
      actor: string;
      dispatched?: boolean;
      /** The pull request the event was about (pull-request events): the phase checks it is HydraFlow's. */
      pull?: number;
      /** The actor must hold this permission (checked before any work; below it nothing happens, not even a reply). */
      minPermission?: Permission;
      /** The comment that started it (a reply to shape's directions): the phase reads it and handles it once. */
      comment?: number;
    }
  | {
      kind: 'command';
      /** The registered command name, or `unknown` (reply with help; `requested` holds what was typed). */
      command: string;
      requested?: string;
      args: string;
      /** The phase the command starts (null: reply only, e.g. /help and unknown commands). */
      phase: string | null;
      /** The issue or pull request the comment is on (a reply goes there). */
      issue: number;
      commentId: number;
      actor: string;
      minPermission: Permission;
      /** Set when the comment is on a pull request (`/ship-it` there means "merge"): its number. */
      pull?: number;
    }
  | {
      kind: 'override';
      issue: number;
      stage: PipelineStage | null;
      actor: string;
      /** The pipeline label the event set (stage) or removed (stage null), as the event named it. */
      label: string;
    }
  /** Check the repository's setup and report (a workflow_dispatch of phase doctor; /doctor is a command). */
  | { kind: 'doctor'; actor: string }
  /**
   * Resume the issues budgets.per_day paused on an earlier UTC day: the workflow's daily `schedule`, or a
   * workflow_dispatch of phase resume-paused.
   */
  | { kind: 'resume-paused' }
  /**
   * The workflow's hourly `schedule` (or a workflow_dispatch of phase sweep): resume the paused issues, then triage the
   * issues still waiting with hydraflow-find, within the hour's GitHub budget (ADR 0014).
   */
  | { kind: 'sweep' }
  /**
   * Someone other than HydraFlow edited or deleted a comment of HydraFlow's that holds its state: judge the state now,
   * with the text GitHub sent (state/trust.ts, ADR 0007).
   */
  | { kind: 'state-check'; issue: number; actor: string }
  | {
      kind: 'close';
      issue: number;
      /** The pipeline label to keep: `fixed` when the issue was done, else null (strip them all). */
      target: 'fixed' | null;
    };

export interface RouterContext {
  botLogins: readonly string[];
  config: Pick<HydraflowConfig, 'auto_triage' | 'commands'>;
  /** Slash commands; defaults to the built-in registry. */
  commands?: CommandRegistry;
  /** Event handlers; defaults to DEFAULT_EVENT_HANDLERS. Later phases pass `{ ...DEFAULT_EVENT_HANDLERS, pull_request: ... }`. */
  handlers?: Readonly<Record<string, EventHandler>>;
  /** The phases a workflow_dispatch may name; defaults to the issue phases of the phase table (pipeline/phases.ts). */
  knownPhases?: readonly IssuePhase[];
}

export type EventHandler = (event: RouterEvent & { action: string | undefined }, ctx: RouterContext) => Decision;

const skip = (reason: string): Decision => ({ kind: 'skip', reason });

const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;
const PHASE = /^[a-z][a-z0-9-]{0,39}$/;

function lower(xs: readonly string[]): Set<string> {
  return new Set(xs.map((x) => x.toLowerCase()));
}

/** Is this GitHub user HydraFlow itself, or a bot that is not allowlisted? */
function isUntrustedAutomation(
  user: { login?: string; type?: string } | null | undefined,
  ctx: RouterContext,
): string | undefined {
  const login = user?.login;
  if (!login) return 'the event has no sender';
  if (lower(ctx.botLogins).has(login.toLowerCase()))
    return `caused by HydraFlow itself (${login}); its own writes never start work`;
  const isBot = user?.type === 'Bot' || login.toLowerCase().endsWith('[bot]');
  if (isBot && !lower(ctx.config.commands.allowed_bots).has(login.toLowerCase())) {
    return `caused by the bot ${login}, which is not in commands.allowed_bots`;
  }
  return undefined;
}

function issueNumber(payload: { issue?: { number?: unknown } }): number | undefined {
  const n = payload?.issue?.number;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
}

// ---------------------------------------------------------------------------------------------------------------

const routeIssues: EventHandler = (event, ctx) => {
  const p = event.payload;
  const issue = issueNumber(p);
  if (issue === undefined) return skip('issues event without an issue number');
  const labels = labelNames(p.issue?.labels ?? []);

  if (event.action === 'closed') {
    const present = pipelineLabelsOf(labels);
    // No stage label, but a 👀 may still be there (a lock handed to a phase that will never run now), or a dead run's
    // transient adversarial label (property test tests/property/pipeline-histories, seed 636023180): clean up.
    const leftover = staleRunningLabels(labels).length > 0;
    if (present.length === 0 && !(Number(p.issue?.reactions?.eyes) > 0) && !leftover)
      return skip('closed issue has no pipeline label');
    const done = present.some((l) => stageOf(l.toLowerCase()) === 'fixed');
    if (done && present.length === 1 && !leftover) return skip('closed issue is already marked hydraflow-fixed');
    return { kind: 'close', issue, target: done ? 'fixed' : null };
  }
  if (p.issue?.pull_request) return skip('pull requests are not handled as issues');
  if (p.issue?.state === 'closed') return skip('the issue is closed; HydraFlow acts on open issues only');

  const untrusted = isUntrustedAutomation(p.sender, ctx);
  if (untrusted) return skip(untrusted);
  const actor: string = p.sender.login;

  switch (event.action) {
    case 'opened':
      if (!ctx.config.auto_triage) return skip('auto_triage is off; label the issue hydraflow-find or comment /triage');
      if (pipelineLabelsOf(labels).length > 0) return skip('opened with a pipeline label; its labeled event decides');
      return { kind: 'phase', phase: 'triage', issue, actor };
    case 'labeled': {
      const name: unknown = p.label?.name;
      if (typeof name !== 'string' || pipelineLabelsOf([name]).length === 0) return skip('not a pipeline label');
      const stage = stageOf(name.toLowerCase())!;
      if (stage === 'find') return { kind: 'phase', phase: 'triage', issue, actor };
      return { kind: 'override', issue, stage, actor, label: name };
    }
    case 'unlabeled': {
      const name: unknown = p.label?.name;
      if (typeof name !== 'string' || pipelineLabelsOf([name]).length === 0) return skip('not a pipeline label');
      const remaining = pipelineLabelsOf(labels).filter((l) => l.toLowerCase() !== name.toLowerCase());
      if (remaining.length > 0) return skip(`another pipeline label remains (${remaining.join(', ')})`);
      return { kind: 'override', issue, stage: null, actor, label: name };
    }
    case 'edited': {
      if (!isGrooming(labels))
        return skip('issue edits are acted on only while grooming (comment /triage to re-triage)');
      const before: unknown = p.changes?.body?.from;
      if (typeof before !== 'string') return skip('the edit did not change the body');
      const edit = materialBodyEdit(before, String(p.issue?.body ?? ''));
      if (!edit.material) return skip(`the body edit is not material (${edit.reason})`);
      return { kind: 'phase', phase: 'groom', issue, actor };
    }
    default:
      return skip(`issues.${event.action ?? '?'} is not handled`);
  }
};

const routeIssueComment: EventHandler = (event, ctx) => {
  const p = event.payload;
  if (event.action === 'edited' || event.action === 'deleted') return stateChanged(event, ctx);
  if (event.action !== 'created') {
    return skip(`issue_comment.${event.action ?? '?'} is ignored: only new comments carry commands`);
  }
  const issue = issueNumber(p);
  if (issue === undefined) return skip('comment without an issue number');
  const onPull = Boolean(p.issue?.pull_request);
  if (p.issue?.state === 'closed') {
    return skip(`the ${onPull ? 'pull request' : 'issue'} is closed; HydraFlow acts on open ones only`);
  }
  const untrusted = isUntrustedAutomation(p.sender, ctx) ?? isUntrustedAutomation(p.comment?.user, ctx);
  if (untrusted) return skip(untrusted);
  const parsed = parseCommand(p.comment?.body);
  if (!parsed) return onPull ? skip('not a command') : (shapeReply(p, issue) ?? groomOnAnswer(p, issue, ctx));
  const commentId = p.comment?.id;
  if (typeof commentId !== 'number') return skip('comment without an id');
  const actor: string = p.comment.user.login;
  const registry = ctx.commands ?? defaultCommands;
  const spec = registry.get(parsed.name);
  const floor = ctx.config.commands.min_permission;
  if (onPull) {
    // On a pull request only /ship-it (merge it) and /help mean something; the merge phase resolves the issue from
    // the pull request's branch and checks it is HydraFlow's.
    if ((parsed.name === 'ship-it' || parsed.name === 'fix') && spec?.name === parsed.name) {
      return {
        kind: 'command',
        command: spec.name,
        args: parsed.args,
        phase: spec.name === 'ship-it' ? 'merge' : 'feedback',
        issue,
        pull: issue,
        commentId,
        actor,
        minPermission: stricterPermission(spec.minPermission, floor),
      };
    }
    if (parsed.name !== 'help' || !spec)
      return skip(`/${parsed.name} does nothing on a pull request (only /ship-it, /fix and /help)`);
  }
  if (!spec) {
    return {
      kind: 'command',
      command: 'unknown',
      requested: parsed.name,
      args: parsed.args,
      phase: null,
      issue,
      commentId,
      actor,
      minPermission: floor,
    };
  }
  return {
    kind: 'command',
    command: spec.name,
    args: parsed.args,
    phase: spec.phase,
    issue,
    commentId,
    actor,
    // commands.min_permission guards commands that start work; a reply-only command (/help) keeps its own minimum.
    minPermission: spec.phase === null ? spec.minPermission : stricterPermission(spec.minPermission, floor),
  };
};

/**
 * An edit or deletion of a comment: it never carries a command (an edit must not replay or smuggle one in). It matters
 * only when it changed HydraFlow's state — a comment of HydraFlow's holding a state block, before or after — and was
 * made by someone else: whoever that is, a bot too, since the check calls no model and HydraFlow's state is at stake.
 */
function stateChanged(event: RouterEvent & { action: string | undefined }, ctx: RouterContext): Decision {
  const p = event.payload;
  const ignored = `issue_comment.${event.action} is ignored: only new comments carry commands`;
  const issue = issueNumber(p);
  if (issue === undefined || p.issue?.pull_request) return skip(ignored);
  const hydraflow = lower(ctx.botLogins);
  const author: unknown = p.comment?.user?.login;
  const sender: unknown = p.sender?.login;
  if (typeof author !== 'string' || !hydraflow.has(author.toLowerCase())) return skip(ignored);
  if (typeof sender !== 'string' || hydraflow.has(sender.toLowerCase()))
    return skip(`caused by HydraFlow itself (${String(sender)}); its own writes never start work`);
  const before: unknown = event.action === 'edited' ? p.changes?.body?.from : p.comment?.body;
  const held = [before, p.comment?.body].some((b) => typeof b === 'string' && hasStateBlock(b));
  if (!held) return skip(`${ignored} (the comment holds no HydraFlow state)`);
  return { kind: 'state-check', issue, actor: sender };
}

const GROOM_LABEL = 'hydraflow-groom';

function isGrooming(labels: readonly string[]): boolean {
  return labels.some((l) => l.toLowerCase() === GROOM_LABEL);
}

/** A plain comment on an issue waiting in grooming: groom again if it likely answers an open question. */
function groomOnAnswer(p: any, issue: number, ctx: RouterContext): Decision {
  if (!isGrooming(labelNames(p.issue?.labels ?? []))) return skip('not a command');
  const author: string = p.comment?.user?.login ?? '';
  const open = openQuestions(parseQuestionsSection(String(p.issue?.body ?? '')).lines).filter(
    (q): q is typeof q & { id: string } => typeof q.id === 'string',
  );
  const answers = likelyAnswers(String(p.comment?.body ?? ''), open);
  if (answers.length === 0) return skip('the comment does not look like an answer to an open grooming question');
  const byAuthor = author !== '' && author === p.issue?.user?.login;
  return {
    kind: 'phase',
    phase: 'groom',
    issue,
    actor: author,
    ...(byAuthor ? {} : { minPermission: ctx.config.commands.min_permission }),
  };
}

const SHAPE_LABEL = 'hydraflow-shape';

/**
 * A plain comment on an issue waiting in shape (hydraflow-shape): shape reads it as a choice of direction or a turn of
 * the conversation. No permission floor here: the phase checks it (the issue's author, or commands.min_permission) so
 * that a stranger's reply gets a visible reason — and no model call (docs/adr/0016-shape.md).
 */
function shapeReply(p: any, issue: number): Decision | undefined {
  if (!labelNames(p.issue?.labels ?? []).some((l) => l.toLowerCase() === SHAPE_LABEL)) return undefined;
  const commentId = p.comment?.id;
  const author: unknown = p.comment?.user?.login;
  if (typeof commentId !== 'number' || typeof author !== 'string') return skip('comment without an id or author');
  return { kind: 'phase', phase: 'shape', issue, actor: author, comment: commentId };
}

const routeWorkflowDispatch: EventHandler = (event, ctx) => {
  const inputs = event.payload?.inputs ?? {};
  // doctor needs no issue: run it from the Actions tab with phase doctor
  if (typeof inputs.phase === 'string' && inputs.phase.trim() === 'doctor') {
    const who = typeof event.payload?.sender?.login === 'string' ? event.payload.sender.login : '';
    return { kind: 'doctor', actor: who };
  }
  // neither does resuming the paused issues (the schedule's work, and what a sweep that had more to do dispatches)
  if (typeof inputs.phase === 'string' && inputs.phase.trim() === 'resume-paused') return { kind: 'resume-paused' };
  // nor the hourly sweep, run by hand
  if (typeof inputs.phase === 'string' && inputs.phase.trim() === 'sweep') return { kind: 'sweep' };
  const rawIssue = inputs.issue;
  const issueText =
    typeof rawIssue === 'number' ? String(rawIssue) : typeof rawIssue === 'string' ? rawIssue.trim() : '';
  if (!/^[1-9]\d{0,9}$/.test(issueText))
    return skip(`workflow_dispatch input issue must be an issue number, got ${JSON.stringify(rawIssue ?? null)}`);
  const phase = typeof inputs.phase === 'string' ? inputs.phase.trim() : '';
  if (!PHASE.test(phase))
    return skip(`workflow_dispatch input phase must be a phase name, got ${JSON.stringify(inputs.phase ?? null)}`);
  const known = ctx.knownPhases ?? ISSUE_PHASES;
  if (!isIssuePhase(phase) || !known.includes(phase)) {
    return skip(`workflow_dispatch input phase "${phase}" is not one of ${known.join(', ')}`);
  }
  const actor = typeof inputs.actor === 'string' ? inputs.actor.trim() : '';
  if (!LOGIN.test(actor))
    return skip(`workflow_dispatch input actor must be a GitHub login, got ${JSON.stringify(inputs.actor ?? null)}`);
  return { kind: 'phase', phase, issue: Number(issueText), actor, dispatched: true };
};

// ---------------------------------------------------------------------------------------------------------------
// Pull requests and CI

const BRANCH = /^hydraflow\/issue-([1-9]\d{0,9})$/;

/** The issue a HydraFlow branch (`hydraflow/issue-<n>`) works on; undefined for any other branch name. */
export function issueOfBranch(ref: unknown): number | undefined {
  if (typeof ref !== 'string') return undefined;
  const m = BRANCH.exec(ref.replace(/^refs\/heads\//, ''));
  return m ? Number(m[1]) : undefined;
}

/** HydraFlow's branch for an issue. */
export const branchOfIssue = (issue: number): string => `hydraflow/issue-${issue}`;

function positive(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The repository's full name, to tell a fork's lookalike branch from HydraFlow's own. */
function repoName(p: any): string | undefined {
  const name = p?.repository?.full_name;
  return typeof name === 'string' ? name.toLowerCase() : undefined;
}

/** The pull request of a pull_request / pull_request_review payload, when its head is a HydraFlow branch here. */
function hydraflowPull(p: any): { issue: number; pull: number } | string {
  const pr = p?.pull_request;
  const pull = positive(pr?.number);
  if (!pull) return 'the event has no pull request number';
  const issue = issueOfBranch(pr?.head?.ref);
  if (issue === undefined) return `pull request #${pull} is not on a HydraFlow branch (hydraflow/issue-<n>)`;
  const head = pr?.head?.repo?.full_name;
  if (typeof head !== 'string' || head.toLowerCase() !== repoName(p)) {
    return `pull request #${pull} comes from another repository (a fork); HydraFlow only merges its own branches`;
  }
  if (pr?.state === 'closed') return `pull request #${pull} is closed`;
  return { issue, pull };
}

const routePullRequest: EventHandler = (event, ctx) => {
  const p = event.payload;
  if (event.action !== 'synchronize') return skip(`pull_request.${event.action ?? '?'} needs nothing from HydraFlow`);
  const target = hydraflowPull(p);
  if (typeof target === 'string') return skip(target);
  // HydraFlow's own push (its token, or the push token's App/user listed in bot_logins) is reviewed by the dispatch
  // its publish step sends; a human's push starts a new review round on the new head.
  const untrusted = isUntrustedAutomation(p.sender, ctx);
  if (untrusted) return skip(untrusted);
  return { kind: 'phase', phase: 'review', issue: target.issue, actor: p.sender.login, pull: target.pull };
};

const routePullRequestReview: EventHandler = (event, ctx) => {
  const p = event.payload;
  if (event.action !== 'submitted') return skip(`pull_request_review.${event.action ?? '?'} is not acted on`);
  const state = typeof p.review?.state === 'string' ? p.review.state.toLowerCase() : '';
  // approved: the merge gate; changes requested or comments: a refine round addresses them (src/phases/feedback.ts)
  const phase =
    state === 'approved' ? 'merge' : state === 'changes_requested' || state === 'commented' ? 'feedback' : undefined;
  if (!phase) return skip(`a ${state || 'stateless'} review is not acted on`);
  const target = hydraflowPull(p);
  if (typeof target === 'string') return skip(target);
  const untrusted = isUntrustedAutomation(p.sender, ctx) ?? isUntrustedAutomation(p.review?.user, ctx);
  if (untrusted) return skip(untrusted);
  if (phase === 'feedback' && hasLogin(ctx.botLogins, p.review?.user?.login)) return skip("HydraFlow's own review");
  return { kind: 'phase', phase, issue: target.issue, actor: p.review.user.login, pull: target.pull };
};

/**
 * CI finished on a branch: the merge gate re-reads checks, reviews and mergeability itself. No sender filter: these
 * events carry no instruction, HydraFlow's own pushes (with a push token) are exactly what CI runs on, and the merge
 * gate writes nothing that starts a workflow. Forks are skipped.
 */
function routeCiOnBranch(what: string, branch: unknown, headRepo: unknown, pulls: unknown, p: any): Decision {
  const issue = issueOfBranch(branch);
  if (issue === undefined) return skip(`${what} is not on a HydraFlow branch (hydraflow/issue-<n>)`);
  if (typeof headRepo === 'string' && headRepo.toLowerCase() !== repoName(p)) {
    return skip(`${what} ran on a fork's branch; HydraFlow only merges its own branches`);
  }
  const numbers = (Array.isArray(pulls) ? pulls : []).map((x: any) => positive(x?.number)).filter(Boolean);
  const actor = typeof p.sender?.login === 'string' ? p.sender.login : '';
  return {
    kind: 'phase',
    phase: 'merge',
    issue,
    actor,
    ...(numbers.length === 1 ? { pull: numbers[0] as number } : {}),
  };
}

const routeWorkflowRun: EventHandler = (event) => {
  const p = event.payload;
  if (event.action !== 'completed') return skip(`workflow_run.${event.action ?? '?'}: waiting for it to complete`);
  const run = p.workflow_run;
  return routeCiOnBranch(
    `workflow run "${String(run?.name ?? '?')}"`,
    run?.head_branch,
    run?.head_repository?.full_name,
    run?.pull_requests,
    p,
  );
};

const routeCheckSuite: EventHandler = (event) => {
  const p = event.payload;
  if (event.action !== 'completed') return skip(`check_suite.${event.action ?? '?'}: waiting for it to complete`);
  const suite = p.check_suite;
  return routeCiOnBranch('check suite', suite?.head_branch, undefined, suite?.pull_requests, p);
};

const routeStatus: EventHandler = (event) => {
  const p = event.payload;
  if (p.state === 'pending') return skip('status is pending: waiting for it to finish');
  const names = (Array.isArray(p.branches) ? p.branches : []).map((b: any) => b?.name);
  const ours = [...new Set(names.filter((n: unknown) => issueOfBranch(n) !== undefined))];
  if (ours.length === 0) return skip('the commit status is not on a HydraFlow branch (hydraflow/issue-<n>)');
  if (ours.length > 1) return skip(`the commit is on several HydraFlow branches (${ours.join(', ')}); not guessing`);
  return routeCiOnBranch('commit status', ours[0], undefined, undefined, p);
};

const skipWith =
  (reason: string): EventHandler =>
  () =>
    skip(reason);

/** The event registry. Later phases replace the placeholders. */
export const DEFAULT_EVENT_HANDLERS: Readonly<Record<string, EventHandler>> = {
  issues: routeIssues,
  issue_comment: routeIssueComment,
  workflow_dispatch: routeWorkflowDispatch,
  pull_request: routePullRequest,
  pull_request_target: skipWith('pull_request_target is never acted on (it runs with secrets on fork code)'),
  pull_request_review: routePullRequestReview,
  pull_request_review_comment: skipWith('review comments are read by the next review round, not acted on'),
  pull_request_review_thread: skipWith('review threads are read by the next review round, not acted on'),
  check_suite: routeCheckSuite,
  check_run: skipWith('check runs are summed up by check_suite / workflow_run; HydraFlow waits for those'),
  workflow_run: routeWorkflowRun,
  status: routeStatus,
  // The template's hourly schedule: issues paused by budgets.per_day on an earlier UTC day resume, and issues left
  // waiting with hydraflow-find (GitHub's rate limits) are triaged within the hour's budget (ADR 0014).
  schedule: () => ({ kind: 'sweep' }),
};

/** Decide what one GitHub event means for HydraFlow. Pure; never throws on odd payloads. */
export function route(event: RouterEvent, ctx: RouterContext): Decision {
  const handlers = ctx.handlers ?? DEFAULT_EVENT_HANDLERS;
  const handler = Object.hasOwn(handlers, event.name) ? handlers[event.name] : undefined;
  if (!handler) return skip(`event ${event.name} is not handled`);
  if (event.payload === null || typeof event.payload !== 'object') return skip('the event has no payload');
  const action = event.action ?? (typeof event.payload.action === 'string' ? event.payload.action : undefined);
  try {
    return handler({ ...event, action }, ctx);
  } catch (error) {
    return skip(`could not read the ${event.name} payload: ${(error as Error).message}`);
  }
}

/** True for a pipeline label name (any case). Re-exported for adapters that filter label events. */
export function isPipelineLabelName(name: string): boolean {
  return isPipelineLabel(name.toLowerCase());
}
