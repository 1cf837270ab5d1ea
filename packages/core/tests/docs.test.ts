import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PIPELINE_STAGES, TRANSITION_EDGES } from '../src/index';
import { DOC_END, DOC_START, renderStateMachineTables, updateStateMachineDoc } from '../src/pipeline/doc';

const DOC = fileURLToPath(new URL('../../../docs/state-machine.md', import.meta.url));

describe('docs/state-machine.md', () => {
  it('lists exactly the labels and transitions of the code (HYDRAFLOW_UPDATE_DOCS=1 rewrites it)', () => {
    const current = readFileSync(DOC, 'utf8');
    const expected = updateStateMachineDoc(current);
    if (process.env.HYDRAFLOW_UPDATE_DOCS === '1' && current !== expected) writeFileSync(DOC, expected);
    expect(current).toBe(expected);
    const region = current.slice(current.indexOf(DOC_START), current.indexOf(DOC_END));
    for (const s of PIPELINE_STAGES) expect(region).toContain(`\`${s.label}\``);
    const rows = region.split('\n').filter((l) => /^\| [a-z]+ \| [a-z]+ \| /.test(l) && !l.includes('`'));
    expect(rows).toHaveLength(TRANSITION_EDGES.length);
    expect(renderStateMachineTables()).toContain('| review | ready | review requested changes (refine) |');
  });

  it('draws the fork at triage and the rejoin at plan, from the tracks and edges of the code', () => {
    const region = readFileSync(DOC, 'utf8');
    // the fork: find → discover (product) and find → plan (direct); the rejoin: shape → plan; then plan → ready for
    // an engineering-track issue, plan → epic for a product-track one (its phases each go plan → ready → …)
    for (const edge of [
      'find --> discover',
      'find --> plan',
      'discover --> shape',
      'shape --> plan',
      'plan --> ready',
      'plan --> epic',
    ])
      expect(region).toContain(`  ${edge}\n`);
    expect(region).toMatch(/subgraph product\n {4}discover\["discover"\]\n {4}shape\["shape"\]\n {2}end/);
  });
});

describe('docs/configuration.md', () => {
  it('documents every key, env variable and input', async () => {
    const { CONFIG_VARIABLES, configSchema } = await import('../src/index');
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url)), 'utf8');
    for (const key of Object.keys(configSchema.shape)) expect(doc).toContain(`\`${key}`);
    for (const v of CONFIG_VARIABLES) {
      expect(doc).toContain(`\`${v.path.join('.')}\``);
      expect(doc).toContain(`\`${v.env}\``);
      expect(doc).toContain(`\`${v.input}\``);
    }
  });
});
