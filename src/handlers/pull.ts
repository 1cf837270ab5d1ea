import { issueOfBranch } from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { runFeedback } from '../phases/feedback';
import { runMergeGate, runReviewPhase, type PullTrigger } from '../phases/review-gate';
import { loadIssueAndComments, openPhase, releaseFirstLock } from './open-session';
import { continueRun, resumption, runEscalating } from './phase';
import { heldForHuman, reportIncident } from './untrusted-state';

export interface PullWork {
  phase: 'review' | 'merge' | 'feedback';
  /** The issue, from HydraFlow's branch name (`hydraflow/issue-<n>`): only a claim until the phase checks the state. */
  issue: number;
  /** The pull request the event named; the phase acts only if it is the issue's recorded one. */
  pull?: number;
  actor: string | undefined;
  /** A human's permission-checked `/ship-it` on the pull request. */
  approvedBy?: string;
}

/**
 * A pull-request or CI event for one of HydraFlow's pull requests (router: review approved, CI finished, a human's
 * push, `/ship-it` on the pull request): runs the review or merge phase with what the event says, so the phase can
 * check the pull request is the issue's own. Failures escalate like any phase's (handlers/phase.ts).
 */
export async function handlePullWork(app: App, work: PullWork): Promise<PhaseOutcome> {
  // The merge gate takes the lock whatever it finds (review-gate.ts): first, so the state is read under it.
  const { issue, comments, locked } = await loadIssueAndComments(app, work.issue, {
    lockFirst: work.phase === 'merge',
  });
  if (issue.isPullRequest) {
    await releaseFirstLock(app, issue.number, locked);
    return { summary: `#${issue.number} is a pull request, not an issue`, stage: null };
  }
  // A closed issue is only finished (a merged pull request whose issue GitHub closed by keyword), never worked on:
  // runMergeGate checks that.
  if (issue.state === 'closed' && work.phase !== 'merge') {
    return { summary: `issue #${issue.number} is closed; HydraFlow acts on open issues only`, stage: null };
  }
  const startedAt = Date.now();
  const ctx = await openPhase(app, {
    issue,
    phase: work.phase,
    actor: work.actor,
    dispatched: false,
    forced: false,
    comments,
    locked,
  });
  try {
    return await runPullWork(app, work, ctx, startedAt);
  } finally {
    await ctx.session.releaseUnusedLock().catch(() => undefined);
  }
}

async function runPullWork(
  app: App,
  work: PullWork,
  ctx: Awaited<ReturnType<typeof openPhase>>,
  startedAt: number,
): Promise<PhaseOutcome> {
  const held = (await reportIncident(ctx, app.sleep)) ?? (await heldForHuman(ctx, false));
  if (held) return held;
  const trigger: PullTrigger = {
    ...(work.pull !== undefined ? { pull: work.pull } : {}),
    ...(work.approvedBy ? { approvedBy: work.approvedBy } : {}),
    ...(app.runner.job ? { ownChecks: [app.runner.job] } : {}),
  };
  const outcome =
    (await resumption(app, ctx, work.phase)) ??
    (await runEscalating(ctx, work.phase, () =>
      work.phase === 'review'
        ? runReviewPhase(ctx, trigger)
        : work.phase === 'merge'
          ? runMergeGate(ctx, trigger)
          : runFeedback(ctx, trigger),
    ));
  return continueRun(app, ctx, { phase: work.phase, startedAt, endedAt: Date.now() }, outcome);
}

/**
 * A command on a pull request — `/ship-it` (merge) or `/fix` (feedback) — its permission already checked by the
 * command handler: the issue comes from the pull request's branch; a pull request that is not on a HydraFlow branch
 * gets a reply and nothing else.
 */
export async function handlePullCommand(
  app: App,
  request: { pull: number; actor: string; commentId: number; command: string; phase: 'merge' | 'feedback' },
  reply: (text: string) => Promise<void>,
): Promise<PhaseOutcome> {
  const pull = await app.pulls.getPull(request.pull);
  const issue = issueOfBranch(pull.headRef);
  if (issue === undefined) {
    await app.issues.reactToComment(request.commentId, 'confused');
    await reply(
      `\`/${request.command}\` on a pull request works on HydraFlow's own pull requests (branch \`hydraflow/issue-<n>\`); this one is on another branch. Nothing was changed.`,
    );
    return { summary: `/${request.command} on #${request.pull}: not a HydraFlow pull request`, stage: null };
  }
  await app.issues.reactToComment(request.commentId, 'rocket');
  return handlePullWork(app, {
    phase: request.phase,
    issue,
    pull: request.pull,
    actor: request.actor,
    ...(request.phase === 'merge' ? { approvedBy: request.actor } : {}),
  });
}
