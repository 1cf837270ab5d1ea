/**
 * The review phase's part of the signed issue state: per round the head sha, the computed score and the finding keys
 * (hashes of path + normalised title) — never the findings' text, which lives in the review on GitHub (its data block's
 * sha256 is kept here so the refiner can trust what it reads back).
 *
 * This file imports only zod: state/schema.ts imports it, so it must not import the state module back.
 */
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: false });
const findingKeySchema = z.string().regex(/^[0-9a-f]{16}$/);
const gitSha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);

export const REVIEW_LIMITS = { rounds: 10, keysPerRound: 25, raised: 200 } as const;

export const reviewRoundRecordSchema = z.object({
  sha: gitSha,
  score: z.number().min(0).max(10),
  findingKeys: z.array(findingKeySchema).max(REVIEW_LIMITS.keysPerRound),
  criticalHighKeys: z.array(findingKeySchema).max(REVIEW_LIMITS.keysPerRound),
  /** Keys of the round's spec-mismatch findings (a product-track pull request checked against its chosen direction). */
  specMismatchKeys: z.array(findingKeySchema).max(REVIEW_LIMITS.keysPerRound).optional(),
  needsHuman: z.boolean().optional(),
  /** Files of the diff the reviewer did not see whole: the round never approves (a replay decides the same). */
  unseen: z.number().int().positive().max(1_000_000).optional(),
  /** The review HydraFlow submitted for this round. */
  reviewId: z.number().int().positive().optional(),
  /** sha256 of the round's open findings as carried in the review's data block. */
  findingsHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  event: z.enum(['APPROVE', 'REQUEST_CHANGES', 'COMMENT']).optional(),
  at: isoTime,
});

export const reviewRecordSchema = z.object({
  /** The pull request under review; a new pull request starts the rounds afresh. */
  pull: z.number().int().positive(),
  rounds: z.array(reviewRoundRecordSchema).max(REVIEW_LIMITS.rounds),
  /** Keys of every finding already posted, so none is ever posted twice. */
  raised: z.array(findingKeySchema).max(REVIEW_LIMITS.raised),
  outcome: z.enum(['approve', 'refine', 'escalate']).optional(),
  /**
   * The chosen direction the pull request was checked against (spec-match): the issue whose signed state holds it (the
   * issue itself, or its epic parent) and the direction's hash. Absent: an engineering-track pull request.
   */
  spec: z.object({ issue: z.number().int().positive(), hash: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  reason: z.enum(['needs-human', 'diverging', 'repeating', 'max-rounds', 'unseen']).optional(),
});

export type ReviewRoundRecord = z.infer<typeof reviewRoundRecordSchema>;
export type ReviewRecord = z.infer<typeof reviewRecordSchema>;
