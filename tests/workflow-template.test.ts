// The workflow template users copy (workflows-templates/hydraflow.yml), parsed with @actions/workflow-parser and
// checked for triggers, least privilege, per-issue concurrency, script injection and secret handling. Each check is a
// function returning problems (tests/support/workflow.ts), also fed deliberately bad workflows to prove it bites.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exampleEvent, interpolate } from '@hydraflow/testkit';
import {
  type ActionMetadata,
  agentStepInputs,
  checkActionRunScripts,
  checkAgentIsolation,
  checkConcurrency,
  checkHandOff,
  checkParses,
  checkPermissions,
  checkSecretsAndCheckout,
  checkTriggers,
  checkWorkflow,
  checkWorkflowRunScripts,
  child,
  EXPECTED_PERMISSIONS,
  expressionsOf,
  hydraflowStepInputs,
  jobRoles,
  modelProxyStepInputs,
  parseActionText,
  parseWorkflowText,
  publishStepInputs,
  taintedReferences,
} from './support/workflow';

const ROOT = join(import.meta.dirname, '..');
const TEMPLATE_PATH = join(ROOT, 'workflows-templates', 'hydraflow.yml');
const template = readFileSync(TEMPLATE_PATH, 'utf8');
const PHASES = readdirSync(join(ROOT, 'actions'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const requiredInputs = (action: ActionMetadata) =>
  Object.entries(action.inputs ?? {})
    .filter(([, def]) => def?.required === true)
    .map(([name]) => name);

const ENGINEERING_PERMISSIONS = `
    permissions:
      contents: write
      issues: write
      pull-requests: write
      actions: write
      checks: read
      statuses: read`;

/**
 * A minimal workflow that passes every check: the routing job, the agent job (a setup step between its checkout and
 * the agent step) and the publish job. Negative cases replace one part of it.
 */
const GOOD = `
on:
  issues:
    types: [opened, edited, labeled, unlabeled, closed]
  issue_comment:
    types: [created, edited, deleted]
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
permissions: {}
concurrency:
  group: hydraflow-\${{ github.event.issue.number || inputs.issue }}
  cancel-in-progress: false
  queue: max
jobs:
  hydraflow:
    runs-on: ubuntu-latest${ENGINEERING_PERMISSIONS}
    outputs:
      agent: \${{ steps.hydraflow.outputs.agent }}
      start-sha: \${{ steps.hydraflow.outputs.start-sha }}
      run-config: \${{ steps.hydraflow.outputs.run-config }}
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: hydraflow/hydraflow@v1
        id: hydraflow
        with:
          github-token: \${{ secrets.GITHUB_TOKEN }}
          anthropic-api-key: \${{ secrets.ANTHROPIC_API_KEY }}
  agent:
    needs: hydraflow
    if: needs.hydraflow.outputs.agent == 'implement'
    runs-on: ubuntu-latest
    permissions:
      contents: read
    outputs:
      artifact-id: \${{ steps.agent.outputs.artifact-id }}
    steps:
      - id: model
        uses: hydraflow/hydraflow/actions/model-proxy@v1
        with:
          anthropic-api-key: \${{ secrets.ANTHROPIC_API_KEY }}
      - uses: actions/checkout@v5
        with:
          ref: \${{ needs.hydraflow.outputs.start-sha }}
          persist-credentials: false
      - run: npm ci
      - id: agent
        uses: hydraflow/hydraflow/actions/agent@v1
        with:
          model-proxy: \${{ steps.model.outputs.proxy }}
          run-config: \${{ needs.hydraflow.outputs.run-config }}
  publish:
    needs: [hydraflow, agent]
    if: always() && needs.hydraflow.outputs.agent == 'implement'
    runs-on: ubuntu-latest${ENGINEERING_PERMISSIONS}
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: hydraflow/hydraflow/actions/publish@v1
        with:
          result-artifact-id: \${{ needs.agent.outputs.artifact-id }}
          run-config: \${{ needs.hydraflow.outputs.run-config }}
          github-token: \${{ secrets.GITHUB_TOKEN }}
`;

/** GOOD with its first occurrence of `from` replaced. */
const replace = (from: string, to: string) => {
  expect(GOOD).toContain(from);
  return GOOD.replace(from, to);
};

/** GOOD with the first occurrence of `from` inside job `job` replaced. */
const inJob = (job: string, from: string, to: string, source = GOOD) => {
  const start = source.indexOf(`\n  ${job}:\n`);
  expect(start, `job ${job}`).toBeGreaterThanOrEqual(0);
  const at = source.indexOf(from, start);
  const next = source.slice(start + 1).search(/\n {2}[\w-]+:\n/);
  expect(at, `${from} in job ${job}`).toBeGreaterThan(start);
  if (next >= 0) expect(at).toBeLessThan(start + 1 + next);
  return source.slice(0, at) + to + source.slice(at + from.length);
};

/** The one-job layout this template had before ADR 0001: routing, agent and publish as steps of one job. */
const ONE_JOB = `${GOOD.slice(0, GOOD.indexOf('jobs:'))}jobs:
  hydraflow:
    runs-on: ubuntu-latest${ENGINEERING_PERMISSIONS}
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: hydraflow/hydraflow@v1
        id: hydraflow
        with:
          github-token: \${{ secrets.GITHUB_TOKEN }}
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
    expect(t?.events.issue_comment?.types).toEqual(['created', 'edited', 'deleted']);
    expect(t?.events.pull_request?.types).toEqual(['synchronize']);
    expect(t?.events.pull_request_review?.types).toEqual(['submitted']);
    expect(t?.events.workflow_run).toMatchObject({ types: ['completed'], workflows: ['CI'] });
    const inputs = t?.events.workflow_dispatch?.inputs ?? {};
    expect(inputs.issue).toMatchObject({ type: 'string', required: false }); // doctor needs none
    expect(inputs.phase).toMatchObject({ type: 'string', required: true });
    expect(inputs.actor).toMatchObject({ type: 'string' });
  });

  it('runs implement across three jobs: routing (hydraflow), agent and publish', async () => {
    expect(jobRoles((await parseWorkflowText(template)).root)).toEqual({
      routing: ['hydraflow'],
      agent: ['agent'],
      publish: ['publish'],
    });
  });

  it('grants nothing workflow-wide; routing and publish get exactly the engineering track’s permissions, the agent job contents: read', async () => {
    const { root } = await parseWorkflowText(template);
    expect(checkPermissions(root)).toEqual([]);
    const jobs = (parse(template) as { permissions: unknown; jobs: Record<string, { permissions?: unknown }> }).jobs;
    expect((parse(template) as { permissions: unknown }).permissions).toEqual({});
    expect(jobs['hydraflow']?.permissions).toEqual(EXPECTED_PERMISSIONS);
    expect(jobs['publish']?.permissions).toEqual(EXPECTED_PERMISSIONS);
    expect(jobs['agent']?.permissions).toEqual({ contents: 'read' });
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

  it('the agent job gets no GitHub token, state key or push token, runs only when routing asked, at its start-sha', async () => {
    const { root } = await parseWorkflowText(template);
    expect(checkAgentIsolation(root)).toEqual([]);
    const agentAction = parse(readFileSync(join(ROOT, 'actions', 'agent', 'action.yml'), 'utf8')) as ActionMetadata;
    const declared = Object.keys(agentAction.inputs ?? {});
    expect(declared).not.toContain('github-token');
    expect(declared).not.toContain('state-key');
    expect(declared).not.toContain('push-token');
    // The model keys go to the model proxy, first in the job; the agent step gets the proxy's address and token.
    expect(agentStepInputs(root).sort()).toEqual(['job-status', 'model-proxy', 'run-config', 'task-artifact-id']);
    expect(agentStepInputs(root).filter((k) => !declared.includes(k))).toEqual([]);
    expect(requiredInputs(agentAction).filter((k) => !agentStepInputs(root).includes(k))).toEqual([]);
    const proxyAction = parse(
      readFileSync(join(ROOT, 'actions', 'model-proxy', 'action.yml'), 'utf8'),
    ) as ActionMetadata;
    const proxyDeclared = Object.keys(proxyAction.inputs ?? {});
    // and the task, for the first turn it sends as it starts (docs/adr/0021-first-turn-begun-by-the-model-proxy.md)
    expect(modelProxyStepInputs(root).sort()).toEqual([
      'anthropic-api-key',
      'openai-api-key',
      'run-config',
      'task-artifact-id',
    ]);
    expect(modelProxyStepInputs(root).filter((k) => !proxyDeclared.includes(k))).toEqual([]);
  });

  it('passes the publish step only inputs actions/publish declares, and every required one', async () => {
    const { root } = await parseWorkflowText(template);
    const publishAction = parse(readFileSync(join(ROOT, 'actions', 'publish', 'action.yml'), 'utf8')) as ActionMetadata;
    const declared = Object.keys(publishAction.inputs ?? {});
    const withKeys = publishStepInputs(root);
    expect(withKeys.length).toBeGreaterThan(0);
    expect(withKeys.filter((k) => !declared.includes(k))).toEqual([]);
    expect(requiredInputs(publishAction).filter((k) => !withKeys.includes(k))).toEqual([]);
  });

  it('hands off through job outputs that exist: every needs.<job>.outputs and steps.<id> reference resolves', async () => {
    expect(checkHandOff((await parseWorkflowText(template)).root)).toEqual([]);
  });

  it('the agent and publish jobs work from the routing job’s outputs, never from anything read after the agent’s commands', () => {
    type Step = { id?: string; if?: string; uses?: string; with?: Record<string, string> };
    type Job = { outputs?: Record<string, string>; steps: Step[] };
    const { jobs } = parse(template) as { jobs: Record<string, Job> };
    const step = (job: string, uses: RegExp) => jobs[job]?.steps.find((s) => uses.test(s.uses ?? ''));
    const routing = step('hydraflow', /^hydraflow\/hydraflow@/);
    const upload = step('hydraflow', /^actions\/upload-artifact@/);
    const proxy = step('agent', /\/actions\/model-proxy@/);
    expect(routing?.id).toBe('hydraflow');
    expect(upload?.if).toBe("steps.hydraflow.outputs.agent == 'implement'");
    expect(jobs['hydraflow']?.outputs).toEqual({
      agent: '${{ steps.hydraflow.outputs.agent }}',
      issue: '${{ steps.hydraflow.outputs.issue }}',
      'start-sha': '${{ steps.hydraflow.outputs.start-sha }}',
      'run-config': '${{ steps.hydraflow.outputs.run-config }}',
      'task-artifact-id': `\${{ steps.${upload?.id}.outputs.artifact-id }}`,
    });
    expect(step('agent', /\/actions\/agent@/)?.with).toMatchObject({
      'task-artifact-id': '${{ needs.hydraflow.outputs.task-artifact-id }}',
      'model-proxy': `\${{ steps.${proxy?.id}.outputs.proxy }}`,
      'run-config': '${{ needs.hydraflow.outputs.run-config }}',
    });
    expect(proxy?.with?.['run-config']).toBe('${{ needs.hydraflow.outputs.run-config }}');
    expect(step('publish', /\/actions\/publish@/)?.with).toMatchObject({
      issue: '${{ needs.hydraflow.outputs.issue }}',
      'result-artifact-id': '${{ needs.agent.outputs.artifact-id }}',
      'agent-result': '${{ needs.agent.result }}',
      'run-config': '${{ needs.hydraflow.outputs.run-config }}',
    });
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
      .replace('  issue_comment:\n    types: [created, edited, deleted]\n', '')
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

  it('reports workflow-wide permissions (write-all, or any grant)', async () => {
    const all = replace('permissions: {}', 'permissions: write-all');
    expect(checkPermissions((await parseWorkflowText(all)).root)).toEqual([
      'workflow: permissions: write-all (must be {}: each job declares its own permissions)',
    ]);
    const some = replace('permissions: {}', 'permissions:\n  contents: read\n  checks: none');
    expect(checkPermissions((await parseWorkflowText(some)).root)).toEqual([
      'workflow: grants contents: read (must be {}: each job declares its own permissions)',
    ]);
    // No top-level key is as good as {} when every job declares its own.
    expect(checkPermissions((await parseWorkflowText(replace('permissions: {}\n', ''))).root)).toEqual([]);
  });

  it('reports a job without permissions, and routing or publish jobs off the engineering track’s list', async () => {
    const undeclared = inJob('agent', '    permissions:\n      contents: read\n', '');
    expect(checkPermissions((await parseWorkflowText(undeclared)).root)).toEqual([
      "job agent: no permissions (it would get the workflow's, or the repository default: maybe write-all)",
    ]);
    const routing = inJob('hydraflow', 'checks: read', 'checks: write\n      packages: write').replace(
      '      actions: write\n',
      '',
    );
    expect(checkPermissions((await parseWorkflowText(routing)).root)).toEqual([
      'job hydraflow: actions is absent, expected write',
      'job hydraflow: checks is write, expected read',
      'job hydraflow: unexpected permission packages: write',
    ]);
    const publish = inJob('publish', 'issues: write', 'issues: read');
    expect(checkPermissions((await parseWorkflowText(publish)).root)).toEqual([
      'job publish: issues is read, expected write',
    ]);
    const all = inJob('publish', ENGINEERING_PERMISSIONS, '\n    permissions: write-all');
    expect(checkPermissions((await parseWorkflowText(all)).root)).toEqual([
      'job publish: permissions: write-all (must list scopes)',
    ]);
  });

  it('reports an agent job with more than contents: read, and another job beyond the engineering track', async () => {
    const write = inJob('agent', 'contents: read', 'contents: write\n      pull-requests: read');
    expect(checkPermissions((await parseWorkflowText(write)).root)).toEqual([
      'job agent (runs the coding agent): contents: write, at most contents: read',
      'job agent (runs the coding agent): pull-requests: read, at most contents: read',
    ]);
    const readAll = inJob('agent', '\n      contents: read', ' read-all');
    expect(checkPermissions((await parseWorkflowText(readAll)).root)).toEqual([
      'job agent: permissions: read-all (must list scopes)',
    ]);
    const expression = inJob('agent', 'contents: read', 'contents: ${{ inputs.phase }}');
    expect(checkPermissions((await parseWorkflowText(expression)).root)).toEqual([
      'job agent (runs the coding agent): contents: ${{ inputs.phase }}, at most contents: read',
    ]);
    // Nothing at all is fine for the agent job (a public repository's checkout needs no token).
    const none = inJob('agent', '\n      contents: read', ' {}');
    expect(checkPermissions((await parseWorkflowText(none)).root)).toEqual([]);
    const other = `${GOOD}  notify:
    runs-on: ubuntu-latest
    permissions:
      statuses: write
      issues: read
      packages: read
    steps:
      - run: echo done
`;
    expect(checkPermissions((await parseWorkflowText(other)).root)).toEqual([
      'job notify: statuses: write exceeds the engineering track (read)',
      'job notify: packages: read exceeds the engineering track (none)',
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
    const noSteps = GOOD.replace(/ {6}- uses: actions\/checkout@v5\n {8}with:\n(?: {10}.*\n)+/g, '').replace(
      /hydraflow\/hydraflow@v1/g,
      'someone/else@v1',
    );
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

  it('accepts a publish job running the root action with phase: publish, and a guard on the agent step itself', async () => {
    const rootPublish = inJob(
      'publish',
      '      - uses: hydraflow/hydraflow/actions/publish@v1\n        with:\n',
      '      - uses: hydraflow/hydraflow@v1\n        with:\n          phase: publish\n',
    );
    expect(jobRoles((await parseWorkflowText(rootPublish)).root)).toEqual({
      routing: ['hydraflow'],
      agent: ['agent'],
      publish: ['publish'],
    });
    expect(await checkWorkflow(rootPublish)).toEqual([]);
    const stepGuard = inJob('agent', "    if: needs.hydraflow.outputs.agent == 'implement'\n", '').replace(
      '      - id: agent\n',
      "      - id: agent\n        if: needs['hydraflow'].outputs.agent == 'implement'\n",
    );
    expect(checkAgentIsolation((await parseWorkflowText(stepGuard)).root)).toEqual([]);
    // Without a model proxy the agent step may take the model key itself.
    const noProxy = inJob(
      'agent',
      '      - id: model\n        uses: hydraflow/hydraflow/actions/model-proxy@v1\n        with:\n          anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}\n',
      '',
    ).replace(
      '          model-proxy: ${{ steps.model.outputs.proxy }}',
      '          anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}',
    );
    expect(await checkWorkflow(noProxy)).toEqual([]);
  });

  it('reports a model key outside the model proxy, and a model proxy after code of the repository', async () => {
    const keyToAgent = inJob(
      'agent',
      '          model-proxy: ${{ steps.model.outputs.proxy }}',
      '          openai-api-key: ${{ secrets.OPENAI_API_KEY }}',
    );
    expect(checkAgentIsolation((await parseWorkflowText(keyToAgent)).root)).toEqual([
      'jobs.agent.steps[3].with.openai-api-key: the agent job gets a secret other than the model keys of the model-proxy step (${{ secrets.OPENAI_API_KEY }})',
    ]);
    const late = inJob(
      'agent',
      '      - run: npm ci\n',
      '      - run: npm ci\n      - id: late\n        uses: hydraflow/hydraflow/actions/model-proxy@v1\n',
    );
    expect(checkAgentIsolation((await parseWorkflowText(late)).root)).toEqual([
      'jobs.agent.steps[3]: the model proxy runs after steps[1] (it must come first, before any code of the repository)',
    ]);
  });

  it('reports an agent job holding a GitHub token, the state key, the push token or another secret', async () => {
    const bad = replace('permissions: {}\n', 'permissions: {}\nenv:\n  GH_TOKEN: ${{ github.token }}\n')
      .replace(
        "    if: needs.hydraflow.outputs.agent == 'implement'\n",
        "    if: needs.hydraflow.outputs.agent == 'implement'\n    env:\n      PUSH: ${{ secrets.HYDRAFLOW_PUSH_TOKEN }}\n",
      )
      .replace(
        '      - run: npm ci\n',
        '      - uses: actions/setup-node@v4\n        with:\n          registry-token: ${{ secrets.NPM_TOKEN }}\n',
      )
      .replace(
        '          run-config: ${{ needs.hydraflow.outputs.run-config }}\n',
        "          run-config: ${{ needs.hydraflow.outputs.run-config }}\n          github-token: ${{ secrets.GITHUB_TOKEN }}\n          state-key: literal\n        env:\n          KEY: ${{ secrets['HYDRAFLOW_STATE_KEY'] }}\n",
      );
    expect(checkAgentIsolation((await parseWorkflowText(bad)).root)).toEqual([
      'jobs.agent.steps[3]: the agent step gets github-token',
      'jobs.agent.steps[3]: the agent step gets state-key',
      'env.GH_TOKEN: the agent job gets a GitHub token, the state key or the push token (${{ github.token }})',
      'jobs.agent.env.PUSH: the agent job gets a GitHub token, the state key or the push token (${{ secrets.HYDRAFLOW_PUSH_TOKEN }})',
      'jobs.agent.steps[2].with.registry-token: the agent job gets a secret other than the model keys of the model-proxy step (${{ secrets.NPM_TOKEN }})',
      'jobs.agent.steps[3].with.github-token: the agent job gets a GitHub token, the state key or the push token (${{ secrets.GITHUB_TOKEN }})',
      "jobs.agent.steps[3].env.KEY: the agent job gets a GitHub token, the state key or the push token (${{ secrets['HYDRAFLOW_STATE_KEY'] }})",
    ]);
  });

  it('reports an agent step that runs unless routing asked, or works outside the start commit', async () => {
    const unguarded = inJob('agent', "    if: needs.hydraflow.outputs.agent == 'implement'\n", '');
    expect(checkAgentIsolation((await parseWorkflowText(unguarded)).root)).toEqual([
      'jobs.agent.steps[3]: the agent step runs without needs.hydraflow.outputs.agent in the if: of its job or its own',
    ]);
    const otherGuard = inJob('agent', 'needs.hydraflow.outputs.agent', 'needs.hydraflow.outputs.issue');
    expect(checkAgentIsolation((await parseWorkflowText(otherGuard)).root)).toEqual([
      'jobs.agent.steps[3]: the agent step runs without needs.hydraflow.outputs.agent in the if: of its job or its own',
    ]);
    const noNeeds = inJob('agent', '    needs: hydraflow\n', '');
    expect(checkAgentIsolation((await parseWorkflowText(noNeeds)).root)).toEqual([
      'jobs.agent: needs no routing job (hydraflow), so it cannot run only when routing asked',
    ]);
    const eventRef = inJob('agent', '          ref: ${{ needs.hydraflow.outputs.start-sha }}\n', '');
    const headRef = inJob('agent', 'needs.hydraflow.outputs.start-sha', 'github.sha');
    const noCheckout = inJob('agent', '      - uses: actions/checkout@v5\n', '      - uses: actions/cache@v4\n');
    expect(checkAgentIsolation((await parseWorkflowText(eventRef)).root)).toEqual([
      "jobs.agent.steps[1]: checks out the event's ref, not needs.hydraflow.outputs.start-sha",
    ]);
    expect(checkAgentIsolation((await parseWorkflowText(headRef)).root)).toEqual([
      'jobs.agent.steps[1]: checks out ${{ github.sha }}, not needs.hydraflow.outputs.start-sha',
    ]);
    expect(checkAgentIsolation((await parseWorkflowText(noCheckout)).root)).toEqual([
      "jobs.agent: no checkout before the agent step (it works in the routing job's start-sha)",
    ]);
  });

  it('reports the agent step in the routing job (the one-job layout)', async () => {
    expect(checkAgentIsolation((await parseWorkflowText(ONE_JOB)).root)).toEqual([
      'jobs.hydraflow.steps[1]: the agent job also runs hydraflow/hydraflow@v1 (routing and publish need jobs of their own)',
      'jobs.hydraflow.steps[3]: the agent job also runs hydraflow/hydraflow@v1 (routing and publish need jobs of their own)',
      'jobs.hydraflow.steps[1].with.github-token: the agent job gets a GitHub token, the state key or the push token (${{ secrets.GITHUB_TOKEN }})',
      'jobs.hydraflow.steps[3].with.github-token: the agent job gets a GitHub token, the state key or the push token (${{ secrets.GITHUB_TOKEN }})',
      'jobs.hydraflow: needs no routing job (hydraflow), so it cannot run only when routing asked',
      'jobs.hydraflow: no publish job needs it (its result is published by a job of its own)',
    ]);
    // With contents: write, too: the checks overlap on purpose.
    expect(checkPermissions((await parseWorkflowText(ONE_JOB)).root)).toContain(
      'job hydraflow (runs the coding agent): contents: write, at most contents: read',
    );
  });

  it('reports a publish job that is missing, does not need the agent job, or does not run always()', async () => {
    const noAlways = inJob('publish', 'always() && ', '');
    expect(checkAgentIsolation((await parseWorkflowText(noAlways)).root)).toEqual([
      'jobs.publish: the publish job must run always() (it reports an agent job that failed)',
    ]);
    const notCancelled = inJob(
      'publish',
      "always() && needs.hydraflow.outputs.agent == 'implement'",
      "${{ !cancelled() && needs.hydraflow.outputs.agent == 'implement' }}",
    );
    expect(checkAgentIsolation((await parseWorkflowText(notCancelled)).root)).toEqual([]);
    const everyEvent = inJob('publish', " && needs.hydraflow.outputs.agent == 'implement'", '');
    expect(checkAgentIsolation((await parseWorkflowText(everyEvent)).root)).toEqual([
      'jobs.publish: runs always() without needs.hydraflow.outputs.agent in its if: (it would run on every event)',
    ]);
    const notAfterAgent = inJob('publish', 'needs: [hydraflow, agent]', 'needs: [hydraflow]');
    expect(checkAgentIsolation((await parseWorkflowText(notAfterAgent)).root)).toEqual([
      'jobs.agent: no publish job needs it (its result is published by a job of its own)',
    ]);
    const noRouting = inJob('publish', 'needs: [hydraflow, agent]', 'needs: [agent]');
    expect(checkAgentIsolation((await parseWorkflowText(noRouting)).root)).toEqual([
      'jobs.publish: needs no routing job (hydraflow), so it cannot read its outputs',
    ]);
    const none = inJob('publish', 'hydraflow/hydraflow/actions/publish@v1', 'hydraflow/hydraflow/actions/review@v1');
    expect(checkAgentIsolation((await parseWorkflowText(none)).root)).toEqual([
      'no publish job (uses: hydraflow/hydraflow/actions/publish@..., or HydraFlow with phase: publish)',
    ]);
    const noAgent = GOOD.replace('hydraflow/hydraflow/actions/agent@v1', 'someone/else@v1');
    expect(checkAgentIsolation((await parseWorkflowText(noAgent)).root)).toEqual([
      'no agent step (uses: hydraflow/hydraflow/actions/agent@...)',
    ]);
  });

  it('reports hand-offs that resolve to nothing: a missing step, an output not declared, a job not needed', async () => {
    const bad = inJob('hydraflow', '      start-sha: ${{ steps.hydraflow.outputs.start-sha }}\n', '')
      .replace('steps.hydraflow.outputs.run-config', 'steps.routing.outputs.run-config')
      .replace('needs: [hydraflow, agent]', 'needs: [agent]');
    expect(checkHandOff((await parseWorkflowText(bad)).root)).toEqual([
      'jobs.hydraflow.outputs.run-config: refers to steps.routing, which jobs.hydraflow does not have',
      'jobs.agent.steps[1].with.ref: needs.hydraflow.outputs.start-sha is not an output of jobs.hydraflow',
      'jobs.publish.if: refers to needs.hydraflow, which jobs.publish does not need',
      'jobs.publish.steps[1].with.run-config: refers to needs.hydraflow, which jobs.publish does not need',
    ]);
  });

  it('checkWorkflow aggregates: write-all, an injected title and a token in the agent job are caught', async () => {
    const bad = replace('permissions: {}', 'permissions: write-all')
      .replace(
        '      - uses: actions/checkout@v5',
        '      - run: echo ${{ github.event.issue.title }}\n      - uses: actions/checkout@v5',
      )
      .replace(
        '          run-config: ${{ needs',
        '          github-token: ${{ secrets.GITHUB_TOKEN }}\n          run-config: ${{ needs',
      );
    expect(await checkWorkflow(bad)).toEqual([
      'workflow: permissions: write-all (must be {}: each job declares its own permissions)',
      'jobs.hydraflow.steps[0]: run inlines ${{ github.event.issue.title }} (github.event.issue.title): pass it through env:',
      'jobs.agent.steps[3]: the agent step gets github-token',
      'jobs.agent.steps[3].with.github-token: the agent job gets a GitHub token, the state key or the push token (${{ secrets.GITHUB_TOKEN }})',
    ]);
  });
});

/**
 * Issue #17 item 7: a fork cannot enter an issue's concurrency group (and so cannot queue behind, or hold up, an
 * issue's runs). The template's `group:` is evaluated as GitHub does (@actions/expressions, via the lifecycle
 * simulator's `interpolate`) on real @octokit/webhooks-examples payloads, once as HydraFlow's own branch in this
 * repository and once with the same branch name in a fork.
 */
describe('the concurrency group of a fork’s event (issue #17 item 7)', () => {
  const REPO = 'Codertocat/Hello-World'; // the examples' repository
  const FORK = 'mallory/Hello-World';
  const RUN_ID = '987654321';
  const group = String((parse(template) as { concurrency: { group: string } }).concurrency.group);
  const groupOf = (event: string, payload: Record<string, unknown>) =>
    interpolate(group, {
      github: { event_name: event, event: payload, repository: REPO, run_id: RUN_ID },
      inputs: {},
    });
  type Json = Record<string, any>;
  /** A pull_request-bearing example with HydraFlow's branch name for issue 7, its head in `headRepo`. */
  const onBranch = (name: string, action: string, headRepo: string): Json => {
    const e = exampleEvent(name, action) as Json;
    e.pull_request.head.ref = 'hydraflow/issue-7';
    e.pull_request.head.repo = { ...e.repository, full_name: headRepo, fork: headRepo !== REPO };
    return e;
  };

  for (const [name, action] of [
    ['pull_request', 'opened'],
    ['pull_request', 'synchronize'],
    ['pull_request_review', 'submitted'],
  ] as const) {
    it(`${name}.${action}: HydraFlow’s own branch is its issue’s group; the same name in a fork is a group of its own`, () => {
      expect(groupOf(name, onBranch(name, action, REPO))).toBe('hydraflow-hydraflow/issue-7');
      expect(groupOf(name, onBranch(name, action, FORK))).toBe(`hydraflow-fork-${RUN_ID}`);
    });
  }

  it('workflow_run: a CI run on the fork’s lookalike branch is a group of its own', () => {
    const e = exampleEvent('workflow_run', 'completed') as Json;
    e.workflow_run.head_branch = 'hydraflow/issue-7';
    e.workflow_run.head_repository = { ...e.repository, full_name: REPO };
    expect(groupOf('workflow_run', e)).toBe('hydraflow-hydraflow/issue-7');
    e.workflow_run.head_repository = { ...e.repository, full_name: FORK, fork: true };
    expect(groupOf('workflow_run', e)).toBe(`hydraflow-fork-${RUN_ID}`);
  });

  it('issue_comment on a fork’s pull request: the pull request’s own number, never the issue its branch names', () => {
    const e = exampleEvent('issue_comment', 'created') as Json;
    e.issue.number = 12; // the fork's pull request, on hydraflow/issue-7 (a comment's payload carries no head)
    e.issue.pull_request = { url: `https://api.github.com/repos/${REPO}/pulls/12` };
    e.comment.id = 555;
    e.comment.body = 'looks good';
    expect(groupOf('issue_comment', e)).toBe('hydraflow-hydraflow/issue-12');
    e.comment.body = '/ship-it';
    expect(groupOf('issue_comment', e)).toBe('hydraflow-hydraflow/issue-12-comment-555');
    // the issue's own group, for contrast
    e.issue.number = 7;
    delete e.issue.pull_request;
    e.comment.body = 'a reply';
    expect(groupOf('issue_comment', e)).toBe('hydraflow-hydraflow/issue-7');
  });
});
