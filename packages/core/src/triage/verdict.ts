import { z } from 'zod';

/**
 * What the triage model returns (docs/adr/0012-product-track.md). Parsed strictly: a verdict that does not parse is never defaulted to a
 * route — the caller escalates to HITL (fail closed; field notes: a defaulted verdict sent ~131 issues to "ready").
 */
export const triageVerdictSchema = z.strictObject({
  clarity_score: z
    .number()
    .int()
    .min(0)
    .max(10)
    .describe('How clear the problem and the expected outcome are, a whole number 0-10.'),
  complexity_score: z.number().int().min(0).max(10).describe('How much engineering work this is, a whole number 0-10.'),
  needs_discovery: z.boolean().describe('True when the issue is product intent that needs research before planning.'),
  enrichment: z.string().max(2000).describe('Short markdown that adds context for the next phase.'),
  reasons: z.array(z.string().max(500)).max(8).describe('Why these scores, one short sentence each.'),
});

export type TriageVerdict = z.infer<typeof triageVerdictSchema>;

export type TriageRoute = 'discover' | 'groom' | 'plan';

/** Which clear (engineering) issues are groomed before planning: see `grooming.route` in the config. */
export type GroomRoute = 'complex' | 'always' | 'never';

export const DEFAULT_CLARITY_THRESHOLD = 7;

export const DEFAULT_GROOM_COMPLEXITY_THRESHOLD = 7;

/**
 * docs/adr/0012-product-track.md: needs_discovery, or clarity below the threshold, goes to the product track (discover). A clear issue goes
 * to grooming first when `groomRoute` says so — `complex` (the default): its complexity is at or above
 * `groomComplexityThreshold`, the work worth a PM/engineer/QA/research look and perhaps a split into phases; `always`;
 * `never` — and otherwise straight to plan (the grooming seed's "Triage → Grooming: not ready" edge, read for an
 * engineering pipeline whose vague issues already take the product track).
 */
export function routeTriage(
  verdict: Pick<TriageVerdict, 'clarity_score' | 'needs_discovery'> & { complexity_score?: number },
  options: { clarityThreshold?: number; groomRoute?: GroomRoute; groomComplexityThreshold?: number } = {},
): TriageRoute {
  const threshold = options.clarityThreshold ?? DEFAULT_CLARITY_THRESHOLD;
  if (verdict.needs_discovery) return 'discover';
  if (!(verdict.clarity_score >= threshold)) return 'discover'; // NaN also goes to discover
  const groom = options.groomRoute ?? 'complex';
  if (groom === 'always') return 'groom';
  const complexity = verdict.complexity_score ?? 0;
  if (groom === 'complex' && complexity >= (options.groomComplexityThreshold ?? DEFAULT_GROOM_COMPLEXITY_THRESHOLD))
    return 'groom';
  return 'plan';
}
