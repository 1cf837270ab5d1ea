/**
 * The seam to the preference-memory store (issue #18 item 4), which another change builds: one call site each. Until
 * it lands nothing is recalled and nothing is retained; the store replaces these two bodies.
 */
import type { ShapeMemory, ShapePreferenceEntry } from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';

/** The preference memories recalled for this issue (by relevance), for the shape prompt (prompt.ts). */
export async function recallMemories(_ctx: PhaseContext): Promise<ShapeMemory[]> {
  return [];
}

/** Retains the preference entries of a finalized conversation (core: `shapePreferenceEntries`). */
export async function retainPreferences(_ctx: PhaseContext, _entries: readonly ShapePreferenceEntry[]): Promise<void> {
  // the memory store (not built yet) writes them
}
