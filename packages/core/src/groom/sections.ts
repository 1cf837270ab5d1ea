/**
 * HydraFlow's managed sections of an issue body: a heading, then a block between hidden markers that HydraFlow
 * rewrites in place on every run. Everything outside the block is the humans' and is left as it is.
 *
 *     ## Questions
 *     <!-- hydraflow:questions -->
 *     ...
 *     <!-- /hydraflow:questions -->
 *
 * Imports nothing: record.ts (reached from state/schema.ts) uses it.
 */
export interface ManagedSection {
  /** The marker name: `<!-- hydraflow:<name> -->`. */
  name: string;
  /** The heading's text (level 2), written once when HydraFlow adds the section. */
  title: string;
}

export const QUESTIONS_SECTION: ManagedSection = { name: 'questions', title: 'Questions' };
export const PHASES_SECTION: ManagedSection = { name: 'phases', title: 'Phases' };

const openMarker = (s: ManagedSection) => `<!-- hydraflow:${s.name} -->`;
const closeMarker = (s: ManagedSection) => `<!-- /hydraflow:${s.name} -->`;

/** The managed block (markers included) and its content, when both markers are present in order. */
export function findManagedBlock(
  body: string,
  section: ManagedSection,
): { start: number; end: number; inner: string } | undefined {
  const start = body.indexOf(openMarker(section));
  if (start < 0) return undefined;
  const innerStart = start + openMarker(section).length;
  const close = body.indexOf(closeMarker(section), innerStart);
  if (close < 0) return undefined;
  return { start, end: close + closeMarker(section).length, inner: body.slice(innerStart, close) };
}

/** The block alone: the markers around `lines`. */
export function managedBlock(section: ManagedSection, lines: readonly string[]): string {
  return [openMarker(section), ...lines, closeMarker(section)].join('\n');
}

/**
 * `body` with the managed block holding `lines`: replaced in place when present, else appended under a new heading
 * (nothing to add and no block: the body is returned unchanged). Idempotent.
 */
export function upsertManagedSection(body: string, section: ManagedSection, lines: readonly string[]): string {
  const block = managedBlock(section, lines);
  const found = findManagedBlock(body, section);
  if (found) return body.slice(0, found.start) + block + body.slice(found.end);
  if (lines.length === 0) return body;
  const head = body.trimEnd();
  return `${head}${head ? '\n\n' : ''}## ${section.title}\n${block}`;
}

/** `body` without the managed blocks of `sections` (and the heading right above each): the humans' text only. */
export function stripManagedSections(body: string, sections: readonly ManagedSection[]): string {
  let out = body;
  for (const section of sections) {
    const found = findManagedBlock(out, section);
    if (!found) continue;
    const heading = new RegExp(`(^|\\n)#{1,6}[ \\t]+${section.title}[ \\t]*\\r?\\n\\s*$`, 'i').exec(
      out.slice(0, found.start),
    );
    const start = heading ? heading.index + heading[1]!.length : found.start;
    out = out.slice(0, start) + out.slice(found.end);
  }
  return out;
}
