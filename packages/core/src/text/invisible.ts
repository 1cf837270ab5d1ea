/**
 * Invisible Unicode, by property rather than by a list: a list misses whatever it does not name (variation selectors
 * after an emoji carried whole sentences past the old one). What a browser draws nothing for is:
 *
 * - Default_Ignorable_Code_Point: zero-width characters, bidi controls, variation selectors, tag characters, Hangul
 *   fillers, the soft hyphen, … (Unicode's own definition of "render invisibly when unsupported");
 * - format characters (Cf) beyond those, e.g. the interlinear annotation marks U+FFF9–FFFB (the few that do draw, the
 *   Arabic number signs U+0600–0605, go too: rare in issues, and a model loses nothing by them);
 * - control characters (Cc) other than tab and newline, surrogate halves and noncharacters: never text.
 *
 * Two invisible characters are part of what GitHub shows and are kept where they do that: one presentation selector
 * (VS15 U+FE0E, VS16 U+FE0F) right after an emoji (❤️, 1️⃣), and the zero-width joiner between two emoji (👩‍💻).
 * Anything more (a run of selectors, a selector after a letter) is how bytes are smuggled, and goes.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/u;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const SKIN_TONE = /\p{Emoji_Modifier}/u;
const ZWJ = '\u200D';
const PRESENTATION_SELECTORS = new Set(['\uFE0E', '\uFE0F']);

export function isInvisible(ch: string): boolean {
  return ch !== '\t' && ch !== '\n' && INVISIBLE.test(ch);
}

/** May this invisible character stay, given the character kept before it and the one after it? */
function rendersAsPartOfEmoji(ch: string, before: string, after: string | undefined): boolean {
  if (PRESENTATION_SELECTORS.has(ch)) return EMOJI.test(before); // a second selector follows a selector: no
  if (ch === ZWJ) {
    const joinsFrom = PICTOGRAPH.test(before) || SKIN_TONE.test(before) || PRESENTATION_SELECTORS.has(before);
    return joinsFrom && after !== undefined && PICTOGRAPH.test(after);
  }
  return false;
}

/** The text without the code points a reader cannot see (see above), emoji presentation kept. */
export function stripInvisible(text: string): string {
  const chars = Array.from(text);
  let out = '';
  let before = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (isInvisible(ch) && !rendersAsPartOfEmoji(ch, before, chars[i + 1])) continue;
    out += ch;
    before = ch;
  }
  return out;
}
