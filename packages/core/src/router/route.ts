/**
 * The router: a pure function from a GitHub event to one Decision. Rules (see docs/state-machine.md):
 *
 * - HydraFlow's own writes never start work: events whose sender is one of `botLogins`, or any Bot not in
 *   `commands.allowed_bots`, are skipped (no self-loops). Exceptions: `workflow_dispatch` (HydraFlow's deliberate hop
 *   between phases; the original actor travels in the inputs and must be re-checked) and `issues.closed` cleanup.
 * - Pull requests seen as issues, and closed issues, are skipped except for `issues.closed` cleanup.
 * - issues.opened → triage when auto_triage (unless it was opened with a pipeline label: its `labeled` event acts).
 * - issues.labeled hydraflow-find by a human → triage; another pipeline label → override to that stage.
 * - issues.unlabeled of a pipeline label by a human → override to null, only when no other pipeline label remains.
 * - issues.edited → skip for now.
 * - issue_comment.created → slash command from the first line; `edited` and `deleted` are skipped (an edit must not
 *   replay or smuggle in a command — post a new comment).
 * - workflow_dispatch with inputs {issue, phase, actor} → that phase.
 * - pull_request*, check_suite, check_run, workflow_run → skip "handled by a later phase" (placeholders in the
 *   same handler registry, so later phases replace them).
 */
import type { HydraflowConfig, Permission } from '../config/schema';
import { isPipelineLabel, stageOf, type PipelineStage } from '../pipeline/labels';
import { labelNames, pipelineLabelsOf } from '../pipeline/transitions';
import { defaultCommands, parseCommand, type CommandRegistry } from './commands';
import { stricterPermission } from './permissions';

export interface RouterEvent {
  /** The event name (GITHUB_EVENT_NAME), e.g. `issues`, `issue_comment`, `workflow_dispatch`. */
  name: string;
  /** payload.action, when the caller has it separately; defaults to payload.action. */
  action?: string;

  payload: any;
}

export type Decision =
  | { kind: 'skip'; reason: string }
  | { kind: 'phase'; phase: string; issue: number; actor: string; dispatched?: boolean }
  | {
      kind: 'command';
      /** The registered command name, or `unknown` (reply with help; `requested` holds what was typed). */
      command: string;
      requested?: string;
      args: string;
      /** The phase the command starts (null: reply only, e.g. /help and unknown commands). */
      phase: string | null;
      issue: number;
      commentId: number;
      actor: string;
      minPermission: Permission;
    }
  | { kind: 'override'; issue: number; stage: PipelineStage | null; actor: string }
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
  /** When given, workflow_dispatch phases must be one of these. */
  knownPhases?: readonly string[];
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
    if (present.length === 0) return skip('closed issue has no pipeline label');
    const done = present.some((l) => stageOf(l.toLowerCase()) === 'fixed');
    if (done && present.length === 1) return skip('closed issue is already marked hydraflow-fixed');
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
      return { kind: 'override', issue, stage, actor };
    }
    case 'unlabeled': {
      const name: unknown = p.label?.name;
      if (typeof name !== 'string' || pipelineLabelsOf([name]).length === 0) return skip('not a pipeline label');
      const remaining = pipelineLabelsOf(labels).filter((l) => l.toLowerCase() !== name.toLowerCase());
      if (remaining.length > 0) return skip(`another pipeline label remains (${remaining.join(', ')})`);
      return { kind: 'override', issue, stage: null, actor };
    }
    case 'edited':
      return skip('issue edits are not acted on yet (comment /triage to re-triage)');
    default:
      return skip(`issues.${event.action ?? '?'} is not handled`);
  }
};

const routeIssueComment: EventHandler = (event, ctx) => {
  const p = event.payload;
  if (event.action !== 'created') {
    return skip(`issue_comment.${event.action ?? '?'} is ignored: only new comments carry commands`);
  }
  const issue = issueNumber(p);
  if (issue === undefined) return skip('comment without an issue number');
  if (p.issue?.pull_request) return skip('comments on pull requests are handled by a later phase');
  if (p.issue?.state === 'closed') return skip('the issue is closed; HydraFlow acts on open issues only');
  const untrusted = isUntrustedAutomation(p.sender, ctx) ?? isUntrustedAutomation(p.comment?.user, ctx);
  if (untrusted) return skip(untrusted);
  const parsed = parseCommand(p.comment?.body);
  if (!parsed) return skip('not a command');
  const commentId = p.comment?.id;
  if (typeof commentId !== 'number') return skip('comment without an id');
  const actor: string = p.comment.user.login;
  const registry = ctx.commands ?? defaultCommands;
  const spec = registry.get(parsed.name);
  const floor = ctx.config.commands.min_permission;
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

const routeWorkflowDispatch: EventHandler = (event, ctx) => {
  const inputs = event.payload?.inputs ?? {};
  const rawIssue = inputs.issue;
  const issueText =
    typeof rawIssue === 'number' ? String(rawIssue) : typeof rawIssue === 'string' ? rawIssue.trim() : '';
  if (!/^[1-9]\d{0,9}$/.test(issueText))
    return skip(`workflow_dispatch input issue must be an issue number, got ${JSON.stringify(rawIssue ?? null)}`);
  const phase = typeof inputs.phase === 'string' ? inputs.phase.trim() : '';
  if (!PHASE.test(phase))
    return skip(`workflow_dispatch input phase must be a phase name, got ${JSON.stringify(inputs.phase ?? null)}`);
  if (ctx.knownPhases && !ctx.knownPhases.includes(phase)) {
    return skip(`workflow_dispatch input phase "${phase}" is not one of ${ctx.knownPhases.join(', ')}`);
  }
  const actor = typeof inputs.actor === 'string' ? inputs.actor.trim() : '';
  if (!LOGIN.test(actor))
    return skip(`workflow_dispatch input actor must be a GitHub login, got ${JSON.stringify(inputs.actor ?? null)}`);
  return { kind: 'phase', phase, issue: Number(issueText), actor, dispatched: true };
};

const laterPhase: EventHandler = () => skip('handled by a later phase');

/** The event registry. Later phases replace the placeholders. */
export const DEFAULT_EVENT_HANDLERS: Readonly<Record<string, EventHandler>> = {
  issues: routeIssues,
  issue_comment: routeIssueComment,
  workflow_dispatch: routeWorkflowDispatch,
  pull_request: laterPhase,
  pull_request_target: laterPhase,
  pull_request_review: laterPhase,
  pull_request_review_comment: laterPhase,
  pull_request_review_thread: laterPhase,
  check_suite: laterPhase,
  check_run: laterPhase,
  workflow_run: laterPhase,
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
