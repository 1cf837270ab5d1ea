/**
 * The discover phase's adversarial stages (ADR-0064; the table's `assumptions-discover` and `discovery-council` rows,
 * packages/core/src/adversarial/stages.ts) between the research agent's brief and its posting, when
 * `adversarial.enabled`: the gate decides from triage and the product track (no plan yet: gate.ts); for a load-bearing
 * issue the assumption surfacer lists what the brief takes for granted (no retry: an unchecked load-bearing assumption
 * waits for the plan reviewer), then the Problem-Sharpener, the Existing-Solution-Hunter and the Cheapest-Test-Advocate
 * attack the brief; a blocking concern has the research agent redo the brief with it attached (at most twice); what
 * stays open waits for the plan reviewer. Runs under `hydraflow-adv-discover-running`, on the driver every wired stage
 * shares (stage-driver.ts).
 *
 * The brief lives in this run until it is posted: a run killed mid-stage has posted none, so its re-run (or a `/retry`)
 * researches again and the stages resume at their recorded steps with the new brief.
 */
import {
  adversarialSummaryLines,
  revisionRequest,
  stageSpec,
  type AdversarialState,
  type DiscoverBrief,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { decidePlanGate, gateLines } from './gate';
import { askVoter } from './voters';
import { driveStage } from './stage-driver';
import { runAssumptions } from './assumptions';

export const ASSUMPTIONS_DISCOVER = stageSpec('assumptions-discover');
export const DISCOVERY_COUNCIL = stageSpec('discovery-council');

/**
 * The brief to post (the research agent's, or its last redo for the council) and the lines for the progress comment;
 * `revise`: one research run redoing `brief` with the council's blocking concerns (`notes`).
 */
export async function runDiscoveryCouncil(
  ctx: PhaseContext,
  first: DiscoverBrief,
  revise: (brief: DiscoverBrief, notes: string) => Promise<DiscoverBrief>,
): Promise<{ brief: DiscoverBrief; lines: string[] }> {
  const decided = await decidePlanGate(ctx, undefined);
  const gate = gateLines(decided, 'the discovery council');
  const lines = (state: AdversarialState) => [...gate, '', ...adversarialSummaryLines(state)];
  if (decided.result.decision === 'trivial') return { brief: first, lines: gate };
  const text = (b: DiscoverBrief) => JSON.stringify(b, null, 2);
  await runAssumptions(ctx, ASSUMPTIONS_DISCOVER, text(first), {
    then: 'The discovery council is next.',
    lines,
    restart: ctx.forced,
  });
  const spec = DISCOVERY_COUNCIL;
  let brief = first;
  const result = await driveStage(
    ctx,
    { spec, then: 'The brief is posted and shape is next.', lines, restart: ctx.forced },
    {
      runAgent: async ({ concerns }) => {
        brief = await revise(brief, revisionRequest(concerns));
      },
      vote: ({ voter, round, previous }) => askVoter(ctx, { spec, voter, round, subject: text(brief), previous }),
    },
  );
  return { brief, lines: lines(result.state) };
}
