/**
 * The decision HydraFlow acts on: the summary's, with two guards (docs/grooming.md, "The run"), and the confidence
 * weighting the summary is given.
 */
import { openQuestions, type MergedQuestion } from './questions';
import type { AgentVerdict, Confidence, GroomSummary } from './schema';

export type GroomDecision = GroomSummary['decision'];

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/**
 * The summary's decision, except that `ready` becomes `needs_info` when
 * - a question of priority critical is still open (the summary's own rule: no critical question open), or
 * - an agent is highly confident the issue is not ready and a question it asked is still open: a confident "not
 *   ready" needs its questions answered, it cannot be outvoted.
 * `reason` holds only ids and agent names (it is shown as is).
 */
export function finalGroomDecision(
  summary: GroomSummary,
  merged: readonly MergedQuestion[],
  verdicts: Readonly<Record<string, AgentVerdict>>,
): { decision: GroomDecision; reason?: string } {
  if (summary.decision !== 'ready') return { decision: summary.decision };
  const open = openQuestions(merged);
  const critical = open.filter((q) => q.priority === 'critical');
  if (critical.length > 0) {
    const ids = critical.map((q) => q.id ?? '?').join(', ');
    return {
      decision: 'needs_info',
      reason: `${plural(critical.length, 'a critical question is', 'critical questions are')} still open (${ids})`,
    };
  }
  const confident = Object.entries(verdicts)
    .filter(([name, v]) => !v.ready && v.confidence === 'high' && open.some((q) => q.sources?.includes(name)))
    .map(([name]) => name);
  if (confident.length > 0) {
    return {
      decision: 'needs_info',
      reason: `${confident.join(', ')} ${plural(confident.length, 'is', 'are')} confident the issue is not ready and ${plural(confident.length, 'its', 'their')} questions are open`,
    };
  }
  return { decision: 'ready' };
}

const WEIGHT: Readonly<Record<Confidence, number>> = { low: 1, medium: 2, high: 3 };

/** How the summary weighs the verdicts: each one's readiness and confidence, and the rule (HydraFlow's words only). */
export function weighVerdicts(verdicts: Readonly<Record<string, AgentVerdict>>): string {
  const entries = Object.entries(verdicts);
  const weight = (ready: boolean) =>
    entries.filter(([, v]) => v.ready === ready).reduce((sum, [, v]) => sum + WEIGHT[v.confidence], 0);
  const total = weight(true) + weight(false);
  return [
    '# Confidence weighting (low 1, medium 2, high 3)',
    ...entries.map(
      ([name, v]) =>
        `- ${name}: ${v.ready ? 'ready' : 'not ready'}, ${v.confidence} confidence (weight ${WEIGHT[v.confidence]})`,
    ),
    `Ready weighs ${weight(true)} of ${total}; not ready weighs ${weight(false)} of ${total}.`,
    'High-confidence "not ready" verdicts weigh more than low-confidence "ready" ones: their questions must be answered before ready. A low-confidence "not ready" may be overruled if decision_rationale says why.',
  ].join('\n');
}
