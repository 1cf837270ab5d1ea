/**
 * One memory of HydraFlow's per-repository store (docs/adr/0015-memory-store.md): a short note learnt from an issue
 * (a human's preference in shape today; the adversarial layer's knowledge carryover later), with its source and dates.
 * The key is stable: the same note learnt twice is one entry confirmed twice, never a second row (a knowledge
 * carryover elsewhere once duplicated one entry 58 times).
 */
import { createHash } from 'node:crypto';

export const MEMORY_KINDS = ['preference', 'knowledge'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export const MEMORY_LIMITS = {
  /** Characters of one memory's text. */
  text: 300,
  /** Tags (learning signals such as scope_narrow) on one memory. */
  tags: 10,
  /** Characters of one tag. */
  tag: 40,
} as const;

export interface MemoryEntry {
  /** 12 hex characters: memoryKey(kind, text) when HydraFlow wrote it; kept when a human edits the text. */
  key: string;
  kind: MemoryKind;
  text: string;
  /** Learning signals and topics (lower-case words, `_` and `-`), e.g. scope_narrow. */
  tags: string[];
  /** The issue it was learnt from; null for a note a human wrote by hand. */
  source: number | null;
  /** YYYY-MM-DD (UTC) */
  created: string;
  /** YYYY-MM-DD (UTC): when it was last learnt again (confirmed); expiry and eviction go by it. */
  updated: string;
  /** How many times it was learnt. */
  uses: number;
  /** 0..1 */
  confidence: number;
}

/** What a phase retains: the store decides the key, the dates and the count. */
export interface MemoryDraft {
  kind: MemoryKind;
  text: string;
  tags?: readonly string[];
  source: number;
  confidence?: number;
  /**
   * The entry's identity when the text is not it (12 hex characters): the adversarial carryover keys a concern by its
   * fingerprint (adversarial/carryover.ts), so the same concern reworded, or carried over by another pull request, is
   * one entry confirmed again. Default: memoryKey(kind, text).
   */
  key?: string;
}

/** The text as the key sees it: case, punctuation and spacing do not make a different memory. */
export function normalizeMemoryText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The stable key of a memory: its kind and normalized text, hashed (12 hex characters). */
export function memoryKey(kind: MemoryKind, text: string): string {
  return createHash('sha256')
    .update(`${kind}\n${normalizeMemoryText(text)}`)
    .digest('hex')
    .slice(0, 12);
}

/** A tag as stored: lower-case, spaces to `_`, only letters, digits, `_` and `-`; empty when nothing is left. */
export function normalizeTag(tag: string): string {
  return tag
    .trim()
    .toLowerCase()
    .replace(/\s+/g, '_')
    .replace(/[^a-z0-9_-]/g, '')
    .slice(0, MEMORY_LIMITS.tag);
}

/** One line of text, at most MEMORY_LIMITS.text characters (a draft longer than that is cut, never refused). */
export function memoryText(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MEMORY_LIMITS.text ? `${line.slice(0, MEMORY_LIMITS.text - 1)}…` : line;
}

/** The UTC day of `now`, as entries record it. */
export function memoryDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}
