/**
 * The product track's pure pieces (docs/adr/0017-product-track-plan-and-spec-match.md): shape's direction block reads
 * back through its hash (an array block: plan/render.ts readDataBlock once read objects only), the signed-state test
 * of a product-track issue, and the 3–8 rule of its plan.
 */
import { describe, expect, it } from 'vitest';
import {
  decompositionProblems,
  productTrackSelection,
  readShapeData,
  renderShapeData,
  type ShapeDirection,
} from '@hydraflow/core';

const direction: ShapeDirection = {
  letter: 'B',
  name: 'Quick & Focused',
  scope: 'Just the MVP.',
  tradeoffs: 'Fast; less complete.',
  size: 'S',
  defer: false,
};
const spec = (n: number) => ({
  phase_number: n,
  title: `Phase ${n}`,
  description: 'Does a thing.',
  todos: [{ text: 'Do it', manual: false }],
});

describe('shape direction blocks', () => {
  it('read back what shape wrote, and nothing edited', () => {
    const { block, hash } = renderShapeData([direction]);
    expect(readShapeData(`Chosen.\n\n${block}`, hash)).toEqual([direction]);
    expect(readShapeData(`Chosen.\n\n${block.replace('MVP', 'whole thing')}`, hash)).toBeUndefined();
    expect(readShapeData(`Chosen.\n\n${block}`, '0'.repeat(64))).toBeUndefined();
  });
});

describe('productTrackSelection', () => {
  const selected = {
    letter: 'B',
    commentId: 1,
    hash: 'a'.repeat(64),
    by: 'lee',
    at: '2026-01-01T00:00:00.000Z',
    via: 'comment',
  } as const;
  const shape = {
    commentId: 1,
    hash: 'a'.repeat(64),
    letters: ['A', 'B'],
    turns: 0,
    replies: [],
    waitingSince: selected.at,
  } as const;
  it('needs a chosen direction and the decomposition flag in the state', () => {
    expect(productTrackSelection(undefined)).toBeUndefined();
    expect(productTrackSelection({})).toBeUndefined();
    expect(productTrackSelection({ shape: { ...shape, letters: ['A', 'B'], replies: [] } })).toBeUndefined();
    expect(productTrackSelection({ shape: { ...shape, letters: ['A', 'B'], replies: [], selected } })).toBeUndefined();
    expect(
      productTrackSelection({ shape: { ...shape, letters: ['A', 'B'], replies: [], selected, decomposition: true } }),
    ).toEqual(selected);
  });
});

describe('decompositionProblems', () => {
  it('3 to 8 concrete phases', () => {
    expect(decompositionProblems({ summary: 's', sub_issues: [1, 2, 3].map(spec) }).problems).toEqual([]);
    expect(decompositionProblems({ summary: 's', sub_issues: [1, 2].map(spec) }).problems[0]).toMatch(/at least 3/);
    expect(
      decompositionProblems({ summary: 's', sub_issues: [1, 2, 3, 4, 5, 6, 7, 8, 9].map(spec) }).problems[0],
    ).toMatch(/at most 8/);
    // a repeated phase number is one phase
    expect(decompositionProblems({ summary: 's', sub_issues: [1, 2, 2].map(spec) }).problems[0]).toMatch(
      /2 sub-issues/,
    );
    expect(
      decompositionProblems({ summary: 's', sub_issues: [1, 2, 3].map((n) => ({ ...spec(n), todos: [] })) }).problems,
    ).toHaveLength(3);
  });
});

describe('issueTrack (the progress comment’s Track row)', () => {
  it('product once it took the product track, engineering once routed directly, junction before', async () => {
    const { issueTrack } = await import('@hydraflow/core');
    const at = '2026-01-01T00:00:00.000Z';
    const triage = (route: string) => ({ route, at });
    expect(issueTrack({}, 'find')).toBe('junction');
    expect(issueTrack({}, null)).toBe('junction');
    expect(issueTrack({}, 'shape')).toBe('product');
    expect(issueTrack({ triage: triage('discover') }, 'hitl')).toBe('product');
    expect(issueTrack({ triage: triage('discover'), shape: {} }, 'plan')).toBe('product');
    expect(issueTrack({ triage: triage('plan') }, 'plan')).toBe('engineering');
    expect(issueTrack({}, 'review')).toBe('engineering');
  });
});
