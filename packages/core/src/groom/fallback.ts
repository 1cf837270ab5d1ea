/**
 * The seed's error handling (grooming-system.md, "Error Handling"): a failed agent yields a not-ready verdict with a
 * diagnostic question, and a failed summary yields the raw questions of the agents.
 */
import type { AgentVerdict, GroomSummary } from './schema';

/** The verdict of an agent that did not produce a valid one (error, junk output, turn or time cap). */
export function agentFailureVerdict(name: string): AgentVerdict {
  return {
    ready: false,
    confidence: 'low',
    assessment: `The ${name} agent did not produce a valid verdict.`,
    questions: [`Agent ${name} failed to complete analysis`],
  };
}

/** At most 60 characters (the question format's title), cut at a word when possible. */
function shortTitle(question: string): string {
  const flat = question.replace(/\s+/g, ' ').trim();
  if (flat.length <= 60) return flat;
  const cut = flat.slice(0, 59);
  const space = cut.lastIndexOf(' ');
  return `${space > 30 ? cut.slice(0, space) : cut}…`;
}

/**
 * The summary when the summary agent failed: every agent question, in agent order, with ids fallback-0, fallback-1,
 * …, priority important, decision needs_info. The same question asked by several agents (same words, case and
 * spacing aside) is listed once with all of them as sources.
 */
export function buildFallbackSummary(verdicts: Readonly<Record<string, AgentVerdict>>): GroomSummary {
  const questions: GroomSummary['consolidated_questions'] = [];
  const byText = new Map<string, GroomSummary['consolidated_questions'][number]>();
  for (const [agent, verdict] of Object.entries(verdicts)) {
    for (const question of verdict.questions) {
      const key = question.replace(/\s+/g, ' ').trim().toLowerCase();
      if (!key) continue;
      const same = byText.get(key);
      if (same) {
        if (!same.sources.includes(agent)) same.sources.push(agent);
        continue;
      }
      const q = {
        id: `fallback-${questions.length}`,
        title: shortTitle(question),
        description: question.trim(),
        sources: [agent],
        priority: 'important' as const,
      };
      byText.set(key, q);
      questions.push(q);
    }
  }
  return {
    summary: 'The summary agent failed; these are the agents’ own questions, unconsolidated.',
    decision: 'needs_info',
    decision_rationale:
      'Without a summary HydraFlow cannot tell which questions matter: a human answers them or comments /groom.',
    consolidated_questions: questions,
    answered_questions: [],
    blocker_reason: null,
  };
}

/** How one grooming call ended, as far as failing closed is concerned. */
export interface GroomCallOutcome {
  name: string;
  failed: boolean;
  /** Why it failed. */
  failure?: string;
  /** The failure came from the model provider (unavailable, credentials, request refused), not from the answer. */
  provider?: boolean;
}

/**
 * When grooming stops and a human takes over instead of asking the author (fail closed, field notes: a verdict that
 * cannot be trusted never passes, and a provider's failure is no question an author can answer):
 * - every agent that ran failed: no verdict is left to decide on, and "Agent X failed" questions would be all the
 *   author got;
 * - the summary failed at the provider: the seed's fallback (the agents' raw questions) is for a summary that
 *   answered badly, not for one that could not be reached.
 * One failed agent among others keeps the seed's diagnostic question. Undefined when grooming goes on.
 */
export function groomFailsClosed(
  agents: readonly GroomCallOutcome[],
  summary?: GroomCallOutcome,
): { headline: string; reason: string } | undefined {
  if (agents.length > 0 && agents.every((a) => a.failed)) {
    const provider = agents.some((a) => a.provider);
    return {
      headline: provider
        ? 'Grooming stopped: the model provider failed every grooming agent'
        : 'Grooming stopped: every grooming agent failed',
      reason: failureReasons(agents),
    };
  }
  if (summary?.failed && summary.provider)
    return {
      headline: 'Grooming stopped: the model provider failed the summary agent',
      reason: failureReasons([summary]),
    };
  return undefined;
}

/** "pm, qa: <message>; engineer: <other message>": one line per distinct message, as the provider wrote it. */
function failureReasons(calls: readonly GroomCallOutcome[]): string {
  const byMessage = new Map<string, string[]>();
  for (const c of calls) {
    const message = c.failure ?? 'no reason given';
    byMessage.set(message, [...(byMessage.get(message) ?? []), c.name]);
  }
  return [...byMessage].map(([message, names]) => `${names.join(', ')}: ${message}`).join('\n');
}
