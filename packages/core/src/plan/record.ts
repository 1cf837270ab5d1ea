/**
 * The plan phase's part of the signed issue state. No plan text here (model text never goes inside the state block):
 * the plan lives in its own visible comment, and the state keeps that comment's id, the sha256 of the plan (so a later
 * phase can tell the plan it reads is the one accepted), the scores and the revision count.
 *
 * This file imports only zod: state/schema.ts imports it, so it must not import the state module back.
 */
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: false });
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const score = z.number().min(0).max(10);

export const planRecordSchema = z.object({
  /** accepted: the issue moved on to ready; rejected: the last revision still fell short and a human decides. */
  status: z.enum(['accepted', 'rejected']),
  /** The plan comment (marker `<!-- hydraflow:plan -->`), updated in place on re-runs. */
  commentId: z.number().int().positive(),
  /** sha256 of the plan's canonical JSON (see planHash). */
  hash: sha256Hex,
  /** Revisions after the first draft (0 = the first plan was accepted). */
  revisions: z.number().int().min(0).max(10),
  scores: z.object({
    correctness: score,
    completeness: score,
    scope: score,
    testability: score,
    risk_handling: score,
    conventions: score,
    clarity: score,
  }),
  mean: score,
  /** sha256 of the issue title+body the plan was made for. */
  issueHash: sha256Hex,
  at: isoTime,
});

export type PlanRecord = z.infer<typeof planRecordSchema>;

/**
 * A product-track issue's plan (plan/decomposition.ts): the phase sub-issues made for the chosen direction whose hash
 * is `selectedHash` — numbers only, the text lives in the sub-issues. A re-run for the same direction makes nothing
 * again.
 */
export const decompositionRecordSchema = z.object({
  selectedHash: sha256Hex,
  subIssues: z.array(z.object({ phase: z.number().int().min(1).max(20), number: z.number().int().positive() })).max(8),
  /** Revisions after the first answer (0 or 1: one revision when the count or a phase was wrong). */
  revisions: z.number().int().min(0).max(1),
  at: isoTime,
});
export type DecompositionRecord = z.infer<typeof decompositionRecordSchema>;
