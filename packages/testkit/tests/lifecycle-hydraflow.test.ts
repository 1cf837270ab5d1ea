import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { runGit } from '../src/github/git';
import { createLifecycle, formatTimeline, type JobRecord, type Lifecycle } from '../src/lifecycle/index';
import { startModelServer, type ModelServer } from '../src/models/index';
import { commitToBranch, createSampleRepo, type SampleRepo } from '../src/sample-repo/index';
import { MODEL_API_KEY, TEST_STATE_KEY } from '../src/world';
import { octokit } from './github-helpers';

let dir: string;
let sample: SampleRepo;
let gh: GitHubEmulator;
let models: ModelServer;
let lc: Lifecycle | undefined;

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 2,
  needs_discovery: false,
  enrichment: 'slugify in src/strings.js; tests in test/strings.test.js.',
  reasons: ['Precise expected behaviour.', 'One function.'],
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hydraflow-lifecycle-hf-'));
  sample = createSampleRepo(join(dir, 'sample'));
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: sample.bareRepo } });
  gh.addUser({ login: 'alice', permission: 'write' });
  models = await startModelServer({ script: { triage: { json: clearVerdict } } });
  lc = await createLifecycle({
    gh,
    models,
    workflowsDir: sample.workflowsDir,
    repoDir: sample.bareRepo,
    secrets: { ANTHROPIC_API_KEY: MODEL_API_KEY, HYDRAFLOW_STATE_KEY: TEST_STATE_KEY },
  });
});

afterEach(async () => {
  lc?.close();
  lc = undefined;
  await Promise.all([gh.close(), models.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The jobs that route an event: every job but HydraFlow's agent and publish jobs (skipped unless implement runs). */
function routingJobs(jobs: JobRecord[]): JobRecord[] {
  return jobs.filter((j) => !(j.workflow === 'hydraflow.yml' && j.job !== 'hydraflow'));
}

describe('the sample repository under the simulator', () => {
  it('loads HydraFlow’s real template and the sample CI workflow', () => {
    expect(lc!.workflows.map((w) => [w.file, w.name, Object.keys(w.template.events).sort()])).toEqual([
      ['ci.yml', 'CI', ['pull_request', 'push']],
      [
        'hydraflow.yml',
        'HydraFlow',
        [
          'issue_comment',
          'issues',
          'pull_request',
          'pull_request_review',
          'schedule',
          'workflow_dispatch',
          'workflow_run',
        ],
      ],
    ]);
  });

  it('CI runs the real tests on a pull request’s merge commit and reports a check run on its head', async () => {
    const sim = lc!;
    const dev = gh.addUser({ login: 'dev', permission: 'write' });
    const good = commitToBranch(
      sample.bareRepo,
      'feature',
      {
        'src/numbers.js':
          "export function clamp(n, min, max) {\n  if (min > max) throw new RangeError('min must not be greater than max');\n  return Math.min(Math.max(n, min), max);\n}\n\nexport function sum(numbers) {\n  let total = 0;\n  for (const n of numbers) total += n;\n  return total;\n}\n",
      },
      'sum with a loop',
    );
    gh.syncGit({ actor: 'dev', viaToken: 'user' }); // the push itself: CI listens to pushes on main only
    const pr = await octokit(gh.url, dev.token).rest.pulls.create({
      owner: 'acme',
      repo: 'widgets',
      title: 'Loop',
      head: 'feature',
      base: 'main',
    });
    let jobs = await sim.runUntilQuiet();
    expect(
      routingJobs(jobs).map((j) => [j.workflow, j.event, j.action, j.status]),
      formatTimeline(jobs),
    ).toEqual([
      ['ci.yml', 'pull_request', 'opened', 'success'],
      // CI's completion reaches HydraFlow's template (workflow_run lists CI); its job if: skips a foreign branch
      ['hydraflow.yml', 'workflow_run', 'completed', 'skipped'],
    ]);
    expect(jobs[0]!.steps[1]!.stdout).toMatch(/# pass 4/);
    const check = [...gh.world.checkRuns.values()].find((c) => c.head_sha === good);
    expect(check).toMatchObject({ name: 'test', conclusion: 'success' });

    // GitHub makes the test merge commit again only when the base or the head moved: closed and reopened with neither
    // moved, CI runs on the same commit
    const testMerge = () => runGit(['--git-dir', sample.bareRepo, 'rev-parse', `refs/pull/${pr.data.number}/merge`]);
    const openedMerge = testMerge().stdout.trim();
    const devApi = octokit(gh.url, dev.token).rest.pulls;
    await devApi.update({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number, state: 'closed' });
    await devApi.update({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number, state: 'open' });
    jobs = await sim.runUntilQuiet();
    expect(jobs.filter((j) => j.workflow === 'ci.yml').map((j) => [j.action, j.status])).toEqual([
      ['reopened', 'success'],
    ]);
    expect(testMerge().stdout.trim()).toBe(openedMerge);

    // a push that breaks the tests: synchronize → CI fails on the new head
    const bad = commitToBranch(
      sample.bareRepo,
      'feature',
      { 'src/numbers.js': 'export const sum = () => 0;\n' },
      'oops',
    );
    gh.syncGit({ actor: 'dev', viaToken: 'user' });
    jobs = await sim.runUntilQuiet();
    // HydraFlow's template hears the push too, but its job if: skips a branch that is not hydraflow/issue-<n>
    expect(routingJobs(jobs).map((j) => [j.workflow, j.action, j.status])).toEqual([
      ['ci.yml', 'synchronize', 'failure'],
      ['hydraflow.yml', 'synchronize', 'skipped'],
      ['hydraflow.yml', 'completed', 'skipped'],
    ]);
    expect([...gh.world.checkRuns.values()].find((c) => c.head_sha === bad)?.conclusion).toBe('failure');
    // the head moved: a new test merge commit, of the base and the new head
    const syncMerge = testMerge().stdout.trim();
    expect(syncMerge).not.toBe(openedMerge);
    expect(
      runGit(['--git-dir', sample.bareRepo, 'rev-parse', `${syncMerge}^1`, `${syncMerge}^2`]).stdout.split('\n'),
    ).toEqual([sample.initialSha, bad, '']);

    // merging moves main: a push to main runs CI again (the merge was made with the user's token)
    await octokit(gh.url, dev.token).rest.pulls.merge({
      owner: 'acme',
      repo: 'widgets',
      pull_number: pr.data.number,
      merge_method: 'squash',
    });
    jobs = await sim.runUntilQuiet();
    expect(routingJobs(jobs).map((j) => [j.workflow, j.event, j.status])).toEqual([
      ['ci.yml', 'push', 'failure'],
      ['hydraflow.yml', 'workflow_run', 'skipped'],
    ]);
  });

  it('HydraFlow’s template: issues.opened → triage and discovery through dist/ → workflow_dispatch to shape, run by the simulator', async () => {
    const sim = lc!;
    // A vague issue: triage routes it to product discovery, which goes on in the same run (docs/adr/0025; a clear one
    // goes on into planning), and discovery dispatches shape, which posts its directions in a run of its own.
    const brief = {
      summary: 'Slugs of accented titles lose their letters, so links to such pages read as noise.',
      existing_solutions: [
        { name: 'slugify (this repository)', what: 'Lower-cases and dashes words.', gap: 'Drops accented letters.' },
      ],
      user_needs: ['Readable slugs for titles with accents.'],
      opportunities: ['Fold accents to their base letters before slugging.'],
      open_questions: ['Should other scripts than Latin be transliterated too?'],
      sources: [{ title: 'slugify source', where: 'src/slugify.js' }],
    };
    models.setScript({
      triage: { json: { ...clearVerdict, clarity_score: 4, needs_discovery: true } },
      discover: { toolCalls: [{ name: 'submit_brief', input: brief }] },
      shape: {
        json: {
          reply: '',
          directions: [
            {
              letter: 'A',
              name: 'Fold Latin',
              scope: 'Latin accents only.',
              tradeoffs: 'Small; leaves other scripts.',
              size: 'S',
              defer: false,
            },
            {
              letter: 'B',
              name: 'Transliterate All',
              scope: 'Every script.',
              tradeoffs: 'A dependency.',
              size: 'M',
              defer: false,
            },
          ],
        },
      },
    });
    const issue = gh.world.issue({
      title: 'slugify should drop accents',
      body: 'slugify("Crème brûlée") returns "cr-me-br-l-e"; it should return "creme-brulee". Add a test.',
      author: 'alice',
    });
    sim.dispatch('issues', 'opened', { issue: issue.number });
    const all = await sim.runUntilQuiet();
    const timeline = formatTimeline(all);
    // the agent and publish jobs of each run are skipped: neither run prepared implement
    expect(all.filter((j) => j.job !== 'hydraflow').map((j) => j.status)).toEqual(Array(4).fill('skipped'));
    const jobs = routingJobs(all);
    expect(jobs, timeline).toHaveLength(2);
    expect(jobs[0], timeline).toMatchObject({
      workflow: 'hydraflow.yml',
      event: 'issues',
      action: 'opened',
      status: 'success',
    });
    // triage, then discovery in the same step: the brief, then hydraflow-shape
    const opened = jobs[0]!.steps.find((s) => s.name.startsWith('hydraflow/hydraflow'))!;
    expect(opened.outputs.decision, opened.stdout).toBe('triage');
    expect(opened.outputs.stage, opened.stdout).toBe('shape');
    expect(opened.summary).toContain('"phase":"discover"');
    expect(gh.world.commentsOn(issue.number).filter((c) => c.body.startsWith('<!-- hydraflow:brief -->'))).toHaveLength(
      1,
    );
    // shape, in the run discovery dispatched (jobs[1]): the directions, and the issue waits at hydraflow-shape
    const shape = jobs[1]!.steps.find((s) => s.name.startsWith('hydraflow/hydraflow'))!;
    expect(shape.outputs.decision, timeline).toBe('shape');
    expect(shape.outputs.stage, shape.stdout).toBe('shape');
    expect(gh.world.issues.get(issue.number)!.labels).toContain('hydraflow-shape');
    // the label HydraFlow set with the GITHUB_TOKEN started nothing; its dispatch did
    expect(sim.log.some((l) => /issues\.labeled by github-actions\[bot\] \(GITHUB_TOKEN\)/.test(l))).toBe(true);
    expect(jobs[1], timeline).toMatchObject({
      workflow: 'hydraflow.yml',
      event: 'workflow_dispatch',
      actor: 'github-actions[bot]',
      viaToken: 'GITHUB_TOKEN',
      // issue events and dispatches share the group of the issue's branch, as its pull request's events do
      group: `hydraflow-hydraflow/issue-${issue.number}`,
    });
    expect(gh.events.filter((e) => e.name === 'workflow_dispatch').map((e) => e.inputs)).toEqual([
      expect.objectContaining({ issue: String(issue.number), phase: 'shape' }),
    ]);
    // the routing jobs check nothing out (docs/adr/0020): each run read the default branch's .github/hydraflow.yml
    // through the API (one GraphQL request), at the sample's commit
    expect(all.flatMap((j) => j.steps.map((s) => s.name)).filter((n) => /checkout/i.test(n))).toEqual([]);
    const reads = gh.requests.filter(
      (r) => r.method === 'POST' && r.path === '/graphql' && JSON.stringify(r.body).includes('defaultBranchRef'),
    );
    expect(reads.map((r) => r.status)).toEqual([200, 200]);
    expect(gh.world.refs.get(`refs/heads/${gh.world.defaultBranch}`)).toBe(sample.initialSha);
  });
});
