/**
 * The complexity gate at the plan phase (packages/core/src/adversarial/gate.ts): decided once the planner's first plan
 * is there (its files and risks are signals), recorded in the signed state (reason codes) and shown in the progress
 * comment (the details, with paths). A human's `hydraflow-adv-force` / `hydraflow-adv-skip` label wins.
 */
import {
  adversarialOf,
  decideComplexity,
  gateEvent,
  withAdversarialEvents,
  type GateResult,
  type Plan,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';

export function decidePlanGate(ctx: PhaseContext, plan: Plan): GateResult {
  const { session } = ctx;
  const triage = session.state.triage;
  const result = decideComplexity(
    {
      labels: ctx.issue.labels,
      ...(triage
        ? {
            triage: {
              clarity_score: triage.clarity_score,
              complexity_score: triage.complexity_score,
              needs_discovery: triage.needs_discovery,
              route: triage.route,
            },
          }
        : {}),
      plan: { files: plan.files_to_touch, risks: plan.risks },
    },
    {},
    adversarialOf(session.state).gate,
  );
  // an unchanged decision is no event (reduce.ts): a resumed run does not log it twice
  session.update((s) => withAdversarialEvents(s, [gateEvent(result, session.options.now().toISOString())]));
  return result;
}

/** The decision and every reason, for the progress comment (may name the plan's paths: never kept in the state). */
export function gateLines(result: GateResult): string[] {
  const what =
    result.decision === 'trivial' ? 'trivial: no adversarial stage runs' : 'load-bearing: the plan council runs';
  const by = result.source === 'label' ? ' (a human’s label)' : '';
  return [`**Complexity gate:** ${what}${by}.`, ...result.reasons.map((r) => `- ${r.detail}`)];
}
