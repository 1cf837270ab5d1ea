import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  PIPELINE_LABELS,
  PIPELINE_STAGES,
  TRANSITIONS,
  canTransition,
  currentStage,
  labelFor,
  labelsToRemoveAfterAdd,
  pipelineLabelsOf,
  planLabelChange,
  type PipelineStage,
} from '../src/index';

const stages = PIPELINE_STAGES.map((s) => s.stage);

describe('transition table', () => {
  it('matches ADR-0002 + ADR-0031, with grooming (docs/grooming.md)', () => {
    expect(TRANSITIONS.find).toEqual(['discover', 'groom', 'plan', 'hitl']);
    expect(TRANSITIONS.groom).toEqual(['plan', 'epic', 'hitl']);
    expect(TRANSITIONS.epic).toEqual(['fixed']);
    expect(TRANSITIONS.discover).toEqual(['shape', 'hitl']);
    expect(TRANSITIONS.shape).toEqual(['plan', 'hitl']);
    expect(TRANSITIONS.plan).toEqual(['ready', 'epic', 'hitl']); // epic: a product-track issue split into sub-issues
    expect(TRANSITIONS.ready).toEqual(['review', 'hitl', 'plan']); // plan: edited after its plan was accepted (ADR 0004)
    expect([...TRANSITIONS.review].sort()).toEqual(['fixed', 'hitl', 'ready']);
    expect([...TRANSITIONS.hitl].sort()).toEqual(stages.filter((s) => s !== 'hitl').sort());
    expect(TRANSITIONS.fixed).toEqual([]);
  });

  it('HydraFlow follows the table; humans may go anywhere', () => {
    expect(canTransition('find', 'plan', 'hydraflow')).toBe(true);
    expect(canTransition('find', 'ready', 'hydraflow')).toBe(false);
    expect(canTransition('fixed', 'ready', 'hydraflow')).toBe(false);
    expect(canTransition('review', 'ready', 'hydraflow')).toBe(true);
    expect(canTransition('plan', 'plan', 'hydraflow')).toBe(true);
    expect(canTransition(null, 'discover', 'hydraflow')).toBe(true);
    expect(canTransition(null, 'find', 'hydraflow')).toBe(true);
    expect(canTransition('plan', null, 'hydraflow')).toBe(false);
    for (const from of [...stages, null] as (PipelineStage | null)[])
      for (const to of [...stages, null] as (PipelineStage | null)[])
        expect(canTransition(from, to, 'human')).toBe(true);
  });
});

describe('planLabelChange', () => {
  it('is a no-op when already correct', () => {
    expect(planLabelChange(['bug', 'hydraflow-plan'], 'plan')).toEqual({ add: [], remove: [] });
    expect(planLabelChange(['bug'], null)).toEqual({ add: [], remove: [] });
  });
  it('swaps and keeps human labels', () => {
    expect(planLabelChange(['bug', 'hydraflow-find', 'hydraflow-hitl'], 'plan')).toEqual({
      add: ['hydraflow-plan'],
      remove: ['hydraflow-find', 'hydraflow-hitl'],
    });
    expect(planLabelChange(['hydraflow-review', 'p1'], null)).toEqual({ add: [], remove: ['hydraflow-review'] });
  });
  it('treats label names case-insensitively and removes with the original spelling', () => {
    expect(planLabelChange(['HydraFlow-Plan', 'hydraflow-find'], 'plan')).toEqual({
      add: [],
      remove: ['hydraflow-find'],
    });
    expect(pipelineLabelsOf(['HYDRAFLOW-READY', 'hydraflow-x', 'bug'])).toEqual(['HYDRAFLOW-READY']);
  });
  it('currentStage reports ambiguity', () => {
    expect(currentStage(['bug'])).toEqual({ stage: null, ambiguous: false });
    expect(currentStage(['hydraflow-plan'])).toEqual({ stage: 'plan', ambiguous: false });
    expect(currentStage(['hydraflow-plan', 'hydraflow-ready']).ambiguous).toBe(true);
  });

  const humanLabel = fc.oneof(
    fc.constantFrom('bug', 'enhancement', 'hydraflow', 'hydraflow-', 'hydraflow-other', 'p1', 'needs-info'),
    fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !PIPELINE_LABELS.some((l) => l === s.toLowerCase())),
  );
  const anyLabel = fc.oneof(humanLabel, fc.constantFrom(...PIPELINE_LABELS));
  const target = fc.constantFrom<PipelineStage | null>(...stages, null);

  it('property: applying the change leaves exactly the target pipeline label and every human label', () => {
    fc.assert(
      fc.property(fc.uniqueArray(anyLabel, { maxLength: 12 }), target, (labels, t) => {
        const { add, remove } = planLabelChange(labels, t);
        const after = [...labels.filter((l) => !remove.includes(l)), ...add];
        const pipeline = pipelineLabelsOf(after);
        expect(pipeline).toEqual(t === null ? [] : [labelFor(t)]);
        for (const l of labels) if (pipelineLabelsOf([l]).length === 0) expect(after).toContain(l);
        for (const r of remove) expect(pipelineLabelsOf([r])).toEqual([r]);
        // idempotent
        expect(planLabelChange(after, t)).toEqual({ add: [], remove: [] });
      }),
    );
  });

  it('property: add-first-then-remove converges even with concurrent human edits', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(anyLabel, { maxLength: 10 }),
        fc.uniqueArray(anyLabel, { maxLength: 4 }),
        target,
        (labels, concurrent, t) => {
          const { add } = planLabelChange(labels, t);
          // GitHub's response to the POST: the labels at that moment, including what a human added meanwhile.
          const afterAdd = [...new Set([...labels, ...concurrent, ...add])];
          const toRemove = labelsToRemoveAfterAdd(afterAdd, t);
          const final = afterAdd.filter((l) => !toRemove.includes(l));
          expect(pipelineLabelsOf(final)).toEqual(t === null ? [] : [labelFor(t)]);
          for (const l of afterAdd) if (pipelineLabelsOf([l]).length === 0) expect(final).toContain(l);
        },
      ),
    );
  });
});
