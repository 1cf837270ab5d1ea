import { describe, expect, it } from 'vitest';
import {
  driveAdversarialStage,
  emptyAdversarialState,
  fingerprint,
  gateEvent,
  decideComplexity,
  nextAdversarialStep,
  parseVoterAnswer,
  reduceAdversarialEvents,
  stageSpec,
  ConcernsUnavailableError,
  type AdversarialEvent,
  type AdversarialStageSpec,
  type AdversarialState,
  type Concern,
  type StageIO,
  type VoterName,
} from '../src/index';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');

const loadBearing = (): AdversarialState =>
  reduceAdversarialEvents([
    gateEvent(decideComplexity({ labels: ['hydraflow-adv-force'] }), new Date(T0).toISOString()),
  ]);

const c = (voter: VoterName, text: string, over: Partial<Concern> = {}): Concern => ({
  voter,
  stage: 'plan-council',
  severity: 'high',
  blocking: true,
  text,
  evidence: [],
  must_address_by: null,
  ...over,
});

type Answer = Concern[] | { raw: unknown };
type Script = (voter: VoterName, round: number) => Answer;

/**
 * The test world: a scripted model (every call it answers is recorded, with what it was shown) and the issue's
 * persisted state and concerns comment. `crash` throws at a named point once, as a killed runner would.
 */
function world(spec: AdversarialStageSpec, script: Script, initial: AdversarialState = loadBearing()) {
  const w = {
    state: initial,
    concerns: [] as Concern[],
    calls: [] as { who: string; round: number; shown: string[] }[],
    events: [] as AdversarialEvent[],
    crash: undefined as undefined | { at: 'agent' | 'vote' | 'persist'; n: number },
    clock: 0,
  };
  const maybeCrash = (at: 'agent' | 'vote' | 'persist') => {
    if (w.crash && w.crash.at === at && --w.crash.n === 0) {
      w.crash = undefined;
      throw new Error(`runner killed during ${at}`);
    }
  };
  const io: StageIO = {
    now: () => new Date(T0 + ++w.clock * 1000).toISOString(),
    runAgent: async ({ retry, concerns }) => {
      w.calls.push({ who: spec.agent, round: retry, shown: concerns.map((x) => x.text) });
      maybeCrash('agent');
    },
    vote: async ({ voter, round, previous }) => {
      w.calls.push({ who: voter, round, shown: previous.map((x) => x.text) });
      maybeCrash('vote');
      const answer = script(voter, round);
      if (!Array.isArray(answer)) return parseVoterAnswer(spec, voter, answer.raw).concerns;
      return answer.map((x) => ({ ...x, voter, stage: spec.name }));
    },
    load: async () => w.concerns,
    persist: async ({ state, events, concerns }) => {
      maybeCrash('persist');
      w.state = state;
      w.concerns = concerns;
      w.events.push(...events);
    },
  };
  return { w, io, run: () => driveAdversarialStage(w.state, spec, io) };
}

const PLAN = stageSpec('plan-council');
const types = (events: readonly AdversarialEvent[]) => events.map((e) => e.type);

describe('AdversarialRetryLoop', () => {
  it('converges after one revision: the Risk-Skeptic blocks, the planner revises, the concern resolves', async () => {
    const risk = c('risk-skeptic', 'Renaming the config key breaks every existing install');
    const { w, run } = world(PLAN, (voter, round) => (voter === 'risk-skeptic' && round === 1 ? [risk] : []));
    expect(await run()).toMatchObject({ outcome: 'converged' });
    // round 1: all three voters; the planner with the concern; round 2: only the voter that blocked
    expect(w.calls.map((x) => `${x.round}:${x.who}`)).toEqual([
      '1:builder',
      '1:tester',
      '1:risk-skeptic',
      '1:planner',
      '2:risk-skeptic',
    ]);
    expect(w.calls[3]!.shown).toEqual([risk.text]);
    expect(w.calls[4]!.shown).toEqual([risk.text]); // its own concern, to say whether it still holds
    const rec = w.state.stages['plan-council']!;
    expect(rec).toMatchObject({ status: 'converged', retries: 1, agentRuns: 1, calls: 5, next: null });
    expect(rec.rounds.map((r) => [r.blocked, r.blocking])).toEqual([
      [1, []],
      [0, []],
    ]);
    expect(w.state.pending).toEqual([]);
    expect(w.state.resolutions).toMatchObject([
      { fingerprint: fingerprint(risk), how: 'resolved', by: 'plan-council' },
    ]);
    expect(types(w.events)).toEqual([
      'AdversarialStageStarted',
      'AdversarialRoundVoted',
      'AdversarialAgentRan',
      'AdversarialRoundVoted',
      'AdversarialStageCompleted',
    ]);
    expect(w.state.counters).toMatchObject({ calls: 5, resolved: 1, forwarded: 0, stagesCompleted: 1 });
  });

  it('exhausts three retries and forwards what is still open to the plan reviewer', async () => {
    const spec: AdversarialStageSpec = { ...PLAN, maxRetries: 3, budget: 20 };
    const { w, run } = world(spec, (voter, round) =>
      voter === 'tester' ? [c('tester', `Criterion ${'ABCD'[round - 1]} has no test`)] : [],
    );
    expect(await run()).toMatchObject({ outcome: 'exhausted' });
    const rec = w.state.stages['plan-council']!;
    expect(rec).toMatchObject({ status: 'exhausted', retries: 3, agentRuns: 3 });
    expect(rec.rounds).toHaveLength(4);
    expect(w.calls.filter((x) => x.who === 'planner')).toHaveLength(3);
    const last = c('tester', 'Criterion D has no test');
    expect(w.state.pending).toEqual([
      {
        fingerprint: fingerprint(last),
        stage: 'plan-council',
        voter: 'tester',
        severity: 'high',
        blocking: true,
        must_address_by: 'plan-review',
        round: 4,
      },
    ]);
    expect(w.events.find((e) => e.type === 'AdversarialRetryExhausted')).toMatchObject({
      reason: 'retries',
      retries: 3,
    });
    // the reviewer's text comes from the stage's concerns comment (its data block), by fingerprint
    expect(w.concerns.map(fingerprint)).toContain(fingerprint(last));
    expect(w.state.counters).toMatchObject({ retriesExhausted: 1, forwarded: 1, resolved: 3, calls: 3 + 6 });
  });

  it('detects oscillation on round 2 (same concerns, reworded) without spending round 3', async () => {
    const spec: AdversarialStageSpec = { ...PLAN, maxRetries: 3, budget: 20 };
    const { w, run } = world(spec, (voter, round) => {
      if (voter !== 'builder') return [];
      return round === 1
        ? [
            c('builder', 'The plan imports `parseConfig` from a module that does not export it', {
              evidence: ['src/a.ts', 'step 2'],
            }),
          ]
        : [
            c('builder', '1. The plan imports "parseConfig" from a module that does NOT export it.', {
              evidence: ['Step 2', 'src/a.ts:14'],
            }),
          ];
    });
    expect(await run()).toMatchObject({ outcome: 'oscillated' });
    expect(w.state.stages['plan-council']).toMatchObject({ status: 'oscillated', retries: 1 });
    expect(w.calls.filter((x) => x.round === 3)).toEqual([]);
    expect(w.calls.filter((x) => x.who === 'planner')).toHaveLength(1);
    expect(types(w.events)).toContain('OscillationDetected');
    expect(types(w.events)).not.toContain('AdversarialRetryExhausted');
    expect(w.state.pending).toHaveLength(1);
    expect(w.state.counters.oscillations).toBe(1);
  });

  it('stops before a retry that would pass the stage budget, visibly, and forwards', async () => {
    // the table's plan council: budget 7 = one full retry of three voters; they all keep objecting, anew each round
    const { w, run } = world(PLAN, (voter, round) => [c(voter, `${voter} objection ${round}`)]);
    expect(await run()).toMatchObject({ outcome: 'budget' });
    expect(w.state.stages['plan-council']).toMatchObject({ status: 'budget', calls: 7, retries: 1 });
    expect(w.calls).toHaveLength(7);
    expect(w.events.find((e) => e.type === 'AdversarialRetryExhausted')).toMatchObject({ reason: 'budget', calls: 7 });
    expect(w.state.pending.map((p) => p.voter).sort()).toEqual(['builder', 'risk-skeptic', 'tester']);
  });

  it('a stage with no retries forwards its blocking concerns at once (the assumption surfacer)', async () => {
    const spec = stageSpec('assumptions-plan');
    const { w, run } = world(spec, () => ({
      raw: {
        assumptions: [
          {
            assumption: 'The API is only called by our CLI',
            how_to_check: 'search the org for callers',
            load_bearing: true,
            checked: false,
          },
          {
            assumption: 'Node 20 is the oldest runtime',
            how_to_check: 'read engines in package.json',
            load_bearing: false,
            checked: true,
          },
        ],
      },
    }));
    expect(await run()).toMatchObject({ outcome: 'exhausted' });
    expect(w.calls).toHaveLength(1);
    expect(w.state.pending).toMatchObject([
      { voter: 'assumption-surfacer', must_address_by: 'plan-review', severity: 'high' },
    ]);
    expect(w.concerns.find((x) => x.blocking)!.evidence).toEqual(['how to check: search the org for callers']);
  });

  it('a trivial issue runs no stage and calls no model', async () => {
    const trivial = reduceAdversarialEvents([
      gateEvent(decideComplexity({ labels: ['hydraflow-adv-skip'] }), '2026-11-27T10:00:00.000Z'),
    ]);
    const { w, run } = world(PLAN, () => [c('builder', 'never asked')], trivial);
    expect(await run()).toMatchObject({ outcome: 'skip' });
    expect(w.calls).toEqual([]);
    expect(w.state.stages).toEqual({});
  });

  it('refuses to run before the complexity gate decided', async () => {
    const { run } = world(PLAN, () => [], emptyAdversarialState());
    await expect(run()).rejects.toThrow(/complexity gate has not decided/);
  });
});

describe('SpecJudge: a junk answer fails closed', () => {
  const SPEC = stageSpec('spec-judge');

  it('an unreadable judge blocks; unreadable twice is oscillation, forwarded to code review', async () => {
    const { w, run } = world(SPEC, () => ({ raw: 'Looks consistent to me!' }));
    expect(await run()).toMatchObject({ outcome: 'oscillated' });
    // the criteria generator's first run is the layer's own; then judge, generator (revision), judge
    expect(w.calls.map((x) => `${x.round}:${x.who}`)).toEqual([
      '0:spec-ac-generator',
      '1:spec-judge',
      '1:spec-ac-generator',
      '2:spec-judge',
    ]);
    expect(w.state.pending).toMatchObject([
      { voter: 'spec-judge', severity: 'high', blocking: true, synthetic: true, must_address_by: 'code-review' },
    ]);
    expect(w.state.stages['spec-judge']).toMatchObject({ calls: 4, agentRuns: 2 });
  });

  it('a readable verdict converges', async () => {
    const { w, run } = world(SPEC, () => ({ raw: '```json\n{"consistent": true, "concerns": []}\n```' }));
    expect(await run()).toMatchObject({ outcome: 'converged' });
    expect(w.state.pending).toEqual([]);
    expect(w.calls).toHaveLength(2);
  });
});

describe('a council voter whose answer is junk', () => {
  it('does not block, but its unchecked angle is forwarded to the plan reviewer', async () => {
    const { w, run } = world(PLAN, (voter) => (voter === 'tester' ? { raw: '<html>502</html>' } : []));
    expect(await run()).toMatchObject({ outcome: 'converged' });
    expect(w.calls).toHaveLength(3);
    expect(w.state.pending).toMatchObject([
      { voter: 'tester', severity: 'medium', blocking: false, synthetic: true, must_address_by: 'plan-review' },
    ]);
    expect(w.concerns.find((x) => x.synthetic)!.text).toMatch(/Tester's answer could not be read/);
  });
});

describe('resuming after a crash mid-stage', () => {
  const script: Script = (voter, round) =>
    voter === 'risk-skeptic' && round === 1 ? [c('risk-skeptic', 'Deletes user data without a backup')] : [];

  it('a crash while voting round 2 resumes at round 2: no restart, nothing counted twice', async () => {
    const first = world(PLAN, script);
    first.w.crash = { at: 'vote', n: 4 }; // the 4th voter call: round 2's
    await expect(first.run()).rejects.toThrow(/runner killed/);
    expect(first.w.state.stages['plan-council']).toMatchObject({
      status: 'running',
      next: 'vote',
      retries: 1,
      calls: 4,
    });

    // the next run starts from what was persisted (the signed state and the concerns comment)
    const again = world(PLAN, script, first.w.state);
    again.w.concerns = first.w.concerns;
    expect(await again.run()).toMatchObject({ outcome: 'converged' });
    expect(again.w.calls.map((x) => `${x.round}:${x.who}`)).toEqual(['2:risk-skeptic']);
    expect(again.w.calls[0]!.shown).toEqual(['Deletes user data without a backup']);
    const rec = again.w.state.stages['plan-council']!;
    expect(rec).toMatchObject({ status: 'converged', retries: 1, agentRuns: 1, calls: 5 });
    expect(rec.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(again.w.state.counters).toMatchObject({
      stagesStarted: 1,
      roundsVoted: 2,
      agentRuns: 1,
      stagesCompleted: 1,
    });
  });

  it('a crash during the revision re-runs the revision, not round 1', async () => {
    const first = world(PLAN, script);
    first.w.crash = { at: 'agent', n: 1 };
    await expect(first.run()).rejects.toThrow(/runner killed/);
    expect(nextAdversarialStep(first.w.state, PLAN)).toMatchObject({ kind: 'agent', retry: 1 });
    const again = world(PLAN, script, first.w.state);
    again.w.concerns = first.w.concerns;
    expect(await again.run()).toMatchObject({ outcome: 'converged' });
    expect(again.w.calls.map((x) => `${x.round}:${x.who}`)).toEqual(['1:planner', '2:risk-skeptic']);
    expect(again.w.state.stages['plan-council']).toMatchObject({ retries: 1, agentRuns: 1 });
  });

  it('a crash after the state was written changes nothing: the write is the step', async () => {
    const first = world(PLAN, script);
    first.w.crash = { at: 'persist', n: 2 }; // round 1's write is lost: round 1 is asked again, once
    await expect(first.run()).rejects.toThrow(/runner killed/);
    const again = world(PLAN, script, first.w.state);
    again.w.concerns = first.w.concerns;
    expect(await again.run()).toMatchObject({ outcome: 'converged' });
    expect(again.w.state.stages['plan-council']!.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(again.w.state.counters.roundsVoted).toBe(2);
  });

  it('a re-run of a finished stage does nothing', async () => {
    const first = world(PLAN, script);
    await first.run();
    const again = world(PLAN, script, first.w.state);
    expect(await again.run()).toMatchObject({ outcome: 'converged' });
    expect(again.w.calls).toEqual([]);
  });

  it('concerns the state names but the comment lost stop the stage with a clear error, before any call', async () => {
    const first = world(PLAN, script);
    first.w.crash = { at: 'agent', n: 1 };
    await expect(first.run()).rejects.toThrow(/runner killed/);
    const again = world(PLAN, script, first.w.state); // the concerns comment was deleted
    await expect(again.run()).rejects.toBeInstanceOf(ConcernsUnavailableError);
    expect(again.w.calls).toEqual([]);
  });
});
