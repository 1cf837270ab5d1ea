import { labelFor, type PipelineStage } from '@hydraflow/core';
import { escalate } from './escalate';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { endPhase } from './end-phase';

/**
 * Stage labels that humans set while the dead attempt this re-run replaces held the lock: their label events found the
 * issue locked and were refused (handlers/override.ts waits for a lock, then gives up), so no run acted on them. One
 * is honoured as the override it was; several conflict, and the re-run cannot know which was set last, so a human
 * chooses (HITL). Property test tests/property/pipeline-histories found three pipeline labels left this way.
 */
export async function honourMovesRefusedByLock(
  ctx: PhaseContext,
  stages: readonly PipelineStage[],
): Promise<PhaseOutcome> {
  const { session, issue } = ctx;
  const lock = await session.acquire(); // the dead attempt's own lock: same run id
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  const labels = stages.map((s) => `\`${labelFor(s)}\``).join(', ');
  if (stages.length > 1) {
    return escalate(ctx, {
      headline: 'Several stage labels were set while HydraFlow held this issue',
      reason: `${labels} were set while an earlier attempt of this run held the issue (their label events were refused), and which one stands is not known: set the stage label that should`,
    });
  }
  const stage = await session.moveToByHuman(stages[0]!, undefined, issue.labels);
  await endPhase(session, {
    headline: `Moved to ${stage} by a human while HydraFlow held the issue`,
    next: `HydraFlow resumes from ${stage} when that phase runs.`,
  });
  return { summary: `human override honoured (${labels}, set while an earlier attempt held the issue)`, stage };
}
