/**
 * Phase sub-issues (grooming-system.md, "Sub-Issue Creation"): the engineer's recommended phases become sub-issues
 * titled `[Phase N]: title`, each carrying a hidden marker so a re-run recognises it and never creates it twice. The
 * parent lists them in its managed Phases section.
 */
import { neutralizeModelText } from '../plan/render';
import type { SubIssueSpec } from './schema';
import { PHASES_SECTION, upsertManagedSection } from './sections';

const MARKER = /<!-- hydraflow:sub-issue parent=(\d+) phase=(\d+) -->/;
const TITLE = /^\[Phase (\d+)\]:/;

function oneLine(text: string, max: number): string {
  const flat = neutralizeModelText(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function subIssueTitle(spec: SubIssueSpec): string {
  return `[Phase ${spec.phase_number}]: ${oneLine(spec.title, 80)}`;
}

/** The sub-issue's body: the seed's sections, its dependencies as links when known, and the hidden phase marker. */
export function renderSubIssueBody(
  spec: SubIssueSpec,
  links: { parent: number; issueOfPhase: (phase: number) => number | undefined },
): string {
  const lines = ['## Description', neutralizeModelText(spec.description.trim()) || '_No description._'];
  if (spec.affected_areas?.length) {
    lines.push('', '## Affected Areas');
    for (const a of spec.affected_areas) {
      const path = oneLine(a.path, 200).replace(/`/g, "'");
      lines.push(`- \`${path}\` - (${a.change})${a.note ? ` ${oneLine(a.note, 300)}` : ''}`);
    }
  }
  if (spec.todos?.length) {
    lines.push('', '## Todo', ...spec.todos.map((t) => `- [ ] ${t.manual ? '[Manual] ' : ''}${oneLine(t.text, 300)}`));
  }
  if (spec.depends_on?.length) {
    lines.push('', '## Depends on');
    for (const phase of spec.depends_on) {
      const issue = links.issueOfPhase(phase);
      lines.push(issue === undefined ? `- Phase ${phase}` : `- #${issue}`);
    }
  }
  lines.push(
    '',
    `Part of #${links.parent}.`,
    '',
    `<!-- hydraflow:sub-issue parent=${links.parent} phase=${spec.phase_number} -->`,
  );
  return lines.join('\n');
}

/**
 * The phases in order of their numbers (numbers are kept, not renumbered: they are how re-runs match sub-issues).
 * A repeated phase number keeps its first spec. A dependency is kept only on an earlier phase that exists: one on an
 * unknown phase, on itself or on a later phase is dropped — so dependencies can never form a cycle — and `notes`
 * says so (HydraFlow's words and numbers only).
 */
export function normalizePhases(specs: readonly SubIssueSpec[]): { phases: SubIssueSpec[]; notes: string[] } {
  const notes: string[] = [];
  const byNumber = new Map<number, SubIssueSpec>();
  for (const spec of specs) {
    if (byNumber.has(spec.phase_number)) notes.push(`A second phase ${spec.phase_number} was dropped.`);
    else byNumber.set(spec.phase_number, spec);
  }
  const phases = [...byNumber.values()]
    .sort((a, b) => a.phase_number - b.phase_number)
    .map((spec) => {
      if (!spec.depends_on) return { ...spec };
      const n = spec.phase_number;
      const kept = [...new Set(spec.depends_on)].filter((d) => {
        const why =
          d === n ? 'itself' : !byNumber.has(d) ? `unknown phase ${d}` : d > n ? `later phase ${d}` : undefined;
        if (why) notes.push(`Phase ${n}: the dependency on ${why} was dropped (a phase depends only on earlier ones).`);
        return why === undefined;
      });
      return { ...spec, depends_on: kept };
    });
  return { phases, notes };
}

/** The phase a sub-issue stands for: its hidden marker, else its `[Phase N]:` title (a marker edited away). */
export function subIssuePhase(issue: { title: string; body?: string | null }): number | undefined {
  const marked = MARKER.exec(issue.body ?? '');
  if (marked) return Number(marked[2]);
  const titled = TITLE.exec(issue.title);
  return titled ? Number(titled[1]) : undefined;
}

/**
 * The parent a phase sub-issue names in its hidden marker. A hint only (anyone can edit a body): the parent's epic
 * phase trusts nothing but its own sub-issue list.
 */
export function subIssueParent(body: string | null | undefined): number | undefined {
  const marked = MARKER.exec(body ?? '');
  return marked ? Number(marked[1]) : undefined;
}

export interface EpicPhase {
  phase: number;
  number: number;
  state: 'open' | 'closed';
  /** It carries a pipeline label: HydraFlow is working on it, or a human took it over (hitl). */
  inPipeline: boolean;
}

/**
 * What an epic does next (docs/grooming.md: one phase at a time). No phase at all → none: the issue is not an epic
 * grooming split (a human set `hydraflow-epic` on it), and nothing is done. Every phase closed → done. A phase in the
 * pipeline → wait for it. Otherwise the lowest open phase starts: dependencies only point at earlier phases
 * (normalizePhases), so it is the one whose dependencies are all done. A closed phase counts as done however it was
 * closed: a human who closes a phase as not planned has decided to skip it.
 */
export function nextEpicStep(
  phases: readonly EpicPhase[],
): { kind: 'none' } | { kind: 'done' } | { kind: 'wait'; phase: EpicPhase } | { kind: 'start'; phase: EpicPhase } {
  if (phases.length === 0) return { kind: 'none' };
  const open = [...phases].filter((p) => p.state === 'open').sort((a, b) => a.phase - b.phase);
  if (open.length === 0) return { kind: 'done' };
  const busy = open.find((p) => p.inPipeline);
  return busy ? { kind: 'wait', phase: busy } : { kind: 'start', phase: open[0]! };
}

/**
 * What to create: the phases without a sub-issue yet (first come first for a phase with several), at most `cap`;
 * the rest are `overCap`. Open or closed, an existing sub-issue counts: a done phase is never created again.
 * `create` and `overCap` hold the very spec objects given.
 */
export function reconcileSubIssues(
  specs: readonly SubIssueSpec[],
  existing: readonly { number: number; title: string; body?: string | null }[],
  cap: number,
): { create: SubIssueSpec[]; existing: { phase: number; number: number }[]; overCap: SubIssueSpec[] } {
  const issueOf = new Map<number, number>();
  for (const issue of existing) {
    const phase = subIssuePhase(issue);
    if (phase !== undefined && !issueOf.has(phase)) issueOf.set(phase, issue.number);
  }
  const found: { phase: number; number: number }[] = [];
  const missing: SubIssueSpec[] = [];
  for (const spec of specs) {
    const number = issueOf.get(spec.phase_number);
    if (number === undefined) missing.push(spec);
    else found.push({ phase: spec.phase_number, number });
  }
  const room = Math.max(0, cap);
  return { create: missing.slice(0, room), existing: found, overCap: missing.slice(room) };
}

/**
 * `body` with its Phases section: a task list of the sub-issues in phase order (GitHub shows each one's title and
 * state), ticked when closed. Replaced in place; idempotent.
 */
export function upsertPhasesSection(
  body: string,
  entries: readonly { phase: number; number: number; state: 'open' | 'closed' }[],
): string {
  const lines = [...entries]
    .sort((a, b) => a.phase - b.phase)
    .map((e) => `- [${e.state === 'closed' ? 'x' : ' '}] #${e.number}`);
  return upsertManagedSection(body, PHASES_SECTION, lines);
}
