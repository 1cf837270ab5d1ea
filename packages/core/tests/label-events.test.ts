import { describe, expect, it } from 'vitest';
import { lastLabelEvent, pipelineLabelRemained, type LabelEvent } from '../src/index';

const ev = (event: LabelEvent['event'], label: string, actor: string): LabelEvent => ({ event, label, actor });

describe('label events', () => {
  const events = [
    ev('labeled', 'hydraflow-discover', 'tina'),
    ev('labeled', 'hydraflow-plan', 'github-actions[bot]'),
    ev('labeled', 'bug', 'tina'),
    ev('unlabeled', 'hydraflow-plan', 'alice'),
    ev('unlabeled', 'hydraflow-discover', 'github-actions[bot]'),
    ev('labeled', 'Hydraflow-Plan', 'lee'),
    ev('unlabeled', 'hydraflow-plan', 'alice'),
  ];

  it('finds the latest event of a kind for a label, whatever its case', () => {
    expect(lastLabelEvent(events, 'hydraflow-plan', 'labeled')).toEqual({ actor: 'lee', index: 5 });
    expect(lastLabelEvent(events, 'hydraflow-plan', 'unlabeled')).toEqual({ actor: 'alice', index: 6 });
    expect(lastLabelEvent(events, 'hydraflow-hitl', 'labeled')).toBeUndefined();
  });

  it('says whether another pipeline label was on the issue right after a removal (other labels do not count)', () => {
    expect(pipelineLabelRemained(events, 3, 'hydraflow-plan')).toBe(true); // discover still on
    expect(pipelineLabelRemained(events, 6, 'hydraflow-plan')).toBe(false); // only bug left
    expect(pipelineLabelRemained([], 0, 'hydraflow-plan')).toBe(false);
  });
});
