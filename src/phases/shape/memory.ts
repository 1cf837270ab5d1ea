/**
 * Shape's side of the memory store (docs/adr/0015-memory-store.md, src/memory/memory.ts): the preference memories
 * recalled for this issue go into the shape prompt (prompt.ts); the preferences a finalized conversation taught
 * (core: `shapePreferenceEntries`) are retained, tagged with their learning signals and the issue's topic words so a
 * later issue on the same topic recalls them. Shape runs in the routing job, which holds the write token. Memory never
 * fails the phase: Memory warns and goes on.
 */
import { topicTags, type ShapeMemory, type ShapePreferenceEntry } from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';

/** The preference memories recalled for this issue (by relevance to its title and body): one request. */
export async function recallMemories(ctx: PhaseContext): Promise<ShapeMemory[]> {
  const recalled = await ctx.memory?.recall(`${ctx.issue.title}\n${ctx.issue.body}`);
  // the recalled text is sanitized already; a row a human added by hand has no source issue
  return (recalled?.recalled ?? []).map((r) => ({ text: r.text, source: { issue: r.entry.source ?? 0 } }));
}

/** Retains the preference entries of a finalized conversation: a read and a compare-and-swap write. */
export async function retainPreferences(ctx: PhaseContext, entries: readonly ShapePreferenceEntry[]): Promise<void> {
  if (!ctx.memory || entries.length === 0) return;
  const topic = topicTags(ctx.issue.title);
  await ctx.memory.retain(
    entries.map((e) => ({
      kind: 'preference' as const,
      text: e.text,
      tags: [...e.signals, ...topic],
      source: e.source.issue,
      confidence: e.direction ? 0.8 : 0.6,
    })),
    `memory: preferences from the shape of #${ctx.issue.number}`,
  );
}
