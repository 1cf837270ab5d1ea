/**
 * Which lines of a pull request can carry an inline comment. GitHub accepts a review comment on the RIGHT side only on
 * a line the diff shows in the new file: an added line or a context line inside a hunk. Anything else is refused with
 * 422 "Line could not be resolved" — field notes: wrong line numbers were a main source of review noise.
 */
import { normalizeFindingPath, type Finding } from './finding';

const HUNK = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The new-file line numbers present in a GitHub `patch` (one file's unified diff hunks, without the `diff --git` and
 * `---`/`+++` header lines): added (`+`) and context (` `) lines. Removed lines and `\ No newline at end of file` markers
 * take no new-file line. Hunk line counts are honoured, so trailing text after the last hunk is never counted.
 */
export function parseDiffLines(patch: string | null | undefined): Set<number> {
  const lines = new Set<number>();
  if (!patch) return lines;
  let next = 0;
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of patch.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const h = HUNK.exec(line);
    if (h) {
      oldLeft = h[1] === undefined ? 1 : Number(h[1]);
      next = Number(h[2]);
      newLeft = h[3] === undefined ? 1 : Number(h[3]);
      continue;
    }
    if (oldLeft <= 0 && newLeft <= 0) continue; // outside a hunk
    const tag = line[0];
    if (tag === '\\') continue;
    if (tag === '-') {
      oldLeft--;
      continue;
    }
    if (tag === '+') {
      if (newLeft > 0) lines.add(next);
      next++;
      newLeft--;
      continue;
    }
    // Context: ' ', or an empty line where a tool stripped the leading space of an empty context line.
    if (tag === ' ' || line === '') {
      if (newLeft > 0) lines.add(next);
      next++;
      newLeft--;
      oldLeft--;
    }
  }
  return lines;
}

export interface DiffFile {
  path: string;
  patch?: string | undefined;
}

export interface PlacedFindings<F> {
  /** Findings on a line the diff shows: posted as inline comments. */
  inline: (F & { line: number })[];
  /** Findings without a line, on a file not in the diff, or on a line outside the hunks: go in the review body. */
  body: F[];
}

/** Splits findings into those GitHub will accept inline and those that go in the review body. */
export function placeFindings<F extends Pick<Finding, 'path' | 'line'>>(
  findings: readonly F[],
  files: readonly DiffFile[],
): PlacedFindings<F> {
  const linesByPath = new Map<string, Set<number>>();
  for (const f of files) linesByPath.set(f.path, parseDiffLines(f.patch));
  const inline: (F & { line: number })[] = [];
  const body: F[] = [];
  for (const finding of findings) {
    const path = normalizeFindingPath(finding.path);
    const lines = linesByPath.get(path);
    if (finding.line !== null && lines?.has(finding.line)) inline.push({ ...finding, path, line: finding.line });
    else body.push(finding);
  }
  return { inline, body };
}

/**
 * A patch with the new-file line number in front of every line a comment can go on, so the reviewer names lines
 * GitHub will accept instead of counting through hunks itself:
 *
 *        12 + added line
 *        13   context line
 *           - removed line
 */
export function annotatePatch(patch: string): string {
  const out: string[] = [];
  let next = 0;
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of patch.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const h = HUNK.exec(line);
    if (h) {
      oldLeft = h[1] === undefined ? 1 : Number(h[1]);
      next = Number(h[2]);
      newLeft = h[3] === undefined ? 1 : Number(h[3]);
      out.push(line);
      continue;
    }
    if (oldLeft <= 0 && newLeft <= 0) continue;
    const tag = line[0];
    if (tag === '\\') {
      out.push(`${' '.repeat(6)}${line}`);
    } else if (tag === '-') {
      oldLeft--;
      out.push(`${' '.repeat(6)}- ${line.slice(1)}`);
    } else if (tag === '+') {
      out.push(`${String(next).padStart(5)} + ${line.slice(1)}`);
      next++;
      newLeft--;
    } else if (tag === ' ' || line === '') {
      out.push(`${String(next).padStart(5)}   ${line.slice(1)}`);
      next++;
      newLeft--;
      oldLeft--;
    }
  }
  return out.join('\n');
}
