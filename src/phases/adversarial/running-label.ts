/**
 * The transient `hydraflow-adv-<phase>-running` label (packages/core/src/adversarial/labels.ts): on the issue while a
 * stage of its phase runs, off when it ends. A run killed in between leaves it behind; the next run of any phase that
 * hosts a stage takes it off before doing anything else (`clearLeftoverRunningLabels`), so a label never claims a
 * stage runs when none does. None of these is a pipeline label: the session's stage moves never touch them.
 */
import {
  ADVERSARIAL_RUNNING_LABELS,
  adversarialRunningLabel,
  staleRunningLabels,
  type AdversarialPhase,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';

/** Sets the phase's transient label (with its colour and description, once per repository). */
export async function setRunningLabel(ctx: PhaseContext, phase: AdversarialPhase): Promise<void> {
  const name = adversarialRunningLabel(phase);
  const after = await ctx.issues.addLabels(ctx.issue.number, [name]);
  const facts = ADVERSARIAL_RUNNING_LABELS.find((l) => l.name === name)!;
  const mine = after.find((l) => l.name === name);
  if (mine && mine.description !== facts.description)
    await ctx.issues.describeLabels([{ name, color: facts.color, description: facts.description }]);
}

export async function clearRunningLabel(ctx: PhaseContext, phase: AdversarialPhase): Promise<void> {
  await ctx.issues.removeLabel(ctx.issue.number, adversarialRunningLabel(phase));
}

/**
 * Takes off the transient labels a dead run left on the issue (none of this run's stages runs yet). No request when
 * there is none: a run of a repository that never turned the layer on is unchanged.
 */
export async function clearLeftoverRunningLabels(ctx: PhaseContext): Promise<string[]> {
  const stale = staleRunningLabels(ctx.issue.labels);
  for (const label of stale) await ctx.issues.removeLabel(ctx.issue.number, label);
  return stale;
}
