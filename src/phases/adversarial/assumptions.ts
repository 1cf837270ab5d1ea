/**
 * The AssumptionSurfacer (ADR-0064; the table's `assumptions-plan` and `assumptions-discover` rows,
 * packages/core/src/adversarial/stages.ts): after the planner's first plan (or the research brief) of a load-bearing
 * issue and before the council, one voter lists the assumptions the artifact rests on, each with how to check it. It has
 * no retry (the agent is not re-run for it): a load-bearing assumption the artifact does not show checked is a blocking
 * concern forwarded at once to the plan reviewer, who answers or carries it (plan-review-concerns.ts).
 *
 * It reads what earlier issues shipped unresolved: the carryover's `knowledge` entries of the memory store
 * (carryover.ts) recalled for this issue (one request; none when memory is off), as low-confidence notes in its
 * prompt. The council that follows keeps the phase's transient label on. Shares the stages' driver (stage-driver.ts).
 */
import { HydraflowError, stageSpec, type AdversarialStageSpec, type AdversarialState } from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { askVoter } from './voters';
import { driveStage } from './stage-driver';

export const ASSUMPTIONS_PLAN = stageSpec('assumptions-plan');

/**
 * Runs an assumption stage (`assumptions-plan`, or discover's `assumptions-discover`) on `subject`, the artifact as
 * text, for an issue the gate called load-bearing; `wiring`: what the progress comment says after a step.
 */
export async function runAssumptions(
  ctx: PhaseContext,
  spec: AdversarialStageSpec,
  subject: string,
  wiring: { then: string; lines: (state: AdversarialState) => string[]; restart?: boolean },
): Promise<void> {
  const knowledge = await recallKnowledge(ctx);
  await driveStage(
    ctx,
    { spec, ...wiring, keepLabel: true },
    {
      runAgent: () => {
        throw new HydraflowError(`adversarial stage ${spec.name} re-runs no agent (its retries are 0)`);
      },
      vote: ({ voter, round, previous }) => askVoter(ctx, { spec, voter, round, subject, previous, knowledge }),
    },
  );
}

/** The knowledge entries recalled for this issue (by relevance to its title and body), as text. */
async function recallKnowledge(ctx: PhaseContext): Promise<string[]> {
  const recalled = await ctx.memory?.recall(`${ctx.issue.title}\n${ctx.issue.body ?? ''}`);
  return (recalled?.recalled ?? []).filter((r) => r.entry.kind === 'knowledge').map((r) => r.text);
}
