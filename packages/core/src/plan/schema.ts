/**
 * What the planner and the plan reviewer return (role `plan`, role `plan_review`). Parsed strictly: a plan or a review
 * that does not parse is never defaulted — the plan phase escalates (fail closed, like triage).
 *
 * Every string is capped so that the plan comment (visible plan + its integrity-checked data block) stays well under
 * GitHub's 65,536-character comment limit.
 */
import { z } from 'zod';

export const planFileSchema = z.strictObject({
  path: z.string().min(1).max(200).describe('Repository-relative path, e.g. "src/users/list.ts".'),
  action: z.enum(['create', 'modify', 'delete']).describe('Whether the file is new, changed or removed.'),
  change: z.string().min(1).max(400).describe('What changes in this file, in one or two sentences.'),
});

export const planRiskSchema = z.strictObject({
  risk: z.string().min(1).max(300).describe('What could go wrong.'),
  mitigation: z.string().min(1).max(300).describe('How the plan prevents or detects it.'),
});

export const planSchema = z.strictObject({
  summary: z.string().min(1).max(300).describe('The plan in one or two sentences.'),
  goal: z.string().min(1).max(1000).describe('The outcome the issue asks for, restated precisely.'),
  approach: z.string().min(1).max(4000).describe('How to get there: the design, step by step (markdown).'),
  files_to_touch: z
    .array(planFileSchema)
    .min(1)
    .max(30)
    .describe('Every file the change creates, modifies or deletes.'),
  test_plan: z.array(z.string().min(1).max(300)).min(1).max(15).describe('Tests to add or run, one per item.'),
  risks: z.array(planRiskSchema).max(10).describe('Risks and their mitigations.'),
  acceptance_criteria: z
    .array(z.string().min(1).max(300))
    .min(1)
    .max(15)
    .describe('Checkable statements that are all true when the issue is done.'),
});

export type Plan = z.infer<typeof planSchema>;
export type PlanFile = z.infer<typeof planFileSchema>;

/**
 * The seven dimensions the plan reviewer scores, a whole number 0-10 each, higher is better:
 *
 * - correctness: the approach would actually solve the issue (no wrong assumptions about the code).
 * - completeness: every part of the issue and every acceptance criterion is covered; no file is missing.
 * - scope: it does what the issue asks, no less and no more (no drive-by refactors).
 * - testability: the test plan would prove each acceptance criterion.
 * - risk_handling: the real risks (data, compatibility, security, concurrency) are named and mitigated.
 * - conventions: it fits the repository's structure, language and conventions as seen in the context given.
 * - clarity: an implementer could follow it without guessing.
 */
export const PLAN_DIMENSIONS = [
  'correctness',
  'completeness',
  'scope',
  'testability',
  'risk_handling',
  'conventions',
  'clarity',
] as const;
export type PlanDimension = (typeof PLAN_DIMENSIONS)[number];

// Whole numbers: a grammar engine enforces an integer range (sent as an enum), never a bound on a real number.
const dimensionScore = (what: string) => z.number().int().min(0).max(10).describe(what);

export const planScoresSchema = z.strictObject({
  correctness: dimensionScore('Would the approach actually solve the issue? 0-10.'),
  completeness: dimensionScore('Are all parts of the issue and all needed files covered? 0-10.'),
  scope: dimensionScore('Does it do what the issue asks, no less and no more? 0-10.'),
  testability: dimensionScore('Would the test plan prove every acceptance criterion? 0-10.'),
  risk_handling: dimensionScore('Are the real risks named and mitigated? 0-10.'),
  conventions: dimensionScore('Does it fit the repository structure and conventions? 0-10.'),
  clarity: dimensionScore('Could an implementer follow it without guessing? 0-10.'),
});
export type PlanScores = z.infer<typeof planScoresSchema>;

export const planReviewIssueSchema = z.strictObject({
  dimension: z.enum(PLAN_DIMENSIONS).describe('The dimension this shortcoming lowers.'),
  problem: z.string().min(1).max(400).describe('The specific shortcoming.'),
  fix: z.string().min(1).max(400).describe('What the next revision should change.'),
});

export const planReviewSchema = z.strictObject({
  scores: planScoresSchema,
  issues: z.array(planReviewIssueSchema).max(12).describe('Specific shortcomings, most important first.'),
  verdict: z.enum(['accept', 'revise']).describe('accept: ready to implement as is; revise: needs another revision.'),
});

export type PlanReview = z.infer<typeof planReviewSchema>;
export type PlanReviewIssue = z.infer<typeof planReviewIssueSchema>;
