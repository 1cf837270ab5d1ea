/**
 * docs/actions.md, rendered from the actions' metadata (action.yml and actions/<name>/action.yml): each action's
 * inputs and outputs with their descriptions and defaults. The test that keeps the page in step with the metadata
 * (tests/actions-doc.test.ts) also rewrites it with HYDRAFLOW_UPDATE_DOCS=1, as docs/state-machine.md is kept.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { isPhaseName, labelFor, PHASE_TABLE } from '@hydraflow/core';

export const ACTIONS_DOC_START =
  '<!-- actions:start (generated from the action.yml files: HYDRAFLOW_UPDATE_DOCS=1 pnpm test) -->';
export const ACTIONS_DOC_END = '<!-- actions:end -->';

interface Meta {
  name?: string;
  description?: string;
  inputs?: Record<string, { description?: string; required?: boolean; default?: unknown } | null>;
  outputs?: Record<string, { description?: string } | null>;
}

/** Every action of the repository: the root one first, then actions/<name> in name order. */
export function actionsOf(root: string): { uses: string; path: string; meta: Meta }[] {
  const names = readdirSync(join(root, 'actions'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const read = (path: string) => parse(readFileSync(join(root, path), 'utf8')) as Meta;
  return [
    { uses: 'hydraflow/hydraflow@v1', path: 'action.yml', meta: read('action.yml') },
    ...names.map((n) => ({
      uses: `hydraflow/hydraflow/actions/${n}@v1`,
      path: `actions/${n}/action.yml`,
      meta: read(`actions/${n}/action.yml`),
    })),
  ];
}

const cell = (text: unknown) =>
  String(text ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\|/g, '\\|');

/** The phase an action runs, from the phase table (packages/core/src/pipeline/phases.ts). */
function phaseLine(phase: keyof typeof PHASE_TABLE): string {
  const p = PHASE_TABLE[phase];
  return [
    `${p.kind === 'step' ? 'Step' : 'Phase'} \`${phase}\``,
    `${p.track} track`,
    `job: ${p.job}${p.ownRun ? ' (a run of its own)' : ''}`,
    ...(p.stage ? [`works at \`${labelFor(p.stage)}\``] : []),
    `model role: ${p.model ?? 'none'}`,
  ].join(' · ');
}

export function renderActionsDoc(root: string): string {
  const parts: string[] = [ACTIONS_DOC_START, ''];
  for (const { uses, path, meta } of actionsOf(root)) {
    parts.push(`## \`${uses}\``, '', `${cell(meta.description)} (\`${path}\`)`, '');
    const phase = path.split('/')[1];
    if (phase !== undefined && isPhaseName(phase)) parts.push(phaseLine(phase), '');
    const inputs = Object.entries(meta.inputs ?? {});
    if (inputs.length > 0) {
      parts.push('| Input | Required | Default | Description |', '| --- | --- | --- | --- |');
      for (const [name, def] of inputs) {
        const fallback = def?.default === undefined || def.default === '' ? '' : `\`${cell(def.default)}\``;
        parts.push(`| \`${name}\` | ${def?.required ? 'yes' : 'no'} | ${fallback} | ${cell(def?.description)} |`);
      }
      parts.push('');
    }
    const outputs = Object.entries(meta.outputs ?? {});
    if (outputs.length > 0) {
      parts.push('| Output | Description |', '| --- | --- |');
      for (const [name, def] of outputs) parts.push(`| \`${name}\` | ${cell(def?.description)} |`);
      parts.push('');
    }
  }
  parts.push(ACTIONS_DOC_END);
  return parts.join('\n');
}

/** The page with its generated region replaced by the current rendering. */
export function updateActionsDoc(current: string, root: string): string {
  const start = current.indexOf(ACTIONS_DOC_START);
  const end = current.indexOf(ACTIONS_DOC_END);
  if (start < 0 || end < 0) throw new Error('docs/actions.md: the generated region’s markers are missing');
  return current.slice(0, start) + renderActionsDoc(root) + current.slice(end + ACTIONS_DOC_END.length);
}
