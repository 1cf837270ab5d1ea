/**
 * The complexity gate at the plan phase (packages/core/src/adversarial/gate.ts): decided once the planner's first plan
 * is there (its files and risks are signals), recorded in the signed state (reason codes) and shown in the progress
 * comment (the details, with paths). A human's `hydraflow-adv-force` / `hydraflow-adv-skip` label wins — if that human
 * may steer: labels are steering (docs/adr/0019-who-may-steer-and-what-a-human-approved.md), and GitHub lets the triage
 * role set any label, so a skip from below commands.min_permission would silence the council on any issue.
 */
import {
  ADV_FORCE_LABEL,
  ADV_SKIP_LABEL,
  adversarialOf,
  decideComplexity,
  gateEvent,
  lastLabelEvent,
  withAdversarialEvents,
  type GateResult,
  type Plan,
} from '@hydraflow/core';
import { belowSteering } from '../../handlers/may-steer';
import type { PhaseContext } from '../phase-context';

/** The gate's decision, and the override labels it did not obey (who set them may not steer), for the comment. */
export interface PlanGate {
  result: GateResult;
  ignored: string[];
}

/**
 * The gate's decision, recorded: at plan with the planner's first plan; at shape (`plan` undefined) from triage and the
 * product track alone, which the plan phase's gate then keeps (decideComplexity's `previous`).
 */
export async function decidePlanGate(ctx: PhaseContext, plan: Plan | undefined): Promise<PlanGate> {
  const { session } = ctx;
  const triage = session.state.triage;
  const { labels, ignored } = await overridesOfSteerers(ctx);
  const result = decideComplexity(
    {
      labels,
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
      ...(plan ? { plan: { files: plan.files_to_touch, risks: plan.risks } } : { productTrack: true }),
    },
    {},
    adversarialOf(session.state).gate,
  );
  // an unchanged decision is no event (reduce.ts): a resumed run does not log it twice
  session.update((s) => withAdversarialEvents(s, [gateEvent(result, session.options.now().toISOString())]));
  return { result, ignored };
}

/**
 * The issue's labels without the override labels set last by someone below commands.min_permission (or by someone the
 * issue's events do not name: not obeyed, fails closed). One request (the label events), only when one is on.
 */
async function overridesOfSteerers(ctx: PhaseContext): Promise<{ labels: string[]; ignored: string[] }> {
  const overrides = [ADV_FORCE_LABEL.name, ADV_SKIP_LABEL.name];
  const on = ctx.issue.labels.filter((l) => overrides.includes(l.toLowerCase()));
  if (on.length === 0) return { labels: [...ctx.issue.labels], ignored: [] };
  const events = await ctx.issues.labelEvents(ctx.issue.number).catch(() => []);
  const dropped: string[] = [];
  const ignored: string[] = [];
  for (const label of on) {
    const actor = lastLabelEvent(events, label, 'labeled')?.actor;
    const below = actor ? await belowSteering(ctx, actor).catch(() => 'none' as const) : 'none';
    if (below === undefined) continue;
    dropped.push(label);
    ignored.push(
      `\`${label}\` ${actor ? `set by ${actor} (${below})` : 'set by someone GitHub does not name'} is not obeyed: it needs ${ctx.config.commands.min_permission} permission`,
    );
  }
  return { labels: ctx.issue.labels.filter((l) => !dropped.includes(l)), ignored };
}

/** The decision and every reason, for the progress comment (may name the plan's paths: never kept in the state). */
export function gateLines({ result, ignored }: PlanGate, council = 'the plan council'): string[] {
  const what = result.decision === 'trivial' ? 'trivial: no adversarial stage runs' : `load-bearing: ${council} runs`;
  const by = result.source === 'label' ? ' (a human’s label)' : '';
  return [
    `**Complexity gate:** ${what}${by}.`,
    ...result.reasons.map((r) => `- ${r.detail}`),
    ...ignored.map((i) => `- ${i}`),
  ];
}
