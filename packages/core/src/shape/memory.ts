/**
 * The seam to the preference-memory store (issue #18 item 4; the store is not built here). Shape takes the memories
 * recalled for an issue as a plain list (src/phases/shape/prompt.ts puts them in the prompt under their own heading),
 * and this pure function turns a shape conversation into the entries to retain: one per human reply that carried a
 * learning signal, and one for the direction chosen. The store recalls, deduplicates (by `key`) and bounds them.
 */
import type { ShapeDirection } from './direction';
import type { ShapeSignal } from './record';

/** A memory recalled into the shape prompt: its text and the issue it was learned on. */
export interface ShapeMemory {
  text: string;
  source: { issue: number };
}

/** A preference to retain, as the store keeps it (its `key` is stable: the same reply retained twice is one entry). */
export interface ShapePreferenceEntry {
  key: string;
  /** One line a human can read (and edit) in the store. */
  text: string;
  signals: ShapeSignal[];
  /** The direction chosen in the end, when the conversation is finalized. */
  direction?: Pick<ShapeDirection, 'letter' | 'name' | 'size' | 'defer'>;
  /** The human's words (flattened, capped), when the entry comes from a reply. */
  words?: string;
  by: string;
  source: { issue: number; comment: number };
  /** YYYY-MM-DD (UTC). */
  date: string;
}

export interface ShapeConversationReply {
  commentId: number;
  by: string;
  /** ISO time of the reply. */
  at: string;
  text: string;
  signals: readonly ShapeSignal[];
}

const WORDS_MAX = 300;
const flat = (text: string) => {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > WORDS_MAX ? `${one.slice(0, WORDS_MAX - 1)}…` : one;
};

/** The preference entries a shape conversation yields (pure; the memory store retains them). */
export function shapePreferenceEntries(args: {
  issue: number;
  replies: readonly ShapeConversationReply[];
  /** The chosen direction and the reply (or /ship-it comment) that chose it, once finalized. */
  chosen?: { direction: ShapeDirection; by: string; commentId: number; at: string };
}): ShapePreferenceEntry[] {
  const { issue } = args;
  const picked = args.chosen?.direction;
  const direction = picked
    ? { letter: picked.letter, name: picked.name, size: picked.size, defer: picked.defer }
    : undefined;
  const entries: ShapePreferenceEntry[] = [];
  for (const r of args.replies) {
    if (r.signals.length === 0) continue;
    const words = flat(r.text);
    entries.push({
      key: `shape:${issue}:${r.commentId}`,
      text: `On #${issue}, ${r.by} said (${r.signals.join(', ')}): "${words}"${direction ? `; chose ${direction.name} (size ${direction.size})` : ''}`,
      signals: [...r.signals],
      ...(direction ? { direction } : {}),
      words,
      by: r.by,
      source: { issue, comment: r.commentId },
      date: r.at.slice(0, 10),
    });
  }
  if (args.chosen && direction) {
    const { by, commentId, at } = args.chosen;
    entries.push({
      key: `shape:${issue}:chosen`,
      text: `On #${issue}, ${by} chose ${direction.defer ? 'to defer' : `${direction.name} (size ${direction.size})`} among the shaped directions`,
      signals: [...new Set(args.replies.flatMap((r) => r.signals))],
      direction,
      by,
      source: { issue, comment: commentId },
      date: at.slice(0, 10),
    });
  }
  return entries;
}
