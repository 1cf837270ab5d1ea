/**
 * The shape council (ADR-0064; the table's `shape-council` row, packages/core/src/adversarial/stages.ts) between the
 * shape agent's first directions and their posting, when `adversarial.enabled`: the Challenger and the Expert Council
 * attack the directions before a human picks one; blocking concerns → the shape agent revises the directions with them
 * attached (at most twice); what the loop cannot settle is forwarded to the plan reviewer. The gate decides here from
 * triage and the product track (no plan yet: gate.ts), and the plan phase's gate keeps that decision. Runs under the
 * transient `hydraflow-adv-shape-running` label, on the driver every wired stage shares (stage-driver.ts).
 *
 * The directions live in this run until they are posted: a run killed mid-stage has posted none, so its re-run (or a
 * `/retry`) proposes again and the stage resumes at its recorded step with the new directions.
 */
import { adversarialSummaryLines, revisionRequest, stageSpec, type ShapeTurn } from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { directionsText } from '../shape/prompt';
import { decidePlanGate, gateLines } from './gate';
import { askVoter } from './voters';
import { driveStage } from './stage-driver';

export const SHAPE_COUNCIL = stageSpec('shape-council');

/**
 * The directions to post (the shape agent's, or its last revision for the council) and the lines for the progress
 * comment; `revise`: one shape call revising `turn`'s directions with the council's blocking concerns (`notes`).
 */
export async function runShapeCouncil(
  ctx: PhaseContext,
  first: ShapeTurn,
  revise: (turn: ShapeTurn, notes: string) => Promise<ShapeTurn>,
): Promise<{ turn: ShapeTurn; lines: string[] }> {
  const decided = await decidePlanGate(ctx, undefined);
  const gate = gateLines(decided, 'the shape council');
  const lines = (state: Parameters<typeof adversarialSummaryLines>[0]) => [
    ...gate,
    '',
    ...adversarialSummaryLines(state),
  ];
  if (decided.result.decision === 'trivial') return { turn: first, lines: gate };
  const spec = SHAPE_COUNCIL;
  let turn = first;
  const result = await driveStage(
    ctx,
    { spec, then: 'The directions are posted for a human to choose.', lines, restart: ctx.forced },
    {
      runAgent: async ({ concerns }) => {
        turn = await revise(turn, revisionRequest(concerns));
      },
      vote: ({ voter, round, previous }) =>
        askVoter(ctx, { spec, voter, round, subject: directionsText(turn.directions), previous }),
    },
  );
  return { turn, lines: lines(result.state) };
}
