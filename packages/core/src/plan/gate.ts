/**
 * When a plan is good enough, and what the planner does next. Pure.
 *
 * Rule (configurable, see planConfigSchema): a plan passes when EVERY dimension scores at least `min_score` (default 6)
 * AND the mean of the seven is at least `min_mean` (default 7) AND the reviewer did not ask for a revision AND the
 * deterministic checks found no problem (e.g. "modify" of a file that does not exist). The per-dimension floor keeps a
 * plan with one glaring hole (say, no tests) from passing on the strength of the others; the mean keeps a plan that is
 * merely passable everywhere from passing. The reviewer's verdict can veto, never override low scores.
 *
 * The planner revises while the plan falls short, at most `max_revisions` times (default 2: three plans at most); a
 * plan that still falls short goes to a human.
 */
import { z } from 'zod';
import { PLAN_DIMENSIONS, type PlanDimension, type PlanReview } from './schema';

export interface PlanThresholds {
  /** Every dimension must score at least this. */
  minScore: number;
  /** The mean of the seven dimensions must be at least this. */
  minMean: number;
}

export const DEFAULT_PLAN_THRESHOLDS: PlanThresholds = { minScore: 6, minMean: 7 };
export const DEFAULT_MAX_PLAN_REVISIONS = 2;

const e = (text: string) => ({ error: text });

/** Config keys `plan.min_score`, `plan.min_mean`, `plan.max_revisions` (the `plan` section of configSchema). */
export const planConfigSchema = z
  .strictObject(
    {
      min_score: z
        .number(e('a number from 0 to 10'))
        .min(0, e('a number from 0 to 10'))
        .max(10, e('a number from 0 to 10'))
        .default(DEFAULT_PLAN_THRESHOLDS.minScore)
        .describe('Every plan-review dimension must score at least this for the plan to pass.'),
      min_mean: z
        .number(e('a number from 0 to 10'))
        .min(0, e('a number from 0 to 10'))
        .max(10, e('a number from 0 to 10'))
        .default(DEFAULT_PLAN_THRESHOLDS.minMean)
        .describe('The mean of the seven plan-review scores must be at least this for the plan to pass.'),
      max_revisions: z
        .number(e('a whole number from 0 to 5'))
        .int(e('a whole number from 0 to 5'))
        .min(0, e('a whole number from 0 to 5'))
        .max(5, e('a whole number from 0 to 5'))
        .default(DEFAULT_MAX_PLAN_REVISIONS)
        .describe('Revisions after the first plan before a plan that still falls short goes to a human.'),
    },
    e('a mapping with the keys min_score, min_mean and max_revisions'),
  )
  .prefault({})
  .describe('The planner and the plan reviewer (plan phase).');

export interface PlanSettings extends PlanThresholds {
  maxRevisions: number;
}

/** The plan settings from a config that may or may not have the `plan` key yet (invalid values: the defaults). */
export function planSettingsFrom(config: { plan: z.output<typeof planConfigSchema> }): PlanSettings {
  const v = config.plan;
  return { minScore: v.min_score, minMean: v.min_mean, maxRevisions: v.max_revisions };
}

export function meanScore(review: Pick<PlanReview, 'scores'>): number {
  const total = PLAN_DIMENSIONS.reduce((sum, d) => sum + review.scores[d], 0);
  return Math.round((total / PLAN_DIMENSIONS.length) * 100) / 100;
}

/** Why a plan falls short, in HydraFlow's own words (empty: it passes). */
export function planShortfalls(
  review: PlanReview,
  thresholds: Partial<PlanThresholds> = {},
  problems: readonly string[] = [],
): string[] {
  const t = { ...DEFAULT_PLAN_THRESHOLDS, ...thresholds };
  const out: string[] = [];
  const low: PlanDimension[] = PLAN_DIMENSIONS.filter((d) => !(review.scores[d] >= t.minScore));
  for (const d of low) out.push(`${d} ${review.scores[d]}/10 is below ${t.minScore}`);
  const mean = meanScore(review);
  if (!(mean >= t.minMean)) out.push(`mean ${mean}/10 is below ${t.minMean}`);
  if (review.verdict !== 'accept') out.push('the reviewer asked for a revision');
  if (problems.length > 0) out.push(`${problems.length} problem(s) found by HydraFlow's checks`);
  return out;
}

/** Does the plan pass? See the rule at the top of this file. */
export function planPasses(
  review: PlanReview,
  thresholds: Partial<PlanThresholds> = {},
  problems: readonly string[] = [],
): boolean {
  return planShortfalls(review, thresholds, problems).length === 0;
}

/** One plan and its review, in the order they were made. */
export interface PlanAttempt {
  review: PlanReview;
  /** Deterministic problems HydraFlow found in the plan (see checkPlanPaths). */
  problems?: readonly string[];
}

export type PlanStep =
  | { step: 'draft' }
  | { step: 'revise'; revision: number; shortfalls: string[] }
  | { step: 'accept'; attempt: number; revisions: number }
  | { step: 'escalate'; revisions: number; shortfalls: string[] };

/**
 * What to do after the attempts so far: `draft` (none yet), `accept` the last one, `revise` it (revision n of at most
 * maxRevisions), or `escalate` (it still falls short after maxRevisions revisions). Only the last attempt decides: a
 * revision that got worse than an earlier one is never accepted in its place.
 */
export function nextPlanStep(history: readonly PlanAttempt[], options: Partial<PlanSettings> = {}): PlanStep {
  const maxRevisions = options.maxRevisions ?? DEFAULT_MAX_PLAN_REVISIONS;
  const last = history[history.length - 1];
  if (!last) return { step: 'draft' };
  const revisions = history.length - 1;
  const shortfalls = planShortfalls(last.review, options, last.problems ?? []);
  if (shortfalls.length === 0) return { step: 'accept', attempt: history.length - 1, revisions };
  if (revisions >= maxRevisions) return { step: 'escalate', revisions, shortfalls };
  return { step: 'revise', revision: revisions + 1, shortfalls };
}
