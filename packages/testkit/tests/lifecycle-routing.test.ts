import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { createLifecycle, formatTimeline, type Lifecycle } from '../src/lifecycle/index';
import { commitToBranch, createSampleRepo, type SampleRepo } from '../src/sample-repo/index';
import { octokit } from './github-helpers';

let dir: string;
let sample: SampleRepo;
let gh: GitHubEmulator;
let lc: Lifecycle | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hydraflow-lifecycle-'));
  sample = createSampleRepo(join(dir, 'sample'));
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: sample.bareRepo } });
  gh.addUser({ login: 'alice', permission: 'write' });
});

afterEach(async () => {
  lc?.close();
  lc = undefined;
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

async function lifecycle(files: Record<string, string>) {
  const workflowsDir = join(dir, 'workflows');
  mkdirSync(workflowsDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(workflowsDir, name), text);
  lc = await createLifecycle({ gh, workflowsDir, repoDir: sample.bareRepo, secrets: { MY_SECRET: 's3cret' } });
  return lc;
}

const DISPATCH_SCRIPT = `node -e "
fetch(process.env.API + '/repos/acme/widgets/actions/workflows/next.yml/dispatches', {
  method: 'POST',
  headers: { authorization: 'token ' + process.env.TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify({ ref: 'main', inputs: { issue: process.env.ISSUE } }),
}).then((r) => { if (r.status !== 204) process.exit(1); });
fetch(process.env.API + '/repos/acme/widgets/issues/' + process.env.ISSUE + '/labels', {
  method: 'POST',
  headers: { authorization: 'token ' + process.env.TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify({ labels: ['seen'] }),
}).then((r) => { if (r.status !== 200) process.exit(1); });
"`;

describe('lifecycle routing', () => {
  it('GITHUB_TOKEN events start nothing, workflow_dispatch does; types filter; job if:', async () => {
    const sim = await lifecycle({
      'issues.yml': `name: Issues
on:
  issues:
    types: [opened, labeled]
jobs:
  greet:
    if: \${{ !contains(github.event.issue.title, 'skip') }}
    runs-on: ubuntu-latest
    steps:
      - id: hello
        run: |
          echo "issue $ISSUE by $ACTOR"
          echo "issue=$ISSUE" >> "$GITHUB_OUTPUT"
        env:
          ISSUE: \${{ github.event.issue.number }}
          ACTOR: \${{ github.actor }}
      - name: chain
        if: github.event.action == 'opened'
        run: ${JSON.stringify(DISPATCH_SCRIPT)}
        env:
          API: \${{ github.api_url }}
          TOKEN: \${{ secrets.GITHUB_TOKEN }}
          ISSUE: \${{ steps.hello.outputs.issue }}
`,
      'next.yml': `name: Next
on:
  workflow_dispatch:
    inputs:
      issue:
        required: true
        type: string
jobs:
  next:
    runs-on: ubuntu-latest
    steps:
      - id: echo
        run: echo "got=$ISSUE from $ACTOR" >> "$GITHUB_OUTPUT"
        env:
          ISSUE: \${{ inputs.issue }}
          ACTOR: \${{ github.actor }}
`,
      'closed.yml': `on:
  issues:
    types: [closed]
jobs:
  never:
    runs-on: ubuntu-latest
    steps:
      - run: exit 1
`,
    });
    const issue = gh.world.issue({ title: 'Make it faster', author: 'alice' });
    const skipped = gh.world.issue({ title: 'please skip this', author: 'alice' });
    sim.dispatch('issues', 'opened', { issue: issue.number });
    sim.dispatch('issues', 'opened', { issue: skipped.number });
    const jobs = await sim.runUntilQuiet();
    const text = formatTimeline(jobs);
    expect(
      jobs.map((j) => [j.workflow, j.event, j.status]),
      text,
    ).toEqual([
      ['issues.yml', 'issues', 'success'],
      ['issues.yml', 'issues', 'skipped'],
      ['next.yml', 'workflow_dispatch', 'success'],
    ]);
    expect(jobs[0]!.steps.map((s) => s.outcome)).toEqual(['success', 'success']);
    expect(jobs[0]!.steps[0]!.stdout).toBe(`issue ${issue.number} by alice\n`);
    expect(jobs[2]!.steps[0]!.outputs).toEqual({ got: `${issue.number} from github-actions[bot]` });
    // the label the job added with the GITHUB_TOKEN started nothing, though issues.yml listens to labeled
    expect(
      sim.log.some((l) => /issues\.labeled by github-actions\[bot\] \(GITHUB_TOKEN\).*start no workflow/.test(l)),
    ).toBe(true);
    // the same label added by a person does start it; closed.yml never ran (types filter)
    await octokit(gh.url, gh.addUser({ login: 'bob', permission: 'write' }).token).rest.issues.addLabels({
      owner: 'acme',
      repo: 'widgets',
      issue_number: issue.number,
      labels: ['urgent'],
    });
    const more = await sim.runUntilQuiet();
    expect(more.map((j) => [j.workflow, j.action, j.actor, j.status])).toEqual([
      ['issues.yml', 'labeled', 'bob', 'success'],
    ]);
    expect(more[0]!.steps[1]!.outcome).toBe('skipped');
    expect(sim.jobs.some((j) => j.workflow === 'closed.yml')).toBe(false);
    // every job that ran reported a check run on its commit
    expect([...gh.world.checkRuns.values()].map((c) => [c.name, c.conclusion])).toEqual([
      ['greet', 'success'],
      ['next', 'success'],
      ['greet', 'success'],
    ]);
  });

  it('an App token’s events do start workflows', async () => {
    const sim = await lifecycle({
      'comments.yml': `on:
  issue_comment:
    types: [created]
jobs:
  reply:
    runs-on: ubuntu-latest
    steps:
      - run: echo "$BODY"
        env:
          BODY: \${{ github.event.comment.body }}
`,
    });
    const app = gh.addApp({ login: 'hydraflow-app' });
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    const api = (token: string) =>
      octokit(gh.url, token).rest.issues.createComment({
        owner: 'acme',
        repo: 'widgets',
        issue_number: issue.number,
        body: token === gh.botToken ? 'bot' : 'app',
      });
    await api(gh.botToken);
    await api(app.token);
    const jobs = await sim.runUntilQuiet();
    expect(jobs.map((j) => [j.actor, j.viaToken, j.steps[0]!.stdout])).toEqual([
      ['hydraflow-app[bot]', 'app', 'app\n'],
    ]);
  });

  it('concurrency (cancel-in-progress: false): one running, one pending; a newer pending run cancels the older', async () => {
    const sim = await lifecycle({
      'c.yml': `on:
  issue_comment:
    types: [created]
concurrency:
  group: issue-\${{ github.event.issue.number }}
  cancel-in-progress: false
jobs:
  work:
    runs-on: ubuntu-latest
    steps:
      - run: echo "$BODY"
        env:
          BODY: \${{ github.event.comment.body }}
`,
    });
    const one = gh.world.issue({ title: 'one', author: 'alice' });
    const two = gh.world.issue({ title: 'two', author: 'alice' });
    for (const body of ['first', 'second', 'third']) {
      gh.world.comment(one.number, { author: 'alice', body });
      sim.dispatch('issue_comment', 'created', { issue: one.number });
    }
    gh.world.comment(two.number, { author: 'alice', body: 'other issue' });
    sim.dispatch('issue_comment', 'created', { issue: two.number });
    const jobs = await sim.runUntilQuiet();
    const summary = jobs.map((j) => `${j.group}:${j.status}:${j.steps[0]?.stdout.trim() ?? ''}`);
    expect(summary, formatTimeline(jobs)).toEqual([
      // 'second' was pending behind 'first' and is replaced (cancelled) when 'third' arrives
      'issue-1:cancelled:',
      'issue-1:success:first',
      // runs are executed one at a time, in the order they were queued (GitHub would run the groups in parallel)
      'issue-1:success:third',
      'issue-2:success:other issue',
    ]);
    expect(jobs[0]!.reason).toMatch(/newer run .* pending in concurrency group issue-1/);
  });

  it('a failing run: step fails the job; later steps skip unless if: failure()/always(); outcomes are visible', async () => {
    const sim = await lifecycle({
      'f.yml': `on:
  issues:
    types: [opened]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - id: test
        name: Test
        run: npm test
      - name: Never
        run: echo never
      - name: On failure
        if: failure() && steps.test.outcome == 'failure'
        run: echo "test was $OUTCOME"
        env:
          OUTCOME: \${{ steps.test.outcome }}
      - name: Always
        if: always()
        run: echo "secret is \${#S} chars"
        env:
          S: \${{ secrets.MY_SECRET }}
`,
    });
    // break the sample repository's code on main: its real tests fail
    commitToBranch(
      sample.bareRepo,
      'main',
      { 'src/numbers.js': 'export function clamp(n) { return n; }\nexport function sum() { return 0; }\n' },
      'break it',
    );
    gh.syncGit({ actor: 'alice', viaToken: 'user' });
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    sim.dispatch('issues', 'opened', { issue: issue.number });
    const jobs = await sim.runUntilQuiet();
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.status, formatTimeline(jobs)).toBe('failure');
    expect(job.steps.map((s) => [s.name, s.outcome])).toEqual([
      ['actions/checkout@v5', 'success'],
      ['Test', 'failure'],
      ['Never', 'skipped'],
      ['On failure', 'success'],
      ['Always', 'success'],
    ]);
    expect(job.steps[1]!.stdout).toMatch(/# fail [1-9]/);
    expect(job.steps[3]!.stdout).toBe('test was failure\n');
    expect(job.steps[4]!.stdout).toBe('secret is 6 chars\n');
    expect(formatTimeline(jobs)).toContain('✗ Test');
  });

  it('unknown uses: is a clear error', async () => {
    const sim = await lifecycle({
      'u.yml': `on:
  issues:
    types: [opened]
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - uses: some/thing@v1
`,
    });
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    sim.dispatch('issues', 'opened', { issue: issue.number });
    await expect(sim.runUntilQuiet()).rejects.toThrow(/uses: some\/thing@v1 is not simulated/);
  });

  it('a loop is stopped at maxJobs with the job log', async () => {
    const workflowsDir = join(dir, 'loop');
    mkdirSync(workflowsDir);
    writeFileSync(
      join(workflowsDir, 'next.yml'),
      `on:
  workflow_dispatch:
    inputs:
      issue:
        required: true
        type: string
jobs:
  again:
    runs-on: ubuntu-latest
    steps:
      - run: ${JSON.stringify(DISPATCH_SCRIPT)}
        env:
          API: \${{ github.api_url }}
          TOKEN: \${{ github.token }}
          ISSUE: \${{ inputs.issue }}
`,
    );
    lc = await createLifecycle({ gh, workflowsDir, repoDir: sample.bareRepo, maxJobs: 3 });
    gh.world.issue({ title: 'x', author: 'alice' });
    lc.dispatch('workflow_dispatch', undefined, { workflow: 'next.yml', inputs: { issue: '1' }, sender: 'alice' });
    await expect(lc.runUntilQuiet()).rejects.toThrow(/more than 3 jobs ran[\s\S]*next.yml \/ again/);
  });
});
