/**
 * Carryover at the merge (packages/core/src/adversarial/carryover.ts, docs/adr/0018-adversarial-layer.md): when the
 * merge gate finishes a merged pull request whose issue still has forwarded concerns open (pending: unanswered, or
 * carried by a consumer), each becomes a low-confidence `knowledge` entry of the memory store (src/memory/memory.ts)
 * and `ShippedWithKnownGap` is recorded in the adversarial state, published with the merge's last progress
 * comment.
 *
 * Once per pull request: the state's `shipped` list makes a re-delivered merge a no-op before the store is read, and
 * the entries are keyed by the concern's fingerprint, so a run that retained and died before publishing only confirms
 * them again on its re-run (one row each). A retain that fails (memory is best effort, src/memory/memory.ts: a warning)
 * records no event: the concerns stay pending in the state, and the progress comment says they were not kept. Nothing
 * here makes a request when the layer is off or nothing is open.
 */
import {
  adversarialOf,
  carryoverDrafts,
  carryoverDue,
  fingerprint,
  shippedWithKnownGap,
  withAdversarialEvents,
  type Concern,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { readConcerns } from './concerns-comment';

/** The open concerns with their text (from each stage's concerns comment); one whose comment is gone is left out. */
export function openConcerns(ctx: PhaseContext): Concern[] {
  const state = adversarialOf(ctx.session.state);
  const open = new Set(state.pending.map((p) => p.fingerprint));
  const seen = new Set<string>();
  return Object.values(state.stages)
    .flatMap((rec) => readConcerns(ctx, rec?.block))
    .filter((c) => {
      const f = fingerprint(c);
      if (!open.has(f) || seen.has(f)) return false;
      seen.add(f);
      return true;
    });
}

/**
 * Retains the open concerns of `pr` as knowledge and records ShippedWithKnownGap in the session's state (the caller
 * publishes it). Returns the lines for the progress comment; none when the layer is off, nothing is open, or this
 * merge was carried over already. The concerns' text comes from the comments the session holds: no request for it.
 */
export async function carryOverAtMerge(ctx: PhaseContext, pr: number): Promise<string[]> {
  if (!ctx.config.adversarial.enabled || !carryoverDue(adversarialOf(ctx.session.state), pr)) return [];
  const { session } = ctx;
  const concerns = openConcerns(ctx);
  const unreadable = adversarialOf(session.state).pending.length - concerns.length;
  const lost =
    unreadable > 0
      ? [
          `- ${unreadable} open concern${unreadable === 1 ? '' : 's'} could not be read back (its comment was edited or deleted) and stays open.`,
        ]
      : [];
  if (concerns.length === 0) return lost;
  const drafts = carryoverDrafts(pr, concerns);
  if (ctx.memory) {
    const kept = await ctx.memory.retain(drafts, `memory: known gaps shipped in #${pr} (issue #${ctx.issue.number})`);
    if (!kept.ok)
      return [
        `**Known gaps:** ${concerns.length} open concern${concerns.length === 1 ? '' : 's'} not kept in memory (${kept.reason}); they stay open in the issue's state.`,
        ...lost,
      ];
  }
  session.update((s) =>
    withAdversarialEvents(s, shippedWithKnownGap(adversarialOf(s), pr, concerns, session.options.now().toISOString())),
  );
  const where = ctx.memory ? 'kept as knowledge in the memory store' : 'recorded (memory.enabled is off: not retained)';
  return [
    `**Known gaps:** #${pr} merged with ${concerns.length} adversarial concern${concerns.length === 1 ? '' : 's'} open, ${where}.`,
    ...lost,
  ];
}
