/**
 * Where a stage's concerns — model text — live: a hidden, hash-checked data block in a comment HydraFlow writes (the
 * plan's and shape's way, plan/render.ts), whose comment id and hash the stage's record keeps (record.ts `block`).
 * Read back only through that hash: an edited or forged block is refused, never used.
 *
 *     <!-- hydraflow:adversarial-concerns sha256=<hex> <json, escaped like the state block> -->
 */
import { z } from 'zod';
import { readDataBlock, renderDataBlock } from '../plan/render';
import { concernSchema, distinctConcerns, fingerprint, type Concern } from './concern';

const DATA_KIND = 'adversarial-concerns';
/** A stage's concerns over all its rounds: voters × rounds × a few each, kept well under a comment's size. */
export const STAGE_CONCERNS_LIMIT = 40;
const concernsSchema = z.array(concernSchema).max(STAGE_CONCERNS_LIMIT);

/**
 * The distinct concerns of a stage as its data block keeps them, capped: the newest round's blocking concerns first
 * (the next revision and the forwarded concerns need their text, so the cap never cuts them), then every other
 * concern most severe first. `newest` defaults to none (a list read back is already in that order).
 */
export function distinctStageConcerns(earlier: readonly Concern[], newest: readonly Concern[] = []): Concern[] {
  const first = distinctConcerns(newest.filter((c) => c.blocking));
  const keys = new Set(first.map(fingerprint));
  const rest = distinctConcerns([...newest, ...earlier]).filter((c) => !keys.has(fingerprint(c)));
  return [...first, ...rest].slice(0, STAGE_CONCERNS_LIMIT);
}

/** The hidden block for a stage's concerns (as distinctStageConcerns orders them), and its hash for the signed state. */
export function renderConcernsData(concerns: readonly Concern[]): { block: string; hash: string } {
  return renderDataBlock(DATA_KIND, concerns.slice(0, STAGE_CONCERNS_LIMIT));
}

/** The concerns of the block in `body` if it is intact and its hash is `hash` (from the signed state). */
export function readConcernsData(body: string | null | undefined, hash: string): Concern[] | undefined {
  const found = readDataBlock(body, DATA_KIND);
  if (!found || found.hash !== hash) return undefined;
  const parsed = concernsSchema.safeParse(found.value);
  if (!parsed.success || renderDataBlock(DATA_KIND, parsed.data).hash !== hash) return undefined;
  return parsed.data;
}
