/**
 * The plan council (ADR-0064; packages/core/src/adversarial/, docs/adr/0018-adversarial-layer.md) between the
 * planner's first plan and the plan reviewer, when `adversarial.enabled`:
 *
 * - the complexity gate decides (gate.ts here); trivial → nothing more, no model call;
 * - load-bearing → the transient `hydraflow-adv-plan-running` label, and the retry loop (drive.ts) with this file's
 *   I/O: Builder, Tester and Risk-Skeptic vote in parallel (voters.ts); blocking concerns → the planner revises with
 *   them attached; oscillation, exhausted retries or budget → the open blocking concerns are forwarded to the plan
 *   reviewer (plan-review-concerns.ts);
 * - after every step the state is published (and the concerns' comment written first, concerns-comment.ts), so a run
 *   killed mid-stage resumes at the recorded step; the label comes off when the stage ends.
 */
import {
  adversarialOf,
  adversarialSummaryLines,
  driveAdversarialStage,
  fingerprint,
  revisionRequest,
  stageSpec,
  startStage,
  withAdversarialEvents,
  type AdversarialState,
  type Concern,
  type GateResult,
  type IssueState,
  type Plan,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { decidePlanGate, gateLines } from './gate';
import { askVoter } from './voters';
import { readConcerns, writeConcerns } from './concerns-comment';
import { clearRunningLabel, setRunningLabel } from './running-label';

export const PLAN_COUNCIL = stageSpec('plan-council');

export interface CouncilResult {
  /** The plan the reviewer gets: the planner's, or its last revision for the council. */
  plan: Plan;
  gate: GateResult;
  /** Lines for the progress comment: the gate's decision and reasons, the stage's outcome. */
  lines: string[];
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
  if (gate.decision === 'trivial') return { plan: first, gate, lines: lines(adversarialOf(session.state)) };

  const now = () => session.options.now().toISOString();
  if (endedBeforeThisPlanning(adversarialOf(session.state), session.state.plan)) {
    // a stage that ended for an earlier plan (re-planned after an edit, or a /retry): this plan is voted on anew
    session.update((s) =>
      withAdversarialEvents(s, startStage(spec, now(), { runId: session.options.runId, restart: true })),
    );
  }
  let plan = first;
  await setRunningLabel(ctx, 'plan');
  let result;
  try {
    result = await driveAdversarialStage(
      adversarialOf(session.state),
      spec,
      {
        now,
        runAgent: async ({ concerns }) => {
          plan = await revise(plan, revisionRequest(concerns));
        },
        vote: ({ voter, round, previous }) =>
          askVoter(ctx, { spec, voter, round, subject: JSON.stringify(plan, null, 2), previous }),
        load: () => Promise.resolve(readConcerns(ctx, adversarialOf(session.state).stages[spec.name]?.block)),
        persist: async ({ state, concerns }) => {
          const known = adversarialOf(session.state).stages[spec.name]?.block;
          // the concerns first: the state that names their hash must never point at a block not written yet
          const block = await writeConcerns(ctx, spec, known, concerns);
          const withBlock = {
            ...state,
            stages: { ...state.stages, [spec.name]: { ...state.stages[spec.name]!, block } },
          };
          session.update((s) => ({ ...s, adversarial: withBlock }));
          const rec = withBlock.stages[spec.name]!;
          await session.publish({
            headline: `Planning: the plan council is ${rec.status === 'running' ? `at round ${rec.rounds.length + (rec.next === 'vote' ? 1 : 0)}` : `done (${rec.status})`}`,
            next: rec.status === 'running' ? 'HydraFlow goes on with the plan council.' : 'The plan reviewer is next.',
            details: lines(withBlock).join('\n'),
          });
        },
      },
      { runId: session.options.runId },
    );
  } catch (error) {
    // The stage did not end: the label comes off if GitHub lets it (the phase's failure is what to report); else the
    // next run takes it off (clearLeftoverRunningLabels) before it resumes the stage at its recorded step.
    await clearRunningLabel(ctx, 'plan').catch(() => undefined);
    throw error;
  }
  await clearRunningLabel(ctx, 'plan');
  return { plan, gate, lines: lines(result.state) };
}

/**
 * True when the stage ended before the plan the state records was made (a later planning of the issue). A stage
 * that ended after it — or with no plan recorded — is this planning's, cut short by a crash: its outcome stands and
 * its forwarded concerns still wait for the plan reviewer.
 */
function endedBeforeThisPlanning(state: AdversarialState, plan: IssueState['plan']): boolean {
  const rec = state.stages[PLAN_COUNCIL.name];
  if (!rec || rec.status === 'running' || !plan) return false;
  return (rec.endedAt ?? rec.startedAt) <= plan.at;
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

/**
 * The stage's concerns are gone (their comment deleted or edited: ConcernsUnavailableError): the stage cannot go on
 * from its record, so the record is dropped with the escalation that says so, and the next planning (a human's
 * `/retry`) starts the stage over. Its counters and the concerns already forwarded stay.
 */
export function forgetPlanCouncil(ctx: PhaseContext): void {
  ctx.session.update((s) => {
    const adv = adversarialOf(s);
    const stages = { ...adv.stages };
    delete stages[PLAN_COUNCIL.name];
    return { ...s, adversarial: { ...adv, stages } };
  });
}
