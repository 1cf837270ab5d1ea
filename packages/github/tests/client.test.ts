import { afterEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '@hydraflow/testkit';
import { createRestClient, GraphqlGrooming, RateLimitedError, RestIssues } from '../src/index';
import { lastLabelEvent } from '@hydraflow/core';

let gh: GitHubEmulator | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

async function setup(options: { maxRateLimitWaitSeconds?: number } = {}) {
  let now = 1_900_000_000_000;
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', clock: () => now });
  const sleeps: number[] = [];
  const octokit = createRestClient({
    token: gh.botToken,
    baseUrl: gh.url,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms; // the emulator's clock moves with our waits
    },
    ...options,
  });
  const issues = new RestIssues(octokit, { owner: 'acme', repo: 'widgets' }, ['github-actions[bot]']);
  const issue = gh.world.issue({ title: 't', body: 'b', author: 'acme' });
  return { gh, issues, issue, sleeps };
}

describe('the GitHub client’s request policy', () => {
  it('waits out a secondary rate limit for as long as retry-after says, then succeeds', async () => {
    const { gh, issues, issue, sleeps } = await setup();
    gh.faults.secondaryRateLimit({ writesPerMinute: 2 });
    for (let i = 0; i < 4; i++) await issues.createComment(issue.number, `comment ${i}`, `marker-${i}`);
    expect(gh.world.commentsOn(issue.number).map((c) => c.body)).toEqual([0, 1, 2, 3].map((i) => `comment ${i}`));
    expect(sleeps.length).toBeGreaterThan(0);
    expect(sleeps.every((ms) => ms >= 1000)).toBe(true);
  });

  it('gives up with a clear error when the wait is longer than allowed', async () => {
    const { gh, issues, issue } = await setup({ maxRateLimitWaitSeconds: 1 });
    gh.faults.secondaryRateLimit({ writesPerMinute: 1 });
    await issues.createComment(issue.number, 'first', 'm1');
    await expect(issues.createComment(issue.number, 'second', 'm2')).rejects.toThrow(RateLimitedError);
    expect(gh.world.commentsOn(issue.number)).toHaveLength(1);
  });

  it('masks the run’s secret values in everything it sends: a comment’s body, a label', async () => {
    gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets' });
    const secret = 'hf-secret-5d1c9a7e';
    const octokit = createRestClient({ token: gh.botToken, baseUrl: gh.url, redact: [secret] });
    const issues = new RestIssues(octokit, { owner: 'acme', repo: 'widgets' }, ['github-actions[bot]']);
    const issue = gh.world.issue({ title: 't', body: 'b', author: 'acme' });
    const comment = await issues.createComment(issue.number, `the tests printed ${secret} <!-- m -->`, '<!-- m -->');
    await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
      owner: 'acme',
      repo: 'widgets',
      issue_number: issue.number,
      labels: [`x-${secret}`],
    });
    expect(gh.world.commentsOn(issue.number).map((c) => c.body)).toEqual(['the tests printed *** <!-- m -->']);
    expect(comment.body).toBe('the tests printed *** <!-- m -->');
    expect([...gh.world.issues.get(issue.number)!.labels]).toEqual(['x-***']);
    expect(JSON.stringify(gh.requests.map((r) => r.body ?? null))).not.toContain(secret);
  });

  it('never repeats a comment GitHub wrote before failing', async () => {
    const { gh, issues, issue } = await setup();
    gh.faults.writeSucceedsThen502(1, { methods: ['POST'], pathIncludes: '/comments' });
    const comment = await issues.createComment(issue.number, 'hello <!-- m -->', '<!-- m -->');
    expect(gh.world.commentsOn(issue.number).map((c) => c.id)).toEqual([comment.id]);
  });

  it('posts again when the failed write had not happened', async () => {
    const { gh, issues, issue } = await setup();
    gh.faults.failNext(1, 502, { methods: ['POST'], pathIncludes: '/comments' });
    await issues.createComment(issue.number, 'hello <!-- m -->', '<!-- m -->');
    expect(gh.world.commentsOn(issue.number)).toHaveLength(1);
  });

  it('reads the reaction lock as a test-and-set', async () => {
    const { issues, issue } = await setup();
    const first = await issues.reactToIssue(issue.number, 'eyes');
    const second = await issues.reactToIssue(issue.number, 'eyes');
    expect([first.created, second.created]).toEqual([true, false]);
    expect(second.id).toBe(first.id);
    await issues.removeIssueReaction(issue.number, first.id);
    expect((await issues.reactToIssue(issue.number, 'eyes')).created).toBe(true);
  });

  it('normalises collaborator permissions the way GitHub reports them', async () => {
    const { gh, issues } = await setup();
    gh.addUser({ login: 'mia', permission: 'maintain' });
    gh.addUser({ login: 'tom', permission: 'triage' });
    expect(await issues.getPermission('mia')).toBe('write');
    expect(await issues.getPermission('tom')).toBe('read');
    expect(await issues.getPermission('stranger')).toBe('none');
  });

  it('finds who last set a label in the issue’s events, served as GitHub’s description says', async () => {
    const { gh, issues, issue } = await setup();
    gh.addUser({ login: 'tina', permission: 'triage' });
    gh.addUser({ login: 'lee', permission: 'write' });
    expect(lastLabelEvent(await issues.labelEvents(issue.number), 'hydraflow-ready', 'labeled')).toBeUndefined();
    gh.world.setLabelsAs(issue.number, 'lee', { add: ['hydraflow-ready'] });
    gh.world.setLabelsAs(issue.number, 'lee', { remove: ['hydraflow-ready'] });
    gh.world.setLabelsAs(issue.number, 'tina', { add: ['hydraflow-ready'] });
    await issues.addLabels(issue.number, ['bug']);
    expect(lastLabelEvent(await issues.labelEvents(issue.number), 'HydraFlow-Ready', 'labeled')?.actor).toBe('tina');
    expect(lastLabelEvent(await issues.labelEvents(issue.number), 'hydraflow-ready', 'unlabeled')?.actor).toBe('lee');
    expect(lastLabelEvent(await issues.labelEvents(issue.number), 'bug', 'labeled')?.actor).toBe('github-actions[bot]');
    // more than a page of events: the latest are on the last page
    for (let i = 0; i < 60; i++) {
      gh.world.setLabelsAs(issue.number, 'tina', { remove: ['hydraflow-ready'] });
      gh.world.setLabelsAs(issue.number, i === 59 ? 'lee' : 'tina', { add: ['hydraflow-ready'] });
    }
    expect(lastLabelEvent(await issues.labelEvents(issue.number), 'hydraflow-ready', 'labeled')?.actor).toBe('lee');
    expectNoViolations(gh);
  });
});

describe('GraphQL through the same policy', () => {
  it('waits out an exhausted GraphQL budget (HTTP 200 + RATE_LIMITED) until its reset, then succeeds', async () => {
    gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets' });
    const emulator = gh;
    const sleeps: number[] = [];
    const octokit = createRestClient({
      token: emulator.botToken,
      baseUrl: emulator.url,
      maxRateLimitWaitSeconds: 3600,
      sleep: async (ms) => {
        sleeps.push(ms);
        emulator.faults.primaryOverride = undefined; // the window resets while the client waits
        emulator.faults.primaryEpoch++;
      },
    });
    emulator.faults.primaryRemaining(0);
    await expect(
      new GraphqlGrooming(octokit, { owner: 'acme', repo: 'widgets' }).searchIssues('t', 5),
    ).resolves.toEqual([]);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(0);
  });

  it('gives up with RateLimitedError when the reset is further away than allowed', async () => {
    const { gh } = await setup();
    const octokit = createRestClient({
      token: gh.botToken,
      baseUrl: gh.url,
      maxRateLimitWaitSeconds: 0,
      sleep: async () => {},
    });
    gh.faults.primaryRemaining(0);
    await expect(new GraphqlGrooming(octokit, { owner: 'acme', repo: 'widgets' }).searchIssues('t', 5)).rejects.toThrow(
      RateLimitedError,
    );
  });
});
