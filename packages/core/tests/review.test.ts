import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decodeStateBlock,
  distinctFindings,
  emptyState,
  encodeStateBlock,
  findingKey,
  findingSchema,
  findingsHash,
  newFindings,
  parseDiffLines,
  annotatePatch,
  placeFindings,
  readReviewFindings,
  renderFindingComment,
  renderReviewBody,
  REVIEW_MARKER,
  reviewExit,
  reviewScore,
  reviewSettingsFrom,
  roundOf,
  type Finding,
  type ReviewRound,
} from '../src/index';

function finding(over: Partial<Finding> = {}): Finding {
  return {
    severity: 'high',
    path: 'src/a.ts',
    line: 3,
    title: 'Null check missing',
    recommendation: 'Check for null before use.',
    needs_human_decision: false,
    ...over,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// parseDiffLines

const PATCH = [
  '@@ -1,4 +1,5 @@ export function a() {',
  ' line1',
  '-old2',
  '+new2',
  '+new3',
  ' line3',
  ' line4',
  '@@ -10,3 +11,2 @@',
  ' ctx11',
  '-gone',
  ' ctx12',
  '\\ No newline at end of file',
].join('\n');

describe('parseDiffLines', () => {
  it('gives the new-file lines that are added or context, per hunk', () => {
    expect([...parseDiffLines(PATCH)].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 11, 12]);
  });
  it('handles a new file, a deleted file, counts omitted, and nothing', () => {
    expect([...parseDiffLines('@@ -0,0 +1,2 @@\n+a\n+b')]).toEqual([1, 2]);
    expect([...parseDiffLines('@@ -1,2 +0,0 @@\n-a\n-b')]).toEqual([]);
    expect([...parseDiffLines('@@ -3 +3 @@\n-a\n+b')]).toEqual([3]);
    expect(parseDiffLines(undefined).size).toBe(0);
    expect(parseDiffLines('').size).toBe(0);
  });
  it('never counts text after the last hunk ends', () => {
    expect([...parseDiffLines('@@ -1 +1 @@\n-a\n+b\n\n')]).toEqual([1]);
  });

  type Op = 'ctx' | 'add' | 'del';
  const content = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, ''));
  const hunk = fc.record({
    gap: fc.nat({ max: 20 }),
    ops: fc.array(fc.record({ op: fc.constantFrom<Op>('ctx', 'add', 'del'), text: content }), {
      minLength: 1,
      maxLength: 15,
    }),
    heading: fc.option(content, { nil: undefined }),
    omitOne: fc.boolean(),
    stripEmpty: fc.boolean(),
  });

  it('matches an independent model on generated diffs (property)', () => {
    fc.assert(
      fc.property(
        fc.array(hunk, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        (hunks, noNewline, trailing) => {
          const expected = new Set<number>();
          const out: string[] = [];
          let oldLine = 1;
          let newLine = 1;
          hunks.forEach((h, i) => {
            oldLine += h.gap + (i > 0 ? 1 : 0);
            newLine += h.gap + (i > 0 ? 1 : 0);
            const oldStart = oldLine;
            const newStart = newLine;
            const body: string[] = [];
            let oldCount = 0;
            let newCount = 0;
            for (const { op, text } of h.ops) {
              if (op === 'ctx') {
                expected.add(newLine++);
                oldLine++;
                oldCount++;
                newCount++;
                body.push(text === '' && h.stripEmpty ? '' : ` ${text}`);
              } else if (op === 'add') {
                expected.add(newLine++);
                newCount++;
                body.push(`+${text}`);
              } else {
                oldLine++;
                oldCount++;
                body.push(`-${text}`);
              }
            }
            const range = (start: number, count: number) =>
              count === 1 && h.omitOne ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
            out.push(
              `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@${h.heading ? ` ${h.heading}` : ''}`,
              ...body,
            );
          });
          if (noNewline) out.push('\\ No newline at end of file');
          const patch = out.join('\n') + (trailing ? '\n' : '');
          expect(parseDiffLines(patch)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// placeFindings

describe('placeFindings', () => {
  const files = [{ path: 'src/a.ts', patch: PATCH }, { path: 'img.png' }];
  it('inlines findings on diff lines; others go in the body', () => {
    const onLine = finding({ line: 3 });
    const offLine = finding({ line: 8, title: 'Elsewhere' });
    const noLine = finding({ line: null, title: 'Whole file' });
    const otherFile = finding({ path: 'src/b.ts', title: 'Other file' });
    const binary = finding({ path: 'img.png', line: 1, title: 'Binary' });
    const dotted = finding({ path: './src/a.ts', line: 11, title: 'Dotted' });
    const placed = placeFindings([onLine, offLine, noLine, otherFile, binary, dotted], files);
    expect(placed.inline.map((f) => [f.path, f.line, f.title])).toEqual([
      ['src/a.ts', 3, 'Null check missing'],
      ['src/a.ts', 11, 'Dotted'],
    ]);
    expect(placed.body.map((f) => f.title)).toEqual(['Elsewhere', 'Whole file', 'Other file', 'Binary']);
  });
  it('never inlines a line outside the diff, never loses a finding (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            line: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
            path: fc.constantFrom('src/a.ts', 'img.png', 'x'),
          }),
        ),
        (specs) => {
          const findings = specs.map((s, i) => finding({ ...s, title: `t${i}` }));
          const placed = placeFindings(findings, files);
          const lines = parseDiffLines(PATCH);
          expect(placed.inline.every((f) => f.path === 'src/a.ts' && lines.has(f.line))).toBe(true);
          expect(placed.inline.length + placed.body.length).toBe(findings.length);
        },
      ),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Keys, dedupe, score

describe('finding keys and dedupe', () => {
  it('a key survives moved lines, case, punctuation, numbers and a ./ prefix; path and wording matter', () => {
    const k = findingKey(finding());
    expect(findingKey(finding({ line: 99, severity: 'low', recommendation: 'other' }))).toBe(k);
    expect(findingKey(finding({ title: 'null-check MISSING!' }))).toBe(k);
    expect(findingKey(finding({ title: 'Null check missing (line 42)' }))).toBe(k);
    expect(findingKey(finding({ path: './src/a.ts' }))).toBe(k);
    expect(findingKey(finding({ path: 'src/b.ts' }))).not.toBe(k);
    expect(findingKey(finding({ title: 'SQL injection' }))).not.toBe(k);
    expect(k).toMatch(/^[0-9a-f]{16}$/);
  });
  it('newFindings drops what was raised before and duplicates within the round', () => {
    const a = finding();
    const b = finding({ title: 'Other' });
    expect(newFindings([a, b, { ...b, line: 9 }], [findingKey(a)])).toEqual([b]);
    expect(newFindings([a, b], [])).toEqual([a, b]);
  });
  it('distinctFindings keeps the most severe copy', () => {
    expect(distinctFindings([finding({ severity: 'low' }), finding({ severity: 'critical' })])).toEqual([
      finding({ severity: 'critical' }),
    ]);
  });
  it('score: 10 minus critical 5, high 3, medium 1, low 0.25 over distinct findings, never below 0', () => {
    expect(reviewScore([])).toBe(10);
    expect(reviewScore([finding({ severity: 'critical' })])).toBe(5);
    expect(reviewScore([finding({ severity: 'medium' }), finding({ severity: 'low', title: 'x' })])).toBe(8.75);
    expect(reviewScore([finding(), finding({ line: 5 })])).toBe(7);
    expect(
      reviewScore(Array.from({ length: 5 }, (_, i) => finding({ severity: 'critical', title: `c${'x'.repeat(i)}` }))),
    ).toBe(0);
  });
  it('the finding schema wants a nullable line and a human-decision flag', () => {
    expect(findingSchema.safeParse(finding()).success).toBe(true);
    expect(findingSchema.safeParse(finding({ line: 0 })).success).toBe(false);
    expect(findingSchema.safeParse({ ...finding(), needs_human_decision: undefined }).success).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Convergence

const sha = (n: number) => n.toString(16).padStart(40, '0');
function round(score: number, critical: string[] = [], extra: Partial<ReviewRound> = {}): ReviewRound {
  return {
    sha: sha(score * 100 + critical.length),
    score,
    findingKeys: critical,
    criticalHighKeys: critical,
    ...extra,
  };
}

describe('reviewExit', () => {
  it('approves with no critical/high open and a score at the threshold', () => {
    expect(reviewExit([round(7)])).toEqual({ exit: 'approve' });
    expect(reviewExit([round(9, ['k1']), round(8)])).toEqual({ exit: 'approve' });
  });
  it('refines a first round with a critical finding', () => {
    expect(reviewExit([round(5, ['k1'])])).toEqual({ exit: 'refine' });
    expect(reviewExit([round(6)])).toEqual({ exit: 'refine' }); // mediums only, below threshold
  });
  it('escalates when the score drops twice in a row', () => {
    const exit = reviewExit([round(8, ['a']), round(6, ['b']), round(4, ['c'])], { maxRounds: 10 });
    expect(exit).toMatchObject({ exit: 'escalate', reason: 'diverging' });
  });
  it('does not call one drop divergence', () => {
    expect(reviewExit([round(8, ['a']), round(6, ['b'])])).toEqual({ exit: 'refine' });
    expect(reviewExit([round(6, ['a']), round(4, ['b']), round(5, ['c'])], { maxRounds: 10 })).toEqual({
      exit: 'refine',
    });
  });
  it('escalates when the same critical/high set repeats in consecutive rounds', () => {
    expect(reviewExit([round(5, ['a', 'b']), round(5, ['b', 'a'])])).toMatchObject({
      exit: 'escalate',
      reason: 'repeating',
    });
    expect(reviewExit([round(5, ['a']), round(5, ['a', 'b'])])).toEqual({ exit: 'refine' });
  });
  it('escalates at the round limit, and at once when a blocking finding needs a human', () => {
    expect(reviewExit([round(5, ['a']), round(5, ['b']), round(5, ['c'])])).toMatchObject({
      exit: 'escalate',
      reason: 'max-rounds',
    });
    expect(reviewExit([round(5, ['a'], { needsHuman: true })])).toMatchObject({
      exit: 'escalate',
      reason: 'needs-human',
    });
  });
  it('threshold and max rounds are configurable (review.threshold, review.max_rounds)', () => {
    expect(reviewExit([round(7)], { threshold: 8 })).toEqual({ exit: 'refine' });
    expect(reviewExit([round(5, ['a'])], { maxRounds: 1 })).toMatchObject({ exit: 'escalate', reason: 'max-rounds' });
    expect(reviewSettingsFrom({ review: { threshold: 8, max_rounds: 5 } })).toEqual({ threshold: 8, maxRounds: 5 });
    expect(reviewSettingsFrom({})).toEqual({ threshold: 7, maxRounds: 3 });
  });
  it('always stops within max rounds (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            score: fc.integer({ min: 0, max: 10 }),
            keys: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 6 }),
        (specs, maxRounds) => {
          const rounds: ReviewRound[] = [];
          for (const s of specs) {
            rounds.push(round(s.score, s.keys));
            const exit = reviewExit(rounds, { maxRounds });
            if (exit.exit !== 'refine') return;
            expect(rounds.length).toBeLessThan(maxRounds);
          }
        },
      ),
    );
  });
  it('roundOf computes keys, score and the human flag from the open findings', () => {
    const r = roundOf(sha(1), [
      finding({ severity: 'critical', needs_human_decision: true }),
      finding({ severity: 'medium', title: 'Naming' }),
      finding({ severity: 'low', line: 9 }), // same key as the critical: counted once
    ]);
    expect(r.score).toBe(4);
    expect(r.findingKeys).toHaveLength(2);
    expect(r.criticalHighKeys).toEqual([findingKey(finding())]);
    expect(r.needsHuman).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Rendering and state

describe('the review body', () => {
  const open = [finding(), finding({ title: 'Outside', line: 40, severity: 'medium' })];
  const body = renderReviewBody({
    round: 2,
    score: 6,
    exit: { exit: 'refine' },
    summary: 'Mostly fine. <!-- hydraflow:state --> @octocat',
    inlineCount: 1,
    bodyFindings: [open[1]!],
    stillOpen: 1,
    open,
  });
  it('has the marker, the counts, the body findings, and carries every open finding for the refiner', () => {
    expect(body.startsWith(REVIEW_MARKER)).toBe(true);
    expect(body).toContain(
      '1 new finding on the diff · 1 new finding below · 1 finding from earlier rounds still open',
    );
    expect(body).toContain('**medium: Outside**');
    expect(body).not.toContain('Null check missing**'); // the inline one is not repeated in the body
    expect(readReviewFindings(body, findingsHash(open))).toEqual(open);
    expect(readReviewFindings(body, 'a'.repeat(64))).toBeUndefined();
  });
  it('neutralises model text', () => {
    const visible = body.slice(0, body.indexOf('<!-- hydraflow:review-data'));
    expect(visible.split('<!--')).toHaveLength(2);
    expect(visible).not.toMatch(/(^|\s)@octocat/);
    expect(renderFindingComment(finding({ title: '@admin <!-- x -->' }))).not.toMatch(/<!--|(^|\s)@admin/);
  });
});

describe('review state', () => {
  it('round-trips through the signed state block', () => {
    const state = {
      ...emptyState(9, 1),
      review: {
        pull: 12,
        rounds: [
          {
            sha: sha(1),
            score: 5,
            findingKeys: [findingKey(finding())],
            criticalHighKeys: [findingKey(finding())],
            reviewId: 77,
            findingsHash: findingsHash([finding()]),
            event: 'REQUEST_CHANGES' as const,
            at: '2026-11-22T10:00:00.000Z',
          },
        ],
        raised: [findingKey(finding())],
        outcome: 'refine' as const,
      },
    };
    expect(decodeStateBlock(encodeStateBlock(state, { key: 'k' }), { key: 'k', issue: 9 })).toEqual({
      status: 'valid',
      state,
    });
  });
});

describe('annotatePatch', () => {
  it('numbers exactly the lines parseDiffLines accepts', () => {
    const annotated = annotatePatch(PATCH);
    const numbered = annotated
      .split('\n')
      .map((l) => /^\s*(\d+) [+ ] /.exec(l)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    expect(new Set(numbered)).toEqual(parseDiffLines(PATCH));
    expect(annotated).toContain('    2 + new2');
    expect(annotated).toContain('      - old2');
  });
});
