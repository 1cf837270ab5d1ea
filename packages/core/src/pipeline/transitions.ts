/**
 * The transition table (docs/adr/0008-labels-are-the-state-machine.md, docs/adr/0012-product-track.md), in one place. docs/state-machine.md is generated from this
 * table (scripts/generate-state-machine-doc is `renderStateMachineDoc()`), and a drift test compares the two.
 *
 * Rules:
 * - HydraFlow may only take the edges listed in TRANSITIONS.
 * - A human may move an issue to any stage (override, docs/adr/0008-labels-are-the-state-machine.md), or out of the pipeline.
 * - Staying in the same stage is always allowed (an idempotent re-run).
 * - An issue outside the pipeline (no pipeline label, `null`) is treated like `find` for HydraFlow: triage of an issue
 *   that was opened without a label may route it directly.
 */
import { PIPELINE_LABELS, PIPELINE_STAGES, labelFor, stageOf, type PipelineStage } from './labels';

export type TransitionActor = 'hydraflow' | 'human';

export interface TransitionEdge {
  from: PipelineStage;
  to: PipelineStage;
  /** When HydraFlow takes this edge (documentation, rendered into docs/state-machine.md). */
  when: string;
}

const ALL_STAGES: readonly PipelineStage[] = PIPELINE_STAGES.map((s) => s.stage);

/** Every edge HydraFlow itself may take. Humans are not restricted by this list. */
export const TRANSITION_EDGES: readonly TransitionEdge[] = [
  { from: 'find', to: 'discover', when: 'triage: needs discovery, or clarity below the threshold' },
  { from: 'find', to: 'groom', when: 'triage: clear, but complex enough to groom first (grooming.route)' },
  { from: 'find', to: 'plan', when: 'triage: clear enough to plan directly' },
  { from: 'find', to: 'hitl', when: 'triage failed or the verdict could not be parsed (fail closed)' },
  { from: 'discover', to: 'shape', when: 'research brief posted' },
  { from: 'discover', to: 'hitl', when: 'discovery failed' },
  { from: 'shape', to: 'plan', when: 'a human chose a direction (/ship-it)' },
  { from: 'shape', to: 'hitl', when: 'shaping timed out or failed' },
  { from: 'groom', to: 'plan', when: 'grooming decided ready (one piece of work)' },
  { from: 'groom', to: 'epic', when: 'grooming decided ready and split the work into phase sub-issues' },
  { from: 'groom', to: 'hitl', when: 'grooming found a blocker, or failed' },
  { from: 'epic', to: 'fixed', when: 'every phase sub-issue was completed' },
  { from: 'plan', to: 'ready', when: 'plan posted' },
  {
    from: 'plan',
    to: 'epic',
    when: 'a product-track issue (a chosen direction in its signed state) was planned into 3–8 phase sub-issues',
  },
  { from: 'plan', to: 'hitl', when: 'planning failed' },
  { from: 'ready', to: 'review', when: 'pull request opened' },
  { from: 'ready', to: 'hitl', when: 'implementation failed (e.g. zero commits)' },
  { from: 'ready', to: 'plan', when: 'the issue was edited after its plan was accepted: it is planned again' },
  { from: 'review', to: 'fixed', when: 'pull request merged' },
  { from: 'review', to: 'ready', when: 'review requested changes (refine)' },
  { from: 'review', to: 'hitl', when: 'review did not converge or needs a human decision' },
  ...ALL_STAGES.filter((s) => s !== 'hitl').map((to): TransitionEdge => ({
    from: 'hitl',
    to,
    when: 'a human resumes the issue (/retry or a label)',
  })),
];

/** Adjacency view of TRANSITION_EDGES. `fixed` is terminal (no outgoing edges). */
export const TRANSITIONS: Readonly<Record<PipelineStage, readonly PipelineStage[]>> = Object.fromEntries(
  ALL_STAGES.map((from) => [from, TRANSITION_EDGES.filter((e) => e.from === from).map((e) => e.to)]),
) as unknown as Record<PipelineStage, readonly PipelineStage[]>;

/** Stages HydraFlow may move an issue into from `from` (null = not in the pipeline, treated like `find`). */
export function nextStages(from: PipelineStage | null): readonly PipelineStage[] {
  return TRANSITIONS[from ?? 'find'];
}

/**
 * May `by` move an issue from `from` to `to`? `to === null` means leaving the pipeline (labels stripped): humans may
 * always do that, HydraFlow only through close cleanup (which does not consult this function), so it returns false.
 */
export function canTransition(from: PipelineStage | null, to: PipelineStage | null, by: TransitionActor): boolean {
  if (by === 'human') return true;
  if (to === null) return false;
  if (from === to) return true;
  if (from === null && to === 'find') return true;
  return nextStages(from).includes(to);
}

export function isTerminal(stage: PipelineStage): boolean {
  return TRANSITIONS[stage].length === 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Label changes

const lowerPipeline = new Set<string>(PIPELINE_LABELS.map((l) => l.toLowerCase()));

/** Label names from either plain strings or GitHub label objects. */
export function labelNames(labels: ReadonlyArray<string | { name?: string | null } | null | undefined>): string[] {
  const out: string[] = [];
  for (const l of labels) {
    if (typeof l === 'string') out.push(l);
    else if (l && typeof l.name === 'string') out.push(l.name);
  }
  return out;
}

/**
 * The pipeline labels among `labels`, in their original spelling (GitHub label names are case-insensitive, so
 * `HydraFlow-Plan` is the same label as `hydraflow-plan`; the original spelling is what a DELETE needs).
 */
export function pipelineLabelsOf(labels: readonly string[]): string[] {
  return labels.filter((l) => lowerPipeline.has(l.toLowerCase()));
}

/** The stages whose labels are on the issue besides `stage`'s own: moves someone else made, in no known order. */
export function stagesBeside(labels: readonly string[], stage: PipelineStage | null): PipelineStage[] {
  const others = pipelineLabelsOf(labels).map((l) => stageOf(l.toLowerCase()));
  return [...new Set(others)].filter((s): s is PipelineStage => s !== undefined && s !== stage);
}

function sameLabel(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export interface LabelChange {
  add: string[];
  remove: string[];
}

/**
 * The label edits that leave exactly one pipeline label (`target`'s) — or none when `target` is null — and never
 * touch a non-pipeline label. Empty add/remove when the labels are already right.
 *
 * Apply it add-first: POST `add`, then call `labelsToRemoveAfterAdd` with the label set GitHub returned (it includes
 * concurrent human edits) and DELETE those. A crash between the two steps leaves two pipeline labels, which the next
 * run repairs; remove-first would leave none, which loses the issue.
 */
export function planLabelChange(currentLabels: readonly string[], target: PipelineStage | null): LabelChange {
  const targetLabel = target === null ? null : labelFor(target);
  const present = pipelineLabelsOf(currentLabels);
  const add = targetLabel !== null && !present.some((l) => sameLabel(l, targetLabel)) ? [targetLabel] : [];
  const remove = dedupe(present.filter((l) => targetLabel === null || !sameLabel(l, targetLabel)));
  return { add, remove };
}

/** After the POST of the target label: every other pipeline label in GitHub's response must go. */
export function labelsToRemoveAfterAdd(labelsAfterAdd: readonly string[], target: PipelineStage | null): string[] {
  return planLabelChange(labelsAfterAdd, target).remove;
}

/** The single pipeline stage of a label set, or null when none; `ambiguous` when several pipeline labels are set. */
export function currentStage(labels: readonly string[]): { stage: PipelineStage | null; ambiguous: boolean } {
  const present = pipelineLabelsOf(labels);
  const stages = dedupe(present.map((l) => PIPELINE_STAGES.find((s) => sameLabel(s.label, l))!.stage));
  return { stage: stages[0] ?? null, ambiguous: stages.length > 1 };
}

function dedupe<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}
