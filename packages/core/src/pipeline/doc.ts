/**
 * The generated part of docs/state-machine.md: the label table and the transition table, rendered from code.
 * A test fails when the doc's generated region differs (regenerate by pasting `renderStateMachineTables()` between
 * the markers, or run the test with HYDRAFLOW_UPDATE_DOCS=1).
 */
import { PIPELINE_STAGES } from './labels';
import { TRANSITION_EDGES } from './transitions';

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
