/**
 * What one review round posts: ONE review (one notification), inline comments for new findings on diff lines, the
 * other new findings in the body, and a hidden data block with every open finding of the round for the refiner:
 *
 *     <!-- hydraflow:review-data sha256=<hex> <json, escaped like the state block> -->
 *
 * The block's sha256 is kept in the signed state, so what the refiner reads back is exactly what the reviewer said.
 * Findings raised in an earlier round are never written again; the body only counts them.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, escapeForComment } from '../state/codec';
import { neutralizeModelText } from '../plan/render';
import { storedFindingSchema, type Finding } from './finding';
import type { ReviewExit } from './converge';
import { oneLine, type DiffView, type UnseenWhy } from './diff-view';

export const REVIEW_MARKER = '<!-- hydraflow:review -->';
const DATA_MARKER = '<!-- hydraflow:review-data';
const MAX_BODY = 60_000;
/** Files named per list in the body (the files the reviewer could not see, the files with hidden characters). */
const MAX_NAMED_FILES = 30;

const ICON: Record<Finding['severity'], string> = { critical: '🔴', high: '🟠', medium: '🟡', low: '⚪' };

function flat(text: string, max: number): string {
  const t = neutralizeModelText(text).replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** An inline review comment for one finding. */
/** `high`, or `high spec-mismatch` for a finding of its own kind. */
function severityText(f: Finding): string {
  return f.kind ? `${f.severity} ${f.kind}` : f.severity;
}

export function renderFindingComment(f: Finding): string {
  return [
    `${ICON[f.severity]} **${severityText(f)}: ${flat(f.title, 200)}**`,
    '',
    neutralizeModelText(f.recommendation),
    ...(f.needs_human_decision ? ['', '_Needs a decision by a human._'] : []),
  ].join('\n');
}

/** A path in backticks: neutralised, on one line, its hidden characters shown. */
function codePath(path: string): string {
  return `\`${oneLine(flat(path, 200)).replace(/`/g, "'")}\``;
}

function location(f: Finding): string {
  const path = codePath(f.path);
  return f.line === null ? path : `${path} line ${f.line}`;
}

const UNSEEN_WHY: Record<UnseenWhy, string> = {
  'no-patch': 'GitHub gives no patch for it (binary, too large, or past its diff limit)',
  cut: 'cut to fit the reviewer’s prompt',
  'over-budget': 'the diff was too large to show it',
};

/** `lines` of a list, at most MAX_NAMED_FILES of them, then how many more. */
function capped(lines: string[]): string[] {
  const rest = lines.length - MAX_NAMED_FILES;
  return rest > 0 ? [...lines.slice(0, MAX_NAMED_FILES), `- … and ${rest} more`] : lines;
}

/**
 * What the reviewer could not see, and the hidden characters it was shown as `<U+…>`: said in the review itself, so
 * the human who decides knows which files to read (and GitHub's diff view hides what the characters do).
 */
function diffNotes(diff: Pick<DiffView, 'unseen' | 'listed' | 'unlisted' | 'hidden'>): string[] {
  const lines: string[] = [];
  if (diff.unseen.length || diff.unlisted) {
    lines.push(
      '#### Files the reviewer could not see',
      '',
      'HydraFlow approves only what its reviewer saw whole; a human reviews these:',
      '',
      ...capped(diff.unseen.map((u) => `- ${codePath(u.path)}: ${UNSEEN_WHY[u.why]}`)),
      ...(diff.unlisted
        ? [
            `- ${diff.unlisted} file${diff.unlisted === 1 ? '' : 's'} GitHub did not list: this pull request changes ${diff.listed + diff.unlisted} files and GitHub lists ${diff.listed}`,
          ]
        : []),
      '',
    );
  }
  if (diff.hidden.length) {
    lines.push(
      '#### Hidden characters',
      '',
      'These files hold invisible, bidirectional-control or control characters, which GitHub may not show; the reviewer saw each as `<U+…>`:',
      '',
      ...capped(diff.hidden.map((h) => `- ${codePath(h.path)}: ${h.chars.join(', ')}`)),
      '',
    );
  }
  return lines;
}

export const reviewDataSchema = z.array(storedFindingSchema).max(25);

export function findingsHash(findings: readonly Finding[]): string {
  return createHash('sha256').update(canonicalJson(findings)).digest('hex');
}

export interface ReviewBodyInput {
  round: number;
  score: number;
  exit: ReviewExit;
  summary: string;
  /** New findings posted inline (counted here, shown on their lines). */
  inlineCount: number;
  /** New findings that could not go on a diff line. */
  bodyFindings: readonly Finding[];
  /** Findings raised in an earlier round that are still open (not repeated, only counted). */
  stillOpen: number;
  /** Every open finding of the round, for the data block. */
  open: readonly Finding[];
  /** What the reviewer was shown of the diff: the files it could not see and the hidden characters are named. */
  diff?: Pick<DiffView, 'unseen' | 'listed' | 'unlisted' | 'hidden'>;
}

function verdictLine(input: ReviewBodyInput): string {
  switch (input.exit.exit) {
    case 'approve':
      return `**Approved** by HydraFlow's review (round ${input.round}, score ${input.score}/10).`;
    case 'refine':
      return `**Changes requested** (round ${input.round}, score ${input.score}/10): HydraFlow's implementer refines next.`;
    case 'escalate':
      return `**A human decides** (round ${input.round}, score ${input.score}/10): ${flat(input.exit.detail, 300)}.`;
  }
}

function render(input: ReviewBodyInput, summaryMax: number, recommendationMax: number): string {
  const lines = [REVIEW_MARKER, `### HydraFlow review · round ${input.round}`, '', verdictLine(input), ''];
  if (input.summary.trim()) lines.push(flat(input.summary, summaryMax), '');
  const counts: string[] = [];
  if (input.inlineCount)
    counts.push(`${input.inlineCount} new finding${input.inlineCount === 1 ? '' : 's'} on the diff`);
  if (input.bodyFindings.length)
    counts.push(`${input.bodyFindings.length} new finding${input.bodyFindings.length === 1 ? '' : 's'} below`);
  if (input.stillOpen)
    counts.push(`${input.stillOpen} finding${input.stillOpen === 1 ? '' : 's'} from earlier rounds still open`);
  if (counts.length) lines.push(`${counts.join(' · ')}.`, '');
  if (input.bodyFindings.length) {
    lines.push('#### Findings outside the diff lines', '');
    for (const f of input.bodyFindings) {
      lines.push(
        `- ${ICON[f.severity]} **${severityText(f)}: ${flat(f.title, 200)}** — ${location(f)}  `,
        `  ${flat(f.recommendation, recommendationMax)}${f.needs_human_decision ? ' _Needs a decision by a human._' : ''}`,
      );
    }
    lines.push('');
  }
  if (input.diff) lines.push(...diffNotes(input.diff));
  const canonical = canonicalJson(input.open);
  lines.push(`${DATA_MARKER} sha256=${findingsHash(input.open)} ${escapeForComment(canonical)} -->`);
  return lines.join('\n');
}

/** The review body. Under 60,000 characters (summary and recommendations shortened if needed). */
export function renderReviewBody(input: ReviewBodyInput): string {
  let body = render(input, 2000, 2000);
  if (body.length > MAX_BODY) body = render(input, 500, 300);
  return body;
}

/** The open findings a HydraFlow review carries, if its data block is intact and its hash is `expectedHash`. */
export function readReviewFindings(body: string | null | undefined, expectedHash?: string): Finding[] | undefined {
  if (typeof body !== 'string') return undefined;
  const start = body.indexOf(DATA_MARKER);
  if (start < 0) return undefined;
  const end = body.indexOf('-->', start + DATA_MARKER.length);
  if (end < 0) return undefined;
  const m = /^ sha256=([0-9a-f]{64}) (\[[\x20-\x7e]*\]) $/.exec(body.slice(start + DATA_MARKER.length, end));
  if (!m || (expectedHash !== undefined && m[1] !== expectedHash)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(m[2]!);
  } catch {
    return undefined;
  }
  const parsed = reviewDataSchema.safeParse(raw);
  if (!parsed.success || findingsHash(parsed.data) !== m[1]) return undefined;
  return parsed.data;
}

/** Is this a HydraFlow review body (by marker; trust is decided by the author)? */
export function isHydraflowReview(body: string | null | undefined): boolean {
  return typeof body === 'string' && body.includes(REVIEW_MARKER);
}
