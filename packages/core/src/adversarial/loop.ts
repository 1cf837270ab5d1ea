/**
 * AdversarialRetryLoop (ADR-0064's shared retry primitive) as a pure state machine over the signed state
 * (docs/adr/0018-adversarial-layer.md). What the loop does next is read from the stage's record alone, so a run that
 * crashed mid-stage continues at the recorded step — never from the start, never counting a round twice.
 *
 *     start ─▶ [agent: first run, if the layer makes it] ─▶ vote (round 1: every voter, in parallel)
 *       vote ─▶ no blocking concern                                  ─▶ converged
 *            ─▶ round ≥ 2 and the same blocking fingerprints as before ─▶ oscillated    (forwarded)
 *            ─▶ maxRetries revisions already made                    ─▶ exhausted     (forwarded)
 *            ─▶ the next retry would pass the stage's call budget    ─▶ budget        (forwarded)
 *            ─▶ otherwise: agent (a revision with the blocking concerns attached) ─▶ vote (the voters that blocked)
 *
 * - Round n+1 asks only the voters that blocked round n: a voter with nothing blocking has signed off, and asking it
 *   again would spend a call to invite drift. Oscillation compares whole rounds' blocking sets by fingerprint.
 * - Forwarded concerns become `pending` in the state with `must_address_by` the row's consumer (plan review or code
 *   review), which must address or carry each (events.ts, ConcernsAnswered).
 * - A trivial issue (complexity gate, gate.ts) runs no stage: `skip`, zero model calls.
 *
 * The I/O — asking voters, re-running the agent, writing the state and the concerns' data block — belongs to the
 * caller: `nextAdversarialStep` says what to do, and `startStage`, `agentRan` and `roundVoted` return the events that
 * record it (reduce.ts applies them; the caller writes the state once per step). drive.ts runs the whole loop with I/O
 * passed in.
 */
import { blockingFingerprints, distinctConcerns, fingerprint, type Concern } from './concern';
import type { AdversarialEvent } from './events';
import {
  ADVERSARIAL_LIMITS,
  type AdversarialState,
  type ConcernRef,
  type StageOutcome,
  type StageRecord,
} from './record';
import type { AdversarialStageSpec, VoterName } from './stages';

export type AdversarialStep =
  /** The complexity gate has not decided yet: run it first (gate.ts). */
  | { kind: 'gate' }
  /** The gate (or a human's label) said trivial: no stage runs. */
  | { kind: 'skip' }
  | { kind: 'start' }
  /** Run the surfaced agent; `retry` 0 is its first run, n its n-th revision with `blocking` attached. */
  | { kind: 'agent'; retry: number; blocking: string[] }
  /** Ask `voters` in parallel (none sees another's answer; each may see its own concerns of the round before). */
  | { kind: 'vote'; round: number; voters: VoterName[] }
  | { kind: 'done'; outcome: StageOutcome };

/** What to do next for stage `spec` of an issue whose adversarial record is `state`. */
export function nextAdversarialStep(state: AdversarialState, spec: AdversarialStageSpec): AdversarialStep {
  const gate = state.gate;
  if (!gate) return { kind: 'gate' };
  if (gate.decision === 'trivial') return { kind: 'skip' };
  const rec = state.stages[spec.name];
  if (!rec) return { kind: 'start' };
  if (rec.status !== 'running') return { kind: 'done', outcome: rec.status };
  const last = rec.rounds.at(-1);
  if (rec.next === 'agent') {
    return last
      ? { kind: 'agent', retry: rec.retries + 1, blocking: [...last.blocking] }
      : { kind: 'agent', retry: 0, blocking: [] };
  }
  return { kind: 'vote', round: rec.rounds.length + 1, voters: last ? [...last.blockers] : [...spec.voters] };
}

/** The event that starts the stage (the caller sets the stage's transient label with it). */
export function startStage(
  spec: AdversarialStageSpec,
  at: string,
  options: { runId?: string; restart?: boolean } = {},
): AdversarialEvent[] {
  return [
    {
      type: 'AdversarialStageStarted',
      at,
      stage: spec.name,
      phase: spec.phase,
      agentFirst: spec.agentFirstRun,
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.restart ? { restart: true } : {}),
    },
  ];
}

/** The surfaced agent ran (its first run, or the revision `nextAdversarialStep` asked for). */
export function agentRan(
  state: AdversarialState,
  spec: AdversarialStageSpec,
  at: string,
  calls = 1,
): AdversarialEvent[] {
  const step = nextAdversarialStep(state, spec);
  if (step.kind !== 'agent') return [];
  return [{ type: 'AdversarialAgentRan', at, stage: spec.name, retry: step.retry, calls }];
}

/** How many model calls the next retry costs: one agent run and the voters that blocked. */
export function retryCost(blockers: number): number {
  return 1 + blockers;
}

/**
 * A round of voters answered with `concerns` (stamped with this stage; parse.ts). The events record the round and,
 * when the loop ends here, why — and forward what is still open. `calls`: the model calls the round made (one per
 * voter asked).
 */
export function roundVoted(
  state: AdversarialState,
  spec: AdversarialStageSpec,
  concerns: readonly Concern[],
  at: string,
  calls?: number,
): AdversarialEvent[] {
  const step = nextAdversarialStep(state, spec);
  if (step.kind !== 'vote') return [];
  const rec = state.stages[spec.name]!;
  const round = step.round;
  const asked = new Set<string>(step.voters);
  // most severe first; what a round can raise is capped like the state (record.ts)
  const distinct = distinctConcerns(concerns.filter((c) => c.stage === spec.name && asked.has(c.voter))).slice(
    0,
    ADVERSARIAL_LIMITS.blocking,
  );
  const blocking = blockingFingerprints(distinct);
  const blockers = [...new Set(distinct.filter((c) => c.blocking).map((c) => c.voter))].sort();
  const previous = rec.rounds.at(-1)?.blocking ?? [];
  const now = new Set(blocking);
  const resolved = previous.filter((f) => !now.has(f));
  const spent = calls ?? step.voters.length;
  const ref = (c: Concern): ConcernRef => ({
    fingerprint: fingerprint(c),
    stage: spec.name,
    voter: c.voter,
    severity: c.severity,
    blocking: c.blocking,
    must_address_by: spec.forwardTo,
    round,
    ...(c.synthetic ? { synthetic: true } : {}),
  });
  // a voter whose answer did not parse is forwarded whatever happens: the angle it stands for went unchecked
  const unread = distinct.filter((c) => c.synthetic && !c.blocking).map(ref);
  const events: AdversarialEvent[] = [
    {
      type: 'AdversarialRoundVoted',
      at,
      stage: spec.name,
      round,
      voters: [...step.voters],
      blockers,
      blocking,
      concerns: distinct.length,
      calls: spent,
      resolved,
      forwarded: unread,
    },
  ];
  const end = (outcome: StageOutcome): AdversarialEvent => ({
    type: 'AdversarialStageCompleted',
    at,
    stage: spec.name,
    outcome,
    rounds: round,
    calls: rec.calls + spent,
    forwarded: outcome === 'converged' ? [] : distinct.filter((c) => c.blocking).map(ref),
  });
  if (blocking.length === 0) return [...events, end('converged')];
  if (round >= 2 && sameSet(blocking, previous)) {
    events.push({ type: 'OscillationDetected', at, stage: spec.name, round, blocking });
    return [...events, end('oscillated')];
  }
  if (rec.retries >= spec.maxRetries) {
    events.push(exhausted(spec, at, 'retries', rec, spent));
    return [...events, end('exhausted')];
  }
  if (rec.calls + spent + retryCost(blockers.length) > spec.budget) {
    events.push(exhausted(spec, at, 'budget', rec, spent));
    return [...events, end('budget')];
  }
  return events;
}

function exhausted(
  spec: AdversarialStageSpec,
  at: string,
  reason: 'retries' | 'budget',
  rec: StageRecord,
  spent: number,
): AdversarialEvent {
  return {
    type: 'AdversarialRetryExhausted',
    at,
    stage: spec.name,
    reason,
    retries: rec.retries,
    calls: rec.calls + spent,
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const sb = new Set(b);
  return a.every((x) => sb.has(x));
}

/** The voters of `round` that must not see each other: each gets only its own concerns of the round before. */
export function ownPreviousConcerns(
  concerns: readonly Concern[],
  voter: VoterName,
  blocking: readonly string[],
): Concern[] {
  const open = new Set(blocking);
  return concerns.filter((c) => c.voter === voter && open.has(fingerprint(c)));
}
