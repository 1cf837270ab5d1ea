/**
 * Retaining memories: the same memory (by key) is confirmed, never added twice; memories not confirmed for `maxAgeDays`
 * are dropped; past `maxEntries` the least recently confirmed go first. Broken rows and a human's free text are kept
 * as they are (file.ts); a human's wording of a memory stands when HydraFlow confirms it.
 */
import {
  MEMORY_LIMITS,
  memoryDay,
  memoryKey,
  memoryText,
  normalizeTag,
  type MemoryDraft,
  type MemoryEntry,
} from './entry';
import type { MemoryDocument, MemoryRow } from './file';

export interface MemoryBounds {
  maxEntries: number;
  maxAgeDays: number;
}

export const DEFAULT_MEMORY_BOUNDS: MemoryBounds = { maxEntries: 200, maxAgeDays: 90 };

export interface RetainResult {
  document: MemoryDocument;
  added: number;
  confirmed: number;
  /** Keys dropped: expired or evicted. */
  dropped: string[];
}

/** Whether `entry` was last confirmed more than `maxAgeDays` days before `today` (YYYY-MM-DD). */
export function isExpired(entry: MemoryEntry, today: string, maxAgeDays: number): boolean {
  return Date.parse(`${today}T00:00:00Z`) - Date.parse(`${entry.updated}T00:00:00Z`) > maxAgeDays * 86_400_000;
}

export function retainInDocument(
  document: MemoryDocument,
  drafts: readonly MemoryDraft[],
  options: MemoryBounds & { now: Date },
): RetainResult {
  const today = memoryDay(options.now);
  const rows: MemoryRow[] = document.rows.map((r) => ({ ...r }));
  const byKey = new Map<string, Extract<MemoryRow, { type: 'entry' }>>();
  for (const row of rows) if (row.type === 'entry') byKey.set(row.entry.key, row);
  let added = 0;
  let confirmed = 0;
  const fresh: Extract<MemoryRow, { type: 'entry' }>[] = [];
  for (const draft of drafts) {
    const text = memoryText(draft.text);
    if (text === '') continue;
    const key = draft.key !== undefined && /^[0-9a-f]{12}$/.test(draft.key) ? draft.key : memoryKey(draft.kind, text);
    const tags = (draft.tags ?? []).map(normalizeTag).filter((t) => t !== '');
    const confidence = clamp(draft.confidence ?? 0.5);
    const known = byKey.get(key);
    if (known) {
      const e = known.entry;
      // the human's text, kind and source stand; the confirmation is HydraFlow's
      known.entry = {
        ...e,
        tags: [...new Set([...e.tags, ...tags])].slice(0, MEMORY_LIMITS.tags),
        updated: today > e.updated ? today : e.updated,
        uses: e.uses + 1,
        confidence: Math.max(e.confidence, confidence),
      };
      delete known.line;
      confirmed += 1;
      continue;
    }
    const row = {
      type: 'entry' as const,
      entry: {
        key,
        kind: draft.kind,
        text,
        tags: [...new Set(tags)].slice(0, MEMORY_LIMITS.tags),
        source: draft.source,
        created: today,
        updated: today,
        uses: 1,
        confidence,
      },
    };
    byKey.set(key, row);
    fresh.push(row);
    added += 1;
  }
  // new rows go right after the table's last row (a human's text below the table stays below it)
  const last = rows.reduce((at, r, i) => (r.type === 'text' ? at : i), -1);
  rows.splice(last + 1, 0, ...fresh);

  const dropped = new Set<string>();
  for (const row of rows)
    if (row.type === 'entry' && isExpired(row.entry, today, options.maxAgeDays)) dropped.add(row.entry.key);
  const kept = rows.filter(
    (r): r is Extract<MemoryRow, { type: 'entry' }> => r.type === 'entry' && !dropped.has(r.entry.key),
  );
  const over = kept.length - Math.max(0, options.maxEntries);
  if (over > 0) {
    const order = [...kept].sort(
      (a, b) =>
        a.entry.updated.localeCompare(b.entry.updated) ||
        a.entry.uses - b.entry.uses ||
        a.entry.created.localeCompare(b.entry.created),
    );
    for (const row of order.slice(0, over)) dropped.add(row.entry.key);
  }
  return {
    document: { ...document, rows: rows.filter((r) => r.type !== 'entry' || !dropped.has(r.entry.key)) },
    added,
    confirmed,
    dropped: [...dropped],
  };
}

function clamp(n: number): number {
  return Number.isFinite(n) ? Math.round(Math.min(1, Math.max(0, n)) * 100) / 100 : 0.5;
}
