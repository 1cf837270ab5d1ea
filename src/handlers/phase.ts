import { isFatal, labelFor, type PipelineStage } from '@hydraflow/core';
import type { App } from '../app';
import { escalate } from '../phases/escalate';
import type { PhaseOutcome } from '../phases/phase-context';
import { PHASES } from '../phases/registry';
import { freeLockOfDeadAttempt, loadIssue, openPhase } from './open-session';

export interface PhaseRequest {
  phase: string;
  issue: number;
  actor: string | undefined;
  /** Started by another phase's workflow_dispatch (inherits its lock). */
  dispatched: boolean;
  /** A human asked for it explicitly (/triage, /retry): redo even if done. */
  forced: boolean;
}

/** Runs one phase on one issue; an unexpected failure is escalated with the real error before the run fails. */
export async function handlePhase(app: App, request: PhaseRequest): Promise<PhaseOutcome> {
  // Load the phase's model SDK while GitHub answers the first requests (it is needed unless the work is already done).
  if (PHASES[request.phase]) app.providerFor(request.phase).catch(() => undefined);
  const issue = await loadIssue(app, request.issue);
  if (issue.state === 'closed') {
    // A re-run of a run that died holding the 👀 lock finds the issue closed: free the lock that run left (property
    // test tests/property/pipeline-histories found it leaked on closed issues).
    await freeLockOfDeadAttempt(app, issue);
    return { summary: `issue #${issue.number} is closed; HydraFlow acts on open issues only`, stage: null };
  }
  if (issue.isPullRequest) return { summary: `#${issue.number} is a pull request, not an issue`, stage: null };
  const ctx = await openPhase(app, { ...request, issue });
  const runner = PHASES[request.phase];
  if (!runner) return phaseUnavailable(ctx.session, request.phase);
  const expected = STAGE_OF_DISPATCHED_PHASE[request.phase];
  // The label decides (ADR-0002): HydraFlow adds the next stage's label before it dispatches, so a dispatched phase
  // whose label is gone was taken out by a human — even if that human's unlabeled event has not been processed yet.
  if (
    request.dispatched &&
    expected &&
    (ctx.session.currentStage !== expected || !issue.labels.some((l) => l.toLowerCase() === labelFor(expected)))
  ) {
    return movedMeanwhile(ctx.session, request.phase, expected);
  }
  try {
    return await runner(ctx);
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    try {
      const outcome = await escalate(ctx, {
        headline: `The ${request.phase} phase failed`,
        reason: message,
        failed: true,
      });
      return isFatal(error) ? outcome : { ...outcome, summary: `${request.phase} failed: ${message}` };
    } catch {
      throw error; // GitHub itself is failing: the original error is the one to report
    }
  }
}

/** The stage a dispatched phase expects its issue in; anything else means a human moved the issue since the dispatch. */
const STAGE_OF_DISPATCHED_PHASE: Readonly<Record<string, PipelineStage>> = {
  groom: 'groom',
  epic: 'epic',
  plan: 'plan',
  implement: 'ready',
  review: 'review',
};

/** A human moved (or took out) the issue after the previous phase dispatched this one: the human wins, nothing runs. */
async function movedMeanwhile(
  session: Awaited<ReturnType<typeof openPhase>>['session'],
  phase: string,
  expected: PipelineStage,
): Promise<PhaseOutcome> {
  const stage = session.currentStage;
  const summary = `the dispatched ${phase} did not run: the issue is ${stage ? `at ${labelFor(stage)}` : 'out of the pipeline'}, not ${labelFor(expected)}, so a human moved it`;
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary, stage };
  session.releaseClaim();
  await session.publish({
    headline: `The ${phase} phase did not start: the issue was moved ${stage ? `to ${stage}` : 'out of the pipeline'}`,
    next: 'HydraFlow follows the label: set a stage label (or comment /retry) to resume.',
  });
  await session.unlock();
  return { summary, stage };
}

/** A phase this version does not implement yet: say so on the issue, keep the stage, free the lock. */
async function phaseUnavailable(
  session: Awaited<ReturnType<typeof openPhase>>['session'],
  phase: string,
): Promise<PhaseOutcome> {
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  session.releaseClaim();
  const stage = session.currentStage;
  await session.publish({
    headline: `The ${phase} phase is not available in this HydraFlow version`,
    next: `The issue waits${stage ? ` at \`${labelFor(stage)}\`` : ''}: a human can take it from here, or move it to another stage by label.`,
  });
  await session.unlock();
  return { summary: `phase ${phase} is not implemented in this version; issue left at ${stage ?? 'no stage'}`, stage };
}
