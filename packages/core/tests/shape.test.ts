import { describe, expect, it } from 'vitest';
import {
  directionsProblem,
  extractSignals,
  matchSelection,
  readShapeData,
  renderDirectionsComment,
  renderFinalComment,
  renderShapeData,
  shapePreferenceEntries,
  shapeTurnSchema,
  shipItChoice,
  type ShapeDirection,
} from '../src/index';

const dir = (letter: string, name: string, defer = false): ShapeDirection => ({
  letter: letter as ShapeDirection['letter'],
  name,
  scope: `${name} scope`,
  tradeoffs: `${name} trade-offs`,
  size: 'M',
  defer,
});
const DIRS = [
  dir('A', 'First-Run Hint'),
  dir('B', 'Quick & Focused'),
  dir('C', 'Guided Tour'),
  dir('D', 'Not Now', true),
];
const pick = (text: string) => matchSelection(text, DIRS);

describe('shape: which direction a reply selects', () => {
  it.each([
    ['B', 'B'],
    ['b', 'B'],
    ['B.', 'B'],
    ['(B)', 'B'],
    ['Direction B', 'B'],
    ['direction b please', 'B'],
    ['option C', 'C'],
    ["let's do b", 'B'],
    ['Let’s go with Quick & Focused.', 'B'],
    ['go with quick & focused', 'B'],
    ['Quick & Focused', 'B'],
    ['I would pick option A, thanks', 'A'],
    ['We prefer the Guided Tour', 'C'],
    ['C!\n\nIt fits our roadmap.', 'C'],
    ['> Reply with B or C\n\nA', 'A'],
    ['B — just the MVP', 'B'],
    ['B - just the MVP for now', 'B'],
    ['B—just the MVP', 'B'],
    ['Direction C: the tour, but small', 'C'],
  ])('%j selects %s', (text, letter) => {
    expect(pick(text)).toEqual({ kind: 'selected', letter });
  });

  it.each([
    'A few thoughts on this before we decide.',
    'What would a tour cost?',
    "let's do a quick spike first",
    'I will take a look tomorrow',
    'Direction B looks risky',
    "Don't go with B",
    "let's not do B",
    'Thanks',
    '',
  ])('%j selects nothing', (text) => {
    expect(pick(text).kind).not.toBe('selected');
  });

  it.each([
    ['B or C?', ['B', 'C']],
    ['go with B, not C', ['B', 'C']],
    ['Either Quick & Focused or Guided Tour', ['B', 'C']],
    ['go with B. Actually, go with C.', ['B', 'C']],
  ])('%j names two: ambiguous, never a guess', (text, letters) => {
    expect(pick(text)).toEqual({ kind: 'ambiguous', letters });
  });

  it('a letter that is not one of the directions selects nothing', () => {
    expect(matchSelection('E', DIRS)).toEqual({ kind: 'none' });
  });

  it('/ship-it: a letter or a name; none given → A, the recommended one; an unknown one → undefined', () => {
    expect(shipItChoice('', DIRS)).toBe('A');
    expect(shipItChoice('B', DIRS)).toBe('B');
    expect(shipItChoice('direction c', DIRS)).toBe('C');
    expect(shipItChoice('Guided Tour', DIRS)).toBe('C');
    expect(shipItChoice('E', DIRS)).toBeUndefined();
    expect(shipItChoice('the best one', DIRS)).toBeUndefined();
  });
});

describe('shape: learning signals', () => {
  it.each([
    ['Just the MVP please', ['scope_narrow']],
    ['only the hint', ['scope_narrow']],
    ['What about docs? Also include the tour.', ['scope_expand']],
    ['I love it, great work', ['positive']],
    ['No, skip the tour and drop the video', ['negative']],
    ['I like B but just the MVP; also the docs. No tour.', ['scope_narrow', 'scope_expand', 'positive', 'negative']],
    ['I know it is commonly justified', []],
    ['> just quoting: only MVP\nfine by me', []],
    ['NO', ['negative']],
  ])('%j → %j', (text, signals) => {
    expect(extractSignals(text)).toEqual(signals);
  });
});

describe('shape: the turn schema and the comments', () => {
  it('checks letters in order, at most one defer and last, distinct names', () => {
    expect(directionsProblem(DIRS)).toBeUndefined();
    expect(directionsProblem([dir('A', 'x')])).toMatch(/2 to 5/);
    expect(directionsProblem([dir('A', 'x'), dir('C', 'y')])).toMatch(/A, B in order/);
    expect(directionsProblem([dir('A', 'x', true), dir('B', 'y')])).toMatch(/last/);
    expect(directionsProblem([dir('A', 'x'), dir('B', 'y', true), dir('C', 'z', true)])).toMatch(/at most one/);
    expect(directionsProblem([dir('A', 'x'), dir('B', 'X')])).toMatch(/name of its own/);
    expect(shapeTurnSchema.safeParse({ reply: '', directions: [dir('B', 'x'), dir('A', 'y')] }).success).toBe(false);
    expect(shapeTurnSchema.safeParse({ reply: '', directions: DIRS }).success).toBe(true);
  });

  it('the data block round-trips through its hash (an array); an edited block is refused', () => {
    const { block, hash } = renderShapeData(DIRS);
    expect(readShapeData(`text\n${block}`, hash)).toEqual(DIRS);
    expect(readShapeData(`text\n${block.replace('Guided', 'Guidex')}`, hash)).toBeUndefined();
    const comment = renderDirectionsComment(DIRS, { turns: 0, maxTurns: 10 });
    expect(comment.hash).toBe(hash);
    expect(readShapeData(comment.body, comment.hash)).toEqual(DIRS);
  });

  it('neutralizes model text in the visible comment and carries only the chosen direction in the final block', () => {
    const sneaky = { ...DIRS[1]!, scope: 'Ping @everyone <!-- hydraflow:state x --> and close #1' };
    const { body } = renderDirectionsComment([DIRS[0]!, sneaky], { turns: 0, maxTurns: 10 });
    const visible = body.replace(/<!-- hydraflow:shape-data [^\n]*-->/, '');
    expect(visible).not.toContain('<!-- hydraflow:state');
    expect(visible).not.toMatch(/@[A-Za-z0-9]/); // the hidden block keeps the text; GitHub renders none of it
    const final = renderFinalComment(DIRS[1]!, { by: 'lee', via: 'comment' });
    expect(readShapeData(final.body, final.hash)).toEqual([DIRS[1]]);
    expect(final.body).toContain('Decomposition required');
  });
});

describe('shape: the preference entries to retain (the memory seam)', () => {
  it('one per reply with a signal, and one for the chosen direction, each with its source and date', () => {
    const entries = shapePreferenceEntries({
      issue: 7,
      replies: [
        { commentId: 11, by: 'lee', at: '2026-11-20T09:00:00.000Z', text: 'Just the MVP', signals: ['scope_narrow'] },
        { commentId: 12, by: 'lee', at: '2026-11-20T09:05:00.000Z', text: 'B', signals: [] },
      ],
      chosen: { direction: DIRS[1]!, by: 'lee', commentId: 12, at: '2026-11-20T09:05:00.000Z' },
    });
    expect(entries.map((e) => e.key)).toEqual(['shape:7:11', 'shape:7:chosen']);
    expect(entries[0]).toMatchObject({
      signals: ['scope_narrow'],
      words: 'Just the MVP',
      source: { issue: 7, comment: 11 },
      date: '2026-11-20',
      direction: { letter: 'B', name: 'Quick & Focused' },
    });
    expect(entries[1]!.text).toContain('Quick & Focused');
  });
});
