/**
 * The hidden per-issue state HydraFlow keeps in its one progress comment (see codec.ts for the wire format).
 *
 * Every string here is HydraFlow's own (ids, phase names, ISO timestamps, logins, short reasons it wrote itself) and
 * is length-capped; no issue text or model text is stored (field notes: never echo user or model text inside a state
 * block). That is why `triage` keeps the scores and the route but not the verdict's free-text `enrichment`/`reasons`:
 * those go to the visible part of the comment.
 */
import { z } from 'zod';
import { PIPELINE_STAGES, type PipelineStage } from '../pipeline/labels';
import { groomRecordSchema } from '../groom/record';
import { decompositionRecordSchema, planRecordSchema } from '../plan/record';
import { reviewRecordSchema } from '../review/record';
import { shapeRecordSchema } from '../shape/record';
import { adversarialStateSchema } from '../adversarial/record';
import { migrateAdversarialRecord } from '../adversarial/migrate';

export const STATE_VERSION = 2 as const;

export const STATE_LIMITS = {
  history: 50,
  handled: 200,
  dispatches: 20,
  ledger: 60,
  reason: 200,
  errorMessage: 1000,
} as const;

const stageValues = PIPELINE_STAGES.map((s) => s.stage) as [PipelineStage, ...PipelineStage[]];
export const pipelineStageSchema = z.enum(stageValues);

/** ISO-8601 UTC timestamp as produced by Date#toISOString. */
export const isoTime = z.iso.datetime({ offset: false });
/** A workflow run id (GitHub's run_id, optionally `-attempt`) or another HydraFlow-made id. */
export const runIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'run id: letters, digits, . _ : -');
/** A phase name such as `triage`, `plan`, `review-fix`. */
export const phaseSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z][a-z0-9-]*$/, 'phase: lower-case kebab name');
/** A GitHub login (users: alnum and -, Apps: `name[bot]`). */
export const loginSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\[bot\])?$/, 'GitHub login');
const shortText = (max: number) => z.string().max(max);
const tokens = z.number().int().nonnegative();

export const claimSchema = z.object({
  runId: runIdSchema,
  phase: phaseSchema,
  at: isoTime,
  expiresAt: isoTime,
  /** Id of the 👀 reaction that is the lock: a run taking the lock over deletes exactly this one (compare-and-swap). */
  reaction: z.number().int().positive().optional(),
});

export const triageRecordSchema = z.object({
  clarity_score: z.number().min(0).max(10),
  complexity_score: z.number().min(0).max(10),
  needs_discovery: z.boolean(),
  route: z.enum(['discover', 'groom', 'plan']),
  at: isoTime,
  /** sha256 hex of the issue title+body the verdict was made for (re-triage when it changes). */
  bodyHash: z.string().regex(/^[0-9a-f]{64}$/),
});

export const ledgerEntrySchema = z.object({
  at: isoTime,
  runId: runIdSchema,
  phase: phaseSchema,
  role: z
    .string()
    .min(1)
    .max(40)
    .regex(/^[a-z][a-z0-9_-]*$/),
  provider: z
    .string()
    .min(1)
    .max(40)
    .regex(/^[a-z0-9._-]+$/),
  model: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9._:/@*-]+$/),
  inputTokens: tokens,
  cachedInputTokens: tokens,
  cacheWriteTokens: tokens,
  outputTokens: tokens,
  costUsd: z.number().nonnegative(),
  /** false when the model was not in the price table and a default price was used. */
  priced: z.boolean().optional(),
  /** How many calls this entry stands for (>1 for a rolled-up entry). */
  calls: z.number().int().positive().optional(),
});

/**
 * A workflow_dispatch HydraFlow sent to start `phase` (from run `runId`), and the run that took it. GitHub may start the
 * workflow more than once for one dispatch (it performed a request it answered 5xx, and the request was sent again), so
 * the first run to start takes the dispatch (`takenBy`) and every other one does nothing (state/ops.ts, takeDispatch).
 */
export const dispatchSchema = z.object({
  phase: phaseSchema,
  at: isoTime,
  runId: runIdSchema,
  takenBy: runIdSchema.optional(),
});

export const historyEntrySchema = z.object({
  at: isoTime,
  from: pipelineStageSchema.nullable().optional(),
  to: pipelineStageSchema.nullable(),
  by: z.enum(['hydraflow', 'human']),
  actor: loginSchema.optional(),
  reason: shortText(STATE_LIMITS.reason),
});

export const lastErrorSchema = z.object({
  phase: phaseSchema,
  message: shortText(STATE_LIMITS.errorMessage),
  at: isoTime,
});

/** An id of an event or comment already acted on, e.g. `comment:123`, `delivery:abc`, `run:456`. */
export const handledIdSchema = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[A-Za-z0-9._:-]+$/);

/** The implement phase's record: the branch, the pull request it opened, how many attempts and why the last ended. */
export const implementRecordSchema = z.object({
  branch: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9._/-]+$/),
  pull: z.number().int().positive().optional(),
  headSha: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  /**
   * The commit the coding agent started from (the branch as the routing step put it in place). The publish step checks
   * everything since it and commits on it, so what the agent's commands commit themselves is never pushed unchecked.
   */
  startSha: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  /** Implement runs so far (first build, refines, fixes). */
  attempts: z.number().int().nonnegative(),
  /**
   * Why the next implement run happens: build, refine (HydraFlow's review findings), fix (red checks / conflict) or
   * feedback (a human's review or /fix on the pull request).
   */
  mode: z.enum(['build', 'refine', 'fix', 'feedback']),
  /**
   * Human review feedback on the pull request (phases/feedback.ts), by id only, never its text: what earlier rounds
   * took (handled), and the inline comments the last one took, whose threads HydraFlow answers once it pushed.
   */
  feedback: z
    .object({
      reviews: z.array(z.number().int().positive()),
      fixes: z.array(z.number().int().positive()),
      /** Inline comments of the round in progress (answered by the publish job). */
      comments: z.array(z.number().int().positive()),
      /** Rounds started by humans' feedback so far (capped by review.max_rounds). */
      rounds: z.number().int().nonnegative(),
    })
    .optional(),
  /** Fix attempts for red checks or conflicts (merge gate allows one). */
  fixAttempts: z.number().int().nonnegative(),
  /**
   * When HydraFlow saw its push of `headSha` done (the runner's clock): a `/ship-it` counts for that head only if it
   * was written after this (merge/approvals.ts).
   */
  pushedAt: isoTime.optional(),
  at: isoTime,
});

/** The merge gate's record. */
export const mergeRecordSchema = z.object({
  /** A human approved the pull request or said /ship-it (login): the first of `approvers`. */
  approvedBy: loginSchema.optional(),
  /** The humans whose go on `approvedSha` the gate found (merge.required_approvals of them merge). */
  approvers: z.array(loginSchema).max(10).optional(),
  /** The head those approvals were given on: they count for no other. */
  approvedSha: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  mergedSha: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  at: isoTime,
});

/**
 * Why HydraFlow stopped trusting the state it found (trust.ts): someone other than HydraFlow edited its progress comment
 * (`edited`), put back an older block of its own (`rollback`), deleted the comment (`deleted`), or the block itself was
 * refused (the decoder's reasons: a signature that does not verify, a key HydraFlow does not hold, ...).
 */
export const INCIDENT_REASONS = [
  'edited',
  'rollback',
  'deleted',
  'bad-signature',
  'missing-signature',
  'unknown-key',
  'wrong-issue',
  'wrong-repository',
  'malformed',
  'schema',
  'unknown-version',
  'multiple-blocks',
] as const;
export type IncidentReason = (typeof INCIDENT_REASONS)[number];

/**
 * The last time HydraFlow found its state on the issue changed by someone else (ADR 0007). While `restartedBy` is
 * unset the issue waits for a human; the record stays afterwards, so the progress comment keeps saying it.
 */
export const incidentSchema = z.object({
  reason: z.enum(INCIDENT_REASONS),
  /** Who changed the comment, as GitHub reports it (its last editor, or the sender of the edit or deletion). */
  by: loginSchema.optional(),
  at: isoTime,
  /** The sequence number of the block found in the comment, when it verified (a rollback names the older one). */
  found: z.number().int().nonnegative().optional(),
  /** The newest genuine block HydraFlow could find: its spend is the one kept. None verified: nothing was kept. */
  spendFrom: z.number().int().nonnegative().optional(),
  /** A human with commands.min_permission who started the issue over (/triage, /retry, hydraflow-find). */
  restartedBy: loginSchema.optional(),
  restartedAt: isoTime.optional(),
});

/** The discovery brief shown in its comment: which comment, which brief (hash), when, after how many attempts. */
export const discoverRecordSchema = z.object({
  commentId: z.number().int().positive(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** 1, or 2 when the first brief had gaps and was redone (docs/adr/0012-product-track.md). */
  attempts: z.number().int().min(1).max(2),
  /** sha256 of the issue's title and body the brief answered (issueTextHash). */
  issueHash: z.string().regex(/^[0-9a-f]{64}$/),
  at: isoTime,
});

export const issueStateSchema = z.object({
  v: z.literal(STATE_VERSION),
  /** The repository's id (GITHUB_REPOSITORY_ID): a block copied from another repository is refused (codec.ts). */
  repo: z.number().int().positive(),
  issue: z.number().int().positive(),
  /** Grows by one with every write; a genuine block with a lower one than HydraFlow has seen is a rollback. */
  seq: z.number().int().nonnegative(),
  stage: pipelineStageSchema.nullable().optional(),
  claim: claimSchema.optional(),
  /**
   * Id of the 👀 the run that last released its claim still held when it published that: it removes it next
   * (IssueSession.unlock). Found on the issue later, it is the leftover of a run that died in between: any run may take
   * it, at once (IssueSession.tryAcquire, handlers/sweep.ts).
   */
  released: z.number().int().positive().optional(),
  triage: triageRecordSchema.optional(),
  /** The discovery brief: its comment id and hash — no brief text (discover/brief.ts). */
  discover: discoverRecordSchema.optional(),
  /** Shape: the directions comment, the conversation's replies, the chosen direction — no text (shape/record.ts). */
  shape: shapeRecordSchema.optional(),
  /** Grooming's decision, hashes, agents' readiness, open question ids, sub-issues — no model text (groom/record.ts). */
  groom: groomRecordSchema.optional(),
  /** The accepted (or rejected) plan: its comment id, hash, scores, revisions — no plan text (plan/record.ts). */
  plan: planRecordSchema.optional(),
  /** A product-track issue's phase sub-issues, made for its chosen direction (plan/record.ts, plan/decomposition.ts). */
  decomposition: decompositionRecordSchema.optional(),
  /** Review rounds of the issue's pull request: shas, scores, finding keys — no finding text (review/record.ts). */
  review: reviewRecordSchema.optional(),
  implement: implementRecordSchema.optional(),
  merge: mergeRecordSchema.optional(),
  /**
   * The adversarial layer (docs/adr/0018-adversarial-layer.md): gate, stage rounds, forwarded concerns by fingerprint,
   * counters, a capped event log — no concern text (adversarial/record.ts). Absent on states written before it
   * existed, which read as "nothing happened yet" (adversarial/state.ts, adversarialOf).
   */
  adversarial: z.preprocess(
    (raw) => (raw === undefined ? undefined : (migrateAdversarialRecord(raw) ?? raw)),
    adversarialStateSchema.optional(),
  ),
  ledger: z.array(ledgerEntrySchema).max(STATE_LIMITS.ledger),
  dispatches: z.array(dispatchSchema).max(STATE_LIMITS.dispatches).optional(),
  history: z.array(historyEntrySchema).max(STATE_LIMITS.history),
  lastError: lastErrorSchema.optional(),
  handled: z.array(handledIdSchema).max(STATE_LIMITS.handled).optional(),
  incident: incidentSchema.optional(),
});

export type IssueState = z.infer<typeof issueStateSchema>;
export type ImplementRecord = z.infer<typeof implementRecordSchema>;
export type MergeRecord = z.infer<typeof mergeRecordSchema>;
export type Claim = z.infer<typeof claimSchema>;
export type TriageRecord = z.infer<typeof triageRecordSchema>;
export type DiscoverRecord = z.infer<typeof discoverRecordSchema>;
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;
export type DispatchRecord = z.infer<typeof dispatchSchema>;
export type HistoryEntry = z.infer<typeof historyEntrySchema>;
export type LastError = z.infer<typeof lastErrorSchema>;
export type Incident = z.infer<typeof incidentSchema>;

/** A fresh state for an issue of the repository whose id is `repo`. */
export function emptyState(issue: number, repo: number): IssueState {
  return { v: STATE_VERSION, repo, issue, seq: 0, ledger: [], history: [] };
}
