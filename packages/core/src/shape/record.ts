/**
 * Shape's part of the signed issue state (docs/adr/0012-product-track.md). Like every record in the state, no model or
 * issue text: the directions, the conversation and the chosen direction live in comments; the state keeps their ids
 * and hashes, so only a comment HydraFlow wrote, unchanged since, is read back as a direction or as the choice.
 *
 * This record is the product track's only signal to the engineering phases (ADR-0031's "decomposition marker"): plan
 * requires sub-issues and review checks the change against the chosen direction when `selected` is set and
 * `decomposition` is true here — never because a comment says "DECOMPOSITION REQUIRED" (anyone can post that).
 *
 * state/schema.ts imports this file: it must not import the state module back.
 */
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: false });
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const login = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\[bot\])?$/, 'GitHub login');

export const SHAPE_LETTERS = ['A', 'B', 'C', 'D', 'E'] as const;
export const shapeLetterSchema = z.enum(SHAPE_LETTERS);
export type ShapeLetter = z.infer<typeof shapeLetterSchema>;

/** Learning signals read from a human's reply (ADR-0031), deterministically (no model). */
export const SHAPE_SIGNALS = ['scope_narrow', 'scope_expand', 'positive', 'negative'] as const;
export const shapeSignalSchema = z.enum(SHAPE_SIGNALS);
export type ShapeSignal = z.infer<typeof shapeSignalSchema>;

/** At most this many human replies are remembered (the oldest go first); turns are counted apart. */
export const SHAPE_CONVERSATION_LIMIT = 30;

export const shapeReplySchema = z.object({
  /** The human's comment. */
  commentId: z.number().int().positive(),
  by: login,
  at: isoTime,
  signals: z.array(shapeSignalSchema).max(SHAPE_SIGNALS.length),
  /**
   * What HydraFlow did with it: `selected` (it picked a direction, or /ship-it), `turn` (the agent answered, maybe with
   * revised directions), `ask-pick` (max_shape_turns reached: a human is asked to pick), `refused` (someone without
   * permission: a reason, no turn).
   */
  outcome: z.enum(['selected', 'turn', 'ask-pick', 'refused']),
});
export type ShapeReply = z.infer<typeof shapeReplySchema>;

export const shapeRecordSchema = z.object({
  /** The directions comment (updated in place on every turn) and the hash of its directions data block (direction.ts). */
  commentId: z.number().int().positive(),
  hash: sha256Hex,
  /** The letters the current directions carry, in order (2–5). */
  letters: z.array(shapeLetterSchema).min(2).max(5),
  /** Agent turns after the first directions (a turn answers a human reply); at most max_shape_turns. */
  turns: z.number().int().nonnegative(),
  replies: z.array(shapeReplySchema).max(SHAPE_CONVERSATION_LIMIT),
  /** Since when HydraFlow waits for a human (its last post): shape_timeout_minutes counts from here. */
  waitingSince: isoTime,
  /**
   * The chosen direction: its letter, the finalization comment and the hash of that comment's data block, which holds
   * the one chosen direction (direction.ts: `readShapeData(body, hash)[0]`).
   */
  selected: z
    .object({
      letter: shapeLetterSchema,
      commentId: z.number().int().positive(),
      hash: sha256Hex,
      by: login,
      at: isoTime,
      via: z.enum(['comment', 'ship-it']),
    })
    .optional(),
  /** ADR-0031's DECOMPOSITION REQUIRED: plan must split the work into 3–8 sub-issues. Set with `selected`. */
  decomposition: z.boolean().optional(),
  /** The shape_timeout_minutes escalation, by a scheduled run (no model call). */
  timedOutAt: isoTime.optional(),
});
export type ShapeRecord = z.infer<typeof shapeRecordSchema>;
