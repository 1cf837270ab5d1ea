/**
 * When grooming runs again without a command (docs/grooming.md, "When it runs"): cheap, deterministic checks on the
 * event alone, no model — the seed's "don't re-run on every comment".
 */
import { parseQuestionsSection } from './questions';
import { PHASES_SECTION, QUESTIONS_SECTION, stripManagedSections } from './sections';

const STOPWORDS = new Set(
  (
    'the and but for nor not yet with from into onto about above below over under again then than that this these ' +
    'those there here what which who whom whose when where why how all any both each few more most other some such ' +
    'own same too very can could would should will shall may might must does did done doing have has had having are ' +
    'was were been being its our your you they them their his her him she it we us me my mine yours ours just also ' +
    'only please thanks thank issue question questions answer need needs want wants like use using used one two way ' +
    'ok okay yes sure let get got make made know think see'
  ).split(' '),
);

/** Folds the usual English endings so "pages", "paging" and "paged" meet (both sides go through it). */
function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 3 && /(?:ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** The significant words of a text: 3+ characters, not stop words, stemmed; camelCase counts as its parts. */
function keywords(text: string): Set<string> {
  const words = text
    .normalize('NFKC')
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return new Set(words.filter((w) => w.length >= 3 && !STOPWORDS.has(w)).map(stem));
}

function normal(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const MIN_CHARS = 15;
const REACTION =
  /^(?:[+-]1|thanks?(?: you)?(?: so much| a lot)?|thx|ty|lgtm|looks good(?: to me)?|ok(?:ay)?|sounds good|great|nice|cool|agreed?|done|(?:\p{Extended_Pictographic}|\u200d|\ufe0f|\s)+)[\s!.]*$/iu;

/** Every sentence ends with "?": the commenter asks, they do not answer. */
function onlyQuestions(text: string): boolean {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return sentences.length > 0 && sentences.every((s) => s.endsWith('?'));
}

/**
 * The ids of the open questions a comment likely answers. Nothing for an empty comment, a slash command, a bare
 * reaction (+1, thanks, lgtm…), fewer than 15 characters of its own (quotes aside) or a comment that only asks.
 * Otherwise a question is answered when the comment names its id (`id:auth-method`, or the hyphenated slug alone),
 * contains its title (a quote, typically), or shares with it at least 2 significant words of the title or 3 of the
 * title and description; when exactly one question is open, any such substantive comment answers it.
 */
export function likelyAnswers(
  comment: string,
  open: readonly { id: string; title: string; text?: string }[],
): string[] {
  const text = comment.trim();
  if (!text || text.startsWith('/')) return [];
  const own = text
    .split('\n')
    .filter((l) => !/^\s*>/.test(l))
    .join('\n')
    .trim();
  const flat = own.replace(/\s+/g, ' ');
  if (flat.length < MIN_CHARS || REACTION.test(flat) || onlyQuestions(own)) return [];
  const lower = text.toLowerCase();
  const whole = ` ${normal(text)} `;
  const words = keywords(own);
  const hits = (keys: Set<string>) => [...keys].filter((k) => words.has(k)).length;
  return open
    .filter((q) => {
      const bySlug = q.id.includes('-') && new RegExp(`(?:^|[^a-z0-9-])${q.id}(?:$|[^a-z0-9-])`).test(lower);
      if (lower.includes(`id:${q.id}`) || bySlug) return true;
      const title = normal(q.title);
      if (title.length >= 8 && whole.includes(` ${title} `)) return true;
      if (hits(keywords(q.title)) >= 2 || hits(keywords(`${q.title} ${q.text ?? ''}`)) >= 3) return true;
      return open.length === 1;
    })
    .map((q) => q.id);
}

const MIN_WORDS = 3;
const MIN_SHARE = 0.1;

/** Myers' edit distance (words deleted + inserted), or undefined when it exceeds `max`. */
function editDistance(a: readonly string[], b: readonly string[], max: number): number | undefined {
  const offset = max + 1;
  const v = new Array<number>(2 * max + 3).fill(0);
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= a.length && y >= b.length) return d;
    }
  }
  return undefined;
}

function bodyWords(body: string): string[] {
  const human = stripManagedSections(body, [QUESTIONS_SECTION, PHASES_SECTION]);
  return human.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Whether an edit of the issue body should groom again. A question box newly ticked is material. Otherwise only the
 * humans' text counts — HydraFlow's Questions and Phases sections aside — as words: whitespace, case and punctuation
 * do not. Material is a change of at least 3 words (replaced, added or removed) or of 10% of the words.
 */
export function materialBodyEdit(
  oldBody: string,
  newBody: string,
): { material: boolean; reason: string; newlyChecked: string[] } {
  const wasOpen = new Set(parseQuestionsSection(oldBody).lines.flatMap((l) => (l.id && !l.checked ? [l.id] : [])));
  const newlyChecked = [
    ...new Set(
      parseQuestionsSection(newBody).lines.flatMap((l) => (l.id && l.checked && wasOpen.has(l.id) ? [l.id] : [])),
    ),
  ];
  if (newlyChecked.length > 0) {
    return { material: true, reason: `question ticked: ${newlyChecked.join(', ')}`, newlyChecked };
  }
  const before = bodyWords(oldBody);
  const after = bodyWords(newBody);
  const distance = editDistance(before, after, 2 * MIN_WORDS);
  if (distance === undefined) return { material: true, reason: 'the text changed substantially', newlyChecked };
  const common = (before.length + after.length - distance) / 2;
  const changed = Math.max(before.length - common, after.length - common);
  if (changed === 0) {
    return {
      material: false,
      reason: 'only whitespace, case, punctuation or HydraFlow’s sections changed',
      newlyChecked,
    };
  }
  if (changed >= MIN_WORDS || changed >= MIN_SHARE * Math.max(before.length, after.length)) {
    return { material: true, reason: `${changed} word${changed === 1 ? '' : 's'} changed`, newlyChecked };
  }
  return { material: false, reason: `only ${changed} word${changed === 1 ? '' : 's'} changed`, newlyChecked };
}
