import { isPipelineLabel } from './labels';

/** One labeled/unlabeled event of an issue, as GitHub's issue events list it (oldest first). */
export interface LabelEvent {
  event: 'labeled' | 'unlabeled';
  label: string;
  actor: string | undefined;
}

/** The latest `kind` event of `label` (case-insensitive) and its place in `events`; undefined when none is listed. */
export function lastLabelEvent(
  events: readonly LabelEvent[],
  label: string,
  kind: LabelEvent['event'],
): { actor: string | undefined; index: number } | undefined {
  const wanted = label.toLowerCase();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.event === kind && e.label.toLowerCase() === wanted) return { actor: e.actor, index: i };
  }
  return undefined;
}

/**
 * Whether a pipeline label other than `removed` was on the issue right after the event at `index`: each label's latest
 * event up to there says whether it was on. A removal that left one is no move out of the pipeline — the router skips
 * it ("another pipeline label remains", packages/core/src/router/route.ts) — so nothing may later treat it as one.
 */
export function pipelineLabelRemained(events: readonly LabelEvent[], index: number, removed: string): boolean {
  const on = new Map<string, boolean>();
  for (const e of events.slice(0, index + 1)) on.set(e.label.toLowerCase(), e.event === 'labeled');
  return [...on].some(([label, present]) => present && label !== removed.toLowerCase() && isPipelineLabel(label));
}
