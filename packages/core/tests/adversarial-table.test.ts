import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ADVERSARIAL_CALL_CEILING,
  ADVERSARIAL_RUNNING_LABELS,
  ADVERSARIAL_STAGE_NAMES,
  ADV_FORCE_LABEL,
  ADV_SKIP_LABEL,
  MAX_ADVERSARIAL_RETRIES,
  PIPELINE_LABELS,
  isAdversarialLabel,
  isAdversarialRunningLabel,
  isPipelineLabel,
  phaseFacts,
  retryCost,
  staleRunningLabels,
  stageSpec,
  stagesOfPhase,
  typicalIssueCalls,
  uncappedStageCalls,
  worstCaseIssueCalls,
  worstCaseStageCalls,
  firstRoundCalls,
  driveAdversarialStage,
  reduceAdversarialEvents,
  type AdversarialStageSpec,
  type AdversarialState,
} from '../src/index';

const ALL = ADVERSARIAL_STAGE_NAMES.map(stageSpec);

describe('the stage and voter table', () => {
  it('has the ADR-0064 stages, each in a phase of the phase table, with its phase’s transient label', () => {
    expect(ADVERSARIAL_STAGE_NAMES).toEqual([
      'assumptions-discover',
      'discovery-council',
      'shape-council',
      'assumptions-plan',
      'plan-council',
      'spec-judge',
    ]);
    for (const s of ALL) {
      expect(phaseFacts(s.phase).built).toBe(true);
      expect(s.label).toBe(`hydraflow-adv-${s.phase}-running`);
      expect(s.maxRetries).toBeLessThanOrEqual(MAX_ADVERSARIAL_RETRIES);
      expect(s.voters.length).toBeGreaterThan(0);
    }
    expect(stagesOfPhase('plan').map((s) => s.name)).toEqual(['assumptions-plan', 'plan-council', 'spec-judge']);
    expect(stageSpec('discovery-council').voters).toEqual([
      'problem-sharpener',
      'existing-solution-hunter',
      'cheapest-test-advocate',
    ]);
    expect(stageSpec('plan-council').voters).toEqual(['builder', 'tester', 'risk-skeptic']);
    expect(stageSpec('shape-council').voters).toEqual(['challenger', 'expert-council']);
  });

  it('the compiler checks a row: its phase hosts adversarial stages, its label is its phase’s', () => {
    const plan = stageSpec('plan-council');
    // @ts-expect-error a plan stage cannot carry the discover phase's label
    const wrongLabel: AdversarialStageSpec = { ...plan, phase: 'plan', label: 'hydraflow-adv-discover-running' };
    // @ts-expect-error review hosts no adversarial stage
    const wrongPhase: AdversarialStageSpec = { ...plan, phase: 'review', label: 'hydraflow-adv-review-running' };
    const four = 4 as const;
    // @ts-expect-error no more than three retries, ever
    const tooMany: AdversarialStageSpec = { ...plan, maxRetries: four };
    expect([wrongLabel, wrongPhase, tooMany]).toHaveLength(3);
  });

  it('the transient and override labels are not pipeline labels', () => {
    expect(ADVERSARIAL_RUNNING_LABELS.map((l) => l.name)).toEqual([
      'hydraflow-adv-discover-running',
      'hydraflow-adv-shape-running',
      'hydraflow-adv-plan-running',
    ]);
    for (const l of [...ADVERSARIAL_RUNNING_LABELS, ADV_FORCE_LABEL, ADV_SKIP_LABEL]) {
      expect(isPipelineLabel(l.name)).toBe(false);
      expect(isAdversarialLabel(l.name)).toBe(true);
    }
    for (const l of PIPELINE_LABELS) expect(isAdversarialLabel(l)).toBe(false);
    expect(isAdversarialRunningLabel('hydraflow-adv-force')).toBe(false);
  });

  it('staleRunningLabels: what a re-run or a close removes', () => {
    const labels = ['hydraflow-plan', 'hydraflow-adv-plan-running', 'hydraflow-adv-discover-running', 'bug'];
    expect(staleRunningLabels(labels)).toEqual(['hydraflow-adv-plan-running', 'hydraflow-adv-discover-running']);
    expect(staleRunningLabels(labels, ['plan'])).toEqual(['hydraflow-adv-discover-running']);
  });
});

describe('worst-case model calls', () => {
  it('holds the ADR’s ceiling (≤ 30) for a load-bearing issue on either track; trivial costs 0', () => {
    const product = worstCaseIssueCalls('load_bearing', 'product');
    const engineering = worstCaseIssueCalls('load_bearing', 'engineering');
    expect(product).toBeLessThanOrEqual(ADVERSARIAL_CALL_CEILING);
    expect(engineering).toBeLessThanOrEqual(product);
    expect(worstCaseIssueCalls('trivial', 'product')).toBe(0);
    expect(worstCaseIssueCalls('trivial', 'engineering')).toBe(0);
    expect(typicalIssueCalls('trivial', 'product')).toBe(0);
    // the numbers the ADR records (docs/adr/0018-adversarial-layer.md); change both together
    expect({ product, engineering, typicalProduct: typicalIssueCalls('load_bearing', 'product') }).toEqual({
      product: 28,
      engineering: 14,
      typicalProduct: 20,
    });
    expect(typicalIssueCalls('load_bearing', 'engineering')).toBe(10);
  });

  it('per stage: calls per round × rounds, capped by the stage budget, never above it', () => {
    const rows = ALL.map((s) => [s.name, firstRoundCalls(s), uncappedStageCalls(s), worstCaseStageCalls(s), s.budget]);
    expect(rows).toEqual([
      ['assumptions-discover', 1, 1, 1, 1],
      ['discovery-council', 3, 11, 7, 7],
      ['shape-council', 2, 8, 6, 6],
      ['assumptions-plan', 1, 1, 1, 1],
      ['plan-council', 3, 11, 7, 7],
      ['spec-judge', 2, 6, 6, 6],
    ]);
    for (const s of ALL) {
      expect(worstCaseStageCalls(s)).toBeLessThanOrEqual(s.budget);
      expect(firstRoundCalls(s)).toBeLessThanOrEqual(s.budget);
    }
  });

  it('every budget allows one full retry, and every retry the row allows to a single dissenter', () => {
    for (const s of ALL.filter((x) => x.maxRetries > 0)) {
      expect(firstRoundCalls(s) + retryCost(s.voters.length)).toBeLessThanOrEqual(s.budget);
      expect(firstRoundCalls(s) + s.maxRetries * retryCost(1)).toBeLessThanOrEqual(s.budget);
    }
  });

  it('the arithmetic follows the loop: a row with three retries and room for them spends them', () => {
    const three: AdversarialStageSpec = { ...stageSpec('plan-council'), maxRetries: 3, budget: 100 };
    expect(worstCaseStageCalls(three)).toBe(uncappedStageCalls(three));
    expect(uncappedStageCalls(three)).toBe(3 + 3 * 4);
  });
});

describe('the arithmetic against the loop itself', () => {
  const gated = (): AdversarialState =>
    reduceAdversarialEvents([
      {
        type: 'ComplexityGateRouted',
        at: '2026-11-27T10:00:00.000Z',
        decision: 'load_bearing',
        source: 'signals',
        reasons: ['complex'],
      },
    ]);

  it('property: whatever the voters answer, a stage never spends more than its worst case, and the state counts every call', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        fc.boolean(),
        async (spec, blocks, repeat) => {
          let state = gated();
          let calls = 0;
          let i = 0;
          await driveAdversarialStage(state, spec, {
            now: () => '2026-11-27T10:00:01.000Z',
            runAgent: async () => void calls++,
            vote: async ({ voter, round }) => {
              calls++;
              if (!blocks[i++ % blocks.length]) return [];
              // fresh wording each round unless `repeat` (then oscillation may end it sooner)
              const text = repeat ? `${voter} objects` : `${voter} objects in round ${round}`;
              return [
                {
                  voter,
                  stage: spec.name,
                  severity: 'high',
                  blocking: true,
                  text,
                  evidence: [],
                  must_address_by: null,
                },
              ];
            },
            load: async () => [],
            persist: async (x) => void (state = x.state),
          });
          expect(calls).toBeLessThanOrEqual(worstCaseStageCalls(spec));
          expect(state.stages[spec.name]!.calls).toBe(calls);
          expect(state.counters.calls).toBe(calls);
        },
      ),
      { numRuns: 200 },
    );
  });
});
