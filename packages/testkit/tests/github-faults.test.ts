import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, specLoadStats, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { octokit, rejects, type OctokitClient } from './github-helpers';

const repo = { owner: 'acme', repo: 'widgets' };
let gh: GitHubEmulator;
let now: number;
let bot: OctokitClient;

beforeEach(async () => {
  now = Date.parse('2026-11-20T10:00:00Z');
  gh = await startGitHubEmulator({ ...repo, clock: () => now });
  bot = octokit(gh.url, gh.botToken);
});
afterEach(async () => {
  await gh.close();
});

describe('OpenAPI validation', () => {
  it('rejects requests the description does not allow, through the real Octokit', async () => {
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    const bad = await rejects(
      bot.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        ...repo,
        issue_number: issue.number,
        labels: 5,
      } as never),
    );
    expect(bad.status).toBe(422);
    expect(gh.violations).toHaveLength(1);
    expect(gh.violations[0]).toMatchObject({ kind: 'request', method: 'POST', operationId: 'issues/add-labels' });
    expect(gh.world.issues.get(issue.number)!.labels).toEqual([]);

    const noBody = await rejects(
      bot.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...repo,
        issue_number: issue.number,
      } as never),
    );
    expect(noBody.status).toBeGreaterThanOrEqual(400);
    expect(gh.violations[1]).toMatchObject({ kind: 'request', operationId: 'issues/create-comment' });
    expect(gh.world.commentsOn(issue.number)).toEqual([]);

    const badQuery = await rejects(
      bot.request('GET /repos/{owner}/{repo}/issues', { ...repo, state: 'weird' } as never),
    );
    expect(badQuery.status).toBe(422);
    expect(() => expectNoViolations(gh)).toThrow(/issues\/add-labels/);
  });

  it('404s and records routes the emulator does not implement', async () => {
    const e = await rejects(bot.rest.repos.listReleases(repo));
    expect(e.status).toBe(404);
    expect(gh.violations).toMatchObject([{ kind: 'not-emulated', operationId: 'repos/list-releases' }]);
    const e2 = await rejects(bot.request('GET /definitely/not/github'));
    expect(e2.status).toBe(404);
    expect(gh.violations[1]).toMatchObject({ kind: 'unknown-route' });
  });

  it('loads the description lazily: startup is fast, the spec is parsed once per process', async () => {
    const t0 = performance.now();
    const other = await startGitHubEmulator({ owner: 'o', repo: 'r' });
    expect(performance.now() - t0).toBeLessThan(200);
    await octokit(other.url, other.botToken).rest.repos.get({ owner: 'o', repo: 'r' });
    expect(specLoadStats.loadMs).toBeGreaterThan(0);
    expectNoViolations(other);
    await other.close();
  });
});

describe('faults', () => {
  it('failNext answers 5xx without performing the write', async () => {
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    gh.faults.failNext(2, 502, { methods: ['POST'], pathIncludes: '/comments' });
    expect(
      (await rejects(bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'a' }))).status,
    ).toBe(502);
    await bot.rest.issues.get({ ...repo, issue_number: issue.number }); // not matched by the filter
    expect(
      (await rejects(bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'a' }))).status,
    ).toBe(502);
    await bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'a' });
    expect(gh.world.commentsOn(issue.number)).toHaveLength(1);
  });

  it('writeSucceedsThen502 performs the write then fails: a blind retry duplicates the comment', async () => {
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    gh.faults.writeSucceedsThen502(1, { pathIncludes: '/comments' });
    const post = () =>
      bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: '<!-- hydraflow:state -->' });
    expect((await rejects(post())).status).toBe(502);
    await post();
    expect(gh.world.commentsOn(issue.number)).toHaveLength(2);
  });

  it('latencyMs delays every response', async () => {
    gh.faults.latencyMs = 60;
    const t0 = performance.now();
    await bot.rest.repos.get(repo);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
  });

  it('secondary rate limit: writes beyond N per rolling minute get 403 with retry-after', async () => {
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    gh.faults.secondaryRateLimit({ writesPerMinute: 5 });
    for (let i = 0; i < 5; i++) {
      await bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: `c${i}` });
      now += 1_000;
    }
    const e = await rejects(bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'too many' }));
    expect(e.status).toBe(403);
    expect(e.message).toContain('secondary rate limit');
    expect(e.response?.headers['retry-after']).toBe('55');
    await bot.rest.issues.get({ ...repo, issue_number: issue.number }); // reads are not limited
    now += 55_000;
    await bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'after waiting' });
    expect(gh.world.commentsOn(issue.number).map((c) => c.body)).not.toContain('too many');
    expect(gh.world.commentsOn(issue.number)).toHaveLength(6);
  });

  it('primary rate limit: headers count down, 403 with remaining 0 when exhausted, reset() clears', async () => {
    const r = await bot.rest.repos.get(repo);
    expect(r.headers['x-ratelimit-limit']).toBe('1000');
    expect(r.headers['x-ratelimit-remaining']).toBe('999');
    expect(r.headers['x-ratelimit-resource']).toBe('core');
    gh.faults.primaryRemaining(1);
    await bot.rest.repos.get(repo);
    const e = await rejects(bot.rest.repos.get(repo));
    expect(e.status).toBe(403);
    expect(e.response?.headers['x-ratelimit-remaining']).toBe('0');
    const rl = await bot.rest.rateLimit.get();
    expect(rl.data.resources.core.remaining).toBe(0);
    gh.faults.reset();
    expect((await bot.rest.repos.get(repo)).status).toBe(200);
    // a fresh window after an hour
    gh.faults.primaryRemaining(0);
    expect((await rejects(bot.rest.repos.get(repo))).status).toBe(403);
    now += 3_600_001;
    expect((await bot.rest.repos.get(repo)).headers['x-ratelimit-remaining']).toBe('999');
    expectNoViolations(gh);
  });
});

describe('@actions/github', () => {
  it('getOctokit talks to the emulator unchanged', async () => {
    const { getOctokit } = await import('@actions/github');
    const client = getOctokit(gh.botToken, { baseUrl: gh.url });
    const issue = gh.world.issue({ title: 'from actions', author: 'alice' });
    await client.rest.issues.addLabels({ ...repo, issue_number: issue.number, labels: ['hydraflow:triage'] });
    expect(gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow:triage']);
    expectNoViolations(gh);
  });
});
