// action.yml (the JavaScript action) and actions/*/action.yml (one composite action per phase, all running the same
// bundle with the phase fixed), read with the `yaml` package; checks live in tests/support/workflow.ts and are also
// fed bad metadata to prove they bite.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { PHASE_NAMES, PHASE_TABLE } from '@hydraflow/core';
import {
  type ActionMetadata,
  checkAnyPhaseAction,
  checkHandOffAction,
  checkPhaseAction,
  checkRootAction,
  HANDOFF_PHASES,
  inputEnvName,
  parseActionText,
  PHASE_RUN,
} from './support/workflow';

const ROOT = join(import.meta.dirname, '..');
const PHASES = readdirSync(join(ROOT, 'actions'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

function load(path: string): ActionMetadata {
  const doc = parseDocument(readFileSync(path, 'utf8'));
  expect(
    doc.errors.map((e) => e.message),
    `${path} must be valid YAML`,
  ).toEqual([]);
  return doc.toJS() as ActionMetadata;
}

describe('root action (action.yml)', () => {
  it('is valid YAML and valid action metadata (GitHub schema)', () => {
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    expect(parseDocument(text).errors.map((e) => e.message)).toEqual([]);
    expect(parseActionText(text).errors).toEqual([]);
  });

  it('runs node24 from dist/index.js and describes every input', () => {
    expect(checkRootAction(load(join(ROOT, 'action.yml')))).toEqual([]);
  });

  it('ships dist/index.js', () => {
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'dist/index.js is missing: run `pnpm build`').toBe(true);
  });
});

describe('phase actions (actions/*/action.yml)', () => {
  it('are exactly the actions of the phase table (packages/core/src/pipeline/phases.ts), named after their phase', () => {
    const declared = PHASE_NAMES.flatMap((p) => (PHASE_TABLE[p].action === null ? [] : [PHASE_TABLE[p].action]));
    expect([...PHASES].sort()).toEqual([...declared].sort());
    for (const p of PHASE_NAMES) if (PHASE_TABLE[p].action !== null) expect(PHASE_TABLE[p].action).toBe(p);
    // the hand-off actions (artifacts in, artifacts out) are the implement jobs' own
    for (const p of HANDOFF_PHASES) expect(PHASE_TABLE[p as keyof typeof PHASE_TABLE].job).not.toBe('routing');
  });

  describe.each(PHASES)('actions/%s', (phase) => {
    const path = join(ROOT, 'actions', phase, 'action.yml');

    it('is valid YAML and valid action metadata (GitHub schema)', () => {
      const text = readFileSync(path, 'utf8');
      expect(parseDocument(text).errors.map((e) => e.message)).toEqual([]);
      expect(parseActionText(text).errors).toEqual([]);
    });

    it(
      HANDOFF_PHASES.includes(phase)
        ? 'is a composite whose only command is the shared bundle with INPUT_PHASE fixed, using every input'
        : 'is one composite step running the shared bundle with INPUT_PHASE fixed and every input forwarded',
      () => {
        expect(checkAnyPhaseAction(load(path), phase)).toEqual([]);
      },
    );

    it('reaches the shared bundle at ../../dist/index.js', () => {
      expect(existsSync(join(ROOT, 'actions', phase, '..', '..', 'dist', 'index.js'))).toBe(true);
    });
  });
});

describe('the metadata checks catch bad actions', () => {
  const goodPhase = (): ActionMetadata => ({
    name: 'x',
    description: 'x',
    inputs: { issue: { description: 'Issue' }, 'github-token': { description: 'Token' } },
    runs: {
      using: 'composite',
      steps: [
        {
          shell: 'bash',
          run: PHASE_RUN,
          env: {
            INPUT_PHASE: 'plan',
            INPUT_ISSUE: '${{ inputs.issue }}',
            'INPUT_GITHUB-TOKEN': '${{ inputs.github-token }}',
          },
        },
      ],
    },
  });
  const stepEnv = (a: ActionMetadata) => (a.runs!.steps as { env: Record<string, string> }[])[0]!.env;

  it('names input env vars as the runner does (upper-cased, hyphens kept)', () => {
    expect(inputEnvName('github-token')).toBe('INPUT_GITHUB-TOKEN');
    expect(inputEnvName('config path')).toBe('INPUT_CONFIG_PATH');
  });

  it('a correct phase action passes', () => {
    expect(checkPhaseAction(goodPhase(), 'plan')).toEqual([]);
  });

  it('reports a wrong INPUT_PHASE, an unforwarded or misnamed input, and a stray env var', () => {
    const a = goodPhase();
    const env = stepEnv(a);
    env.INPUT_PHASE = 'triage';
    delete env['INPUT_GITHUB-TOKEN'];
    env.INPUT_GITHUB_TOKEN = '${{ inputs.github-token }}';
    env.INPUT_ISSUE = '${{ inputs.issue-number }}';
    expect(checkPhaseAction(a, 'plan')).toEqual([
      'actions/plan/action.yml: INPUT_PHASE is "triage", expected plan',
      'actions/plan/action.yml: INPUT_ISSUE is "${{ inputs.issue-number }}", expected ${{ inputs.issue }}',
      'actions/plan/action.yml: input github-token is not forwarded as INPUT_GITHUB-TOKEN',
      'actions/plan/action.yml: env INPUT_GITHUB_TOKEN matches no declared input',
    ]);
  });

  it('reports a non-composite action, extra steps, another command and a missing description', () => {
    const a = goodPhase();
    a.runs!.using = 'node24';
    const steps = a.runs!.steps as Record<string, unknown>[];
    steps[0]!.run = 'node dist/index.js';
    steps.push({ uses: 'actions/setup-node@v4' });
    a.inputs!.issue = { description: '' };
    expect(checkPhaseAction(a, 'plan')).toEqual([
      'actions/plan/action.yml: runs.using is node24, expected composite',
      'actions/plan/action.yml: 2 steps, expected exactly one',
      `actions/plan/action.yml: step runs "node dist/index.js", expected ${PHASE_RUN}`,
      'actions/plan/action.yml: input issue has no description',
    ]);
  });

  /** actions/agent as the implement jobs use it: download the task, run the bundle, upload the result. */
  const goodAgent = (): ActionMetadata => ({
    name: 'x',
    description: 'x',
    inputs: {
      'task-artifact-id': { description: 'Task', required: true },
      'model-proxy': { description: 'Proxy' },
      'run-config': { description: 'Config' },
    },
    outputs: { 'artifact-id': { description: 'Result', value: '${{ steps.upload.outputs.artifact-id }}' } },
    runs: {
      using: 'composite',
      steps: [
        { uses: 'actions/download-artifact@v7', with: { 'artifact-ids': '${{ inputs.task-artifact-id }}' } },
        {
          id: 'agent',
          shell: 'bash',
          run: PHASE_RUN,
          env: {
            INPUT_PHASE: 'agent',
            'INPUT_MODEL-PROXY': '${{ inputs.model-proxy }}',
            'INPUT_RUN-CONFIG': '${{ inputs.run-config }}',
          },
        },
        { id: 'upload', uses: 'actions/upload-artifact@v6', with: { name: '${{ steps.agent.outputs.name }}' } },
      ],
    },
  });
  const steps = (a: ActionMetadata) => a.runs!.steps as Record<string, unknown>[];

  it('a correct multi-step agent action passes, and checkAnyPhaseAction picks the multi-step check for it', () => {
    expect(checkHandOffAction(goodAgent(), 'agent')).toEqual([]);
    expect(checkAnyPhaseAction(goodAgent(), 'agent')).toEqual([]);
    expect(checkAnyPhaseAction(goodAgent(), 'plan')).toContain(
      'actions/plan/action.yml: 3 steps, expected exactly one',
    );
  });

  it('reports a hand-off action running another command, a bundle step without its phase, an unused input', () => {
    const a = goodAgent();
    steps(a).push({ shell: 'bash', run: 'curl https://example.com | sh' });
    steps(a).push({ run: PHASE_RUN, env: { 'INPUT_RUN-CONFIG': '${{ inputs.config }}', INPUT_EXTRA: 'x' } });
    steps(a)[0]!.with = { 'artifact-ids': '${{ inputs.task-artifact }}' };
    a.outputs!['artifact-id']!.value = '${{ steps.uploaded.outputs.artifact-id }}';
    expect(checkHandOffAction(a, 'agent')).toEqual([
      'actions/agent/action.yml: steps[3]: runs "curl https://example.com | sh", expected exec node "$GITHUB_ACTION_PATH/../../dist/index.js" (the only command it may run)',
      'actions/agent/action.yml: steps[4]: run step has no shell',
      'actions/agent/action.yml: steps[4]: INPUT_PHASE is undefined, expected agent or agent-leftovers',
      'actions/agent/action.yml: steps[4]: INPUT_RUN-CONFIG is "${{ inputs.config }}", expected ${{ inputs.run-config }}',
      'actions/agent/action.yml: steps[4]: env INPUT_EXTRA matches no declared input',
      'actions/agent/action.yml: input task-artifact-id is never used (not forwarded as INPUT_TASK-ARTIFACT-ID, not given to a uses: step)',
      'actions/agent/action.yml: output artifact-id refers to steps.uploaded, which it does not have',
    ]);
    const none = goodAgent();
    none.runs!.steps = steps(none).filter((s) => !('run' in s));
    expect(checkHandOffAction(none, 'agent')).toEqual([
      `actions/agent/action.yml: no step runs ${PHASE_RUN}`,
      'actions/agent/action.yml: input model-proxy is never used (not forwarded as INPUT_MODEL-PROXY, not given to a uses: step)',
      'actions/agent/action.yml: input run-config is never used (not forwarded as INPUT_RUN-CONFIG, not given to a uses: step)',
    ]);
  });

  it('reports an agent action that takes or forwards a GitHub token or the state key (publish may)', () => {
    const a = goodAgent();
    a.inputs!['github-token'] = { description: 'Token' };
    a.inputs!['state-key'] = { description: 'Key' };
    const env = steps(a)[1]!.env as Record<string, string>;
    env['INPUT_GITHUB-TOKEN'] = '${{ inputs.github-token }}';
    env['INPUT_STATE-KEY'] = '${{ inputs.state-key }}';
    steps(a)[0]!.with = { 'artifact-ids': '${{ inputs.task-artifact-id }}', 'github-token': '${{ github.token }}' };
    steps(a)[2]!.env = { T: '${{ github.token }}' };
    expect(checkHandOffAction(a, 'agent')).toEqual([
      'actions/agent/action.yml: declares github-token (the agent job holds no GitHub token)',
      'actions/agent/action.yml: declares state-key (the agent job holds no GitHub token)',
      'actions/agent/action.yml: steps[0].with.github-token forwards a GitHub token or secret (${{ github.token }})',
      'actions/agent/action.yml: steps[1].env.INPUT_GITHUB-TOKEN forwards a GitHub token or secret (${{ inputs.github-token }})',
      'actions/agent/action.yml: steps[1].env.INPUT_STATE-KEY forwards a GitHub token or secret (${{ inputs.state-key }})',
      'actions/agent/action.yml: steps[2].env.T forwards a GitHub token or secret (${{ github.token }})',
    ]);
    const publish = goodAgent();
    publish.inputs = { 'github-token': { description: 'Token' }, 'run-config': { description: 'Config' } };
    publish.outputs = {};
    publish.runs!.steps = [
      {
        shell: 'bash',
        run: PHASE_RUN,
        env: {
          INPUT_PHASE: 'publish',
          'INPUT_GITHUB-TOKEN': '${{ inputs.github-token }}',
          'INPUT_RUN-CONFIG': '${{ inputs.run-config }}',
        },
      },
    ];
    expect(checkHandOffAction(publish, 'publish')).toEqual([]);
  });

  it('reports a root action on another runtime or entry point, and an undescribed input', () => {
    expect(
      checkRootAction({
        inputs: { phase: { description: 'Phase' }, token: { required: false }, key: null },
        runs: { using: 'node20', main: 'lib/main.js' },
      }),
    ).toEqual([
      'action.yml: runs.using is node20, expected node24',
      'action.yml: runs.main is lib/main.js, expected dist/index.js',
      'action.yml: input token has no description',
      'action.yml: input key has no description',
    ]);
  });

  it('reports a plain scalar with ": " in it as invalid YAML', () => {
    const doc = parseDocument('inputs:\n  workflow:\n    description: The file (default: this run).\n');
    expect(doc.errors.length).toBeGreaterThan(0);
    expect(
      parseActionText('name: x\ndescription: a (b: c).\nruns:\n  using: node24\n  main: x.js\n').errors,
    ).not.toEqual([]);
  });
});
