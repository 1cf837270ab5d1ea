import { hasLogin, isBuiltPhase, permissionAtLeast, phaseAtStage, renderHelp, type Decision } from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { IssueSession } from '../session/issue-session';
import { handlePhase } from './phase';
import { handleDoctor } from './doctor';
import { sessionOptions } from './open-session';
import { handlePullCommand } from './pull';

export type CommandRequest = Extract<Decision, { kind: 'command' }>;

const replyMarker = (commentId: number) => `<!-- hydraflow:reply:${commentId} -->`;
const replyTo = (actor: string) => `<!-- hydraflow:reply-to:${actor} -->`;
/** Replies to one person on one issue per hour: beyond, a command is answered by its reaction alone. */
const MAX_REPLIES_PER_HOUR = 3;

/**
 * One short reply per command comment, found by marker so a re-run never posts it twice, and at most
 * MAX_REPLIES_PER_HOUR to one person on one issue (a reply is a comment everyone watching the issue is notified of).
 */
async function reply(app: App, request: CommandRequest, text: string): Promise<void> {
  const marker = replyMarker(request.commentId);
  const ours = (await app.issues.listComments(request.issue)).filter(
    (c) => c.user && hasLogin(app.config.bot_logins, c.user.login),
  );
  if (ours.some((c) => c.body.includes(marker))) return;
  const hourAgo = app.now().getTime() - 3_600_000;
  const recent = ours.filter((c) => c.body.includes(replyTo(request.actor)) && Date.parse(c.createdAt) > hourAgo);
  if (recent.length >= MAX_REPLIES_PER_HOUR) return;
  await app.issues.createComment(request.issue, `${marker}${replyTo(request.actor)}\n${text}`, marker);
}

/**
 * A slash command: the author's permission is checked with the collaborator API (the event's author_association
 * misses org admins). A refused command — or an unknown one from someone below commands.min_permission — gets a 😕
 * and changes nothing: no reply comment, so commands cost strangers nothing (the job log says why). An accepted one
 * gets a 🚀.
 */
export async function handleCommand(app: App, request: CommandRequest): Promise<PhaseOutcome> {
  const name = request.requested ?? request.command;
  const permission = await app.issues.getPermission(request.actor);
  const unknownToStranger =
    request.command === 'unknown' && !permissionAtLeast(permission, app.config.commands.min_permission);
  if (!permissionAtLeast(permission, request.minPermission) || unknownToStranger) {
    await app.issues.reactToComment(request.commentId, 'confused');
    const needs = unknownToStranger ? app.config.commands.min_permission : request.minPermission;
    return {
      summary: `refused /${name} from ${request.actor}: /${name} needs ${needs} permission on this repository, ${request.actor} has ${permission}`,
      stage: null,
    };
  }
  if (request.phase === null) {
    await app.issues.reactToComment(request.commentId, 'eyes');
    await reply(app, request, renderHelp(undefined, request.command === 'unknown' ? name : undefined));
    return { summary: `answered /${name}`, stage: null };
  }
  if (request.phase === 'doctor') {
    await app.issues.reactToComment(request.commentId, 'eyes');
    return handleDoctor(app, (text) => reply(app, request, text));
  }
  if (request.pull !== undefined && (request.phase === 'merge' || request.phase === 'feedback')) {
    const { pull, actor, commentId, command, phase } = request;
    return handlePullCommand(app, { pull, actor, commentId, command, phase }, (text) => reply(app, request, text));
  }
  const phase = request.phase === 'retry' ? await phaseToRetry(app, request.issue) : request.phase;
  if (!phase || !isBuiltPhase(phase)) {
    await app.issues.reactToComment(request.commentId, 'confused');
    await reply(
      app,
      request,
      phase
        ? `\`/${name}\` starts the ${phase} phase, which this HydraFlow version does not include yet. Nothing was changed.`
        : `\`/${name}\`: there is nothing to retry on this issue. Nothing was changed.`,
    );
    return { summary: `/${name}: nothing to run`, stage: null };
  }
  await app.issues.reactToComment(request.commentId, 'rocket');
  return handlePhase(app, {
    phase,
    issue: request.issue,
    actor: request.actor,
    dispatched: false,
    forced: true,
    commandId: request.commentId,
  });
}

/**
 * /retry resumes the phase that failed; without a recorded failure, the phase of the issue's current stage (at
 * `hydraflow-ready`, implement, once a plan is accepted). A re-run of the /retry whose dead attempt published a claim
 * resumes the phase claimed. Property test tests/property/pipeline-histories: a re-run whose dead attempt had moved the
 * label to ready before recording the plan answered "/retry starts the ready phase, which this version does not
 * include".
 */
async function phaseToRetry(app: App, issueNumber: number): Promise<string | undefined> {
  const issue = await app.issues.getIssue(issueNumber);
  const session = await IssueSession.open(app.issues, sessionOptions(app, issueNumber, 'retry', issue.labels));
  const { lastError, claim } = session.state;
  if (lastError?.phase) return lastError.phase;
  if (app.runner.runAttempt > 1 && claim?.runId === app.runner.runId) return claim.phase;
  // The session's stage: the one pipeline label, or with two (a move cut short) the one the state records
  const stage = session.currentStage ?? undefined;
  // ready without an accepted plan (a human set the label, or a dead attempt did before recording the plan): plan it
  if (stage === 'ready' && session.state.plan?.status !== 'accepted') return 'plan';
  // at hitl without a recorded failure: triage again; a stage without a phase (fixed) is named in the reply
  return stage === undefined || stage === 'hitl' ? 'triage' : (phaseAtStage(stage) ?? stage);
}
