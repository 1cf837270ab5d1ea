/**
 * When the builder → reviewer → refiner loop stops (seeds §4.4 exit criteria, §6.3 convergence guard). Pure.
 *
 * After each review round:
 * - approve   when no critical or high finding is open, the score is at least `threshold` (config
 *             `review.threshold`, default 7) and the reviewer saw the whole diff;
 * - escalate  (a human decides) when
 *     - `unseen`:      the round would approve, but the reviewer could not see some files (no patch from GitHub, cut to
 *                      fit its prompt, not listed by GitHub): HydraFlow approves only what its reviewer saw, and a
 *                      refinement cannot make a binary file readable (ADR 0002);
 *     - `needs-human`: a critical/high finding needs a product or design decision (field notes: not forward);
 *     - `diverging`:   the score dropped twice in a row (each refinement made it worse);
 *     - `repeating`:   the same set of critical/high findings is open in two consecutive rounds (the refiner is not
 *                      fixing them — HydraFlow's own oscillation check compares exactly this set);
 *     - `max-rounds`:  `review.max_rounds` rounds (default 3) were reviewed without approval;
 * - refine    otherwise: the implement agent re-runs with the open findings.
 */
import { distinctFindings, findingKey, isBlocking, reviewScore, type Finding } from './finding';

/** One review round as HydraFlow remembers it (the state's review round, without the GitHub ids). */
export interface ReviewRound {
  /** The head commit reviewed. */
  sha: string;
  score: number;
  /** Keys of every finding open in this round (new and repeated). */
  findingKeys: readonly string[];
  /** Keys of the critical and high findings open in this round. */
  criticalHighKeys: readonly string[];
  /** A critical/high finding in this round needs a human decision. */
  needsHuman?: boolean | undefined;
  /** Files of the diff the reviewer did not see whole (diff-view.ts): such a round never approves. */
  unseen?: number | undefined;
}

export interface ReviewSettings {
  threshold: number;
  maxRounds: number;
}

export const DEFAULT_REVIEW_SETTINGS: ReviewSettings = { threshold: 7, maxRounds: 3 };

/** From config keys `review.threshold` and `review.max_rounds` (defaults when absent). */
export function reviewSettingsFrom(config: unknown): ReviewSettings {
  const r = (config as { review?: { threshold?: unknown; max_rounds?: unknown } } | undefined)?.review;
  const threshold = typeof r?.threshold === 'number' ? r.threshold : DEFAULT_REVIEW_SETTINGS.threshold;
  const maxRounds =
    typeof r?.max_rounds === 'number' && Number.isInteger(r.max_rounds) && r.max_rounds >= 1
      ? r.max_rounds
      : DEFAULT_REVIEW_SETTINGS.maxRounds;
  return { threshold, maxRounds };
}

export type EscalateReason = 'needs-human' | 'diverging' | 'repeating' | 'max-rounds' | 'unseen';
export const ESCALATE_REASONS: readonly EscalateReason[] = [
  'needs-human',
  'diverging',
  'repeating',
  'max-rounds',
  'unseen',
];

export type ReviewExit =
  { exit: 'approve' } | { exit: 'refine' } | { exit: 'escalate'; reason: EscalateReason; detail: string };

/** Does this round's outcome allow approval on its own (no critical/high open, score at least the threshold)? */
export function roundPasses(round: Pick<ReviewRound, 'score' | 'criticalHighKeys'>, threshold: number): boolean {
  return round.criticalHighKeys.length === 0 && round.score >= threshold;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((k) => sb.has(k));
}

/** The decision after the last of `rounds` (oldest first). Throws on an empty list: there is nothing to decide. */
export function reviewExit(rounds: readonly ReviewRound[], options: Partial<ReviewSettings> = {}): ReviewExit {
  const { threshold, maxRounds } = { ...DEFAULT_REVIEW_SETTINGS, ...options };
  const n = rounds.length;
  const last = rounds[n - 1];
  if (!last) throw new Error('reviewExit: no review round yet');
  if (roundPasses(last, threshold)) {
    if (!last.unseen) return { exit: 'approve' };
    return {
      exit: 'escalate',
      reason: 'unseen',
      detail: `the reviewer found nothing blocking, but could not see ${last.unseen} file${last.unseen === 1 ? '' : 's'} of the diff (HydraFlow's review on the pull request names them); a human reviews those`,
    };
  }
  if (last.needsHuman && last.criticalHighKeys.length > 0) {
    return {
      exit: 'escalate',
      reason: 'needs-human',
      detail: 'a critical or high finding needs a product or design decision by a human',
    };
  }
  if (n >= 3 && rounds[n - 1]!.score < rounds[n - 2]!.score && rounds[n - 2]!.score < rounds[n - 3]!.score) {
    return {
      exit: 'escalate',
      reason: 'diverging',
      detail: `the review score dropped twice in a row (${rounds[n - 3]!.score} → ${rounds[n - 2]!.score} → ${last.score})`,
    };
  }
  if (n >= 2 && last.criticalHighKeys.length > 0 && sameSet(last.criticalHighKeys, rounds[n - 2]!.criticalHighKeys)) {
    return {
      exit: 'escalate',
      reason: 'repeating',
      detail: `the same ${last.criticalHighKeys.length} critical/high finding(s) are still open after a refinement`,
    };
  }
  if (n >= maxRounds) {
    return {
      exit: 'escalate',
      reason: 'max-rounds',
      detail: `${n} review round${n === 1 ? '' : 's'} (the limit is ${maxRounds}) without approval; score ${last.score}/10`,
    };
  }
  return { exit: 'refine' };
}

/**
 * The round a set of open findings makes: keys, score and the needs-human flag, all computed by HydraFlow. `unseen`:
 * files of the diff the reviewer did not see whole.
 */
export function roundOf(sha: string, open: readonly Finding[], unseen = 0): ReviewRound {
  const distinct = distinctFindings(open);
  const blocking = distinct.filter(isBlocking);
  return {
    sha,
    score: reviewScore(distinct),
    findingKeys: distinct.map(findingKey),
    criticalHighKeys: blocking.map(findingKey),
    needsHuman: blocking.some((f) => f.needs_human_decision),
    ...(unseen > 0 ? { unseen } : {}),
  };
}
