/**
 * The AssumptionSurfacer at plan (ADR-0064; the table's `assumptions-plan` row, packages/core/src/adversarial/
 * stages.ts): after the planner's first plan of a load-bearing issue and before the plan council, one voter lists the
 * assumptions the plan rests on, each with how to check it. It has no retry (the planner is not re-run for it): a
 * load-bearing assumption the plan does not show checked is a blocking concern forwarded at once to the plan reviewer,
 * who answers or carries it (plan-review-concerns.ts).
 *
 * It reads what earlier issues shipped unresolved: the carryover's `knowledge` entries of the memory store
 * (carryover.ts) recalled for this issue (one request; none when memory is off), as low-confidence notes in its
 * prompt. Shares the plan stages' driver (stage-driver.ts).
 */
import { adversarialSummaryLines, HydraflowError, stageSpec, type AdversarialState, type Plan } from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { askVoter } from './voters';
import { driveStage } from './stage-driver';

export const ASSUMPTIONS_PLAN = stageSpec('assumptions-plan');

/** Runs the stage on `plan` (the gate said load-bearing); `lines`: the progress comment's details after a step. */
export async function runPlanAssumptions(
  ctx: PhaseContext,
  plan: Plan,
  lines: (state: AdversarialState) => string[] = adversarialSummaryLines,
): Promise<void> {
  const spec = ASSUMPTIONS_PLAN;
  const knowledge = await recallKnowledge(ctx);
  await driveStage(
    ctx,
    { spec, then: 'The plan council is next.', lines, keepLabel: true },
    {
      runAgent: () => {
        throw new HydraflowError(`adversarial stage ${spec.name} re-runs no agent (its retries are 0)`);
      },
      vote: ({ voter, round, previous }) =>
        askVoter(ctx, { spec, voter, round, subject: JSON.stringify(plan, null, 2), previous, knowledge }),
    },
  );
}

/** The knowledge entries recalled for this issue (by relevance to its title and body), as text. */
async function recallKnowledge(ctx: PhaseContext): Promise<string[]> {
  const recalled = await ctx.memory?.recall(`${ctx.issue.title}\n${ctx.issue.body ?? ''}`);
  return (recalled?.recalled ?? []).filter((r) => r.entry.kind === 'knowledge').map((r) => r.text);
}
