/**
 * Events → AdversarialState (docs/adr/0018-adversarial-layer.md). Pure and idempotent: an event that does not fit the
 * state — a round already recorded, a stage already completed, a merge already carried over — changes nothing and is
 * not logged, so a re-run after a crash or a re-delivered webhook never counts twice. Every event that applies updates
 * the counters and the stage records as well as the log; the log is capped (oldest dropped), the state stays right.
 */
import type { AdversarialEvent, AdversarialEventOf } from './events';
import {
  ADVERSARIAL_LIMITS,
  emptyAdversarialState,
  type AdversarialLogEntry,
  type AdversarialState,
  type ConcernRef,
  type StageRecord,
} from './record';

type Applied = { state: AdversarialState; log: Omit<AdversarialLogEntry, 'type' | 'at'> } | undefined;

/** Apply one event. */
export function reduceAdversarial(state: AdversarialState, event: AdversarialEvent): AdversarialState {
  const applied = apply(state, event);
  if (!applied) return state;
  const next = applied.state;
  const entry: AdversarialLogEntry = { type: event.type, at: event.at, ...applied.log };
  return {
    ...next,
    counters: { ...next.counters, events: next.counters.events + 1 },
    log: [...next.log, entry].slice(-ADVERSARIAL_LIMITS.log),
  };
}

/** Apply events in order, from `state` (default: the empty state). */
export function reduceAdversarialEvents(
  events: readonly AdversarialEvent[],
  state: AdversarialState = emptyAdversarialState(),
): AdversarialState {
  return events.reduce(reduceAdversarial, state);
}

/** How many events the log no longer shows (the counters still include them). */
export function droppedLogEntries(state: AdversarialState): number {
  return state.counters.events - state.log.length;
}

function apply(state: AdversarialState, event: AdversarialEvent): Applied {
  switch (event.type) {
    case 'ComplexityGateRouted':
      return gateRouted(state, event);
    case 'AdversarialStageStarted':
      return stageStarted(state, event);
    case 'AdversarialAgentRan':
      return agentRan(state, event);
    case 'AdversarialRoundVoted':
      return roundVoted(state, event);
    case 'AdversarialRetryExhausted':
      return running(state, event.stage)
        ? {
            state: bump(state, { retriesExhausted: 1 }),
            log: { stage: event.stage, outcome: event.reason },
          }
        : undefined;
    case 'OscillationDetected':
      return running(state, event.stage)
        ? { state: bump(state, { oscillations: 1 }), log: { stage: event.stage, round: event.round } }
        : undefined;
    case 'AdversarialStageCompleted':
      return stageCompleted(state, event);
    case 'ConcernsAnswered':
      return concernsAnswered(state, event);
    case 'ShippedWithKnownGap':
      return shipped(state, event);
  }
}

type CounterKey = Exclude<keyof AdversarialState['counters'], 'events'>;

function bump(state: AdversarialState, by: Partial<Record<CounterKey, number>>): AdversarialState {
  const counters = { ...state.counters };
  for (const [k, n] of Object.entries(by) as [CounterKey, number][]) counters[k] += n;
  return { ...state, counters };
}

function running(state: AdversarialState, stage: keyof AdversarialState['stages']): StageRecord | undefined {
  const rec = state.stages[stage];
  return rec?.status === 'running' ? rec : undefined;
}

function withStage(state: AdversarialState, stage: keyof AdversarialState['stages'], rec: StageRecord) {
  return { ...state, stages: { ...state.stages, [stage]: rec } };
}

function gateRouted(state: AdversarialState, e: AdversarialEventOf<'ComplexityGateRouted'>): Applied {
  const g = state.gate;
  const same =
    g !== undefined &&
    g.decision === e.decision &&
    g.source === e.source &&
    g.reasons.length === e.reasons.length &&
    g.reasons.every((r, i) => r === e.reasons[i]);
  if (same) return undefined;
  const gate = { decision: e.decision, source: e.source, reasons: [...e.reasons], at: e.at };
  return { state: bump({ ...state, gate }, { gateRouted: 1 }), log: { outcome: e.decision } };
}

function stageStarted(state: AdversarialState, e: AdversarialEventOf<'AdversarialStageStarted'>): Applied {
  const known = state.stages[e.stage];
  if (known && (known.status === 'running' || !e.restart)) return undefined;
  const rec: StageRecord = {
    status: 'running',
    next: e.agentFirst ? 'agent' : 'vote',
    retries: 0,
    agentRuns: 0,
    calls: 0,
    rounds: [],
    startedAt: e.at,
    ...(e.runId ? { runId: e.runId } : {}),
  };
  return {
    state: bump(withStage(state, e.stage, rec), { stagesStarted: 1 }),
    log: { stage: e.stage, phase: e.phase },
  };
}

function agentRan(state: AdversarialState, e: AdversarialEventOf<'AdversarialAgentRan'>): Applied {
  const rec = running(state, e.stage);
  if (!rec || rec.next !== 'agent') return undefined;
  // the first run is retry 0 and comes before any round; a revision n follows round n
  const expected = rec.rounds.length === 0 ? 0 : rec.retries + 1;
  if (e.retry !== expected) return undefined;
  const next: StageRecord = {
    ...rec,
    next: 'vote',
    retries: e.retry === 0 ? rec.retries : e.retry,
    agentRuns: rec.agentRuns + 1,
    calls: rec.calls + e.calls,
  };
  return {
    state: bump(withStage(state, e.stage, next), { agentRuns: 1, calls: e.calls }),
    log: { stage: e.stage, round: e.retry },
  };
}

function roundVoted(state: AdversarialState, e: AdversarialEventOf<'AdversarialRoundVoted'>): Applied {
  const rec = running(state, e.stage);
  if (!rec || rec.next !== 'vote' || e.round !== rec.rounds.length + 1) return undefined;
  const next: StageRecord = {
    ...rec,
    next: 'agent',
    calls: rec.calls + e.calls,
    rounds: [
      ...rec.rounds.map((r) => ({ ...r, blocking: [] })),
      {
        round: e.round,
        voters: [...e.voters],
        blockers: [...e.blockers],
        blocked: e.blocking.length,
        blocking: [...e.blocking],
        concerns: e.concerns,
        at: e.at,
      },
    ].slice(-ADVERSARIAL_LIMITS.rounds),
  };
  let s = withStage(state, e.stage, next);
  s = {
    ...s,
    resolutions: [
      ...s.resolutions,
      ...e.resolved.map((fingerprint) => ({ fingerprint, how: 'resolved' as const, by: e.stage, at: e.at })),
    ].slice(-ADVERSARIAL_LIMITS.resolutions),
  };
  const added = addPending(s, e.forwarded);
  return {
    state: bump(added.state, { roundsVoted: 1, calls: e.calls, resolved: e.resolved.length, forwarded: added.n }),
    log: { stage: e.stage, round: e.round, n: e.blocking.length },
  };
}

function stageCompleted(state: AdversarialState, e: AdversarialEventOf<'AdversarialStageCompleted'>): Applied {
  const rec = running(state, e.stage);
  if (!rec) return undefined;
  const done: StageRecord = { ...rec, status: e.outcome, next: null, endedAt: e.at };
  const added = addPending(withStage(state, e.stage, done), e.forwarded);
  return {
    state: bump(added.state, { stagesCompleted: 1, forwarded: added.n }),
    log: { stage: e.stage, outcome: e.outcome, n: added.n },
  };
}

/** Add refs to `pending`, one per fingerprint (a repeat updates the one there); the oldest go past the cap. */
function addPending(state: AdversarialState, refs: readonly ConcernRef[]): { state: AdversarialState; n: number } {
  if (refs.length === 0) return { state, n: 0 };
  const pending = [...state.pending];
  let n = 0;
  for (const ref of refs) {
    const i = pending.findIndex((p) => p.fingerprint === ref.fingerprint);
    if (i >= 0) pending[i] = { ...pending[i]!, ...ref };
    else {
      pending.push({ ...ref });
      n += 1;
    }
  }
  return { state: { ...state, pending: pending.slice(-ADVERSARIAL_LIMITS.pending) }, n };
}

function concernsAnswered(state: AdversarialState, e: AdversarialEventOf<'ConcernsAnswered'>): Applied {
  const addressed = new Set(e.addressed);
  const carried = new Set(e.carried.filter((f) => !addressed.has(f)));
  let nAddressed = 0;
  let nCarried = 0;
  const resolutions = [...state.resolutions];
  const pending: ConcernRef[] = [];
  for (const ref of state.pending) {
    // only the stage a concern waits for may answer it
    if (ref.must_address_by !== e.by) {
      pending.push(ref);
      continue;
    }
    if (addressed.has(ref.fingerprint)) {
      nAddressed += 1;
      resolutions.push({ fingerprint: ref.fingerprint, how: 'addressed', by: e.by, at: e.at });
      continue;
    }
    if (carried.has(ref.fingerprint) && !(ref.carried && e.by === 'code-review')) {
      nCarried += 1;
      const to = e.by === 'plan-review' ? ('code-review' as const) : ('merge' as const);
      resolutions.push({ fingerprint: ref.fingerprint, how: 'carried', by: e.by, to, at: e.at });
      pending.push(e.by === 'plan-review' ? { ...ref, must_address_by: 'code-review' } : { ...ref, carried: true });
      continue;
    }
    pending.push(ref);
  }
  if (nAddressed + nCarried === 0) return undefined;
  return {
    state: bump(
      { ...state, pending, resolutions: resolutions.slice(-ADVERSARIAL_LIMITS.resolutions) },
      { addressed: nAddressed, carried: nCarried },
    ),
    log: { outcome: e.by, n: nAddressed + nCarried },
  };
}

function shipped(state: AdversarialState, e: AdversarialEventOf<'ShippedWithKnownGap'>): Applied {
  if (state.shipped.some((s) => s.pr === e.pr)) return undefined;
  const gone = new Set(e.concerns);
  return {
    state: bump(
      {
        ...state,
        // what merged open is knowledge now, no longer a concern waiting for a stage
        pending: state.pending.filter((p) => !gone.has(p.fingerprint)),
        shipped: [...state.shipped, { pr: e.pr, concerns: e.concerns.length, at: e.at }].slice(
          -ADVERSARIAL_LIMITS.shipped,
        ),
      },
      { shippedWithKnownGap: 1 },
    ),
    log: { pr: e.pr, n: e.concerns.length },
  };
}
