/**
 * Which direction a human's reply selects, deterministically (docs/adr/0016-shape.md): no model reads the reply to
 * decide, and a reply that names two directions, or none, selects nothing — it gets a conversation turn, never a
 * guess. What counts as a selection:
 *
 * - a clause that is nothing but a reference — `B`, `B.`, `(B)`, `Direction B`, `option b`, the direction's name —
 *   optionally followed by "please" or "thanks";
 * - a selecting verb right before a reference: "go with B", "let's do b", "pick Quick & Focused", "I'd choose option
 *   C" (not negated: "don't go with B", "let's not do B" select nothing). A lower-case letter after a verb counts only
 *   at the end of its clause ("let's do a quick fix" is English, "let's do a" is a choice).
 *
 * A bare capital letter elsewhere is still a mention ("B or C?" names two), except the article "A" before a word
 * ("A few thoughts..." names nothing). Quoted lines (`> ...`) and code are not read: quoting the directions comment
 * names every direction.
 */
import type { ShapeDirection } from './direction';
import type { ShapeLetter } from './record';

export type ShapeSelection =
  | { kind: 'selected'; letter: ShapeLetter }
  /** Names two or more directions: a turn asks which. */
  | { kind: 'ambiguous'; letters: ShapeLetter[] }
  /** Names none: a turn answers it. */
  | { kind: 'none' };

type Named = Pick<ShapeDirection, 'letter' | 'name'>;

const VERBS = [
  'go with',
  'going with',
  'goes with',
  'go for',
  'going for',
  'do',
  'pick',
  'picking',
  'choose',
  'choosing',
  'select',
  'take',
  'prefer',
  'vote for',
  'opt for',
  'ship',
  'want',
  'settle on',
];
const NEGATION = /\b(?:not|don'?t|do not|won'?t|never|no|can'?t|cannot|shouldn'?t)\b[^.!?;,\n]{0,12}$/i;
const POLITE = /\s*(?:please|pls|thanks|thank you|thx)?\s*[.!]*$/i;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The text a human wrote: no quoted lines, no code, no HTML comments. */
function ownWords(text: string): string {
  return text
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
    .split(/\r?\n/)
    .filter((line) => !/^\s*>/.test(line))
    .join('\n');
}

/** The letter a reference in `ref` (a clause or what follows a verb) names, if it is exactly one reference. */
function referenceAt(ref: string, directions: readonly Named[]): ShapeLetter | undefined {
  const letters = new Set<string>(directions.map((d) => d.letter));
  const prefixed = /^(?:the\s+)?(?:direction|option)\s+\(?([a-e])\)?\b/i.exec(ref);
  if (prefixed && letters.has(prefixed[1]!.toUpperCase())) return prefixed[1]!.toUpperCase() as ShapeLetter;
  const bare = /^\(?([A-Ea-e])\)?(?=$|[\s.,!?;:)])/.exec(ref);
  if (bare) {
    const letter = bare[1]!;
    const upper = letter.toUpperCase();
    const rest = ref.slice(bare[0].length);
    // a lower-case letter, or "A" before a word, is English unless nothing follows it in its clause
    const clauseEnds = /^\s*(?:[.,!?;:)]|$)/.test(rest);
    const article = letter === 'a' || (letter === 'A' && /^\s+[A-Za-z]/.test(rest));
    if ((clauseEnds || (letter === upper && !article)) && letters.has(upper)) return upper as ShapeLetter;
  }
  const lower = ref.toLowerCase();
  for (const d of directions) {
    const name = d.name.trim().toLowerCase();
    if (name && (lower === name || new RegExp(`^(?:the\\s+)?${escape(name)}(?![\\w&])`).test(lower))) return d.letter;
  }
  return undefined;
}

/** What the reply `text` selects among `directions` (see the file's comment for the rules). */
export function matchSelection(text: string, directions: readonly Named[]): ShapeSelection {
  const words = ownWords(text);
  const clauses = words
    // a dash between words ends a clause as a comma does: "B — just the MVP", "B - just the MVP", "B—just the MVP"
    .split(/[\n.!?;,:]+(?=\s|$)|\s*[—–]\s*|\s+-+\s+|\n/)
    .map((c) => c.trim())
    .filter(Boolean);
  const selected = new Set<ShapeLetter>();
  for (const clause of clauses) {
    const whole = clause.replace(POLITE, '').trim();
    // the clause is a reference and nothing else
    const only = referenceAt(whole, directions);
    if (only && referenceLength(whole, only, directions)) selected.add(only);
  }
  const verbs = new RegExp(`\\b(?:${VERBS.map(escape).join('|')})\\s+`, 'gi');
  for (const m of words.matchAll(verbs)) {
    const before = words.slice(0, m.index);
    if (NEGATION.test(before)) continue;
    const after = words.slice(m.index + m[0].length);
    const letter = referenceAt(after, directions);
    if (letter) selected.add(letter);
  }
  const mentioned = new Set<ShapeLetter>([...selected, ...mentions(words, directions)]);
  if (selected.size === 1 && [...mentioned].every((l) => selected.has(l)))
    return { kind: 'selected', letter: [...selected][0]! };
  if (mentioned.size >= 2) return { kind: 'ambiguous', letters: [...mentioned].sort() };
  return { kind: 'none' };
}

/** Whether the whole clause is the reference to `letter` (nothing after it). */
function referenceLength(clause: string, letter: ShapeLetter, directions: readonly Named[]): boolean {
  const forms = [
    new RegExp(`^(?:the\\s+)?(?:direction|option)\\s+\\(?${letter}\\)?[.!:]*$`, 'i'),
    new RegExp(`^\\(?${letter}\\)?[.!:]*$`, 'i'),
  ];
  if (forms.some((f) => f.test(clause))) return true;
  const name = directions
    .find((d) => d.letter === letter)
    ?.name.trim()
    .toLowerCase();
  return name !== undefined && clause.toLowerCase().replace(/^the\s+/, '') === name;
}

/** Every direction the reply names at all: `Direction X`, `option X`, a name, a capital letter standing alone. */
function mentions(words: string, directions: readonly Named[]): ShapeLetter[] {
  const letters = new Set<string>(directions.map((d) => d.letter));
  const found = new Set<ShapeLetter>();
  for (const m of words.matchAll(/\b(?:direction|option)s?\s+\(?([a-e])\)?(?![\w])/gi))
    if (letters.has(m[1]!.toUpperCase())) found.add(m[1]!.toUpperCase() as ShapeLetter);
  for (const m of words.matchAll(/(?<![\w'’-])\(?([A-E])\)?(?![\w'’&-])/g)) {
    const rest = words.slice(m.index + m[0].length);
    if (m[1] === 'A' && /^\s+[A-Za-z]/.test(rest)) continue; // the article
    if (letters.has(m[1]!)) found.add(m[1] as ShapeLetter);
  }
  const lower = words.toLowerCase();
  for (const d of directions) {
    const name = d.name.trim().toLowerCase();
    if (name && new RegExp(`(?<![\\w&])${escape(name)}(?![\\w&])`).test(lower)) found.add(d.letter);
  }
  return [...found];
}

/**
 * The direction `/ship-it <args>` names: a letter, `Direction X` or a name; none given → the recommended direction,
 * which the shape agent always lists first (A; the defer direction, if any, is always last). Undefined when the
 * argument names no current direction.
 */
export function shipItChoice(args: string, directions: readonly Named[]): ShapeLetter | undefined {
  const arg = args.trim().replace(/[.!]+$/, '');
  if (arg === '') return directions[0]?.letter;
  const letter = referenceAt(arg, directions);
  return letter && referenceLength(arg, letter, directions) ? letter : undefined;
}
