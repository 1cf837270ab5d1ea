/**
 * The plan council (ADR-0064; packages/core/src/adversarial/, docs/adr/0018-adversarial-layer.md) between the
 * planner's first plan and the plan reviewer, when `adversarial.enabled`:
 *
 * - the complexity gate decides (gate.ts here); trivial → nothing more, no model call;
 * - load-bearing → the assumption surfacer first (assumptions.ts), then, under the transient
 *   `hydraflow-adv-plan-running` label, the retry loop (drive.ts) with this file's
 *   I/O: Builder, Tester and Risk-Skeptic vote in parallel (voters.ts); blocking concerns → the planner revises with
 *   them attached; oscillation, exhausted retries or budget → the open blocking concerns are forwarded to the plan
 *   reviewer (plan-review-concerns.ts);
 * - after every step the state is published (and the concerns' comment written first), so a run killed mid-stage
 *   resumes at the recorded step; the label comes off when the stage ends (stage-driver.ts, shared with spec-judge.ts).
 */
import {
  adversarialOf,
  adversarialSummaryLines,
  fingerprint,
  revisionRequest,
  stageSpec,
  type AdversarialState,
  type Concern,
  type GateResult,
  type Plan,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { decidePlanGate, gateLines } from './gate';
import { askVoter } from './voters';
import { readConcerns } from './concerns-comment';
import { driveStage } from './stage-driver';
import { ASSUMPTIONS_PLAN, runAssumptions } from './assumptions';

export const PLAN_COUNCIL = stageSpec('plan-council');

export interface CouncilResult {
  /** The plan the reviewer gets: the planner's, or its last revision for the council. */
  plan: Plan;
  gate: GateResult;
  /** Lines for the progress comment: the gate's decision and reasons, the stage's outcome. */
  lines: string[];
  /** The gate's lines alone (a later stage's outcome goes after them). */
  gateLines: string[];
}

/** `revise`: one planner call revising `plan` with the council's blocking concerns (`notes`) attached. */
export async function runPlanCouncil(
  ctx: PhaseContext,
  first: Plan,
  revise: (plan: Plan, notes: string) => Promise<Plan>,
): Promise<CouncilResult> {
  const { session } = ctx;
  const spec = PLAN_COUNCIL;
  const decided = await decidePlanGate(ctx, first);
  const gate = decided.result;
  const lines = (state: AdversarialState) => [...gateLines(decided), '', ...adversarialSummaryLines(state)];
  if (gate.decision === 'trivial')
    return { plan: first, gate, lines: lines(adversarialOf(session.state)), gateLines: gateLines(decided) };

  await runAssumptions(ctx, ASSUMPTIONS_PLAN, JSON.stringify(first, null, 2), {
    then: 'The plan council is next.',
    lines,
  });
  let plan = first;
  const result = await driveStage(
    ctx,
    { spec, then: 'The plan reviewer is next.', lines },
    {
      runAgent: async ({ concerns }) => {
        plan = await revise(plan, revisionRequest(concerns));
      },
      vote: ({ voter, round, previous }) =>
        askVoter(ctx, { spec, voter, round, subject: JSON.stringify(plan, null, 2), previous }),
    },
  );
  return { plan, gate, lines: lines(result.state), gateLines: gateLines(decided) };
}

/** The concerns waiting for the plan reviewer, with their text (from each stage's concerns comment). */
export function concernsForPlanReview(ctx: PhaseContext): Concern[] {
  const state = adversarialOf(ctx.session.state);
  const waiting = new Set(state.pending.filter((p) => p.must_address_by === 'plan-review').map((p) => p.fingerprint));
  if (waiting.size === 0) return [];
  const all = Object.values(state.stages).flatMap((rec) => readConcerns(ctx, rec?.block));
  const seen = new Set<string>();
  return all.filter((c) => {
    const f = fingerprint(c);
    if (!waiting.has(f) || seen.has(f)) return false;
    seen.add(f);
    return true;
  });
}
