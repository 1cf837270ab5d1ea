/**
 * memory.md, the store's one file (docs/adr/0015-memory-store.md): a short preamble and a markdown table, one memory
 * a row, that a human reads and edits in GitHub's web editor. Parsing is line by line, so a broken edit costs its own
 * line only: that row is reported (one line each), recalled by nobody, and written back exactly as the human left it.
 * A valid row HydraFlow does not change is written back byte for byte, too: only rows it confirms, adds or drops
 * change.
 */
import { MEMORY_KINDS, MEMORY_LIMITS, memoryKey, normalizeTag, type MemoryEntry, type MemoryKind } from './entry';

export const MEMORY_FILE = 'memory.md';

export const MEMORY_COLUMNS = [
  'Memory',
  'Kind',
  'Tags',
  'Source',
  'Created',
  'Updated',
  'Uses',
  'Confidence',
  'Key',
] as const;

const HEADER = `| ${MEMORY_COLUMNS.join(' | ')} |`;
const SEPARATOR = `| ${MEMORY_COLUMNS.map(() => '---').join(' | ')} |`;

export const MEMORY_PREAMBLE = `# HydraFlow memory

What HydraFlow learnt in this repository (preferences from the shape conversations, later knowledge from reviews),
recalled into the discover and shape prompts when relevant to an issue. One memory a row; HydraFlow keeps a row's
\`Key\` when you edit its text, so your wording stands. Edit, add or delete rows freely: a row HydraFlow cannot read is
reported in the run's summary, ignored, and kept as you wrote it. Source is \`#issue\` (or \`-\` for your own note);
dates are YYYY-MM-DD; Uses a whole number; Confidence 0 to 1; Key may be left empty. A row not confirmed for
\`memory.max_age_days\` days is dropped. Delete this file (or the branch) to reset the memory.
`;

/** One line of the table's body, in file order. */
export type MemoryRow =
  | { type: 'entry'; entry: MemoryEntry; line?: string }
  | { type: 'broken'; line: string; problem: string }
  | { type: 'text'; line: string };

export interface MemoryDocument {
  /** The lines up to the table's separator (none: the file has no table yet). */
  head: string[];
  /** Everything after the separator, line by line. */
  rows: MemoryRow[];
  /** Whether the file had a table; false for a new file and for one whose header a human broke. */
  table: boolean;
}

export interface ParsedMemory {
  document: MemoryDocument;
  entries: MemoryEntry[];
  /** One line per problem, naming the file's line: "memory.md line 12: ...". */
  problems: string[];
}

/** A new file: the preamble and an empty table. */
export function emptyMemoryDocument(): MemoryDocument {
  return { head: [...MEMORY_PREAMBLE.split('\n'), HEADER, SEPARATOR], rows: [], table: true };
}

/** The file's text (null: no file yet) as a document, its readable entries, and what could not be read. */
export function parseMemoryFile(text: string | null): ParsedMemory {
  if (text === null) return { document: emptyMemoryDocument(), entries: [], problems: [] };
  const lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  const at = lines.findIndex((line, i) => isHeader(line) && isSeparator(lines[i + 1] ?? ''));
  if (at < 0) {
    return {
      document: { head: lines, rows: [], table: false },
      entries: [],
      problems: [
        `${MEMORY_FILE}: no memory table (its header row \`${HEADER}\` and the line under it were changed or removed); nothing recalled, a new table is added below on the next write`,
      ],
    };
  }
  const rows: MemoryRow[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const entries: MemoryEntry[] = [];
  lines.slice(at + 2).forEach((line, i) => {
    const number = at + 3 + i;
    if (!line.trim().startsWith('|')) {
      rows.push({ type: 'text', line });
      return;
    }
    const parsed = parseRow(line);
    let problem = typeof parsed === 'string' ? parsed : undefined;
    if (typeof parsed !== 'string' && seen.has(parsed.key))
      problem = `repeats the key ${parsed.key} of line ${seen.get(parsed.key)!}`;
    if (problem !== undefined || typeof parsed === 'string') {
      rows.push({ type: 'broken', line, problem: problem! });
      problems.push(`${MEMORY_FILE} line ${number}: ${problem!}; ignored and kept as written`);
      return;
    }
    seen.set(parsed.key, number);
    entries.push(parsed);
    rows.push({ type: 'entry', entry: parsed, line });
  });
  return { document: { head: lines.slice(0, at + 2), rows, table: true }, entries, problems };
}

/** The document as the file's text: unchanged rows exactly as read, changed and new rows rendered. */
export function renderMemoryFile(document: MemoryDocument): string {
  const head = document.table ? document.head : [...document.head, '', HEADER, SEPARATOR];
  const rows = document.rows.map((row) => (row.type === 'entry' ? (row.line ?? renderMemoryRow(row.entry)) : row.line));
  return `${[...head, ...rows].join('\n')}\n`;
}

export function renderMemoryRow(entry: MemoryEntry): string {
  const cells = [
    escapeCell(entry.text),
    entry.kind,
    entry.tags.join(', '),
    entry.source === null ? '-' : `#${entry.source}`,
    entry.created,
    entry.updated,
    String(entry.uses),
    String(entry.confidence),
    entry.key,
  ];
  return `| ${cells.join(' | ')} |`;
}

function escapeCell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
}

function cellsOf(line: string): string[] {
  const inner = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function isHeader(line: string): boolean {
  const cells = cellsOf(line).map((c) => c.toLowerCase());
  return line.trim().startsWith('|') && cells.join('|') === MEMORY_COLUMNS.join('|').toLowerCase();
}

function isSeparator(line: string): boolean {
  return line.trim().startsWith('|') && cellsOf(line).every((c) => /^:?-{3,}:?$/.test(c));
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const validDay = (day: string) => DAY.test(day) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day);

/** A row as an entry, or what is wrong with it (the first problem found). */
function parseRow(line: string): MemoryEntry | string {
  const cells = cellsOf(line);
  if (cells.length !== MEMORY_COLUMNS.length)
    return `has ${cells.length} cells, expected ${MEMORY_COLUMNS.length} (${MEMORY_COLUMNS.join(', ')}; write | inside a memory as \\|)`;
  const [text, kind, tags, source, created, updated, uses, confidence, key] = cells as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (text === '') return 'Memory is empty';
  if (text.length > MEMORY_LIMITS.text) return `Memory is longer than ${MEMORY_LIMITS.text} characters`;
  if (!(MEMORY_KINDS as readonly string[]).includes(kind))
    return `Kind "${kind}" is not one of ${MEMORY_KINDS.join(', ')}`;
  const tagList = tags === '' ? [] : tags.split(',').map(normalizeTag);
  if (tagList.some((t) => t === '')) return 'Tags are not a comma-separated list of words';
  if (tagList.length > MEMORY_LIMITS.tags) return `more than ${MEMORY_LIMITS.tags} Tags`;
  const sourceMatch = /^#(\d{1,9})$/.exec(source);
  if (!sourceMatch && source !== '-' && source !== '') return `Source "${source}" is not #<issue number> or -`;
  if (!validDay(created)) return `Created "${created}" is not a date (YYYY-MM-DD)`;
  if (!validDay(updated)) return `Updated "${updated}" is not a date (YYYY-MM-DD)`;
  if (!/^\d{1,6}$/.test(uses) || Number(uses) < 1) return `Uses "${uses}" is not a whole number from 1`;
  const conf = Number(confidence);
  if (confidence === '' || !Number.isFinite(conf) || conf < 0 || conf > 1)
    return `Confidence "${confidence}" is not a number from 0 to 1`;
  if (key !== '' && !/^[0-9a-f]{12}$/.test(key)) return `Key "${key}" is not 12 hex characters (or empty)`;
  const k = kind as MemoryKind;
  return {
    key: key || memoryKey(k, text),
    kind: k,
    text,
    tags: [...new Set(tagList)],
    source: sourceMatch ? Number(sourceMatch[1]) : null,
    created,
    updated,
    uses: Number(uses),
    confidence: conf,
  };
}
