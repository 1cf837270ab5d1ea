/**
 * Markdown that GitHub renders invisibly, cut out of untrusted text so that a model reads what a human reading the
 * issue reads. The text is parsed as GitHub parses it (CommonMark + GFM, with micromark, which follows the same
 * specification as GitHub's cmark-gfm), and cut by the positions of the parsed constructs. A line-based guess is not
 * enough: whether a line is inside a code block (shown verbatim) or a link reference definition (never shown) depends
 * on everything before it, and a guess that gets one fence wrong flips every block after it.
 *
 * Hidden on GitHub, so removed:
 * - link reference definitions (`[id]: url "title"`, the `[//]: # (comment)` idiom);
 * - footnote definitions that nothing refers to (GitHub renders only referenced footnotes);
 * - in raw HTML: comments, processing instructions, declarations, CDATA; `<script>`, `<style>`, `<template>` and
 *   elements marked hidden, with their content; every attribute but `href` (alt, title, data-…: shown on hover at
 *   most); an `<img>` becomes `[image]`;
 * - a markdown image's alt text and title (the image shows instead; it becomes `[image]`), a link's title (a tooltip),
 *   a link with no text (nothing to see, only a target);
 * - the words of a code fence's info string after the first (GitHub takes the first as the language, shows none);
 * - character references to invisible code points (`&#8203;`, `&zwj;`).
 *
 * Code (fenced, indented, inline) is kept as it is: GitHub shows it verbatim, comments and brackets included.
 */
import { decodeNamedCharacterReference } from 'decode-named-character-reference';
import { parse, postprocess, preprocess } from 'micromark';
import { gfm } from 'micromark-extension-gfm';
import { isInvisible } from './invisible';

interface Token {
  type: string;
  start: { offset: number };
  end: { offset: number };
}

/** A cut of the source: [start, end) becomes `text`. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

function tokens(source: string): { enter: boolean; token: Token }[] {
  const parser = parse({ extensions: [gfm()] });
  const events = postprocess(parser.document().write(preprocess()(source, undefined, true)));
  return events.map(([kind, token]) => ({ enter: kind === 'enter', token: token as Token }));
}

const slice = (source: string, t: Token) => source.slice(t.start.offset, t.end.offset);
const cut = (t: Token, text = ''): Edit => ({ start: t.start.offset, end: t.end.offset, text });

const COMMENT_LIKE = /<!--[\s\S]*?(?:-->|$)|<\?[\s\S]*?(?:\?>|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<![A-Za-z][^>]*>?/g;
const TAG =
  /<(\/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const HREF = /\shref\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)/i;

/** Raw HTML as GitHub shows it: no comments (and the like), tags without their hidden attributes, images as text. */
function visibleHtml(html: string): string {
  return html.replace(COMMENT_LIKE, '').replace(TAG, (_whole, close: string, name: string, attributes: string) => {
    if (name.toLowerCase() === 'img') return '[image]';
    const href = close ? undefined : HREF.exec(attributes)?.[1];
    return `<${close}${name}${href ? ` href=${href}` : ''}>`;
  });
}

/** Opening tags of elements whose content never shows: what a browser does not render, and what is marked hidden. */
const HIDDEN_OPEN =
  /<(script|style|template)\b[^>]*>|<([A-Za-z][A-Za-z0-9-]*)\b[^>]*?\s(?:hidden|style\s*=\s*["'][^"']*display\s*:\s*none)[^>]*>/gi;

/** Where the element opened at `from` ends: after its closing tag, nested elements of its name counted; else the end. */
function elementEnd(source: string, from: number, name: string): number {
  const tags = new RegExp(`<(/?)${name}\\b[^>]*>`, 'gi');
  tags.lastIndex = from;
  let depth = 0;
  for (let m = tags.exec(source); m; m = tags.exec(source)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return m.index + m[0].length;
  }
  return source.length;
}

/**
 * Hidden elements opened in real HTML (not in code): each is cut from its opening tag to its closing tag, across
 * whatever markdown blocks lie between (GitHub keeps them inside the element).
 */
function hiddenElements(source: string, html: Token[]): Edit[] {
  const edits: Edit[] = [];
  for (const t of html) {
    for (const m of slice(source, t).matchAll(HIDDEN_OPEN)) {
      const start = t.start.offset + m.index;
      // One inside a hidden element already cut goes with it (and a thousand unclosed ones cost one scan, not n).
      if (start < (edits.at(-1)?.end ?? 0)) continue;
      edits.push({ start, end: elementEnd(source, start, (m[1] ?? m[2])!), text: '' });
    }
  }
  return edits;
}

function characterReference(source: string, t: Token): Edit | undefined {
  const ref = slice(source, t);
  const numeric = /^&#([xX])?([0-9a-fA-F]+);$/.exec(ref);
  const code = numeric ? parseInt(numeric[2]!, numeric[1] ? 16 : 10) : undefined;
  const char =
    code === undefined
      ? decodeNamedCharacterReference(ref.slice(1, -1))
      : code <= 0x10ffff
        ? String.fromCodePoint(code)
        : '';
  return char === false || [...char].every(isInvisible) ? cut(t) : undefined;
}

const blank = (text: string) => [...text].every((c) => isInvisible(c) || /\s/.test(c));

/** The cuts that make `source` look as GitHub renders it. */
function edits(source: string): Edit[] {
  const all = tokens(source);
  const out: Edit[] = [];
  const html: Token[] = [];
  const calls = new Set<string>();
  const footnotes: { label: string; token: Token }[] = [];
  let footnote: Token | undefined;
  let linkOpen = false;
  let destinationEnd: number | undefined;
  let infoEnd: number | undefined;
  for (const { enter, token: t } of all) {
    if (!enter) continue;
    switch (t.type) {
      case 'definition':
        out.push(cut(t));
        break;
      case 'htmlFlow':
      case 'htmlText':
        html.push(t);
        break;
      case 'image':
        out.push(cut(t, '[image]'));
        break;
      case 'link':
        out.push(cut(t, slice(source, t))); // a placeholder, replaced by the cut below when its text is blank
        linkOpen = true;
        break;
      case 'labelText':
        if (linkOpen && blank(slice(source, t))) out.at(-1)!.text = '';
        linkOpen = false;
        break;
      case 'resource':
        destinationEnd = undefined;
        break;
      case 'resourceDestination':
        destinationEnd = t.end.offset;
        break;
      case 'resourceTitle':
        // From the end of the destination: the whitespace before a title goes with it.
        out.push({ start: destinationEnd ?? t.start.offset, end: t.end.offset, text: '' });
        break;
      case 'codeFencedFenceInfo':
        infoEnd = t.end.offset;
        break;
      case 'codeFencedFenceMeta':
        out.push({ start: infoEnd ?? t.start.offset, end: t.end.offset, text: '' });
        break;
      case 'characterReference': {
        const edit = characterReference(source, t);
        if (edit) out.push(edit);
        break;
      }
      case 'gfmFootnoteCallString':
        calls.add(slice(source, t).toLowerCase());
        break;
      case 'gfmFootnoteDefinition':
        footnote = t;
        break;
      case 'gfmFootnoteDefinitionLabelString':
        if (footnote) footnotes.push({ label: slice(source, t).toLowerCase(), token: footnote });
        footnote = undefined;
        break;
    }
  }
  for (const f of footnotes) if (!calls.has(f.label)) out.push(cut(f.token));
  return [...htmlEdits(source, html), ...out.filter((e) => e.text !== source.slice(e.start, e.end))];
}

/**
 * Each piece of raw HTML as GitHub shows it; a hidden element within one piece is cut inside it, one that reaches
 * beyond it (into the markdown after) is a cut of its own.
 */
function htmlEdits(source: string, html: Token[]): Edit[] {
  const hidden = hiddenElements(source, html);
  const within = (h: Edit, t: Token) => h.start >= t.start.offset && h.end <= t.end.offset;
  const pieces = html.map((t) => {
    const inside = hidden
      .filter((h) => within(h, t))
      .map((h) => ({ ...h, start: h.start - t.start.offset, end: h.end - t.start.offset }));
    return cut(t, visibleHtml(apply(slice(source, t), inside)));
  });
  return [...pieces, ...hidden.filter((h) => !html.some((t) => within(h, t)))];
}

/**
 * Applies the cuts. One inside another goes with it (a title inside a removed definition, inside an image); two that
 * overlap (a hidden element that starts in one piece of HTML and ends past it) merge into one removal of both.
 */
function apply(source: string, cuts: Edit[]): string {
  const sorted = [...cuts].sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Edit[] = [];
  for (const e of sorted) {
    const last = merged.at(-1);
    if (!last || e.start >= last.end) merged.push({ ...e });
    else if (e.end > last.end) merged[merged.length - 1] = { start: last.start, end: e.end, text: '' };
  }
  let out = '';
  let at = 0;
  for (const e of merged) {
    out += source.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

/**
 * A character every construct hidden above needs: `[` (definitions, footnotes, images, links and their titles), `<`
 * (HTML), `&` (character references), a backtick or `~` (a fence's info string). Text with none of them has nothing to
 * cut, so it is not parsed: the parser's first use costs a fresh process ~20 ms (docs/performance.md).
 */
const MAY_HIDE = /[[<&`~]/;

/** The text without what GitHub renders invisibly (see above). */
export function stripHiddenMarkdown(text: string): string {
  return MAY_HIDE.test(text) ? apply(text, edits(text)) : text;
}
