/**
 * What voters answer (the structured-output schemas sent to the provider) and how an answer becomes concerns
 * (docs/adr/0018-adversarial-layer.md). The schemas stay simple (providers compile them into grammars: field notes);
 * the parser validates fully and is lenient only where leniency loses nothing: it trims, cuts over-long text to its
 * cap, keeps the most severe concerns past the cap, and ignores `blocking` on a medium or low concern.
 *
 * An answer that does not parse (not JSON, wrong shape, a refusal) is never read as "no concerns":
 * - the **spec judge** fails closed: a synthetic high, blocking concern (the criteria were not judged), so the loop
 *   retries and, if the judge stays unreadable, forwards it to code review (oscillation on the same fingerprint);
 * - **any other voter** becomes a synthetic medium, non-blocking concern naming the angle that went unchecked,
 *   forwarded at once to the stage's consumer. It does not block: a revision of the plan cannot fix a voter's
 *   broken answer, and blocking would spend the retries on it; the other voters of the council still speak.
 */
import { z } from 'zod';
import { SEVERITIES } from '../review/finding';
import { CONCERN_LIMITS, mayBlock, type Concern } from './concern';
import { ADVERSARIAL_VOTERS, type AdversarialStageSpec, type VoterName } from './stages';

/** Concerns one voter may raise in one answer (the most severe are kept). */
export const MAX_CONCERNS_PER_ANSWER = 8;

const concernAnswerSchema = z.object({
  severity: z
    .enum(SEVERITIES)
    .describe('critical: the work would fail or do harm; high: a real defect; medium: should change; low: a nit.'),
  blocking: z.boolean().describe('True when the work must not go on until this is fixed (critical or high only).'),
  text: z.string().describe('The concern in one or two sentences: specific, checkable.'),
  evidence: z.array(z.string()).describe('Where it shows: quotes, paths, steps (at most 5 short items).'),
});

export const voterAnswerSchema = z.object({
  concerns: z
    .array(concernAnswerSchema)
    .describe('Every concern, most severe first; [] only if none survives scrutiny.'),
});

export const assumptionAnswerSchema = z.object({
  assumptions: z
    .array(
      z.object({
        assumption: z.string().describe('What the text takes for granted, in one sentence.'),
        how_to_check: z.string().describe('A concrete way to check it (a file to read, a query, a test, a question).'),
        load_bearing: z.boolean().describe('True when the work fails if the assumption is wrong.'),
        checked: z.boolean().describe('True when the text shows it was already checked.'),
      }),
    )
    .describe('The assumptions, load-bearing ones first.'),
});

export const specJudgeAnswerSchema = z.object({
  consistent: z.boolean().describe('True when the criteria agree with the spec and with each other.'),
  concerns: z.array(concernAnswerSchema).describe('Each inconsistency; [] when consistent.'),
});

/** The schema a voter of `stage` answers with. */
export function answerSchemaFor(voter: VoterName) {
  if (voter === 'assumption-surfacer') return assumptionAnswerSchema;
  if (voter === 'spec-judge') return specJudgeAnswerSchema;
  return voterAnswerSchema;
}

export type ParsedAnswer =
  { status: 'ok'; concerns: Concern[] } | { status: 'unreadable'; concerns: Concern[]; problem: string };

const cut = (text: string, max: number) => {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

/** A voter's answer (an object from structured output, or JSON text, fenced or not) as concerns of `spec`. */
export function parseVoterAnswer(spec: AdversarialStageSpec, voter: VoterName, raw: unknown): ParsedAnswer {
  let value = raw;
  if (typeof raw === 'string') {
    const text = raw.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1');
    try {
      value = JSON.parse(text);
    } catch {
      return unreadable(spec, voter, 'the answer is not JSON');
    }
  }
  const schema = answerSchemaFor(voter);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return unreadable(spec, voter, `${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`);
  }
  const stamp = (c: Omit<Concern, 'voter' | 'stage' | 'must_address_by'>): Concern => ({
    voter,
    stage: spec.name,
    must_address_by: null,
    ...c,
  });
  let concerns: Concern[];
  if ('assumptions' in parsed.data) {
    concerns = parsed.data.assumptions.map((a) =>
      stamp({
        severity: a.load_bearing && !a.checked ? 'high' : 'low',
        blocking: a.load_bearing && !a.checked,
        text: cut(a.assumption, CONCERN_LIMITS.text),
        evidence: [cut(`how to check: ${a.how_to_check}`, CONCERN_LIMITS.evidenceItem)],
      }),
    );
  } else {
    concerns = parsed.data.concerns.map((c) =>
      stamp({
        severity: c.severity,
        blocking: c.blocking && mayBlock(c.severity),
        text: cut(c.text, CONCERN_LIMITS.text),
        evidence: c.evidence
          .map((e) => cut(e, CONCERN_LIMITS.evidenceItem))
          .filter((e) => e !== '')
          .slice(0, CONCERN_LIMITS.evidence),
      }),
    );
    if ('consistent' in parsed.data && !parsed.data.consistent && !concerns.some((c) => c.blocking))
      return unreadable(spec, voter, 'the judge found the criteria inconsistent but named no blocking concern');
  }
  concerns = concerns
    .filter((c) => c.text !== '')
    .sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity))
    .slice(0, MAX_CONCERNS_PER_ANSWER);
  return { status: 'ok', concerns };
}

/** The synthetic concern standing for a voter whose answer could not be read (see the file's comment). */
export function unreadableConcern(spec: AdversarialStageSpec, voter: VoterName): Concern {
  const title = ADVERSARIAL_VOTERS[voter].title;
  if (voter === 'spec-judge') {
    return {
      voter,
      stage: spec.name,
      severity: 'high',
      blocking: true,
      text: `The ${title}'s answer could not be read, so the acceptance criteria were not judged for consistency.`,
      evidence: [],
      must_address_by: null,
      synthetic: 'unreadable-answer',
    };
  }
  return {
    voter,
    stage: spec.name,
    severity: 'medium',
    blocking: false,
    text: `The ${title}'s answer could not be read: its angle went unchecked. ${ADVERSARIAL_VOTERS[voter].stance}`.slice(
      0,
      CONCERN_LIMITS.text,
    ),
    evidence: [],
    must_address_by: null,
    synthetic: 'unreadable-answer',
  };
}

function unreadable(spec: AdversarialStageSpec, voter: VoterName, problem: string): ParsedAnswer {
  return { status: 'unreadable', concerns: [unreadableConcern(spec, voter)], problem: cut(problem, 200) };
}
