/**
 * The wide loop end to end, in the domain: a plan council that cannot settle forwards its concerns; the plan reviewer
 * addresses one and leaves one; code review's answer is junk, so what is left is carried to the merge; the merge
 * carries it over into knowledge once. The summary lines say so at each step.
 */
import { describe, expect, it } from 'vitest';
import {
  adversarialSummaryLines,
  carryoverDrafts,
  concernsAnswered,
  decideComplexity,
  driveAdversarialStage,
  fingerprint,
  gateEvent,
  pendingConcernsSection,
  pendingFor,
  reduceAdversarialEvents,
  shippedWithKnownGap,
  stageSpec,
  type AdversarialState,
  type Concern,
} from '../src/index';

const AT = '2026-11-27T10:00:00.000Z';
const PLAN = stageSpec('plan-council');

const risk: Concern = {
  voter: 'risk-skeptic',
  stage: 'plan-council',
  severity: 'high',
  blocking: true,
  text: 'Existing installs still read the old config key',
  evidence: ['.hydraflow.yml'],
  must_address_by: null,
};
const test: Concern = { ...risk, voter: 'tester', text: 'No test reads a config file written by v1', evidence: [] };

async function councilThatCannotSettle(): Promise<{ state: AdversarialState; concerns: Concern[] }> {
  let state = reduceAdversarialEvents([
    gateEvent(
      decideComplexity({ labels: [], triage: { clarity_score: 8, complexity_score: 6, needs_discovery: false } }),
      AT,
    ),
  ]);
  let concerns: Concern[] = [];
  await driveAdversarialStage(state, PLAN, {
    now: () => AT,
    runAgent: async () => {},
    // the same two objections every round: oscillation on round 2
    vote: async ({ voter }) => (voter === 'risk-skeptic' ? [risk] : voter === 'tester' ? [test] : []),
    load: async () => concerns,
    persist: async (x) => {
      state = x.state;
      concerns = x.concerns;
    },
  });
  return { state, concerns };
}

describe('the wide loop', () => {
  it('forwarded concerns are addressed or carried by plan review and code review, and what merges open is carried over once', async () => {
    const settled = await councilThatCannotSettle();
    const concerns = settled.concerns;
    let state = settled.state;
    expect(state.stages['plan-council']!.status).toBe('oscillated');
    expect(
      pendingFor(state, 'plan-review')
        .map((p) => p.fingerprint)
        .sort(),
    ).toEqual([fingerprint(risk), fingerprint(test)].sort());
    expect(adversarialSummaryLines(state)).toEqual([
      '**Adversarial review:** load-bearing (complex).',
      '',
      '| Stage | Outcome | Rounds | Retries | Model calls |',
      '| --- | --- | --- | --- | --- |',
      '| plan-council | oscillated | 2 | 1 | 6 |',
      '',
      'Concerns: 2 open (2 for plan review), 0 resolved in the loop, 0 addressed later, 0 carried on; 6 model calls.',
    ]);

    // the plan reviewer sees both, with ids; it addresses the tester's and does not answer the other
    const section = pendingConcernsSection(concerns, 'plan-review');
    expect(section).toContain(`id ${fingerprint(risk)} [high, Risk-Skeptic at plan-council]: ${risk.text}`);
    const planAnswer = {
      concerns: [{ id: fingerprint(test).toUpperCase(), verdict: 'addressed', why: 'the plan adds the test' }],
    };
    state = reduceAdversarialEvents(concernsAnswered(state, 'plan-review', planAnswer, AT), state);
    expect(pendingFor(state, 'plan-review')).toEqual([]);
    expect(pendingFor(state, 'code-review').map((p) => p.fingerprint)).toEqual([fingerprint(risk)]);

    // code review's answer is junk: the concern is carried to the merge, not closed
    state = reduceAdversarialEvents(concernsAnswered(state, 'code-review', 'LGTM', AT), state);
    expect(state.pending).toMatchObject([{ fingerprint: fingerprint(risk), carried: true }]);
    expect(concernsAnswered(state, 'code-review', 'LGTM again', AT)).toEqual([]); // already carried: nothing to do
    expect(state.counters).toMatchObject({ addressed: 1, carried: 2 });

    // the merge of #57: the open concern becomes knowledge, once
    const open = concerns.filter((c) => state.pending.some((p) => p.fingerprint === fingerprint(c)));
    expect(carryoverDrafts(57, open)).toHaveLength(1);
    const shipped = shippedWithKnownGap(state, 57, open, AT);
    state = reduceAdversarialEvents([...shipped, ...shipped], state);
    expect(state.pending).toEqual([]);
    expect(state.counters.shippedWithKnownGap).toBe(1);
    expect(adversarialSummaryLines(state).slice(-2)).toEqual([
      'Concerns: none open, 0 resolved in the loop, 1 addressed later, 2 carried on; 6 model calls.',
      'Shipped with known gaps: #57 (kept as low-confidence knowledge in memory).',
    ]);
  });

  it('a trivial issue says so and nothing else; an untouched one says nothing', () => {
    const trivial = reduceAdversarialEvents([gateEvent(decideComplexity({ labels: ['hydraflow-adv-skip'] }), AT)]);
    expect(adversarialSummaryLines(trivial)[0]).toBe(
      '**Adversarial review:** skipped, trivial (a human set hydraflow-adv-skip).',
    );
    expect(adversarialSummaryLines(reduceAdversarialEvents([]))).toEqual([]);
  });
});
