/**
 * A concern: what an adversarial voter objects to (ADR-0064's lingua franca), and how it is recognised when it comes
 * back in other words. Pure.
 *
 * A concern's text and evidence are model text: they live in a hash-checked data block in a comment (data.ts) and in
 * prompts, never in the signed state. The state keeps a `ConcernRef` (record.ts): the fingerprint and HydraFlow's own
 * fields.
 *
 * **Structurally equal** (the fingerprint's definition, docs/adr/0018-adversarial-layer.md): two concerns are the same
 * concern when their texts and their sets of evidence items are equal after normalization —
 *
 * - Unicode NFKC, lower case; quotes of every kind and punctuation dropped; spacing collapsed;
 * - a list marker or number in front of the text or an evidence item ("1.", "2)", "(a)", "- ", "#3:") dropped;
 * - line references ("line 42", "lines 3-7", "L42", "foo.ts:42:7") dropped: they move with every revision;
 * - evidence as a set: order and repeats do not count, empty items neither.
 *
 * Not part of it: the voter, the stage, the severity and whether it blocks (a restated concern whose severity wobbles
 * is still the same concern; two voters raising the same point raise one concern). Everything else is substance: other
 * words, other numbers (a 30 s timeout is not a 300 s one), other evidence make another fingerprint.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SEVERITIES, type Severity } from '../review/finding';
import {
  ADVERSARIAL_STAGE_NAMES,
  CONCERN_CONSUMERS,
  VOTER_NAMES,
  type AdversarialStageName,
  type VoterName,
} from './stages';

export const CONCERN_LIMITS = { text: 500, evidence: 5, evidenceItem: 300 } as const;

export const voterNameSchema = z.enum(VOTER_NAMES as [VoterName, ...VoterName[]]);
export const adversarialStageSchema = z.enum(
  ADVERSARIAL_STAGE_NAMES as [AdversarialStageName, ...AdversarialStageName[]],
);
export const concernConsumerSchema = z.enum(CONCERN_CONSUMERS);
export const concernSeveritySchema = z.enum(SEVERITIES);
/** 16 hex characters of SHA-256: HydraFlow's own value, so it may go into the signed state. */
export const fingerprintSchema = z.string().regex(/^[0-9a-f]{16}$/);

export const concernSchema = z.strictObject({
  voter: voterNameSchema,
  stage: adversarialStageSchema,
  severity: concernSeveritySchema,
  /** Blocks the stage: the loop revises until no blocking concern is left (only critical and high may block). */
  blocking: z.boolean(),
  text: z.string().min(1).max(CONCERN_LIMITS.text),
  evidence: z.array(z.string().min(1).max(CONCERN_LIMITS.evidenceItem)).max(CONCERN_LIMITS.evidence),
  /** Set when the stage forwards it: the later stage that must address it or carry it on. Null while in its loop. */
  must_address_by: concernConsumerSchema.nullable(),
  /**
   * Made by HydraFlow, not said by a voter: `unreadable-answer` stands for a voter whose answer did not parse
   * (parse.ts), so the angle nobody checked is visible downstream.
   */
  synthetic: z.enum(['unreadable-answer']).optional(),
});
export type Concern = z.infer<typeof concernSchema>;
export type ConcernSeverity = Severity;

const QUOTES = /["'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u300c\u300d]/g;
// A marker needs the space after it: "30-second" and "2.5 s" are substance, "2. " and "- " are not.
const LEADING_MARKER = /^\s*(?:[-*\u2022\u2013\u2014>]+\s+|#?\d+[.):]\s+|\(\s*(?:\d+|[a-z])\s*\)\s*|[a-z][.)]\s+)+/u;
const LINE_REFS =
  /\b(?:on |at |in )?(?:lines?|ln|l)\.?\s*\d+(?:\s*[-\u2013,]\s*\d+)*\b|(?<=\.[a-z0-9]{1,8})(?::\d+){1,2}\b|\bline\s+number\s+\d+\b/g;

/** A text as the fingerprint sees it (see the file's comment). */
export function normalizeConcernText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(QUOTES, '')
    .replace(LEADING_MARKER, '')
    .replace(LINE_REFS, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The evidence as a set: normalized, without empty items and repeats, sorted. */
export function normalizeEvidence(evidence: readonly string[]): string[] {
  return [...new Set(evidence.map(normalizeConcernText).filter((e) => e !== ''))].sort();
}

/** A concern's identity across rounds, stages and pull requests (16 hex characters). */
export function fingerprint(concern: Pick<Concern, 'text' | 'evidence'>): string {
  return createHash('sha256')
    .update(['concern', normalizeConcernText(concern.text), ...normalizeEvidence(concern.evidence)].join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/** Severities that may block; a voter's `blocking` on a medium or low concern is ignored (parse.ts). */
export function mayBlock(severity: Severity): boolean {
  return severity === 'critical' || severity === 'high';
}

/** Distinct concerns by fingerprint, most severe first; a repeat keeps the most severe copy (blocking if any is). */
export function distinctConcerns(concerns: readonly Concern[]): Concern[] {
  const byKey = new Map<string, Concern>();
  for (const c of concerns) {
    const key = fingerprint(c);
    const known = byKey.get(key);
    if (!known) {
      byKey.set(key, c);
      continue;
    }
    const worse = SEVERITIES.indexOf(c.severity) < SEVERITIES.indexOf(known.severity) ? c : known;
    byKey.set(key, { ...worse, blocking: known.blocking || c.blocking });
  }
  return [...byKey.values()].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
}

/** The set of blocking fingerprints of a round, sorted (what oscillation compares). */
export function blockingFingerprints(concerns: readonly Concern[]): string[] {
  return [...new Set(concerns.filter((c) => c.blocking).map(fingerprint))].sort();
}

/**
 * How a concern stopped being open (HydraFlow's own fields: the reasoning, model text, goes to the comments):
 * - `resolved`: a later round of its own stage no longer raised it (the tight loop);
 * - `addressed`: the stage it was forwarded to (plan review, code review) says the plan or the code now handles it;
 * - `carried`: that stage explicitly passes it on — plan review to code review, code review to `merge`, where it
 *   becomes knowledge (carryover.ts) if the pull request merges with it open.
 */
export const RESOLUTION_KINDS = ['resolved', 'addressed', 'carried'] as const;
export const concernResolutionSchema = z.object({
  fingerprint: fingerprintSchema,
  how: z.enum(RESOLUTION_KINDS),
  /** The stage whose loop resolved it, or the consumer that addressed or carried it. */
  by: z.union([adversarialStageSchema, concernConsumerSchema]),
  /** Where a carried concern went. */
  to: z.union([concernConsumerSchema, z.literal('merge')]).optional(),
  at: z.iso.datetime({ offset: false }),
});
export type ConcernResolution = z.infer<typeof concernResolutionSchema>;
