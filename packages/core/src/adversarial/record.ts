/**
 * The adversarial layer's part of the signed issue state (docs/adr/0018-adversarial-layer.md): the gate's decision,
 * each stage's rounds, the concerns forwarded to later stages and how they ended, counters, and a bounded log of the
 * events that made it (events.ts, reduced by reduce.ts). Like every record in the state, no model or issue text:
 * concerns appear by fingerprint with HydraFlow's own fields; their text lives in a hash-checked data block
 * (data.ts) whose comment and hash the stage's record keeps.
 *
 * Bounded: the log keeps the newest ADVERSARIAL_LIMITS.log events; what the state says never depends on the log —
 * counters and stage records are updated by every event, so dropping old events loses history, never correctness.
 *
 * state/schema.ts imports this file: nothing here may import the state module back.
 */
import { z } from 'zod';
import {
  adversarialStageSchema,
  concernConsumerSchema,
  concernResolutionSchema,
  concernSeveritySchema,
  fingerprintSchema,
  voterNameSchema,
} from './concern';
import { GATE_DECISIONS, GATE_REASON_CODES } from './gate-reasons';
import { ADVERSARIAL_PHASES, MAX_ADVERSARIAL_RETRIES } from './stages';

/** The record's own version: ADVERSARIAL_RECORD_VERSION; migrate.ts lifts older ones. */
export const ADVERSARIAL_RECORD_VERSION = 1 as const;

export const ADVERSARIAL_LIMITS = {
  /** Events kept in the log (oldest dropped first). */
  log: 20,
  /** Concerns waiting for a later stage. */
  pending: 24,
  /** Resolutions remembered (oldest dropped first; the counters keep the totals). */
  resolutions: 24,
  /** Merged pull requests whose known gaps were carried over (re-deliveries of their merge are recognised). */
  shipped: 10,
  /** Rounds of one stage: the first vote and one per retry. */
  rounds: MAX_ADVERSARIAL_RETRIES + 1,
  /** Blocking fingerprints of a round: three voters × MAX_CONCERNS_PER_ANSWER (answers.ts). */
  blocking: 24,
  gateReasons: 12,
} as const;

const isoTime = z.iso.datetime({ offset: false });
const count = z.number().int().nonnegative();
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const runId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/);

/** A concern as the state knows it: its fingerprint and HydraFlow's fields, never its text. */
export const concernRefSchema = z.object({
  fingerprint: fingerprintSchema,
  stage: adversarialStageSchema,
  voter: voterNameSchema,
  severity: concernSeveritySchema,
  blocking: z.boolean(),
  must_address_by: concernConsumerSchema,
  /** The round of its stage that raised it last. */
  round: z.number().int().min(1).max(ADVERSARIAL_LIMITS.rounds),
  /** Made by HydraFlow for a voter whose answer did not parse (concern.ts). */
  synthetic: z.boolean().optional(),
  /** A consumer explicitly carried it on (plan review → code review; code review → merge). */
  carried: z.boolean().optional(),
});
export type ConcernRef = z.infer<typeof concernRefSchema>;

export const roundRecordSchema = z.object({
  round: z.number().int().min(1).max(ADVERSARIAL_LIMITS.rounds),
  /** The voters asked (round 1: all of the stage's; later: those that blocked the round before). */
  voters: z.array(voterNameSchema).max(10),
  /** The voters with a blocking concern in this round (the next round asks them again). */
  blockers: z.array(voterNameSchema).max(10),
  /** How many distinct blocking concerns the round raised. */
  blocked: count,
  /**
   * Sorted blocking fingerprints: what the next revision answers and oscillation compares. Kept for the newest round
   * only (older rounds: []), so a long stage does not grow the state.
   */
  blocking: z.array(fingerprintSchema).max(ADVERSARIAL_LIMITS.blocking),
  /** All distinct concerns the round raised, blocking or not. */
  concerns: count,
  at: isoTime,
});
export type RoundRecord = z.infer<typeof roundRecordSchema>;

export const STAGE_OUTCOMES = ['converged', 'exhausted', 'oscillated', 'budget'] as const;
export type StageOutcome = (typeof STAGE_OUTCOMES)[number];

export const stageRecordSchema = z.object({
  status: z.enum(['running', ...STAGE_OUTCOMES]),
  /** While running: what the loop does next (loop.ts); null once done. */
  next: z.enum(['agent', 'vote']).nullable(),
  /** Revisions after the first vote (the retries, at most the row's maxRetries). */
  retries: z.number().int().min(0).max(MAX_ADVERSARIAL_RETRIES),
  /** Runs of the surfaced agent the stage made (its first run, when the layer makes it, and the revisions). */
  agentRuns: count,
  /** Model calls the stage spent (voters and agent runs). */
  calls: count,
  rounds: z.array(roundRecordSchema).max(ADVERSARIAL_LIMITS.rounds),
  startedAt: isoTime,
  endedAt: isoTime.optional(),
  runId: runId.optional(),
  /** The comment whose data block holds the stage's concerns (data.ts) and that block's hash. */
  block: z.object({ commentId: z.number().int().positive(), hash: sha256Hex }).optional(),
});
export type StageRecord = z.infer<typeof stageRecordSchema>;

export const gateRecordSchema = z.object({
  decision: z.enum(GATE_DECISIONS),
  /** `label`: a human's override label decided; `signals`: the gate's own classification. */
  source: z.enum(['signals', 'label']),
  reasons: z.array(z.enum(GATE_REASON_CODES)).max(ADVERSARIAL_LIMITS.gateReasons),
  at: isoTime,
});
export type GateRecord = z.infer<typeof gateRecordSchema>;

/** A log line: which event, when, and the few HydraFlow fields that say what happened. */
export const adversarialLogEntrySchema = z.object({
  type: z.string().min(1).max(40),
  at: isoTime,
  stage: adversarialStageSchema.optional(),
  phase: z.enum(ADVERSARIAL_PHASES).optional(),
  round: count.optional(),
  outcome: z.string().max(20).optional(),
  pr: z.number().int().positive().optional(),
  /** How many concerns the event moved (forwarded, resolved, carried over). */
  n: count.optional(),
});
export type AdversarialLogEntry = z.infer<typeof adversarialLogEntrySchema>;

export const adversarialCountersSchema = z.object({
  /** Events applied since the record began (the log keeps the newest ADVERSARIAL_LIMITS.log of them). */
  events: count,
  gateRouted: count,
  stagesStarted: count,
  stagesCompleted: count,
  roundsVoted: count,
  agentRuns: count,
  calls: count,
  retriesExhausted: count,
  oscillations: count,
  forwarded: count,
  resolved: count,
  addressed: count,
  carried: count,
  shippedWithKnownGap: count,
});
export type AdversarialCounters = z.infer<typeof adversarialCountersSchema>;

export const adversarialStateSchema = z.object({
  v: z.literal(ADVERSARIAL_RECORD_VERSION),
  gate: gateRecordSchema.optional(),
  stages: z.partialRecord(adversarialStageSchema, stageRecordSchema),
  /** Concerns forwarded and not yet addressed: later stages must address or carry each. */
  pending: z.array(concernRefSchema).max(ADVERSARIAL_LIMITS.pending),
  resolutions: z.array(concernResolutionSchema).max(ADVERSARIAL_LIMITS.resolutions),
  /** Merged pull requests whose open concerns were carried over into memory (carryover.ts). */
  shipped: z
    .array(z.object({ pr: z.number().int().positive(), concerns: count, at: isoTime }))
    .max(ADVERSARIAL_LIMITS.shipped),
  counters: adversarialCountersSchema,
  log: z.array(adversarialLogEntrySchema).max(ADVERSARIAL_LIMITS.log),
});
export type AdversarialState = z.infer<typeof adversarialStateSchema>;

export function emptyCounters(): AdversarialCounters {
  return {
    events: 0,
    gateRouted: 0,
    stagesStarted: 0,
    stagesCompleted: 0,
    roundsVoted: 0,
    agentRuns: 0,
    calls: 0,
    retriesExhausted: 0,
    oscillations: 0,
    forwarded: 0,
    resolved: 0,
    addressed: 0,
    carried: 0,
    shippedWithKnownGap: 0,
  };
}

/** The state of an issue the layer has not touched: what an absent record means (migrate.ts). */
export function emptyAdversarialState(): AdversarialState {
  return {
    v: ADVERSARIAL_RECORD_VERSION,
    stages: {},
    pending: [],
    resolutions: [],
    shipped: [],
    counters: emptyCounters(),
    log: [],
  };
}
