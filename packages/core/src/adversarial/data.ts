/**
 * Where a stage's concerns — model text — live: a hidden, hash-checked data block in a comment HydraFlow writes (the
 * plan's and shape's way, plan/render.ts), whose comment id and hash the stage's record keeps (record.ts `block`).
 * Read back only through that hash: an edited or forged block is refused, never used.
 *
 *     <!-- hydraflow:adversarial-concerns sha256=<hex> <json, escaped like the state block> -->
 */
import { z } from 'zod';
import { readDataBlock, renderDataBlock } from '../plan/render';
import { concernSchema, distinctConcerns, type Concern } from './concern';

const DATA_KIND = 'adversarial-concerns';
/** A stage's concerns over all its rounds: voters × rounds × a few each, kept well under a comment's size. */
export const STAGE_CONCERNS_LIMIT = 40;
const concernsSchema = z.array(concernSchema).max(STAGE_CONCERNS_LIMIT);

/** The distinct concerns of a stage, most severe first, capped (what its data block holds). */
export function distinctStageConcerns(concerns: readonly Concern[]): Concern[] {
  return distinctConcerns(concerns).slice(0, STAGE_CONCERNS_LIMIT);
}

/** The hidden block for a stage's concerns, and its hash for the signed state. */
export function renderConcernsData(concerns: readonly Concern[]): { block: string; hash: string } {
  return renderDataBlock(DATA_KIND, distinctStageConcerns(concerns));
}

/** The concerns of the block in `body` if it is intact and its hash is `hash` (from the signed state). */
export function readConcernsData(body: string | null | undefined, hash: string): Concern[] | undefined {
  const found = readDataBlock(body, DATA_KIND);
  if (!found || found.hash !== hash) return undefined;
  const parsed = concernsSchema.safeParse(found.value);
  if (!parsed.success || renderDataBlock(DATA_KIND, parsed.data).hash !== hash) return undefined;
  return parsed.data;
}
