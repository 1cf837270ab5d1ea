/**
 * Carryover (ADR-0064 "ShippedWithKnownGap"): when a pull request merges with forwarded concerns still open, each
 * becomes a `knowledge` entry of the memory store (docs/adr/0015-memory-store.md) that the assumption surfacer of
 * later issues recalls. Pure: the drafts and the event; the memory store retains them (packages/core/src/memory/).
 *
 * - **Low confidence** (CARRYOVER_CONFIDENCE): a voter's objection nobody settled, not a verified fact.
 * - **Not stale**: dated the day of the merge (the store sets `created`/`updated`), so it is recalled until the store's
 *   expiry (`memory.max_age_days`) unless confirmed again. The store has no stale flag: freshness is its date.
 * - **Tagged with the merging pull request** (`pr-<n>`; the entry's source is the pull request's number), the stage,
 *   the voter and `known-gap`.
 * - **Deduplicated by a stable key**: the concern's fingerprint (concern.ts), hashed into the store's 12-hex key
 *   space. The same concern reworded, raised by two voters, carried by two pull requests, or written again because the
 *   merge event was delivered twice, is one entry (a knowledge carryover elsewhere once duplicated an entry 58 times).
 *   The state's `shipped` list (reduce.ts) makes the re-delivered merge a no-op before the store is even read.
 */
import { createHash } from 'node:crypto';
import type { MemoryDraft } from '../memory/entry';
import { distinctConcerns, fingerprint, type Concern } from './concern';
import type { AdversarialEvent } from './events';
import { ADVERSARIAL_LIMITS, type AdversarialState } from './record';
import { ADVERSARIAL_VOTERS } from './stages';

export const CARRYOVER_CONFIDENCE = 0.3;

/** The memory key of a carried-over concern: stable across wording noise, pull requests and re-deliveries. */
export function carryoverKey(concernFingerprint: string): string {
  return createHash('sha256')
    .update(`knowledge\nadversarial-concern\n${concernFingerprint}`)
    .digest('hex')
    .slice(0, 12);
}

/** Whether the merge of `pr` still has to be carried over (false once recorded: a re-delivered merge does nothing). */
export function carryoverDue(state: AdversarialState, pr: number): boolean {
  return !state.shipped.some((s) => s.pr === pr);
}

/** The memory drafts for the concerns still open when `pr` merged, one per key. */
export function carryoverDrafts(pr: number, concerns: readonly Concern[]): MemoryDraft[] {
  const seen = new Set<string>();
  const drafts: MemoryDraft[] = [];
  for (const c of distinctConcerns(concerns)) {
    const key = carryoverKey(fingerprint(c));
    if (seen.has(key)) continue;
    seen.add(key);
    drafts.push({
      kind: 'knowledge',
      key,
      text: `Shipped with a known gap in #${pr} (${c.severity}, ${ADVERSARIAL_VOTERS[c.voter].title} at ${c.stage}): ${c.text}`,
      tags: ['known-gap', `pr-${pr}`, c.stage, c.voter],
      source: pr,
      confidence: CARRYOVER_CONFIDENCE,
    });
  }
  return drafts;
}

/** The ShippedWithKnownGap event for `pr`, or none when nothing is open or the merge was already carried over. */
export function shippedWithKnownGap(
  state: AdversarialState,
  pr: number,
  concerns: readonly Concern[],
  at: string,
): AdversarialEvent[] {
  if (!carryoverDue(state, pr) || concerns.length === 0) return [];
  const fingerprints = [...new Set(distinctConcerns(concerns).map(fingerprint))].slice(0, ADVERSARIAL_LIMITS.pending);
  return [{ type: 'ShippedWithKnownGap', at, pr, concerns: fingerprints.sort() }];
}
