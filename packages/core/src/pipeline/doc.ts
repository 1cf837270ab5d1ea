/**
 * The generated part of docs/state-machine.md: the label table, the phase table and the transition table, rendered
 * from code.
 * A test fails when the doc's generated region differs (regenerate by pasting `renderStateMachineTables()` between
 * the markers, or run the test with HYDRAFLOW_UPDATE_DOCS=1).
 */
import { PIPELINE_STAGES, labelFor } from './labels';
import { TRANSITION_EDGES } from './transitions';
import { PHASE_NAMES, PHASE_TABLE } from './phases';
import { BUILTIN_COMMANDS } from '../router/commands';

export const DOC_START = '<!-- generated:state-machine:start (do not edit; see packages/core/src/pipeline/doc.ts) -->';
export const DOC_END = '<!-- generated:state-machine:end -->';

/**
 * The fork and the rejoin (docs/adr/0012-product-track.md), as a mermaid flowchart drawn from the same facts: one
 * subgraph per track (labels.ts), HydraFlow's edges (transitions.ts) except the escalations to and resumptions from
 * `hitl`, which every stage has (one line says so). A product-track issue rejoins at plan and, its chosen direction in
 * its signed state, goes on to epic: its phase sub-issues each take the engineering track from plan.
 */
export function renderTrackDiagram(): string {
  const tracks = ['junction', 'product', 'engineering'] as const;
  const edges = TRANSITION_EDGES.filter((e) => e.from !== 'hitl' && e.to !== 'hitl' && e.from !== e.to);
  return [
    '```mermaid',
    'flowchart LR',
    ...tracks.flatMap((track) => [
      `  subgraph ${track}`,
      ...PIPELINE_STAGES.filter((s) => s.track === track).map((s) => `    ${s.stage}["${s.stage}"]`),
      '  end',
    ]),
    ...edges.map((e) => `  ${e.from} --> ${e.to}`),
    '  epic -. "each phase sub-issue: plan → ready → review → fixed" .-> plan',
    '```',
    '',
    'Every stage may go to `hitl` (escalation); from `hitl` a human resumes the issue at any stage.',
  ].join('\n');
}

export function renderStateMachineTables(): string {
  const labels = [
    '| Stage | Label | Track | Meaning |',
    '|---|---|---|---|',
    ...PIPELINE_STAGES.map(
      (s) => `| ${s.stage} | \`${s.label}\` | ${s.track} | ${s.description.replace(/^HydraFlow: /, '')} |`,
    ),
  ];
  const phases = [
    '| Phase | Track | Works at | Job | Model | Action | Started by | Does |',
    '|---|---|---|---|---|---|---|---|',
    ...PHASE_NAMES.map((name) => {
      const p = PHASE_TABLE[name];
      const commands = BUILTIN_COMMANDS.filter((c) => c.phase === name).map((c) => `\`/${c.name}\``);
      const by =
        [...p.events, ...commands].join(', ') || (p.job === 'routing' ? '—' : `the ${p.job} job of an implement run`);
      const cells = [
        p.built ? name : `${name} (not in this version)`,
        p.track,
        p.stage ? `\`${labelFor(p.stage)}\`` : '—',
        p.ownRun ? `${p.job} (a run of its own)` : p.job,
        p.model ?? '—',
        p.action ? `\`actions/${p.action}\`` : '—',
        by,
        p.does,
      ];
      return `| ${cells.join(' | ')} |`;
    }),
  ];
  const edges = [
    '| From | To | When (HydraFlow) |',
    '|---|---|---|',
    ...TRANSITION_EDGES.map((e) => `| ${e.from} | ${e.to} | ${e.when} |`),
  ];
  return [
    DOC_START,
    '',
    '### Tracks: the fork and the rejoin',
    '',
    renderTrackDiagram(),
    '',
    '### Labels',
    '',
    ...labels,
    '',
    '### Phases',
    '',
    ...phases,
    '',
    '### Transitions HydraFlow may make',
    '',
    ...edges,
    '',
    DOC_END,
  ].join('\n');
}

/** Replace the generated region of a document (or append it when the markers are missing). */
export function updateStateMachineDoc(doc: string): string {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start) return `${doc.trimEnd()}\n\n${renderStateMachineTables()}\n`;
  return doc.slice(0, start) + renderStateMachineTables() + doc.slice(end + DOC_END.length);
}
