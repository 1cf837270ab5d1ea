/**
 * What the shape agent answers on each turn (docs/adr/0016-shape.md): its reply to the human (none on the first turn)
 * and the directions as they stand — 2 to 5, lettered A, B, ... in order, the recommended one first (A: what `/ship-it`
 * without a letter ships), at most one `defer` and, if there is one, last. Checked here, so an answer that breaks a
 * rule is a junk answer: the call is repaired once, then a human is asked (src/phases/shape/index.ts).
 */
import { z } from 'zod';
import { shapeDirectionSchema, type ShapeDirection } from './direction';
import { SHAPE_LETTERS } from './record';

/** Why `directions` break the rules, or undefined when they keep them. */
export function directionsProblem(directions: readonly ShapeDirection[]): string | undefined {
  if (directions.length < 2 || directions.length > 5) return `2 to 5 directions, got ${directions.length}`;
  const letters = directions.map((d) => d.letter).join('');
  const expected = SHAPE_LETTERS.slice(0, directions.length).join('');
  if (letters !== expected) return `the letters must be ${expected.split('').join(', ')} in order, got ${letters}`;
  const defers = directions.filter((d) => d.defer);
  if (defers.length > 1) return `at most one defer direction, got ${defers.length}`;
  if (defers.length === 1 && !directions.at(-1)!.defer) return 'the defer direction must be the last one';
  const names = new Set(directions.map((d) => d.name.trim().toLowerCase()));
  if (names.size !== directions.length) return 'every direction needs a name of its own';
  return undefined;
}

export const shapeTurnSchema = z
  .strictObject({
    reply: z
      .string()
      .max(3_000)
      .describe('Your answer to the latest human reply, in markdown; empty on the first turn.'),
    directions: z
      .array(shapeDirectionSchema)
      .min(2)
      .max(5)
      .describe('The directions as they stand now: A first (the one you recommend), a defer direction (if any) last.'),
  })
  .superRefine((turn, ctx) => {
    const problem = directionsProblem(turn.directions);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['directions'] });
  });
export type ShapeTurn = z.infer<typeof shapeTurnSchema>;
