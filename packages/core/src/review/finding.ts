/**
 * What the reviewer returns (role `review`), how a finding is recognised across rounds, and the round's score. Pure.
 *
 * Seeds §4.3: every finding has a severity (critical|high|medium|low), a file path and a line hint when possible, and a
 * concrete fix recommendation. `needs_human_decision` marks a concern no refinement can settle (a design or product
 * choice): field notes — critical concerns that need a human design decision go to a human, not forward.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const findingSchema = z.strictObject({
  severity: z
    .enum(SEVERITIES)
    .describe(
      'critical: breaks correctness/security/data; high: a real bug or missing requirement; medium: should fix; low: nit.',
    ),
  path: z.string().min(1).max(300).describe('Path of the file in the pull request.'),
  line: z
    .number()
    .int()
    .min(1)
    .nullable()
    .describe('Line in the NEW version of the file (a line the diff adds or shows), or null when not about one line.'),
  title: z.string().min(1).max(200).describe('The problem in a few words; repeat it verbatim if it is still open.'),
  recommendation: z.string().min(1).max(2000).describe('The concrete fix.'),
  needs_human_decision: z.boolean().describe('True only when fixing it needs a product or design decision by a human.'),
});

/**
 * A finding as HydraFlow keeps it (the review's data block): the reviewer's, plus its kind when it is not about the
 * code's own quality — `spec-mismatch`: the change departs from the product direction a human chose in shape
 * (docs/adr/0017-product-track-plan-and-spec-match.md). No kind: an ordinary finding (so blocks written before kinds
 * existed read back with the same hash).
 */
export const FINDING_KINDS = ['spec-mismatch'] as const;
export const storedFindingSchema = findingSchema.extend({ kind: z.enum(FINDING_KINDS).optional() });
export type Finding = z.infer<typeof storedFindingSchema>;

export const reviewVerdictSchema = z.strictObject({
  summary: z.string().max(2000).describe('Two or three sentences on the change as a whole.'),
  findings: z.array(findingSchema).max(25).describe('Every problem still open in this diff, most severe first.'),
});
export type ReviewVerdict = z.infer<typeof reviewVerdictSchema>;

/** Where a spec-mismatch finding points: at the chosen direction, not at a line (it goes in the review's body). */
export const SPEC_FINDING_PATH = '(chosen direction)';

export const specMismatchSchema = z.strictObject({
  severity: z
    .enum(SEVERITIES)
    .describe(
      'critical/high: the change builds something the direction excludes, or misses what it promises; medium: a drift worth fixing; low: a nit.',
    ),
  title: z.string().min(1).max(200).describe('The mismatch in a few words; repeat it verbatim if it is still open.'),
  recommendation: z.string().min(1).max(2000).describe('What to change so the pull request matches the direction.'),
  needs_human_decision: z.boolean().describe('True only when the direction itself must be decided again by a human.'),
});

/**
 * The reviewer's answer for a pull request of a product-track issue (itself or its epic parent): the ordinary findings
 * and the ways the change departs from the chosen direction's scope and trade-offs.
 */
export const specReviewVerdictSchema = reviewVerdictSchema.extend({
  spec_mismatches: z
    .array(specMismatchSchema)
    .max(10)
    .describe('Where the change departs from the chosen direction (scope, trade-offs); an empty list when it matches.'),
});
export type SpecReviewVerdict = z.infer<typeof specReviewVerdictSchema>;

/** The reviewer's findings, spec mismatches among them as findings of their own kind. */
export function verdictFindings(verdict: ReviewVerdict | SpecReviewVerdict): Finding[] {
  const mismatches = 'spec_mismatches' in verdict ? verdict.spec_mismatches : [];
  return [
    ...verdict.findings.map((f) => ({ ...f, path: normalizeFindingPath(f.path) })),
    ...mismatches.map((m) => ({ ...m, path: SPEC_FINDING_PATH, line: null, kind: 'spec-mismatch' as const })),
  ];
}

/** A path as GitHub writes it in a pull request's files: no leading `./` or `/`. */
export function normalizeFindingPath(path: string): string {
  return path.trim().replace(/^(\.\/|\/)+/, '');
}

/**
 * A title reduced to what stays the same when a reviewer restates it: Unicode-normalised, lower case, numbers dropped
 * (line references such as "(line 42)" and counts move between rounds), punctuation and spacing collapsed.
 */
export function normalizeTitle(title: string): string {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\b(?:on |at |in )?(?:lines?|l\.)\s*\d+(?:\s*[-–]\s*\d+)?/g, ' ')
    .replace(/\d+/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * A finding's identity across rounds: path + normalised title, never the line (lines move with every push). Hex, so it
 * is HydraFlow's own value and may go into the signed state (the finding's text may not).
 */
export function findingKey(f: Pick<Finding, 'path' | 'title'>): string {
  return createHash('sha256')
    .update(`${normalizeFindingPath(f.path)}\n${normalizeTitle(f.title)}`)
    .digest('hex')
    .slice(0, 16);
}

/** Findings whose key was not raised before, each key once (the first, i.e. the most severe when sorted). */
export function newFindings<F extends Pick<Finding, 'path' | 'title'>>(
  findings: readonly F[],
  raisedBefore: Iterable<string>,
): F[] {
  const seen = new Set(raisedBefore);
  const out: F[] = [];
  for (const f of findings) {
    const key = findingKey(f);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

/** Distinct findings by key, most severe first, keeping the most severe copy of a repeated key. */
export function distinctFindings<F extends Pick<Finding, 'path' | 'title' | 'severity'>>(findings: readonly F[]): F[] {
  const sorted = [...findings].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  return newFindings(sorted, []);
}

/** How much each open finding costs the round's score. */
export const SEVERITY_WEIGHTS: Readonly<Record<Severity, number>> = { critical: 5, high: 3, medium: 1, low: 0.25 };

/**
 * The round's score, 0-10: 10 minus the weights of the distinct open findings (critical 5, high 3, medium 1, low 0.25).
 * Computed, not the reviewer's own number: it is reproducible, cannot drift with the model's mood, and moves exactly when
 * the open findings change — which is what the convergence guard watches. With the default threshold 7, a change
 * approves with up to three medium findings (or two medium and a few low) and no critical or high one.
 */
export function reviewScore(findings: readonly Pick<Finding, 'path' | 'title' | 'severity'>[]): number {
  const penalty = distinctFindings(findings).reduce((sum, f) => sum + SEVERITY_WEIGHTS[f.severity], 0);
  return Math.max(0, Math.round((10 - penalty) * 100) / 100);
}

export function isBlocking(f: Pick<Finding, 'severity'>): boolean {
  return f.severity === 'critical' || f.severity === 'high';
}
