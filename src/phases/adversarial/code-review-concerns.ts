/**
 * Code review as the wide loop's second consumer (packages/core/src/adversarial/consumers.ts): the concerns waiting
 * for it — forwarded by the plan council and carried on by the plan reviewer — are in the reviewer's prompt with their
 * ids, and its verdict answers each `addressed` (this change handles it) or `carried` (it ships as a known gap: at the
 * merge it becomes knowledge, carryover.ts). An unanswered id, or an entry that does not parse, is carried.
 * Nothing here runs when no concern waits: the reviewer's call is then byte for byte what it was before the layer
 * (as the plan reviewer's, plan-review-concerns.ts).
 */
import {
  adversarialOf,
  concernAnswersSchema,
  concernsAnswered,
  fingerprint,
  pendingConcernsSection,
  pendingFor,
  reviewVerdictSchema,
  specReviewVerdictSchema,
  withAdversarialEvents,
  type Concern,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { readConcerns } from './concerns-comment';

export const CODE_REVIEW_CONCERNS_NOTE =
  'Concerns forwarded by the adversarial review are listed after the diff: answer each in `concerns` (addressed: this diff handles it, say how; carried: it stays open and ships as a known gap), and report as a finding an unaddressed one that this diff makes worse.';

/** The concerns waiting for code review, with their text (from each stage's concerns comment); [] when the layer is off. */
export function concernsForCodeReview(ctx: PhaseContext): Concern[] {
  if (!ctx.config.adversarial.enabled) return [];
  const state = adversarialOf(ctx.session.state);
  const waiting = new Set(pendingFor(state, 'code-review').map((p) => p.fingerprint));
  if (waiting.size === 0) return [];
  const seen = new Set<string>();
  return Object.values(state.stages)
    .flatMap((rec) => readConcerns(ctx, rec?.block))
    .filter((c) => {
      const f = fingerprint(c);
      if (!waiting.has(f) || seen.has(f)) return false;
      seen.add(f);
      return true;
    });
}

export function codeReviewConcernsSection(concerns: readonly Concern[]): string {
  return pendingConcernsSection(concerns, 'code-review');
}

/** The review's schemas when concerns wait for it: its verdict plus an answer per concern. */
export const reviewWithConcernsSchema = reviewVerdictSchema.extend(concernAnswersSchema.shape);
export const specReviewWithConcernsSchema = specReviewVerdictSchema.extend(concernAnswersSchema.shape);

/** Records the reviewer's answers (ConcernsAnswered) in the state; `answer` may be anything the model returned. */
export function recordCodeReviewAnswers(ctx: PhaseContext, answer: unknown): void {
  const { session } = ctx;
  const events = concernsAnswered(
    adversarialOf(session.state),
    'code-review',
    answer,
    session.options.now().toISOString(),
  );
  session.update((s) => withAdversarialEvents(s, events));
}
