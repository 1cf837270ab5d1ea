import { isFatal, labelFor } from '@hydraflow/core';
import type { App } from '../app';
import { escalate } from '../phases/escalate';
import type { PhaseOutcome } from '../phases/phase-context';
import { PHASES } from '../phases/registry';
import { loadIssue, openPhase } from './open-session';

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
  if (issue.state === 'closed')
    return { summary: `issue #${issue.number} is closed; HydraFlow acts on open issues only`, stage: null };
  if (issue.isPullRequest) return { summary: `#${issue.number} is a pull request, not an issue`, stage: null };
  const ctx = await openPhase(app, { ...request, issue });
  const runner = PHASES[request.phase];
  if (!runner) return phaseUnavailable(ctx.session, request.phase);
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
