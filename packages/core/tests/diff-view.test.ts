/**
 * The reviewer's view of a diff (review/diff-view.ts, text/reveal.ts) and what a round the reviewer did not see whole
 * decides (review/converge.ts): pure, without a world. tests/review-diff.e2e.test.ts runs the same through dist/.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decodeStateBlock,
  diffView,
  emptyState,
  encodeStateBlock,
  fenceFor,
  renderReviewBody,
  revealHidden,
  reviewExit,
  roundOf,
  unseenCount,
  type DiffViewFile,
  type IssueState,
} from '../src/index';

const file = (path: string, lines: string[]): DiffViewFile => ({
  path,
  status: 'added',
  additions: lines.length,
  deletions: 0,
  patch: `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}`,
});

describe('revealHidden', () => {
  it('replaces invisible, bidirectional-control and control characters by a visible marker and names them', () => {
    const r = revealHidden('a\u202Eb\u200Bc\u2066d\u2069\u0007e\u{E0041}\tf\nrtl\u202E');
    expect(r.text).toBe('a<U+202E>b<U+200B>c<U+2066>d<U+2069><U+0007>e<U+E0041>\tf\nrtl<U+202E>');
    expect(r.found).toEqual(['U+202E', 'U+200B', 'U+2066', 'U+2069', 'U+0007', 'U+E0041']);
    expect(r.count).toBe(7);
  });
  it('leaves code without hidden characters exactly as it is', () => {
    const code = "const s = '<!-- -->';\n\tif (a && b) { return `x`; } // ünïcödé → ✓ 日本";
    expect(revealHidden(code)).toEqual({ text: code, found: [], count: 0 });
  });
  it('hides nothing the issue-text sanitizer strips as invisible, and deletes nothing (property)', () => {
    const strippedAsInvisible =
      /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\u{E0000}-\u{E007F}]/u;
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        fc.pre(!text.includes('<U+'));
        const { text: shown } = revealHidden(text);
        expect(strippedAsInvisible.test(shown)).toBe(false);
        const back = shown.replace(/<U\+([0-9A-F]{4,6})>/g, (_, hex: string) =>
          String.fromCodePoint(parseInt(hex, 16)),
        );
        expect(back).toBe(text);
      }),
    );
  });
});

describe('fenceFor', () => {
  it('is longer than any run of backticks or tildes in the text, and at least three', () => {
    expect(fenceFor('plain')).toBe('```');
    expect(fenceFor('a ``` b')).toBe('````');
    expect(fenceFor('~~~~~~\n`')).toBe('```````');
  });
  it('never appears in the text it fences (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('`', '~', 'a', '\n', ' ')).map((a) => a.join('')),
        (text) => {
          expect(text.includes(fenceFor(text))).toBe(false);
        },
      ),
    );
  });
});

describe('diffView', () => {
  it('shows code verbatim: a line between "<!--" and "-->" string literals is there', () => {
    const view = diffView([file('src/a.js', ["const o = '<!--';", 'steal();', "const c = '-->';"])]);
    expect(view.text).toContain("    1 + const o = '<!--';\n    2 + steal();\n    3 + const c = '-->';");
    expect(view.unseen).toEqual([]);
    expect(unseenCount(view)).toBe(0);
  });
  it('names the hidden characters of a file above it and in `hidden`', () => {
    const view = diffView([file('src/a.js', ['x = 1; /* \u202E } */'])]);
    expect(view.text).toContain('x = 1; /* <U+202E> } */');
    expect(view.text).toMatch(/HydraFlow made 1 invisible.*visible as <U\+…>: U\+202E\)/);
    expect(view.hidden).toEqual([{ path: 'src/a.js', chars: ['U+202E'] }]);
  });
  it('a patch full of fences stays inside its own', () => {
    const view = diffView([file('README.md', ['```', '````', 'after'])]);
    const lines = view.text.split('\n');
    expect(lines[1]).toBe('`````');
    expect(lines.at(-1)).toBe('`````');
    expect(lines.filter((l) => l === '`````')).toHaveLength(2);
  });
  it('lists every file it could not show whole: no patch, cut, over the budget, not listed by GitHub', () => {
    const big = file(
      'src/big.js',
      Array.from({ length: 100 }, (_, i) => `line ${i}`),
    );
    const view = diffView(
      [
        file('src/a.js', ['a']),
        { path: 'img/logo.png', status: 'added', additions: 0, deletions: 0 },
        big,
        file('src/late.js', ['late']),
      ],
      { changedFiles: 6, limits: { diffChars: 800, patchChars: 500 } },
    );
    expect(view.unseen).toEqual([
      { path: 'img/logo.png', why: 'no-patch' },
      { path: 'src/big.js', why: 'cut' },
      { path: 'src/late.js', why: 'over-budget' },
    ]);
    expect(view.unlisted).toBe(2);
    expect(unseenCount(view)).toBe(5);
    expect(view.text).toContain('line 0');
    expect(view.text).not.toContain('line 99');
    expect(view.text).toContain('(not shown: 1 more file; the diff is too large for one review)');
    expect(view.text).toContain('(not shown: GitHub listed 4 of the 6 files this pull request changes)');
    expect(view.text.length).toBeLessThan(1_000); // the budget, give or take a file's notes
  });
  it('a path cannot start a line of its own in the prompt', () => {
    const view = diffView([file('a\n### b.js\u202E', ['x'])]);
    expect(view.text.split('\n')[0]).toBe('### a<U+000A>### b.js<U+202E> (added, +1 -0)');
  });
});

describe('a round the reviewer did not see whole', () => {
  it('never approves: a passing round escalates (unseen); a blocking one still refines', () => {
    const clean = roundOf('a'.repeat(40), [], 2);
    expect(clean.unseen).toBe(2);
    expect(reviewExit([clean])).toMatchObject({ exit: 'escalate', reason: 'unseen' });
    expect(reviewExit([roundOf('a'.repeat(40), [])])).toEqual({ exit: 'approve' });
    const blocking = roundOf(
      'b'.repeat(40),
      [
        {
          severity: 'critical',
          path: 'a.js',
          line: 1,
          title: 'Broken',
          recommendation: 'Fix it.',
          needs_human_decision: false,
        },
      ],
      1,
    );
    expect(reviewExit([blocking])).toEqual({ exit: 'refine' });
  });
  it('is kept in the signed state, so a replayed round decides the same', () => {
    const state: IssueState = {
      ...emptyState(3, 1),
      review: {
        pull: 4,
        rounds: [
          {
            sha: 'c'.repeat(40),
            score: 10,
            findingKeys: [],
            criticalHighKeys: [],
            unseen: 1,
            event: 'COMMENT',
            at: '2026-01-01T00:00:00.000Z',
          },
        ],
        raised: [],
        outcome: 'escalate',
        reason: 'unseen',
      },
    };
    const decoded = decodeStateBlock(encodeStateBlock(state, { key: 'k' }), { key: 'k', issue: 3 });
    expect(decoded).toEqual({ status: 'valid', state });
    if (decoded.status === 'valid')
      expect(reviewExit(decoded.state.review!.rounds)).toMatchObject({ reason: 'unseen' });
  });
  it('the review body names the files the reviewer could not see and the hidden characters it was shown', () => {
    const view = diffView(
      [{ path: 'bin/tool', status: 'added', additions: 0, deletions: 0 }, file('src/a.js', ['\u202Ex'])],
      { changedFiles: 3 },
    );
    const exit = reviewExit([roundOf('d'.repeat(40), [], unseenCount(view))]);
    const body = renderReviewBody({
      round: 1,
      score: 10,
      exit,
      summary: 'Fine.',
      inlineCount: 0,
      bodyFindings: [],
      stillOpen: 0,
      open: [],
      diff: view,
    });
    expect(body).toContain('**A human decides**');
    expect(body).toContain('#### Files the reviewer could not see');
    expect(body).toContain('- `bin/tool`: GitHub gives no patch for it');
    expect(body).toContain('- 1 file GitHub did not list: this pull request changes 3 files and GitHub lists 2');
    expect(body).toContain('- `src/a.js`: U+202E');
  });
});
