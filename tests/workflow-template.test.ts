// The workflow template users copy (workflows-templates/hydraflow.yml), parsed with @actions/workflow-parser and
// checked for triggers, least privilege, per-issue concurrency, script injection and secret handling. Each check is a
// function returning problems (tests/support/workflow.ts), also fed deliberately bad workflows to prove it bites.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  agentStepInputs,
  checkActionRunScripts,
  checkAgentIsolation,
  checkConcurrency,
  checkParses,
  checkPermissions,
  checkSecretsAndCheckout,
  checkTriggers,
  checkWorkflow,
  checkWorkflowRunScripts,
  child,
  expressionsOf,
  hydraflowStepInputs,
  parseActionText,
  parseWorkflowText,
  taintedReferences,
} from './support/workflow';

const ROOT = join(import.meta.dirname, '..');
const TEMPLATE_PATH = join(ROOT, 'workflows-templates', 'hydraflow.yml');
const template = readFileSync(TEMPLATE_PATH, 'utf8');
const PHASES = readdirSync(join(ROOT, 'actions'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

/** A minimal workflow that passes every check; negative cases replace one part of it. */
const GOOD = `
on:
  issues:
    types: [opened, edited, labeled, unlabeled, closed]
  issue_comment:
    types: [created]
  pull_request:
    types: [synchronize]
  pull_request_review:
    types: [submitted]
  workflow_run:
    workflows: [CI]
    types: [completed]
  workflow_dispatch:
    inputs:
      issue: { required: true, type: string }
      phase: { required: true, type: string }
      actor: { type: string }
permissions:
  contents: write
  issues: write
  pull-requests: write
  actions: write
  checks: read
  statuses: read
concurrency:
  group: hydraflow-\${{ github.event.issue.number || inputs.issue }}
  cancel-in-progress: false
  queue: max
jobs:
  hydraflow:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: hydraflow/hydraflow@v1
        id: hydraflow
        with:
          github-token: \${{ secrets.GITHUB_TOKEN }}
          anthropic-api-key: \${{ secrets.ANTHROPIC_API_KEY }}
      - if: steps.hydraflow.outputs.agent == 'implement'
        uses: hydraflow/hydraflow/actions/agent@v1
        with:
          anthropic-api-key: \${{ secrets.ANTHROPIC_API_KEY }}
      - if: always() && steps.hydraflow.outputs.agent == 'implement'
        uses: hydraflow/hydraflow@v1
        with:
          phase: publish
          github-token: \${{ secrets.GITHUB_TOKEN }}
`;

const replace = (from: string, to: string) => {
  expect(GOOD).toContain(from);
  return GOOD.replace(from, to);
};

describe('workflow template (workflows-templates/hydraflow.yml)', () => {
  it('parses and converts with no errors', async () => {
    const parsed = await parseWorkflowText(template);
    expect(checkParses(parsed)).toEqual([]);
    expect(parsed.template?.jobs.length).toBeGreaterThan(0);
  });

  it('triggers on issues, comments, pull-request pushes, reviews, CI runs and workflow_dispatch(issue, phase, actor)', async () => {
    const { template: t } = await parseWorkflowText(template);
    expect(checkTriggers(t)).toEqual([]);
    // Spelled out from the model too, so a failure reads without the checker.
    expect(t?.events.issues?.types).toEqual(
      expect.arrayContaining(['opened', 'edited', 'labeled', 'unlabeled', 'closed']),
    );
    expect(t?.events.issue_comment?.types).toEqual(['created']);
    expect(t?.events.pull_request?.types).toEqual(['synchronize']);
    expect(t?.events.pull_request_review?.types).toEqual(['submitted']);
    expect(t?.events.workflow_run).toMatchObject({ types: ['completed'], workflows: ['CI'] });
    const inputs = t?.events.workflow_dispatch?.inputs ?? {};
    expect(inputs.issue).toMatchObject({ type: 'string', required: true });
    expect(inputs.phase).toMatchObject({ type: 'string', required: true });
    expect(inputs.actor).toMatchObject({ type: 'string' });
  });

  it('grants exactly the engineering track’s permissions and no job widens them', async () => {
    expect(checkPermissions((await parseWorkflowText(template)).root)).toEqual([]);
  });

  it('serialises runs per issue and never cancels one in progress', async () => {
    expect(checkConcurrency((await parseWorkflowText(template)).template)).toEqual([]);
  });

  it('inlines no github.event / github.head_ref / inputs expression into a run: script', async () => {
    expect(checkWorkflowRunScripts((await parseWorkflowText(template)).template)).toEqual([]);
  });

  it('passes secrets to HydraFlow only via with: and checks out without persisting credentials', async () => {
    expect(checkSecretsAndCheckout((await parseWorkflowText(template)).root)).toEqual([]);
  });

  it('passes the HydraFlow step only inputs the root action declares', async () => {
    const { root } = await parseWorkflowText(template);
    const action = parseActionText(readFileSync(join(ROOT, 'action.yml'), 'utf8'));
    expect(action.errors, 'action.yml must parse').toEqual([]);
    const declared = (action.template?.inputs ?? []).map((i) => i.id);
    const withKeys = hydraflowStepInputs(root);
    expect(withKeys.length).toBeGreaterThan(0);
    expect(withKeys.filter((k) => !declared.includes(k))).toEqual([]);
  });

  it('the step that runs the agent gets no GitHub token and no state key', async () => {
    const { root } = await parseWorkflowText(template);
    expect(checkAgentIsolation(root)).toEqual([]);
    const agentAction = parseActionText(readFileSync(join(ROOT, 'actions', 'agent', 'action.yml'), 'utf8'));
    const declared = (agentAction.template?.inputs ?? []).map((i) => i.id);
    expect(declared).not.toContain('github-token');
    expect(agentStepInputs(root).sort()).toEqual(['anthropic-api-key', 'openai-api-key', 'run-config']);
    expect(agentStepInputs(root).filter((k) => !declared.includes(k))).toEqual([]);
  });

  it('the agent and publish steps run with the routing step’s run-config, never one read after the agent’s commands', async () => {
    const steps = (parse(template) as { jobs: { hydraflow: { steps: { with?: Record<string, string> }[] } } }).jobs
      .hydraflow.steps;
    const after = steps.filter((s) => s.with?.['phase'] === 'publish' || s.with?.['run-config'] !== undefined);
    expect(after).toHaveLength(2);
    for (const step of after) expect(step.with?.['run-config']).toBe('${{ steps.hydraflow.outputs.run-config }}');
  });

  it('one concurrency group per issue: issue events, dispatches and HydraFlow’s pull request share it', async () => {
    const { template: t } = await parseWorkflowText(template);
    const group = expressionsOf(child(t?.concurrency, 'group')).join(' ');
    expect(group).toContain('github.event.pull_request.head.ref');
    expect(group).toContain('github.event.workflow_run.head_branch');
    expect(group).toContain("format('hydraflow/issue-{0}', github.event.issue.number || inputs.issue)");
  });

  it('passes every check together', async () => {
    expect(await checkWorkflow(template)).toEqual([]);
  });
});

describe.each(PHASES)('composite phase action actions/%s/action.yml', (phase) => {
  it('parses as an action and inlines no tainted expression into run:', () => {
    const parsed = parseActionText(readFileSync(join(ROOT, 'actions', phase, 'action.yml'), 'utf8'));
    expect(parsed.errors).toEqual([]);
    expect(parsed.template?.runs.using).toBe('composite');
    expect(checkActionRunScripts(parsed.template, `actions/${phase}`)).toEqual([]);
  });
});

describe('the checks catch bad workflows', () => {
  it('the minimal good workflow passes', async () => {
    expect(await checkWorkflow(GOOD)).toEqual([]);
  });

  it('reports schema errors', async () => {
    const problems = checkParses(
      await parseWorkflowText(replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    bogus-key: 1')),
    );
    expect(problems.join('\n')).toMatch(/parse error: .*bogus-key/);
  });

  it('reports missing triggers, types and dispatch inputs', async () => {
    const bad = replace('types: [opened, edited, labeled, unlabeled, closed]', 'types: [opened]')
      .replace('  issue_comment:\n    types: [created]\n', '')
      .replace('phase: { required: true, type: string }', 'phase: { type: boolean }');
    expect(checkTriggers((await parseWorkflowText(bad)).template)).toEqual([
      'issues: types lack edited',
      'issues: types lack labeled',
      'issues: types lack unlabeled',
      'issues: types lack closed',
      'missing trigger: issue_comment',
      'workflow_dispatch: input phase is boolean, not string',
      'workflow_dispatch: input phase is not required',
    ]);
  });

  it('reports permissions: write-all', async () => {
    const bad = replace(
      'permissions:\n  contents: write\n  issues: write\n  pull-requests: write\n  actions: write\n  checks: read\n  statuses: read\n',
      'permissions: write-all\n',
    );
    expect(checkPermissions((await parseWorkflowText(bad)).root)).toEqual([
      'workflow: permissions: write-all (must list scopes)',
    ]);
  });

  it('reports missing permissions, extra or wider scopes', async () => {
    expect(checkPermissions((await parseWorkflowText(replace('permissions:', 'x-permissions:'))).root)).toContain(
      'no top-level permissions (the repository default may be write-all)',
    );
    const bad = replace('checks: read', 'checks: write\n  packages: write');
    expect(checkPermissions((await parseWorkflowText(bad)).root)).toEqual([
      'workflow: checks is write, expected read',
      'workflow: unexpected permission packages: write',
    ]);
  });

  it('reports a job that widens permissions', async () => {
    const bad = replace(
      'runs-on: ubuntu-latest',
      'runs-on: ubuntu-latest\n    permissions:\n      statuses: write\n      issues: read\n      packages: read',
    );
    expect(checkPermissions((await parseWorkflowText(bad)).root)).toEqual([
      'job hydraflow: widens statuses to write (workflow grants read)',
      'job hydraflow: widens packages to read (workflow grants none)',
    ]);
    const all = replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    permissions: write-all');
    expect(checkPermissions((await parseWorkflowText(all)).root)).toEqual([
      'job hydraflow: permissions: write-all (must list scopes)',
    ]);
  });

  it('reports a concurrency group without the issue number, or cancel-in-progress', async () => {
    const bad = replace('github.event.issue.number || inputs.issue', 'github.workflow').replace(
      'cancel-in-progress: false',
      'cancel-in-progress: true',
    );
    expect(checkConcurrency((await parseWorkflowText(bad)).template)).toEqual([
      'concurrency group does not contain the issue number: hydraflow-${{ github.workflow }}',
      'concurrency: cancel-in-progress is true, must be false',
    ]);
    const literal = replace(
      'hydraflow-${{ github.event.issue.number || inputs.issue }}',
      'hydraflow-github.event.issue.number',
    );
    expect(checkConcurrency((await parseWorkflowText(literal)).template)).toEqual([
      'concurrency group does not contain the issue number: hydraflow-github.event.issue.number',
    ]);
    const noCancel = replace('  cancel-in-progress: false\n', '');
    expect(checkConcurrency((await parseWorkflowText(noCancel)).template)).toEqual([
      'concurrency: cancel-in-progress not set (must be false)',
    ]);
    const single = replace('  queue: max\n', '');
    expect(checkConcurrency((await parseWorkflowText(single)).template)).toEqual([
      'concurrency: queue is not set, must be max (keep every pending run)',
    ]);
    const none = replace('concurrency:', 'x-concurrency:');
    expect(
      checkConcurrency((await parseWorkflowText(none.replace(/\nx-concurrency:[^]*?(?=\njobs:)/, ''))).template),
    ).toEqual(['no top-level concurrency']);
  });

  it('reports github.event / head_ref / inputs inlined into run:', async () => {
    const bad = replace(
      '      - uses: actions/checkout@v5',
      [
        '      - run: echo "${{ github.event.issue.title }}"',
        '      - run: |',
        "          echo it's ${{ github.head_ref }}",
        "          echo ${{ inputs['phase'] }} ${{ toJSON(github) }}",
        '      - run: echo ${{ github.event_name }} ${{ github.run_id }}', // not attacker-controlled
        '        env:',
        '          TITLE: ${{ github.event.issue.title }}', // fine: env
        "        if: github.event.issue.title != ''", // fine: if
        '      - uses: actions/checkout@v5',
      ].join('\n'),
    );
    expect(checkWorkflowRunScripts((await parseWorkflowText(bad)).template)).toEqual([
      'jobs.hydraflow.steps[0]: run inlines ${{ github.event.issue.title }} (github.event.issue.title): pass it through env:',
      'jobs.hydraflow.steps[1]: run inlines ${{ github.head_ref }} (github.head_ref): pass it through env:',
      "jobs.hydraflow.steps[1]: run inlines ${{ inputs['phase'] }} (inputs.phase): pass it through env:",
      'jobs.hydraflow.steps[1]: run inlines ${{ toJSON(github) }} (github): pass it through env:',
    ]);
  });

  it('classifies tainted references in expressions', () => {
    expect(taintedReferences('github.event.comment.body')).toEqual(['github.event.comment.body']);
    expect(taintedReferences("GitHub['event'].issue.title")).toEqual(['github.event.issue.title']);
    expect(taintedReferences('github.event_name')).toEqual([]);
    expect(taintedReferences('github.event_path')).toEqual([]);
    expect(taintedReferences("format('github.event {0}', github.run_id)")).toEqual([]);
    expect(taintedReferences('steps.x.outputs.inputs')).toEqual([]);
    expect(taintedReferences('inputs.issue')).toEqual(['inputs.issue']);
    expect(taintedReferences('toJSON(inputs)')).toEqual(['inputs']);
  });

  it('reports inlined expressions in a composite action run:', () => {
    const action = `name: x
description: x
inputs:
  issue: { description: x }
runs:
  using: composite
  steps:
    - shell: bash
      run: node main.js --issue "\${{ inputs.issue }}"
    - shell: bash
      run: node main.js
      env:
        ISSUE: \${{ inputs.issue }}
`;
    const parsed = parseActionText(action);
    expect(parsed.errors).toEqual([]);
    expect(checkActionRunScripts(parsed.template, 'actions/x')).toEqual([
      'actions/x.steps[0]: run inlines ${{ inputs.issue }} (inputs.issue): pass it through env:',
    ]);
  });

  it('reports secrets outside with:, a HydraFlow step without secrets, and persisted checkout credentials', async () => {
    const bad = replace('          persist-credentials: false\n', '          fetch-depth: 1\n')
      .replace(
        'github-token: ${{ secrets.GITHUB_TOKEN }}\n          anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}',
        'config-path: .github/hydraflow.yml',
      )
      .replace(
        '    runs-on: ubuntu-latest',
        '    runs-on: ubuntu-latest\n    env:\n      KEY: ${{ secrets.ANTHROPIC_API_KEY }}',
      )
      .replace(
        '      - uses: hydraflow/hydraflow@v1',
        '      - run: echo "$T"\n        env:\n          T: ${{ secrets.OPENAI_API_KEY }}\n      - uses: hydraflow/hydraflow@v1',
      );
    expect(checkSecretsAndCheckout((await parseWorkflowText(bad)).root)).toEqual([
      'jobs.hydraflow.steps[0]: actions/checkout@v5 without persist-credentials: false',
      'jobs.hydraflow.steps[2]: HydraFlow step gets no secret via with:',
      "jobs.hydraflow.env.KEY: secret outside a step's with: (${{ secrets.ANTHROPIC_API_KEY }})",
      "jobs.hydraflow.steps[1].env.T: secret outside a step's with: (${{ secrets.OPENAI_API_KEY }})",
    ]);
    const noSteps = replace(
      '      - uses: actions/checkout@v5\n        with:\n          persist-credentials: false\n',
      '',
    ).replace(/hydraflow\/hydraflow@v1/g, 'someone/else@v1');
    expect(checkSecretsAndCheckout((await parseWorkflowText(noSteps)).root)).toEqual([
      'no HydraFlow step (uses: hydraflow/hydraflow@...)',
      'no actions/checkout step',
    ]);
  });

  it('reports missing pull-request and CI triggers, and a workflow_run without workflows', async () => {
    const bad = replace('  pull_request:\n    types: [synchronize]\n', '')
      .replace('pull_request_review:\n    types: [submitted]', 'pull_request_review:\n    types: [dismissed]')
      .replace('    workflows: [CI]\n', '');
    expect(checkTriggers((await parseWorkflowText(bad)).template)).toEqual([
      'missing trigger: pull_request',
      'pull_request_review: types lack submitted',
      'workflow_run: no workflows list (name the CI workflows HydraFlow waits for)',
    ]);
  });

  it('reports an agent step holding a GitHub token or the state key', async () => {
    const bad = replace(
      '        uses: hydraflow/hydraflow/actions/agent@v1\n        with:\n',
      '        uses: hydraflow/hydraflow/actions/agent@v1\n        env:\n          T: ${{ github.token }}\n        with:\n          state-key: ${{ secrets.HYDRAFLOW_STATE_KEY }}\n',
    );
    expect(checkAgentIsolation((await parseWorkflowText(bad)).root)).toEqual([
      'jobs.hydraflow.steps[2]: the agent step gets state-key',
      'jobs.hydraflow.steps[2]: the agent step gets a GitHub token or the state key (with.state-key: ${{ secrets.HYDRAFLOW_STATE_KEY }})',
      'jobs.hydraflow.steps[2]: the agent step gets a GitHub token or the state key (env.T: ${{ github.token }})',
    ]);
    const unguarded = replace(
      "      - if: steps.hydraflow.outputs.agent == 'implement'\n",
      '      - name: agent\n',
    ).replace(
      "      - if: always() && steps.hydraflow.outputs.agent == 'implement'\n",
      "      - if: steps.hydraflow.outputs.agent == 'implement'\n",
    );
    expect(checkAgentIsolation((await parseWorkflowText(unguarded)).root)).toEqual([
      'jobs.hydraflow.steps[2]: the agent step runs unconditionally',
      'jobs.hydraflow.steps[3]: the publish step must run always() (it reports an agent step that failed)',
    ]);
    const noPublish = replace('          phase: publish\n', '          phase: triage\n');
    expect(checkAgentIsolation((await parseWorkflowText(noPublish)).root)).toEqual([
      'jobs.hydraflow: no publish step after the agent step',
    ]);
  });

  it('checkWorkflow aggregates: write-all plus an injected title is caught', async () => {
    const bad = replace(
      'permissions:\n  contents: write\n  issues: write\n  pull-requests: write\n  actions: write\n  checks: read\n  statuses: read\n',
      'permissions: write-all\n',
    ).replace(
      '      - uses: actions/checkout@v5',
      '      - run: echo ${{ github.event.issue.title }}\n      - uses: actions/checkout@v5',
    );
    expect(await checkWorkflow(bad)).toEqual([
      'workflow: permissions: write-all (must list scopes)',
      'jobs.hydraflow.steps[0]: run inlines ${{ github.event.issue.title }} (github.event.issue.title): pass it through env:',
    ]);
  });
});
