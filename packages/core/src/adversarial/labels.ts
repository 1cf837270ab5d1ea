/**
 * The adversarial layer's labels (docs/adr/0018-adversarial-layer.md). None is a pipeline label
 * (pipeline/labels.ts): an issue keeps exactly one pipeline label while these come and go beside it.
 *
 * - Transient, one per hosting phase (ADR-0064): set when a stage of the phase starts, removed when it ends; a re-run
 *   after a crash, or closing the issue, removes one left behind.
 * - Overrides of the complexity gate (gate.ts), set by humans; the seed ADR names none, so these are ours:
 *   `hydraflow-adv-force` runs every stage whatever the gate says, `hydraflow-adv-skip` runs none. Both: force wins
 *   (scrutiny is the safe side of a contradiction).
 */
import { isPipelineLabel } from '../pipeline/labels';
import { ADVERSARIAL_PHASES, type AdversarialPhase, type AdversarialRunningLabel } from './stages';

export interface LabelFacts {
  name: string;
  color: string;
  description: string;
}

export function adversarialRunningLabel<P extends AdversarialPhase>(phase: P): AdversarialRunningLabel<P> {
  return `hydraflow-adv-${phase}-running`;
}

export const ADVERSARIAL_RUNNING_LABELS: readonly (LabelFacts & { phase: AdversarialPhase })[] = ADVERSARIAL_PHASES.map(
  (phase) => ({
    phase,
    name: adversarialRunningLabel(phase),
    color: 'ededed',
    description: `HydraFlow: adversarial review of the ${phase} phase running`,
  }),
);

export const ADV_FORCE_LABEL: LabelFacts = {
  name: 'hydraflow-adv-force',
  color: 'b60205',
  description: 'HydraFlow: run the adversarial stages whatever the complexity gate says',
};

export const ADV_SKIP_LABEL: LabelFacts = {
  name: 'hydraflow-adv-skip',
  color: 'c5def5',
  description: 'HydraFlow: skip the adversarial stages (a human judged the issue trivial)',
};

const RUNNING = new Set<string>(ADVERSARIAL_RUNNING_LABELS.map((l) => l.name));

/** A transient `hydraflow-adv-<phase>-running` label. */
export function isAdversarialRunningLabel(label: string): label is AdversarialRunningLabel {
  return RUNNING.has(label);
}

/** Any label of the adversarial layer (transient or override). Never a pipeline label (checked below at load). */
export function isAdversarialLabel(label: string): boolean {
  return RUNNING.has(label) || label === ADV_FORCE_LABEL.name || label === ADV_SKIP_LABEL.name;
}

/** The transient labels among `labels` that no running stage explains: what a re-run or a close removes. */
export function staleRunningLabels(labels: readonly string[], running: readonly AdversarialPhase[] = []): string[] {
  const keep = new Set<string>(running.map(adversarialRunningLabel));
  return labels.filter((l) => isAdversarialRunningLabel(l) && !keep.has(l));
}

// The one-pipeline-label invariant depends on this: fail at load, not in some issue's history.
for (const l of [...RUNNING, ADV_FORCE_LABEL.name, ADV_SKIP_LABEL.name]) {
  if (isPipelineLabel(l)) throw new Error(`adversarial label ${l} collides with a pipeline label`);
}
