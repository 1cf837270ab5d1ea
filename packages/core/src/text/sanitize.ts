/**
 * Untrusted text (issue bodies, comments, search results) is cleaned before a model reads it: what GitHub renders
 * invisibly is where prompt injections hide from the humans reviewing the issue (field notes). What a human sees on
 * GitHub is what the model gets: markdown that renders as nothing (markdown-hidden.ts), then code points that draw
 * nothing (invisible.ts). packages/core/tests/fixtures/hidden-text.json is the corpus of cases: input, and what a
 * human sees.
 */
import { stripInvisible } from './invisible';
import { stripHiddenMarkdown } from './markdown-hidden';

export interface SanitizeOptions {
  /**
   * Is the text markdown GitHub renders (issues, comments, pull requests, .md files: the default), or text it shows
   * verbatim (source files, diffs), where only invisible code points are hidden?
   */
  markdown?: boolean;
}

export function sanitizeUntrusted(text: string, maxChars = 20_000, options: SanitizeOptions = {}): string {
  // Markdown first, on the text as GitHub parses it: an invisible character can stop a line from being a fence or a
  // definition there, and removing it first would make one GitHub never saw.
  const lines = text.replace(/\r\n?/g, '\n');
  const rendered = options.markdown === false ? lines : stripHiddenMarkdown(parsedPart(lines, maxChars));
  const cleaned = stripInvisible(rendered).trim();
  return cleaned.length > maxChars ? `${cleaned.slice(0, maxChars)}\n… (truncated at ${maxChars} characters)` : cleaned;
}

/** What is parsed beyond the characters kept, for the ones removed (the parser's time grows with its input). */
const PARSE_SLACK = 4_000;

/**
 * The part of a long text worth parsing: up to a blank line a little past `maxChars`. Only a blank line is a safe cut:
 * every construct that hides text and could be cut in two (a definition's label or title, a tag's attributes) ends
 * before one; those that cross it (a comment, code, a hidden element) are hidden or shown all the same when cut short.
 * Without such a line, the whole text is parsed.
 */
function parsedPart(text: string, maxChars: number): string {
  const checkable = withinMarkupLimit(text);
  if (checkable.length <= maxChars + PARSE_SLACK) return checkable;
  const head = checkable.slice(0, maxChars + PARSE_SLACK);
  const blank = Math.max(head.lastIndexOf('\n\n'), head.lastIndexOf('\n \n'), head.lastIndexOf('\n\t\n'));
  return blank >= maxChars / 2 ? `${head.slice(0, blank)}\n\n… (truncated)` : checkable;
}

/**
 * Emphasis and link delimiters a block (text between blank lines) may hold. The parser resolves them in time that
 * grows with the square of their number in one block: 64,000 characters of `*_` take over a minute, which an outsider’s
 * issue could make every run spend; 3,000 take a few tens of milliseconds.
 */
const MAX_BLOCK_DELIMITERS = 3_000;

/**
 * The text up to the first block with more delimiters than that; the rest is withheld (fails closed: the model reads
 * less than a human sees, never more). The cut is at a blank line, which is safe (parsedPart).
 */
function withinMarkupLimit(text: string): string {
  let start = 0;
  for (const block of text.split(/(\n[ \t]*\n)/)) {
    let delimiters = 0;
    for (let i = 0; i < block.length; i++) {
      const c = block.charCodeAt(i);
      if (c === 42 || c === 95 || c === 91 || c === 93) delimiters++; // * _ [ ]
    }
    if (delimiters > MAX_BLOCK_DELIMITERS) {
      const rest = text.length - start;
      return `${text.slice(0, start).trimEnd()}\n\n… (the rest, ${rest} characters, withheld: too much markup to check what GitHub shows of it)`;
    }
    start += block.length;
  }
  return text;
}

/**
 * An issue's or pull request's title: GitHub shows it as plain text (no markdown: "[Feature]: pagination" is no link
 * reference definition there), so only invisible code points are hidden.
 */
export function untrustedTitle(title: string, maxChars = 300): string {
  return sanitizeUntrusted(title, maxChars, { markdown: false });
}

/**
 * A short excerpt of untrusted text: sanitised whole first, then cut, so that a cut never turns half of a hidden
 * construct (a comment's start, a definition's unfinished title) into visible-looking text.
 */
export function untrustedExcerpt(text: string, maxChars: number): string {
  return sanitizeUntrusted(text, Math.max(4 * maxChars, 2_000))
    .replace(/\s+/g, ' ')
    .slice(0, maxChars);
}
