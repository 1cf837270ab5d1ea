/**
 * A product direction as the shape agent proposes it (docs/adr/0012-product-track.md), and the data block that carries
 * directions from comment to comment. The signed state keeps only the block's hash (shape/record.ts): the directions
 * comment and the finalization comment are read back through it, so an edited or forged block is refused, never used.
 *
 *     <!-- hydraflow:shape-data sha256=<hex> <json, escaped like the state block> -->
 *
 * The shape phase writes the blocks; plan (3–8 sub-issues) and review (spec-match) read the chosen one.
 */
import { z } from 'zod';
import { readDataBlock, renderDataBlock } from '../plan/render';
import { shapeLetterSchema } from './record';

const line = (max: number) => z.string().min(1).max(max);

export const shapeDirectionSchema = z.strictObject({
  letter: shapeLetterSchema.describe('A, B, C, ... in order.'),
  name: line(80).describe('A short name a human can reply with, such as "Quick & Focused".'),
  scope: line(1_500).describe('What is in and what is out.'),
  tradeoffs: line(1_000).describe('What it gains and what it costs.'),
  size: z.enum(['XS', 'S', 'M', 'L', 'XL']).describe('Rough size of the work.'),
  defer: z.boolean().describe('True for the "defer / do nothing" direction (at most one).'),
});
export type ShapeDirection = z.infer<typeof shapeDirectionSchema>;

const DATA_KIND = 'shape-data';
const directionsSchema = z.array(shapeDirectionSchema).min(1).max(5);

/** The hidden block for `directions` (all proposed ones, or the one chosen) and its hash for the signed state. */
export function renderShapeData(directions: readonly ShapeDirection[]): { block: string; hash: string } {
  return renderDataBlock(DATA_KIND, directions);
}

/** The directions of the block in `body` if it is intact and its hash is `hash` (from the signed state). */
export function readShapeData(body: string | null | undefined, hash: string): ShapeDirection[] | undefined {
  const found = readDataBlock(body, DATA_KIND);
  if (!found || found.hash !== hash) return undefined;
  const parsed = directionsSchema.safeParse(found.value);
  if (!parsed.success || renderDataBlock(DATA_KIND, parsed.data).hash !== hash) return undefined;
  return parsed.data;
}
