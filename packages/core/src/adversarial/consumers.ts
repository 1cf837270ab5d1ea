/**
 * The wide loop's consumers (ADR-0064): the plan reviewer and code review must address each concern forwarded to them
 * or explicitly carry it on (docs/adr/0018-adversarial-layer.md). Pure: the prompt section that shows them the
 * concerns, the schema of their answer, and the event it makes.
 *
 * A concern the consumer does not answer, or an answer that does not parse, is **carried**, never addressed and never
 * dropped: it stays visible to the next consumer and, at the merge, becomes knowledge (carryover.ts). Only an explicit
 * "addressed" closes a concern.
 */
import { z } from 'zod';
import { sanitizeUntrusted } from '../text/sanitize';
import { fingerprint, type Concern } from './concern';
import type { AdversarialEvent } from './events';
import type { AdversarialState, ConcernRef } from './record';
import { ADVERSARIAL_VOTERS, type ConcernConsumer } from './stages';

/** The concerns waiting for `consumer`, oldest first. */
export function pendingFor(state: AdversarialState, consumer: ConcernConsumer): ConcernRef[] {
  return state.pending.filter((p) => p.must_address_by === consumer);
}

export const concernAnswersSchema = z.object({
  concerns: z
    .array(
      z.object({
        id: z.string().describe('The concern id as given (16 hex characters).'),
        verdict: z
          .enum(['addressed', 'carried'])
          .describe('addressed: the plan or the code now handles it; carried: it stays open, passed on.'),
        why: z.string().describe('One sentence: how it is handled, or why it stays open.'),
      }),
    )
    .describe('One answer per concern listed.'),
});
export type ConcernAnswers = z.infer<typeof concernAnswersSchema>;

/**
 * The prompt section for a consumer: the concerns (text from the stages' data blocks, model text: sanitized) with
 * their ids. Empty when there are none.
 */
export function pendingConcernsSection(concerns: readonly Concern[], consumer: ConcernConsumer): string {
  if (concerns.length === 0) return '';
  const who = consumer === 'plan-review' ? 'plan' : 'change';
  return [
    '## Concerns forwarded by the adversarial review',
    '',
    `Earlier reviewers raised these and they were not settled. For each, say whether this ${who} addresses it (it is handled, and how) or carries it (it stays open and is passed on). Answer every id; an unanswered one is carried.`,
    '',
    ...concerns.map((c) => {
      const evidence = c.evidence.length ? ` Evidence: ${c.evidence.map((e) => flat(e)).join('; ')}.` : '';
      return `- id ${fingerprint(c)} [${c.severity}, ${ADVERSARIAL_VOTERS[c.voter].title} at ${c.stage}]: ${flat(c.text)}${evidence}`;
    }),
  ].join('\n');
}

/** The ConcernsAnswered event for a consumer's answer (see the file's comment); none when nothing waits for it. */
export function concernsAnswered(
  state: AdversarialState,
  consumer: ConcernConsumer,
  answer: unknown,
  at: string,
): AdversarialEvent[] {
  const waiting = pendingFor(state, consumer);
  if (waiting.length === 0) return [];
  const parsed = concernAnswersSchema.safeParse(answer);
  const verdicts = new Map<string, 'addressed' | 'carried'>();
  if (parsed.success)
    for (const a of parsed.data.concerns) {
      const id = a.id.trim().toLowerCase();
      if (!verdicts.has(id)) verdicts.set(id, a.verdict); // the first answer for an id counts
    }
  const addressed = waiting.filter((p) => verdicts.get(p.fingerprint) === 'addressed').map((p) => p.fingerprint);
  const done = new Set(addressed);
  // code review cannot carry the same concern to the merge twice: what it already carried stays as it is
  const carried = waiting
    .filter((p) => !done.has(p.fingerprint) && !(consumer === 'code-review' && p.carried))
    .map((p) => p.fingerprint);
  if (addressed.length + carried.length === 0) return [];
  return [{ type: 'ConcernsAnswered', at, by: consumer, addressed, carried }];
}

function flat(text: string): string {
  return sanitizeUntrusted(text, 600).replace(/\s+/g, ' ');
}
