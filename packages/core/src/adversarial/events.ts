/**
 * The adversarial layer's events (docs/adr/0018-adversarial-layer.md). reduce.ts folds them into the state; the log
 * keeps a short line of each (record.ts). No model text in any of them: concerns travel by fingerprint.
 *
 * ADR-0064 names six, for observers (the progress comment, the job summary): AdversarialStageStarted,
 * AdversarialStageCompleted, AdversarialRetryExhausted, OscillationDetected, ComplexityGateRouted,
 * ShippedWithKnownGap. Three more are HydraFlow's own, so that every change of the state is an event and a run that
 * crashed mid-stage resumes from the state alone: AdversarialRoundVoted (a round of voters answered),
 * AdversarialAgentRan (the surfaced agent ran: its first run or a revision), ConcernsAnswered (plan review or code
 * review addressed or carried forwarded concerns).
 */
import { z } from 'zod';
import { adversarialStageSchema, concernConsumerSchema, fingerprintSchema, voterNameSchema } from './concern';
import { GATE_DECISIONS, GATE_REASON_CODES } from './gate-reasons';
import { ADVERSARIAL_LIMITS, STAGE_OUTCOMES, concernRefSchema } from './record';
import { ADVERSARIAL_PHASES } from './stages';

const at = z.iso.datetime({ offset: false });
const count = z.number().int().nonnegative();
const fingerprints = z.array(fingerprintSchema).max(ADVERSARIAL_LIMITS.pending);

export const ADVERSARIAL_EVENT_TYPES = [
  'ComplexityGateRouted',
  'AdversarialStageStarted',
  'AdversarialAgentRan',
  'AdversarialRoundVoted',
  'AdversarialRetryExhausted',
  'OscillationDetected',
  'AdversarialStageCompleted',
  'ConcernsAnswered',
  'ShippedWithKnownGap',
] as const;
export type AdversarialEventType = (typeof ADVERSARIAL_EVENT_TYPES)[number];

export const adversarialEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ComplexityGateRouted'),
    at,
    decision: z.enum(GATE_DECISIONS),
    source: z.enum(['signals', 'label']),
    reasons: z.array(z.enum(GATE_REASON_CODES)).max(ADVERSARIAL_LIMITS.gateReasons),
  }),
  z.object({
    type: z.literal('AdversarialStageStarted'),
    at,
    stage: adversarialStageSchema,
    phase: z.enum(ADVERSARIAL_PHASES),
    /** The layer makes the surfaced agent's first run (the spec judge's criteria): the loop starts with it. */
    agentFirst: z.boolean(),
    /** Start over a stage that already ended (a /retry of its phase); ignored for a stage still running. */
    restart: z.boolean().optional(),
    runId: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._:-]+$/)
      .optional(),
  }),
  z.object({
    type: z.literal('AdversarialAgentRan'),
    at,
    stage: adversarialStageSchema,
    /** 0: the agent's first run (made by the layer); n: the n-th revision (retry). */
    retry: count,
    calls: count,
  }),
  z.object({
    type: z.literal('AdversarialRoundVoted'),
    at,
    stage: adversarialStageSchema,
    round: z.number().int().min(1).max(ADVERSARIAL_LIMITS.rounds),
    voters: z.array(voterNameSchema).max(10),
    blockers: z.array(voterNameSchema).max(10),
    blocking: z.array(fingerprintSchema).max(ADVERSARIAL_LIMITS.blocking),
    concerns: count,
    calls: count,
    /** Blocking concerns of the round before that this round no longer raised. */
    resolved: fingerprints,
    /** Concerns forwarded at once whatever the stage's outcome (a voter whose answer did not parse). */
    forwarded: z.array(concernRefSchema).max(ADVERSARIAL_LIMITS.pending),
  }),
  z.object({
    type: z.literal('AdversarialRetryExhausted'),
    at,
    stage: adversarialStageSchema,
    /** `retries`: the row's maxRetries were spent; `budget`: the next retry would pass the row's call budget. */
    reason: z.enum(['retries', 'budget']),
    retries: count,
    calls: count,
  }),
  z.object({
    type: z.literal('OscillationDetected'),
    at,
    stage: adversarialStageSchema,
    round: count,
    blocking: z.array(fingerprintSchema).max(ADVERSARIAL_LIMITS.blocking),
  }),
  z.object({
    type: z.literal('AdversarialStageCompleted'),
    at,
    stage: adversarialStageSchema,
    outcome: z.enum(STAGE_OUTCOMES),
    rounds: count,
    calls: count,
    /** The unresolved concerns handed to a later stage (empty when converged). */
    forwarded: z.array(concernRefSchema).max(ADVERSARIAL_LIMITS.pending),
  }),
  z.object({
    type: z.literal('ConcernsAnswered'),
    at,
    by: concernConsumerSchema,
    addressed: fingerprints,
    /** Passed on: from plan review to code review, from code review to the merge (carryover.ts). */
    carried: fingerprints,
  }),
  z.object({
    type: z.literal('ShippedWithKnownGap'),
    at,
    pr: z.number().int().positive(),
    /** The concerns still open at the merge (they become knowledge: carryover.ts). */
    concerns: fingerprints,
  }),
]);
export type AdversarialEvent = z.infer<typeof adversarialEventSchema>;
export type AdversarialEventOf<T extends AdversarialEventType> = Extract<AdversarialEvent, { type: T }>;
