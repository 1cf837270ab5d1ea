/**
 * Code is shown to a model as it is: unlike issue text (sanitize.ts), nothing is removed from it, since whatever is
 * removed from a reviewer's view is exactly where a change can hide. Characters that a human reading the same code on
 * GitHub or in an editor would not see — invisible ones, bidirectional controls that reorder how a line is displayed
 * ("Trojan Source", CVE-2021-42574), control characters, tag and variation-selector characters that can smuggle text —
 * are made visible instead: each is replaced by a marker such as `<U+202E>`, and the caller is told which there were,
 * so the reviewer can report them and a human can be told.
 *
 * Tab and line feed are kept: they are how code is laid out. A carriage return at the end of a line is the caller's to
 * strip (annotatePatch does); one anywhere else is revealed.
 */
// Joiners and selectors are matched one by one on purpose: each is a character to reveal, not part of another.
/* eslint-disable no-misleading-character-class */
const HIDDEN = new RegExp(
  [
    '[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]', // C0 and C1 controls, DEL (tab and line feed are layout)
    '[\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u3164\\uFFA0]', // soft hyphen, joiners, fillers
    '[\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2064\\u2066-\\u206F]', // zero-width, directional marks and controls
    '[\\uFE00-\\uFE0F\\uFEFF\\uFFF9-\\uFFFB]', // variation selectors, BOM / zero-width no-break space, annotations
    '[\\u{1D173}-\\u{1D17A}\\u{E0000}-\\u{E007F}\\u{E0100}-\\u{E01EF}]', // musical formatting, tags, selectors supplement
  ].join('|'),
  'gu',
);
/* eslint-enable no-misleading-character-class */

/** `U+202E`: how a character is named in a marker and in the list of what was revealed. */
export function codePointName(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

export interface Revealed {
  /** The text with every hidden character replaced by `<U+XXXX>`. */
  text: string;
  /** The hidden characters found, named (`U+202E`), each once, in order of first appearance. */
  found: string[];
  /** How many characters were replaced. */
  count: number;
}

/** `text` with its hidden characters made visible as `<U+XXXX>`, and which there were. */
export function revealHidden(text: string): Revealed {
  const found = new Set<string>();
  let count = 0;
  const revealed = text.replace(HIDDEN, (char) => {
    const name = codePointName(char);
    found.add(name);
    count++;
    return `<${name}>`;
  });
  return { text: revealed, found: [...found], count };
}
