/**
 * A product-track issue's plan (docs/adr/0017-product-track-plan-and-spec-match.md): not one plan but 3–8 phase
 * sub-issues, made with grooming's sub-issue machinery (groom/subissues.ts) and advanced one at a time as an epic.
 *
 * Which issues: only those whose SIGNED state says so — shape's record with a chosen direction and `decomposition`
 * (shape/record.ts). Never a comment's text: anyone can post "DECOMPOSITION REQUIRED". Pure.
 */
import { z } from 'zod';
import { subIssueSpecSchema, type SubIssueSpec } from '../groom/schema';
import { normalizePhases } from '../groom/subissues';
import type { ShapeRecord } from '../shape/record';

/** ADR-0031: the planner of a product-track issue must produce 3–8 concrete sub-issues. */
export const DECOMPOSITION_MIN = 3;
export const DECOMPOSITION_MAX = 8;

/**
 * What the planner returns for a product-track issue (role `plan`, schema `decomposition`). The array bounds are wider
 * than 3–8 on purpose: a count out of range parses, and is sent back once with the problem named (decompositionProblems)
 * instead of failing as junk.
 */
export const decompositionSchema = z.strictObject({
  summary: z.string().min(1).max(600).describe('How the chosen direction is split into phases, in two sentences.'),
  sub_issues: z
    .array(subIssueSpecSchema)
    .min(1)
    .max(12)
    .describe(
      `${DECOMPOSITION_MIN} to ${DECOMPOSITION_MAX} phases, in order; each one pull request: phase_number, title, description, affected_areas, todos, depends_on (earlier phase numbers)`,
    ),
});
export type Decomposition = z.infer<typeof decompositionSchema>;

/** The chosen direction an issue's signed state points at, when it took the product track and must be decomposed. */
export type ProductTrackSelection = NonNullable<ShapeRecord['selected']>;

/** The state's word that this issue came through shape and must be split: a chosen direction and `decomposition`. */
export function productTrackSelection(
  state: { shape?: ShapeRecord | undefined } | undefined,
): ProductTrackSelection | undefined {
  const shape = state?.shape;
  return shape?.selected && shape.decomposition === true ? shape.selected : undefined;
}

/**
 * The phases to create and what is wrong with the answer (empty: it is fine). Wrong: fewer than 3 or more than 8
 * distinct phases, or a phase without a description or todo (not concrete). Dependencies on unknown or later phases
 * are dropped by normalizePhases, which is a note, not a problem.
 */
export function decompositionProblems(answer: Decomposition): {
  phases: SubIssueSpec[];
  notes: string[];
  problems: string[];
} {
  const { phases, notes } = normalizePhases(answer.sub_issues);
  const problems: string[] = [];
  if (phases.length < DECOMPOSITION_MIN)
    problems.push(
      `${phases.length} sub-issue${phases.length === 1 ? '' : 's'}: a product-track issue needs at least ${DECOMPOSITION_MIN} (split the work further)`,
    );
  if (phases.length > DECOMPOSITION_MAX)
    problems.push(`${phases.length} sub-issues: at most ${DECOMPOSITION_MAX} (merge the smallest phases)`);
  for (const p of phases) {
    if (!p.description.trim()) problems.push(`phase ${p.phase_number} has no description`);
    if (!p.todos?.length) problems.push(`phase ${p.phase_number} has no todo items`);
  }
  return { phases, notes, problems };
}
