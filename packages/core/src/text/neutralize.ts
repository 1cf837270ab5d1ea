/**
 * Neutralizing text that HydraFlow publishes but did not write (a model's, or an issue author's): GitHub must not act
 * on it. Four things in published text make GitHub act on someone's behalf:
 *
 * - an `@mention` notifies a person or a team;
 * - a closing keyword (`Fixes #9`, `closes owner/repo#3`) in a pull request's body or a commit message closes an issue
 *   when the change merges;
 * - a link or an image to another host is a phishing link, or an exfiltration channel (an image is fetched as soon as
 *   the comment is shown);
 * - in the job log, a line that starts with `::` (or holds `##[`) is a workflow command (see workflow-commands.ts).
 *
 * Why invisible characters and not a markdown parser: the same text is shown in many places (a paragraph, a table cell,
 * a list item, flattened to one line, truncated), so deciding what is code and what is prose would have to be right in
 * every one of them, and a wrong guess leaves a live mention or link. Each rule here is local — it breaks the few
 * characters GitHub needs to see side by side with a zero-width character — so it holds wherever the text ends up, code
 * included (where it changes nothing visible; a snippet copied out of a comment carries the invisible character).
 * Every rule is idempotent: neutralizing twice gives the text of neutralizing once. ADR 0003 (docs/adr/0003-output-neutralization.md) records the decision.
 */

/** Zero-width space: breaks a sequence GitHub would recognise, shows nothing. */
const ZWSP = '\u200b';
/** Zero-width joiner: inside a word, where a zero-width space would offer a line break. */
const ZWJ = '\u200d';

/** `@name`, `@org/team`, and the `@` of an e-mail address: GitHub's mention filter sees rendered text, so any `@`. */
export function neutralizeMentions(text: string): string {
  return text.replace(/@(?=[A-Za-z0-9])/g, `@${ZWSP}`);
}

/**
 * GitHub's closing keywords (close, closes, closed, fix, fixes, fixed, resolve, resolves, resolved; any case, optional
 * colon) when a reference follows: `#9`, `owner/repo#9`, `GH-9` or an issue URL. Emphasis and spacing between the
 * two are allowed for, so `**Fixes:** #9` counts too. The keyword itself is broken (`F<U+200D>ixes`), so no matcher sees it.
 */
const CLOSING =
  /(?<![A-Za-z0-9])(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?=[\s:*_~`()[\]\u200b-\u200d\ufeff]*(?:#|gh-\d|https?:|[\w.-]{1,39}\/[\w.-]{1,100}#))/gi;

export function neutralizeClosingKeywords(text: string): string {
  return text.replace(CLOSING, (keyword: string) => `${keyword[0]}${ZWJ}${keyword.slice(1)}`);
}

/** HTML elements GitHub keeps that can hold a link or load a resource (its sanitizer drops the rest). */
const URL_TAGS =
  'a|img|image|picture|source|video|audio|track|area|map|iframe|embed|object|link|form|input|button|svg|base|meta';
const URL_TAG = new RegExp(`<(?=\\/?(?:${URL_TAGS})(?![A-Za-z0-9-]))`, 'gi');
/** `<scheme:...>` is an autolink. */
const ANGLE_AUTOLINK = /<(?=[A-Za-z][A-Za-z0-9+.-]{1,31}:)/g;
/** Entities other than the five of plain text can spell `@`, `:` or `<` that the rules above would not see. */
const ENTITY = /&(?=#|(?!(?:lt|gt|amp|quot|apos);)[A-Za-z][A-Za-z0-9]{0,31};)/g;

export interface LinkOptions {
  /**
   * URL prefixes whose links stay (HydraFlow's links to the repository's own issues and pull requests), e.g.
   * `https://github.com/acme/widgets/`. Compared case-sensitively, with the scheme; end it with `/`.
   */
  trustedPrefixes?: readonly string[];
}

function trusted(text: string, at: number, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => p !== '' && text.startsWith(p, at));
}

/** Where the URL whose `:` of `://` is at `colon` starts: the scheme's characters before it. */
function schemeStart(text: string, colon: number): number {
  let at = colon;
  while (at > 0 && /[A-Za-z0-9+.-]/.test(text[at - 1]!)) at--;
  return at;
}

/** Where the destination of an inline link whose `](` is at `bracket` starts (after spaces and an opening `<`). */
function destinationStart(text: string, bracket: number): number {
  const lead = /\s*<?/y;
  lead.lastIndex = bracket + 2;
  return bracket + 2 + (lead.exec(text)?.[0].length ?? 0);
}

/**
 * No clickable link or image to a host outside `trustedPrefixes`: `](`, `][` and `]:` are split (inline, reference
 * and definition forms of links and images), `://` of an absolute URL and `www.` are split (GitHub's autolinks),
 * `<` is split before an autolink or an HTML element that links, and entities that could spell any of it are split.
 * The text and the URL stay readable; nothing of it is a link. Linear in the text's length (every pattern is bounded
 * or anchored on one character), so a model's long answer cannot make it slow.
 */
export function neutralizeLinks(text: string, options: LinkOptions = {}): string {
  const prefixes = options.trustedPrefixes ?? [];
  return (
    text
      .replace(ENTITY, `&${ZWSP}`)
      .replace(URL_TAG, `<${ZWSP}`)
      .replace(ANGLE_AUTOLINK, (lt: string, at: number, all: string) =>
        trusted(all, at + 1, prefixes) ? lt : `<${ZWSP}`,
      )
      .replace(/\](?=[([:])/g, (bracket: string, at: number, all: string) =>
        all[at + 1] === '(' && trusted(all, destinationStart(all, at), prefixes) ? bracket : `]${ZWSP}`,
      )
      .replace(/:(?=\/\/)/g, (colon: string, at: number, all: string) =>
        trusted(all, schemeStart(all, at), prefixes) ? colon : `:${ZWSP}`,
      )
      // GitHub autolinks `www.` after a space or `*_~(`; wherever it stands, it is split
      .replace(/(www)\./gi, `$1${ZWSP}.`)
  );
}

/** Mentions and closing keywords: all that a plain-text place (a commit message, a title) needs. */
export function neutralizeReferences(text: string): string {
  return neutralizeClosingKeywords(neutralizeMentions(text));
}
