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
