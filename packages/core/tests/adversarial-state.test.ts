import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ADVERSARIAL_LIMITS,
  MAX_STATE_BLOCK_CHARS,
  adversarialEventSchema,
  adversarialOf,
  adversarialStateSchema,
  decodeStateBlock,
  droppedLogEntries,
  emptyAdversarialState,
  emptyState,
  encodeStateBlock,
  migrateAdversarialRecord,
  migrateState,
  reduceAdversarial,
  reduceAdversarialEvents,
  withAdversarialEvents,
  type AdversarialEvent,
  type AdversarialState,
  type ConcernRef,
} from '../src/index';

const KEY = 'test-secret-key';
const REPO = 1296269;
const at = (s: number) => new Date(Date.parse('2026-11-27T10:00:00.000Z') + s * 1000).toISOString();
const fp = (n: number) => n.toString(16).padStart(16, '0');

const ref = (n: number, over: Partial<ConcernRef> = {}): ConcernRef => ({
  fingerprint: fp(n),
  stage: 'plan-council',
  voter: 'risk-skeptic',
  severity: 'high',
  blocking: true,
  must_address_by: 'plan-review',
  round: 1,
  ...over,
});

const gate: AdversarialEvent = {
  type: 'ComplexityGateRouted',
  at: at(0),
  decision: 'load_bearing',
  source: 'signals',
  reasons: ['complex'],
};

/** One stage run: start, n rounds where the last converges or forwards `open`. */
function stageRun(stage: 'plan-council' | 'discovery-council', t: number, open: ConcernRef[]): AdversarialEvent[] {
  return [
    {
      type: 'AdversarialStageStarted',
      at: at(t),
      stage,
      phase: stage === 'plan-council' ? 'plan' : 'discover',
      agentFirst: false,
    },
    {
      type: 'AdversarialRoundVoted',
      at: at(t + 1),
      stage,
      round: 1,
      voters: ['builder'],
      blockers: open.length ? ['builder'] : [],
      blocking: open.map((o) => o.fingerprint),
      concerns: open.length,
      calls: 3,
      resolved: [],
      forwarded: [],
    },
    ...(open.length
      ? ([
          { type: 'AdversarialRetryExhausted', at: at(t + 2), stage, reason: 'retries', retries: 0, calls: 3 },
        ] as AdversarialEvent[])
      : []),
    {
      type: 'AdversarialStageCompleted',
      at: at(t + 3),
      stage,
      outcome: open.length ? 'exhausted' : 'converged',
      rounds: 1,
      calls: 3,
      forwarded: open,
    },
  ];
}

describe('the adversarial event log and its reducer', () => {
  it('every event of the contract validates and reduces', () => {
    const events: AdversarialEvent[] = [
      gate,
      ...stageRun('plan-council', 10, [ref(1)]),
      { type: 'OscillationDetected', at: at(20), stage: 'plan-council', round: 2, blocking: [fp(1)] },
      { type: 'ConcernsAnswered', at: at(30), by: 'plan-review', addressed: [], carried: [fp(1)] },
      { type: 'ShippedWithKnownGap', at: at(40), pr: 12, concerns: [fp(1)] },
    ];
    for (const e of events) expect(adversarialEventSchema.safeParse(e).success).toBe(true);
    const s = reduceAdversarialEvents(events);
    expect(adversarialStateSchema.safeParse(s).success).toBe(true);
    // the oscillation arrived after the stage completed: ignored, not logged
    expect(s.counters.oscillations).toBe(0);
    expect(s.log.map((l) => l.type)).not.toContain('OscillationDetected');
  });

  it('a capped log drops the oldest events; counters and stage records stay exact', () => {
    let s = reduceAdversarial(emptyAdversarialState(), gate);
    const events: AdversarialEvent[] = [gate];
    // many issues' worth of stage runs and answers, far past the log's cap
    for (let i = 0; i < 30; i++) {
      const run = [
        ...stageRun(i % 2 ? 'plan-council' : 'discovery-council', i * 100, [ref(i + 1)]),
        { type: 'ConcernsAnswered', at: at(i * 100 + 50), by: 'plan-review', addressed: [fp(i + 1)], carried: [] },
      ] as AdversarialEvent[];
      // a finished stage runs again only on restart (a /retry)
      run[0] = { ...(run[0] as Extract<AdversarialEvent, { type: 'AdversarialStageStarted' }>), restart: true };
      for (const e of run) s = reduceAdversarial(s, e);
      events.push(...run);
    }
    expect(s.log).toHaveLength(ADVERSARIAL_LIMITS.log);
    expect(s.log.at(-1)).toMatchObject({ type: 'ConcernsAnswered', n: 1 });
    expect(s.counters).toMatchObject({
      events: events.length,
      gateRouted: 1,
      stagesStarted: 30,
      stagesCompleted: 30,
      roundsVoted: 30,
      retriesExhausted: 30,
      forwarded: 30,
      addressed: 30,
      calls: 90,
    });
    expect(droppedLogEntries(s)).toBe(events.length - ADVERSARIAL_LIMITS.log);
    expect(s.pending).toEqual([]);
    expect(s.resolutions).toHaveLength(ADVERSARIAL_LIMITS.resolutions);
    // the same as reducing everything at once
    expect(reduceAdversarialEvents(events)).toEqual(s);
  });

  it('re-delivered events change nothing and are not logged (idempotent)', () => {
    const run = [gate, ...stageRun('plan-council', 10, [ref(1)])];
    const once = reduceAdversarialEvents(run);
    expect(reduceAdversarialEvents(run, once)).toEqual(once);
    const shipped: AdversarialEvent = { type: 'ShippedWithKnownGap', at: at(90), pr: 7, concerns: [fp(1)] };
    const merged = reduceAdversarial(once, shipped);
    expect(reduceAdversarial(merged, { ...shipped, at: at(95) })).toEqual(merged);
    expect(merged.counters.shippedWithKnownGap).toBe(1);
    expect(merged.pending).toEqual([]);
  });

  it('forwarded concerns wait for their consumer: plan review carries to code review, code review to the merge', () => {
    let s = reduceAdversarialEvents([gate, ...stageRun('plan-council', 10, [ref(1), ref(2)])]);
    expect(s.pending.map((p) => p.must_address_by)).toEqual(['plan-review', 'plan-review']);
    // code review cannot answer what waits for plan review
    expect(
      reduceAdversarial(s, {
        type: 'ConcernsAnswered',
        at: at(20),
        by: 'code-review',
        addressed: [fp(1)],
        carried: [],
      }),
    ).toBe(s);
    s = reduceAdversarial(s, {
      type: 'ConcernsAnswered',
      at: at(21),
      by: 'plan-review',
      addressed: [fp(1)],
      carried: [fp(2)],
    });
    expect(s.pending).toEqual([ref(2, { must_address_by: 'code-review' })]);
    s = reduceAdversarial(s, {
      type: 'ConcernsAnswered',
      at: at(22),
      by: 'code-review',
      addressed: [],
      carried: [fp(2)],
    });
    expect(s.pending).toEqual([ref(2, { must_address_by: 'code-review', carried: true })]);
    expect(s.resolutions.map((r) => [r.how, r.by, r.to])).toEqual([
      ['addressed', 'plan-review', undefined],
      ['carried', 'plan-review', 'code-review'],
      ['carried', 'code-review', 'merge'],
    ]);
    expect(s.counters).toMatchObject({ addressed: 1, carried: 2 });
  });

  it('the gate event is recorded once per distinct decision; a label override replaces it', () => {
    let s = reduceAdversarialEvents([gate, gate]);
    expect(s.counters.gateRouted).toBe(1);
    s = reduceAdversarial(s, {
      type: 'ComplexityGateRouted',
      at: at(5),
      decision: 'trivial',
      source: 'label',
      reasons: ['label-skip'],
    });
    expect(s.gate).toEqual({ decision: 'trivial', source: 'label', reasons: ['label-skip'], at: at(5) });
    expect(s.counters.gateRouted).toBe(2);
  });
});

describe('the adversarial record in the signed state', () => {
  it('a v2 state written before the layer existed loads, reads as "not run", and keeps the record once written', () => {
    const old = encodeStateBlock(emptyState(42, REPO), { key: KEY });
    const d = decodeStateBlock(old, { key: KEY, issue: 42, repo: REPO });
    expect(d.status).toBe('valid');
    if (d.status !== 'valid') return;
    expect(d.state.adversarial).toBeUndefined();
    expect(adversarialOf(d.state)).toEqual(emptyAdversarialState());

    const next = withAdversarialEvents(d.state, [gate, ...stageRun('plan-council', 10, [ref(1)])]);
    const block = encodeStateBlock(next, { key: KEY });
    const back = decodeStateBlock(block, { key: KEY, issue: 42, repo: REPO });
    expect(back.status === 'valid' && back.state.adversarial).toEqual(next.adversarial);
  });

  it('a v1 block (the first release) and a v0 state still load, with no adversarial record', () => {
    const v1 = readFileSync(new URL('./fixtures/state-v1.txt', import.meta.url), 'utf8');
    const d = decodeStateBlock(v1, { key: 'release-1-key', issue: 7, repo: REPO });
    expect(d.status === 'valid' && adversarialOf(d.state)).toEqual(emptyAdversarialState());
    const v0 = migrateState({ version: 0, issue: 3, label: 'hydraflow-plan' }, { repo: REPO });
    expect(adversarialOf(v0)).toEqual(emptyAdversarialState());
  });

  it('the record migration: absent → empty, current → as is, newer or broken → refused with the state', () => {
    expect(migrateAdversarialRecord(undefined)).toEqual(emptyAdversarialState());
    const rec = reduceAdversarialEvents([gate]);
    expect(migrateAdversarialRecord(JSON.parse(JSON.stringify(rec)))).toEqual(rec);
    expect(migrateAdversarialRecord({ ...rec, v: 2 })).toBeUndefined();
    expect(migrateAdversarialRecord({ v: 1, stages: 'x' })).toBeUndefined();
    // the state schema refuses a newer record rather than dropping its pending concerns
    expect(() => migrateState({ ...emptyState(5, REPO), adversarial: { ...rec, v: 2 } })).toThrow(/adversarial/);
  });

  it('a full record stays small beside the rest of the state', () => {
    let s: AdversarialState = reduceAdversarialEvents([gate]);
    for (let i = 0; i < 40; i++)
      s = reduceAdversarialEvents(
        stageRun(i % 2 ? 'plan-council' : 'discovery-council', i * 10, [
          ref(i * 3 + 1),
          ref(i * 3 + 2),
          ref(i * 3 + 3),
        ]).map((e) => (e.type === 'AdversarialStageStarted' ? { ...e, restart: true } : e)),
        s,
      );
    expect(s.pending).toHaveLength(ADVERSARIAL_LIMITS.pending);
    const alone = encodeStateBlock({ ...emptyState(1, REPO), adversarial: s }, { key: KEY });
    const none = encodeStateBlock(emptyState(1, REPO), { key: KEY });
    expect(alone.length - none.length).toBeLessThan(12_000);
    expect(alone.length).toBeLessThan(MAX_STATE_BLOCK_CHARS);
  });
});
