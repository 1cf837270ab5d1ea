import { labelFor, pipelineLabelsOf, stagesBeside, type PipelineStage } from '@hydraflow/core';
import type { Issue } from '@hydraflow/github';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { honourMovesRefusedByLock } from '../phases/refused-moves';
import { openedWithRefusedLabel, refuseLabelChange } from './label-steering';
import { belowSteering } from './may-steer';
import { freeLockOfDeadAttempt, openPhase } from './open-session';
import { handlePhase, sendDispatches } from './phase';
import { reportIncident } from './untrusted-state';
import { endPhase } from '../phases/end-phase';

/**
 * A human set (or removed) a pipeline label: ADR-0002's override. The human's choice stands; HydraFlow removes the
 * other pipeline labels, records who moved the issue, and starts the stage's phase when it has one (hydraflow-find →
 * triage). It waits for a running phase to finish rather than racing it.
 */
export async function handleOverride(
  app: App,
  request: { issue: number; stage: PipelineStage | null; actor: string; label: string },
): Promise<PhaseOutcome> {
  // who may steer is asked while the issue is read (label-steering.ts)
  const below = belowSteering(app, request.actor);
  below.catch(() => undefined); // awaited below
  const issue = await app.issues.getIssue(request.issue);
  const wanted = request.stage;
  const nothing =
    issue.state === 'closed'
      ? `issue #${issue.number} is closed`
      : wanted !== null && !issue.labels.includes(labelFor(wanted))
        ? `the label ${labelFor(wanted)} was removed again; nothing to do`
        : wanted === null && pipelineLabelsOf(issue.labels).length > 0
          ? 'another pipeline label is still set; nothing to do'
          : undefined;
  if (nothing !== undefined) {
    if (issue.state === 'open' && app.runner.runAttempt > 1) return settleDeadAttempt(app, issue, request, nothing);
    await freeLockOfDeadAttempt(app, issue);
    return { summary: nothing, stage: null };
  }
  const permission = await below;
  if (permission !== undefined) {
    const change = { issue: request.issue, label: request.label, added: wanted !== null, actor: request.actor };
    return refuseLabelChange(app, change, permission);
  }
  if (wanted === 'find') {
    return handlePhase(app, {
      phase: 'triage',
      issue: issue.number,
      actor: request.actor,
      dispatched: false,
      forced: true,
    });
  }
  const ctx = await openPhase(app, { issue, phase: 'override', actor: request.actor, dispatched: false, forced: true });
  const held = await reportIncident(ctx, app.sleep);
  if (held) return held;
  const { session } = ctx;
  const lock = await session.acquire({ takeOver: true, waitMs: 120_000, sleep: app.sleep });
  if (!lock.ok) return { summary: `override not applied: ${lock.reason}`, stage: session.currentStage };
  // The labels read before waiting for the lock are stale: the run that held it may have moved the issue. Act on
  // fresh ones (property test tests/property/pipeline-histories: an override stripped the label a triage had just
  // set while its own label was already gone, leaving no pipeline label at all).
  const fresh = await app.issues.getIssue(request.issue);
  if (wanted !== null && !fresh.labels.includes(labelFor(wanted))) {
    session.releaseClaim();
    await session.unlock();
    return { summary: `the label ${labelFor(wanted)} was removed meanwhile; nothing to do`, stage: null };
  }
  const stage = await session.moveToByHuman(wanted, request.actor, fresh.labels);
  await endPhase(session, {
    headline:
      stage === null ? `Taken out of the pipeline by ${request.actor}` : `Moved to ${stage} by ${request.actor}`,
    next:
      stage === null
        ? 'HydraFlow leaves this issue alone until a pipeline label is set again (hydraflow-find to triage).'
        : stage === 'hitl'
          ? 'Waiting for a human. Comment /retry or set a stage label to resume.'
          : `HydraFlow resumes from ${stage} when that phase runs.`,
  });
  return { summary: `human override honoured: ${stage ?? 'out of the pipeline'}`, stage };
}

/**
 * The re-run of an override whose earlier attempt died with nothing left to do for its own event. That attempt may
 * have died holding the lock it took over from a hand-off (its 👀 replaced the one the claim names, before it wrote a
 * claim of its own): every run after it then fails the lock's compare-and-swap, and stage labels humans set meanwhile
 * were refused. So the re-run takes the lock back (a re-run may replace its dead attempt's 👀) and honours those moves
 * (refused-moves.ts), or frees the lock. Property test tests/property/pipeline-histories found three pipeline labels
 * and a lock left for good.
 */
async function settleDeadAttempt(
  app: App,
  issue: Issue,
  request: { stage: PipelineStage | null; actor: string },
  nothing: string,
): Promise<PhaseOutcome> {
  const { actor } = request;
  const ctx = await openPhase(app, { issue, phase: 'override', actor, dispatched: false, forced: true });
  const held = await reportIncident(ctx, app.sleep);
  if (held) return held;
  // An issue HydraFlow never saw, still carrying a stage label that someone who may not steer set: it was opened with
  // pipeline labels (an issue form), and is triaged like any opened issue, as that label's own run would have done
  // (label-steering.ts). Undoing the label here instead left the opened issue with none (property test
  // tests/property/pipeline-histories, seed -2025006957: both labeled runs of a triage-role user's issue form died, a
  // writer took off one of the two labels, and the first re-run undid the other).
  if (await openedWithRefusedLabel(app, ctx.session.state, issue))
    return handlePhase(app, { phase: 'triage', issue: issue.number, actor, dispatched: false, forced: false });
  const lock = await ctx.session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: nothing, stage: null };
  const refused = stagesBeside(issue.labels, ctx.session.state.stage ?? null);
  let outcome: PhaseOutcome = { summary: nothing, stage: null };
  if (refused.length > 0) outcome = await honourMovesRefusedByLock(ctx, refused, { own: request });
  else {
    ctx.session.releaseClaim();
    await ctx.session.unlock();
  }
  // the dispatch that attempt recorded and died before sending (label-steering.ts, refuseLabelChange, says when)
  await sendDispatches(app, ctx);
  return outcome;
}
