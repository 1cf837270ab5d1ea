/**
 * What the reviewer is shown of a pull request's diff, and what it could not be shown (issue #17 item 4). Pure.
 *
 * Each file's patch is shown verbatim — never through the issue-text sanitizer, which would remove a line of code
 * between a `"<!--"` and a `"-->"` string literal — with new-file line numbers in the margin (annotatePatch), its hidden
 * characters made visible (`<U+202E>`, text/reveal.ts) and named in a note above it, inside a fence longer than any
 * run of backticks or tildes in it, so nothing in a patch can end the fence and pass for HydraFlow's own words.
 *
 * A file the reviewer does not see whole is listed in `unseen`: one GitHub gives no patch for (binary, too large, or
 * past its diff limit; a pure rename or an empty file also has none, and cannot be told apart), one cut to fit the
 * prompt, and every file after the prompt is full. `unlisted` counts the files the pull request changes that GitHub
 * did not list at all (it lists at most 3000). HydraFlow never approves a round with either (converge.ts, ADR 0002).
 */
import { revealHidden } from '../text/reveal';
import { annotatePatch } from './diff';

/** One file of the diff as GitHub lists it (`GET /pulls/{n}/files`) or the publish job computes it (branchFiles). */
export interface DiffViewFile {
  path: string;
  status: string;
  additions: number;
  deletions: number;
  patch?: string | undefined;
}

export interface DiffViewLimits {
  /** The whole diff shown to the reviewer, headings and notes included (give or take the last file's notes). */
  diffChars: number;
  /** One file's shown patch. */
  patchChars: number;
}

export const DIFF_VIEW_LIMITS: DiffViewLimits = { diffChars: 80_000, patchChars: 20_000 };

export type UnseenWhy = 'no-patch' | 'cut' | 'over-budget';

export interface UnseenFile {
  path: string;
  why: UnseenWhy;
}

export interface DiffView {
  /** The diff as the reviewer reads it. */
  text: string;
  /** Files listed but not shown whole, in list order. */
  unseen: UnseenFile[];
  /** How many files the list held. */
  listed: number;
  /** Files the pull request changes that the list did not hold (changed_files beyond GitHub's listing limit). */
  unlisted: number;
  /** Files whose patch holds hidden characters, and which (`U+202E`). */
  hidden: { path: string; chars: string[] }[];
}

/** How many files of the diff the reviewer did not see whole: a round with any is never HydraFlow's approval. */
export function unseenCount(view: Pick<DiffView, 'unseen' | 'unlisted'>): number {
  return view.unseen.length + view.unlisted;
}

/** A fence of backticks longer than any run of backticks or tildes in `text` (at least three), so it cannot close early. */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+|~+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/** A path or status on one line of HydraFlow's own text: hidden characters and line breaks shown, never obeyed. */
export function oneLine(text: string): string {
  return revealHidden(text).text.replace(/\n/g, '<U+000A>');
}

/** `text` cut at the last line break within `max` characters (or at `max` when a single line is longer). */
function cutAtLine(text: string, max: number): string {
  const end = text.lastIndexOf('\n', max);
  return text.slice(0, end > 0 ? end : Math.max(0, max));
}

function heading(f: DiffViewFile): string {
  return `### ${oneLine(f.path)} (${oneLine(f.status)}, +${f.additions} -${f.deletions})`;
}

/** One file's patch as shown: annotated, hidden characters revealed, cut to `max` characters. */
function showPatch(patch: string, max: number): { text: string; cut: boolean; found: string[]; count: number } {
  const { text, found, count } = revealHidden(annotatePatch(patch));
  if (text.length <= max) return { text, cut: false, found, count };
  return { text: cutAtLine(text, max), cut: true, found, count };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The reviewer's view of `files`. `changedFiles`: how many files the pull request changes, when GitHub says. */
export function diffView(
  files: readonly DiffViewFile[],
  options: { changedFiles?: number | undefined; limits?: DiffViewLimits } = {},
): DiffView {
  const limits = options.limits ?? DIFF_VIEW_LIMITS;
  const parts: string[] = [];
  const unseen: UnseenFile[] = [];
  const hidden: DiffView['hidden'] = [];
  let budget = limits.diffChars;
  let dropped = 0;
  for (const f of files) {
    const head = heading(f);
    if (budget <= head.length) {
      unseen.push({ path: f.path, why: 'over-budget' });
      dropped++;
      continue;
    }
    if (f.patch === undefined) {
      const part = `${head}\n(not shown: GitHub gives no patch for this file: binary, too large, or past its diff limit)`;
      unseen.push({ path: f.path, why: 'no-patch' });
      parts.push(part);
      budget -= part.length;
      continue;
    }
    const shown = showPatch(f.patch, Math.min(limits.patchChars, budget - head.length));
    if (shown.cut) unseen.push({ path: f.path, why: 'cut' });
    if (shown.found.length) hidden.push({ path: f.path, chars: shown.found });
    const fence = fenceFor(shown.text);
    const part = [
      head,
      ...(shown.cut ? [`(cut: only the first ${shown.text.length} characters of this file's diff are shown)`] : []),
      ...(shown.found.length
        ? [
            `(HydraFlow made ${plural(shown.count, 'invisible, bidirectional-control or control character')} visible as <U+…>: ${shown.found.join(', ')})`,
          ]
        : []),
      fence,
      shown.text,
      fence,
    ].join('\n');
    parts.push(part);
    budget -= part.length;
  }
  if (dropped) parts.push(`(not shown: ${plural(dropped, 'more file')}; the diff is too large for one review)`);
  const unlisted = Math.max(0, (options.changedFiles ?? files.length) - files.length);
  if (unlisted) {
    parts.push(
      `(not shown: GitHub listed ${files.length} of the ${files.length + unlisted} files this pull request changes)`,
    );
  }
  return { text: parts.join('\n\n'), unseen, listed: files.length, unlisted, hidden };
}
