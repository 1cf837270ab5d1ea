/**
 * The plan reviewer as the wide loop's first consumer (packages/core/src/adversarial/consumers.ts): the concerns the
 * plan council forwarded are in its prompt with their ids, and its answer says of each whether the plan addresses it
 * or carries it on to code review. An unanswered id, or an entry that does not parse, is carried (never dropped); an
 * answer without `concerns` fails the schema (repaired once, then a human: docs/adr/0018-adversarial-layer.md).
 * Nothing here runs when no concern waits: the reviewer's call is then exactly what it was before the layer.
 */
import {
  concernAnswersSchema,
  concernsAnswered,
  adversarialOf,
  pendingConcernsSection,
  planReviewSchema,
  withAdversarialEvents,
  type Concern,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';

/** The reviewer's schema when concerns wait for it: its review plus an answer per concern. */
export const planReviewWithConcernsSchema = planReviewSchema.extend(concernAnswersSchema.shape);

export const PLAN_REVIEW_CONCERNS_NOTE =
  'Concerns forwarded by the adversarial review are listed with the plan: answer each in `concerns` (addressed or carried), and let an unaddressed blocking one lower the scores it bears on.';

export function planReviewConcernsSection(concerns: readonly Concern[]): string {
  return pendingConcernsSection(concerns, 'plan-review');
}

/** Records the reviewer's answers (ConcernsAnswered) in the state; `answer` may be anything the model returned. */
export function recordPlanReviewAnswers(ctx: PhaseContext, answer: unknown): void {
  const { session } = ctx;
  const events = concernsAnswered(
    adversarialOf(session.state),
    'plan-review',
    answer,
    session.options.now().toISOString(),
  );
  session.update((s) => withAdversarialEvents(s, events));
}
