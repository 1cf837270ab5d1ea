/**
 * An issue whose state HydraFlow did not write last waits for a human (ADR 0007; packages/core/src/state/trust.ts). The
 * run that finds it says so once — the progress comment tells what happened and the spend kept, the issue goes to
 * hydraflow-hitl (its one pipeline label), and the 👀 is freed whoever held it, since a state nobody can trust cannot
 * say whose it was. Later runs do no work on it and say nothing, until someone who may steer HydraFlow starts it over.
 */
import { labelFor, pipelineLabelsOf, stagesBeside } from '@hydraflow/core';
import type { App } from '../app';
import { honourMovesRefusedByLock } from '../phases/refused-moves';
import { LOCK_TTL_MS } from '../session/issue-session';
import type { PhaseContext, PhaseOutcome } from '../phases/phase-context';
import { freeLockOfDeadAttempt, loadIssueAndComments, openPhase } from './open-session';
import { endPhase } from '../phases/end-phase';

/**
 * When this run found the state changed by someone else: hold the issue for a human and say so. Else undefined. A run
 * beside it (a command has a concurrency group of its own) may be saying so at the same moment: this one waits for the
 * lock, reading the state again, and says nothing more if that run said it.
 */
export async function reportIncident(
  ctx: PhaseContext,
  sleep?: (ms: number) => Promise<void>,
): Promise<PhaseOutcome | undefined> {
  const { session } = ctx;
  if (!session.foundIncident) return undefined;
  const reason = session.state.incident!.reason;
  const lock = await session.acquire({ takeOver: true, waitMs: waitFor(session), ...(sleep ? { sleep } : {}) });
  if (!lock.ok)
    return { summary: `HydraFlow's state is not its own (${reason}); not reported: ${lock.reason}`, stage: null };
  if (!session.foundIncident) {
    session.releaseClaim();
    await session.unlock();
    return undefined;
  }
  // a closed issue keeps no pipeline label but hydraflow-fixed, as a close leaves it (a merge run that died after it
  // closed the issue left its stage label, and its re-run finds the issue held: property test
  // tests/property/pull-histories); the record is written all the same, for when it is reopened
  if (ctx.issue.state === 'open') await session.moveTo('hitl', `state not trusted (${reason}): waits for a human`);
  else {
    const stale = pipelineLabelsOf(ctx.issue.labels).filter((l) => l !== labelFor('fixed'));
    for (const label of stale) await ctx.issues.removeLabel(ctx.issue.number, label);
  }
  await endPhase(session, {
    headline: 'HydraFlow stopped: its state on this issue is not its own',
    next: 'A human: see below, then comment /triage (or /retry) to start the issue over.',
    // nothing of the changed comment is carried over
    details: '',
  });
  return {
    summary: `HydraFlow's state on #${ctx.issue.number} was not its own (${reason}): held for a human, who starts it over with /triage or /retry`,
    stage: session.currentStage,
  };
}

/**
 * How long a run waits for the lock to say what it found. Two minutes, as any run beside another; but the run of the
 * change's own event carries the text GitHub sent (the spend to keep), which no later run has: it waits until a lock
 * nobody claimed may be taken over (LOCK_TTL_MS), so a run that took the lock since the change and died before it wrote
 * does not make it give up and lose that spend (property test tests/property/pipeline-histories, seed 20261127). Rare:
 * a run found the change, then died holding the lock.
 */
function waitFor(session: PhaseContext['session']): number {
  return session.options.witnesses?.length ? LOCK_TTL_MS + 300_000 : 120_000;
}

/**
 * On an issue held after an incident that was reported already: a permitted human's explicit go (`restart`: a command
 * or hydraflow-find, permission-checked) starts it over, and the run goes on (undefined); anything else does nothing —
 * but a re-run frees the 👀 its dead attempt may have left (put on first: loadIssueAndComments), since a held issue's
 * lock is nobody's and no phase will hand it on (ADR 0007, ADR 0010; property test tests/property/pull-histories).
 */
export async function heldForHuman(ctx: PhaseContext, restart: boolean): Promise<PhaseOutcome | undefined> {
  const { session } = ctx;
  if (!session.held) return undefined;
  if (restart && ctx.actor) {
    session.restart(ctx.actor);
    return undefined;
  }
  if (session.options.runAttempt > 1) await session.dropLock();
  return {
    summary: `issue #${ctx.issue.number} waits for a human: HydraFlow's state on it was not its own (${session.state.incident!.reason}); /triage or /retry starts it over`,
    stage: session.currentStage,
  };
}

/**
 * Someone other than HydraFlow edited or deleted its comment holding the state (router: state-check): judge it now,
 * with the text GitHub sent, rather than at the next event, which may come without it.
 */
export async function handleStateCheck(app: App, request: { issue: number; actor: string }): Promise<PhaseOutcome> {
  const { issue, comments } = await loadIssueAndComments(app, request.issue);
  if (issue.isPullRequest) return { summary: `#${issue.number} is a pull request, not an issue`, stage: null };
  const ctx = await openPhase(app, {
    issue,
    phase: 'check',
    actor: request.actor,
    dispatched: false,
    forced: false,
    comments,
  });
  const outcome = (await reportIncident(ctx, app.sleep)) ?? (await countSpendShown(ctx, app.sleep));
  if (outcome) return outcome;
  const nothing = `HydraFlow's state on #${issue.number} is still the one it wrote; nothing to do`;
  return (await settleDeadAttempt(app, ctx, nothing)) ?? { summary: nothing, stage: ctx.session.currentStage };
}

/**
 * A re-run whose first attempt died holding the lock after it wrote the state: stage labels humans set meanwhile were
 * refused by that lock, so they are honoured now (refused-moves.ts), and the lock is freed. A lock handed to the next
 * phase stays its own (on an open issue). Property test tests/property/pipeline-histories found three pipeline labels
 * left by a state-check's re-run that only freed the lock.
 */
async function settleDeadAttempt(app: App, ctx: PhaseContext, nothing: string): Promise<PhaseOutcome | undefined> {
  const { session, issue } = ctx;
  if (app.runner.runAttempt <= 1) return undefined;
  if (issue.state === 'closed' || session.state.claim?.runId.startsWith('handoff:')) {
    await freeLockOfDeadAttempt(app, issue);
    return undefined;
  }
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: nothing, stage: session.currentStage };
  const refused = stagesBeside(issue.labels, session.state.stage ?? null);
  if (refused.length > 0) return honourMovesRefusedByLock(ctx, refused);
  session.releaseClaim();
  await session.unlock();
  return undefined;
}

/**
 * An issue already held (or restarted) after an incident whose own edit's event ran late: the spend its text shows
 * that HydraFlow had not counted is written now (state/trust.ts). Else undefined.
 */
async function countSpendShown(
  ctx: PhaseContext,
  sleep?: (ms: number) => Promise<void>,
): Promise<PhaseOutcome | undefined> {
  const { session } = ctx;
  if (!session.amended) return undefined;
  const lock = await session.acquire({ takeOver: true, waitMs: waitFor(session), ...(sleep ? { sleep } : {}) });
  if (!lock.ok) return { summary: `spend shown by the edit not counted yet: ${lock.reason}`, stage: null };
  session.keepRecordedStage();
  await endPhase(session, {
    headline: 'HydraFlow counted spend it had missed, from GitHub’s record of the edit of this comment',
    next: session.held
      ? 'A human: see below, then comment /triage (or /retry) to start the issue over.'
      : 'Nothing else changes.',
  });
  return {
    summary: `counted the spend shown by the text GitHub sent with the edit of #${ctx.issue.number}'s state`,
    stage: session.currentStage,
  };
}
