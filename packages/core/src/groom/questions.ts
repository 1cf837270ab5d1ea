/**
 * The Questions section of the issue body, in the seed's format (grooming-system.md, "Question Format"):
 *
 *     - [ ] **Auth method?** - Need to decide OAuth vs JWT _(pm, engineer)_ `id:auth-method`
 *     - [x] ~~Which auth method?~~ - Decided OAuth based on comment #5 `id:auth-method`
 *
 * and the seed's five merging rules for a re-run. Model text is neutralised before it is written: it cannot open an
 * HTML comment, fake a HydraFlow marker or @mention anyone.
 */
import { neutralizeModelText } from '../plan/render';
import { QUESTION_ID_SOURCE, type AnsweredQuestion, type ConsolidatedQuestion, type GroomSummary } from './schema';
import { findManagedBlock, managedBlock, QUESTIONS_SECTION, upsertManagedSection } from './sections';

/** One task-list line of the Questions section as found in the body. */
export interface QuestionLine {
  checked: boolean;
  /** The `id:slug` at the end of the line; absent on lines written by triage or a human. */
  id?: string;
  title: string;
  /** What follows the title: the description of a pending question, the answer of an answered one. */
  text: string;
  /** The agents in `_(pm, engineer)_` (pending format only). */
  sources?: string[];
  /** Struck through (`~~title~~`): answered by grooming. A pending line a human ticked is checked, not answered. */
  answered: boolean;
  /** The line as written. */
  raw: string;
}

/** A question of the merged list that the Questions section is rendered from. */
export interface MergedQuestion {
  id?: string;
  title: string;
  checked: boolean;
  /** Rendered struck through with its answer. */
  answered?: boolean;
  description?: string;
  answer?: string;
  sources?: string[];
  /** Known for questions of this run's summary only (the line format does not carry it). */
  priority?: ConsolidatedQuestion['priority'];
  /** A line kept as it stands in the body (seed rule 4): rendered verbatim. */
  raw?: string;
}

const BOX = /^\s*[-*+][ \t]+\[([ xX])\][ \t]+(.*)$/;
const ID_AT_END = new RegExp(`\\s*\`id:(${QUESTION_ID_SOURCE})\`\\s*$`);
const STRUCK = /^~~((?:\\.|[^~\\])+)~~(.*)$/;
const BOLD = /^\*\*((?:\\.|[^*\\])+)\*\*(.*)$/;
const SOURCES_AT_END = /\s*_\(([^)]*)\)_\s*$/;
/** A Questions heading a human (or an older tool) wrote, without HydraFlow's markers. */
const HUMAN_HEADING = /^(#{1,6})[ \t]+Questions:?[ \t]*$/im;

function parseLine(text: string): QuestionLine | undefined {
  const raw = text.trimEnd();
  const box = BOX.exec(raw);
  if (!box) return undefined;
  let rest = box[2]!;
  const idMatch = ID_AT_END.exec(rest);
  if (idMatch) rest = rest.slice(0, idMatch.index);
  const struck = STRUCK.exec(rest);
  const titled = struck ?? BOLD.exec(rest);
  let tail = titled ? titled[2]! : '';
  const sourcesMatch = titled && !struck ? SOURCES_AT_END.exec(tail) : null;
  if (sourcesMatch) tail = tail.slice(0, sourcesMatch.index);
  const line: QuestionLine = {
    checked: box[1] !== ' ',
    title: titled ? titled[1]!.replace(/\\(.)/g, '$1').trim() : rest.trim(),
    text: tail.replace(/^\s*[-–—:]\s*/, '').trim(),
    answered: struck !== null,
    raw,
  };
  if (idMatch) line.id = idMatch[1]!;
  if (sourcesMatch) {
    line.sources = sourcesMatch[1]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }
  return line;
}

function parseLines(text: string): QuestionLine[] {
  return text.split('\n').flatMap((l) => parseLine(l) ?? []);
}

/** A human-written `## Questions` section: where its heading line ends and where the section ends. */
function humanSection(body: string): { headingEnd: number; end: number } | undefined {
  const heading = HUMAN_HEADING.exec(body);
  if (!heading) return undefined;
  const headingEnd = heading.index + heading[0].length;
  const level = heading[1]!.length;
  const next = new RegExp(`^#{1,${level}}[ \\t]`, 'm').exec(body.slice(headingEnd));
  return { headingEnd, end: next ? headingEnd + next.index : body.length };
}

/**
 * The questions on the issue: the task lines of HydraFlow's managed block, or — best effort, before HydraFlow wrote
 * one — of a human-written `## Questions` section. Lines without an id are kept (merging decides their fate).
 */
export function parseQuestionsSection(body: string): { lines: QuestionLine[]; present: boolean } {
  const managed = findManagedBlock(body, QUESTIONS_SECTION);
  if (managed) return { lines: parseLines(managed.inner), present: true };
  const human = humanSection(body);
  if (human) return { lines: parseLines(body.slice(human.headingEnd, human.end)), present: true };
  return { lines: [], present: false };
}

/** Model text on one line, neutralised. */
function flat(text: string, max: number): string {
  const one = neutralizeModelText(text).replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** A title inside `**…**` or `~~…~~`: its own markup characters escaped so the line parses back. */
function titleText(title: string): string {
  return flat(title, 120).replace(/[\\*~`]/g, '\\$&');
}

/** A description or answer: an unpaired backtick would open a code span swallowing the rest of the line, id included. */
function tailText(text: string): string {
  const one = flat(text, 600);
  return (one.match(/`/g) ?? []).length % 2 === 1 ? one.replace(/`/g, "'") : one;
}

/** One line of the Questions section, in the seed's exact format (a kept line verbatim). */
export function renderQuestionLine(q: MergedQuestion): string {
  if (q.raw !== undefined) return q.raw;
  const id = q.id ? ` \`id:${q.id}\`` : '';
  if (q.answered) return `- [x] ~~${titleText(q.title)}~~${q.answer ? ` - ${tailText(q.answer)}` : ''}${id}`;
  const sources = (q.sources ?? []).map((s) => s.replace(/[^A-Za-z0-9_-]/g, '')).filter(Boolean);
  return [
    `- [${q.checked ? 'x' : ' '}] **${titleText(q.title)}**`,
    q.description?.trim() ? ` - ${tailText(q.description)}` : '',
    sources.length ? ` _(${sources.join(', ')})_` : '',
    id,
  ].join('');
}

/** The questions nobody has checked off yet. */
export function openQuestions<T extends { checked: boolean }>(list: readonly T[]): T[] {
  return list.filter((q) => !q.checked);
}

function fromLine(line: QuestionLine): MergedQuestion {
  return {
    ...(line.id ? { id: line.id } : {}),
    title: line.title,
    checked: line.checked,
    ...(line.answered ? { answered: true, answer: line.text } : { description: line.text }),
    ...(line.sources ? { sources: line.sources } : {}),
    raw: line.raw,
  };
}

function pending(q: ConsolidatedQuestion, checked: boolean): MergedQuestion {
  return { id: q.id, title: q.title, checked, description: q.description, sources: q.sources, priority: q.priority };
}

function answered(a: AnsweredQuestion): MergedQuestion {
  return { id: a.id, title: a.title, checked: true, answered: true, answer: a.answer_summary };
}

/**
 * The seed's five merging rules ("Question Merging Strategy"), existing order first, then new questions:
 * 1. new pending questions are added unchecked — unless a human already checked that id (rule 5);
 * 2. answered questions become checked and struck through with their answer;
 * 3. lines without an id (triage's, a human's) are dropped once the summary has output (superseded);
 * 4. grooming questions absent from the new output are kept as they stand;
 * 5. a checked box is never unchecked: a pending question whose box is ticked stays ticked, and one answered before
 *    stays answered even if the summary asks it again.
 * Without a summary nothing changes. A line repeating an id already seen is dropped (ids stay unique).
 */
export function mergeQuestions(existing: readonly QuestionLine[], summary: GroomSummary | null): MergedQuestion[] {
  if (!summary) return existing.map(fromLine);
  const pendingById = new Map(summary.consolidated_questions.map((q) => [q.id, q]));
  const answeredById = new Map(summary.answered_questions.map((a) => [a.id, a]));
  const out: MergedQuestion[] = [];
  const seen = new Set<string>();
  for (const line of existing) {
    if (!line.id || seen.has(line.id)) continue;
    seen.add(line.id);
    const answer = answeredById.get(line.id);
    const ask = pendingById.get(line.id);
    if (answer) out.push(answered(answer));
    else if (ask && !line.answered) out.push(pending(ask, line.checked));
    else out.push(fromLine(line));
  }
  for (const q of summary.consolidated_questions) {
    if (!seen.has(q.id)) out.push(pending(q, false));
    seen.add(q.id);
  }
  for (const a of summary.answered_questions) {
    if (!seen.has(a.id)) out.push(answered(a));
    seen.add(a.id);
  }
  return out;
}

/** A title compared across runs: case, punctuation, invisible characters and spacing do not count. */
function normalTitle(title: string): string {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u200b-\u200f\u2060\ufeff]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * Ids stay stable across runs: a question whose id is new but whose title matches an existing line's takes that
 * line's id — unless another question of the summary already uses it (ids stay unique).
 */
export function stabilizeQuestionIds(summary: GroomSummary, existing: readonly QuestionLine[]): GroomSummary {
  const existingIds = new Set(existing.flatMap((l) => (l.id ? [l.id] : [])));
  const byTitle = new Map<string, string>();
  for (const l of existing) if (l.id && !byTitle.has(normalTitle(l.title))) byTitle.set(normalTitle(l.title), l.id);
  const used = new Set([...summary.consolidated_questions, ...summary.answered_questions].map((q) => q.id));
  const stable = <Q extends { id: string; title: string }>(q: Q): Q => {
    if (existingIds.has(q.id)) return q;
    const id = byTitle.get(normalTitle(q.title));
    if (id === undefined || used.has(id)) return q;
    used.add(id);
    return { ...q, id };
  };
  return {
    ...summary,
    consolidated_questions: summary.consolidated_questions.map(stable),
    answered_questions: summary.answered_questions.map(stable),
  };
}

/** A question id from a title: lower-case ASCII letters and digits joined by hyphens, at most 60 characters. */
export function slugifyQuestionId(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'question';
}

/**
 * `body` with its Questions section rendered from `merged`: HydraFlow's block replaced in place; else a human's
 * `## Questions` section gets the block under its heading (its task lines move into the block — `merged` holds what
 * is kept of them — and its other text stays); else the section is appended. No questions and no section: unchanged.
 */
export function upsertQuestionsSection(body: string, merged: readonly MergedQuestion[]): string {
  const lines = merged.map(renderQuestionLine);
  const human = findManagedBlock(body, QUESTIONS_SECTION) ? undefined : humanSection(body);
  if (!human || lines.length === 0) return upsertManagedSection(body, QUESTIONS_SECTION, lines);
  const rest = body
    .slice(human.headingEnd, human.end)
    .split('\n')
    .filter((l) => !parseLine(l))
    .join('\n');
  return `${body.slice(0, human.headingEnd)}\n${managedBlock(QUESTIONS_SECTION, lines)}${rest}${body.slice(human.end)}`;
}
