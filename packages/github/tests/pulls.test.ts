/**
 * RestPulls against the GitHub emulator (validated against GitHub's OpenAPI description). Pull requests are built with
 * `world.pull(...)` and given files with patches, so no git repository is needed here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BOT_LOGIN, expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '@hydraflow/testkit';
import { createRestClient } from '../src/index';
import { RestPulls } from '../src/rest-pulls';

let gh: GitHubEmulator | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

const PATCH = '@@ -1,3 +1,4 @@\n line1\n-old\n+new2\n+new3\n line3';

async function setup() {
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets' });
  const octokit = createRestClient({ token: gh.botToken, baseUrl: gh.url, sleep: async () => {} });
  const pulls = new RestPulls(octokit, { owner: 'acme', repo: 'widgets' }, [BOT_LOGIN]);
  const { pull, issue } = gh.world.pull({
    title: 'Fix #1',
    body: 'Closes #1',
    head: 'hydraflow/issue-1',
    files: [
      { filename: 'src/a.ts', status: 'modified', additions: 2, deletions: 1, patch: PATCH },
      { filename: 'logo.png', status: 'added', additions: 0, deletions: 0 },
    ],
  });
  return { gh, pulls, octokit, pull, issue };
}

describe('RestPulls: pull requests', () => {
  it('reads a pull request and finds the open one of a branch', async () => {
    const { gh, pulls, pull } = await setup();
    const got = await pulls.getPull(pull.number);
    expect(got).toMatchObject({
      number: pull.number,
      title: 'Fix #1',
      body: 'Closes #1',
      state: 'open',
      merged: false,
      draft: false,
      headRef: 'hydraflow/issue-1',
      headSha: pull.head.sha,
      baseRef: 'main',
      mergeable: true,
      author: { login: 'octocat' },
      nodeId: pull.node_id,
    });
    expect((await pulls.findOpenPull('hydraflow/issue-1'))?.number).toBe(pull.number);
    expect(await pulls.findOpenPull('nope')).toBeUndefined();
    expectNoViolations(gh);
  });

  it('opens a pull request once: a re-run or a 502 after the write returns the same one', async () => {
    const { gh, pulls } = await setup();
    gh.world.ref('feature');
    const args = { title: 'T', body: 'B', head: 'feature', base: 'main', draft: true };
    gh.faults.writeSucceedsThen502(1, { methods: ['POST'], pathIncludes: '/pulls' });
    const first = await pulls.createPull(args);
    const again = await pulls.createPull(args);
    expect(again.number).toBe(first.number);
    expect([...gh.world.pulls.values()].filter((p) => p.head.ref === 'feature')).toHaveLength(1);
    expect(first.draft).toBe(true);
    const updated = await pulls.updatePull(first.number, { body: 'B2' });
    expect(updated.body).toBe('B2');
  });

  it('lists files with their patches', async () => {
    const { pulls, pull } = await setup();
    expect(await pulls.listFiles(pull.number)).toEqual([
      { path: 'src/a.ts', status: 'modified', additions: 2, deletions: 1, patch: PATCH },
      { path: 'logo.png', status: 'added', additions: 0, deletions: 0 },
    ]);
  });

  it('marks a draft ready through GraphQL; nothing to do for one that is not a draft', async (ctx) => {
    const { gh, pulls } = await setup();
    const { pull: draft } = gh.world.pull({ title: 'D', head: 'draft-branch', draft: true });
    const ready = await pulls.getPull(1);
    const before = gh.requests.length;
    await pulls.markReady(ready);
    expect(gh.requests.length).toBe(before); // not a draft: no request at all
    try {
      await pulls.markReady(await pulls.getPull(draft.number));
    } catch (error) {
      if (gh.requests.at(-2)?.path === '/graphql' && gh.requests.at(-2)?.status === 404) {
        ctx.skip(); // this emulator build has no POST /graphql yet
      }
      throw error;
    }
    expect(gh.world.pulls.get(draft.number)!.draft).toBe(false);
    // Marking again (stale object still says draft) is not an error.
    await pulls.markReady({ ...(await pulls.getPull(draft.number)), draft: true });
  });
});

describe('RestPulls: reviews', () => {
  it('submits one review with inline comments on diff lines', async () => {
    const { gh, pulls, pull } = await setup();
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'REQUEST_CHANGES',
      body: 'Please fix.',
      comments: [{ path: 'src/a.ts', line: 2, body: 'Here.' }],
    });
    expect(review).toMatchObject({
      state: 'CHANGES_REQUESTED',
      body: 'Please fix.',
      commitId: pull.head.sha,
      author: { login: BOT_LOGIN },
    });
    const comments = [...gh.world.reviewComments.values()];
    expect(comments.map((c) => [c.path, c.line, c.side, c.review_id])).toEqual([['src/a.ts', 2, 'RIGHT', review.id]]);
    expect((await pulls.listReviews(pull.number)).map((r) => r.id)).toEqual([review.id]);
    expectNoViolations(gh);
  });

  it('never posts a review twice when GitHub wrote it before answering 502', async () => {
    const { gh, pulls, pull } = await setup();
    gh.faults.writeSucceedsThen502(1, { methods: ['POST'], pathIncludes: '/reviews' });
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'COMMENT',
      body: 'Once.',
      comments: [],
    });
    expect([...gh.world.reviews.values()].map((r) => r.id)).toEqual([review.id]);
  });

  it('posts again when the failed write had not happened', async () => {
    const { gh, pulls, pull } = await setup();
    gh.faults.failNext(1, 502, { methods: ['POST'], pathIncludes: '/reviews' });
    await pulls.createReview(pull.number, { commitId: pull.head.sha, event: 'COMMENT', body: 'Once.', comments: [] });
    expect(gh.world.reviews.size).toBe(1);
  });

  it('an approval GitHub refuses (own pull request) becomes a comment review', async () => {
    const { gh, pulls } = await setup();
    const { pull } = gh.world.pull({ title: 'Mine', head: 'mine', author: BOT_LOGIN });
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'APPROVE',
      body: 'LGTM',
      comments: [],
    });
    expect(review.state).toBe('COMMENTED');
    expect([...gh.world.reviews.values()].map((r) => r.state)).toEqual(['COMMENTED']);
  });

  it('an approval of a pull request known to be its own goes out as a comment review without a refused request', async () => {
    const { gh, pulls } = await setup();
    const { pull } = gh.world.pull({ title: 'Mine', head: 'mine', author: BOT_LOGIN });
    const before = gh.requests.length;
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'APPROVE',
      body: 'LGTM',
      comments: [],
      pullAuthor: BOT_LOGIN,
    });
    expect(review.state).toBe('COMMENTED');
    expect(gh.requests.slice(before).map((r) => `${r.method} ${r.status}`)).toEqual(['POST 200']);
  });

  it('an approval of someone else’s pull request is an approval', async () => {
    const { pulls, pull } = await setup();
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'APPROVE',
      body: 'LGTM',
      comments: [],
    });
    expect(review.state).toBe('APPROVED');
  });

  it('inline comments GitHub cannot place are folded into the body, in the same single review', async () => {
    const { gh, pulls, pull } = await setup();
    const review = await pulls.createReview(pull.number, {
      commitId: pull.head.sha,
      event: 'COMMENT',
      body: 'Summary.',
      comments: [{ path: 'src/a.ts', line: 40, body: 'Not in the diff.' }],
    });
    expect(gh.world.reviews.size).toBe(1);
    expect(gh.world.reviewComments.size).toBe(0);
    expect(review.body).toContain('`src/a.ts` line 40: Not in the diff.');
  });
});

describe('RestPulls: checks, merge, branch, issue', () => {
  it('combines check runs and statuses: failure > pending > success; a re-run counts by its latest run', async () => {
    const { pulls, octokit, pull } = await setup();
    const repo = { owner: 'acme', repo: 'widgets' };
    const sha = pull.head.sha;
    expect(await pulls.checks(sha)).toEqual({ state: 'success', failing: [], pending: [], passed: [] });
    await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      ...repo,
      name: 'test',
      head_sha: sha,
      status: 'completed',
      conclusion: 'failure',
    });
    await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      ...repo,
      name: 'lint',
      head_sha: sha,
      status: 'in_progress',
    });
    expect(await pulls.checks(sha)).toEqual({ state: 'failure', failing: ['test'], pending: ['lint'], passed: [] });
    await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      ...repo,
      name: 'test',
      head_sha: sha,
      status: 'completed',
      conclusion: 'success',
    });
    expect(await pulls.checks(sha)).toEqual({ state: 'pending', failing: [], pending: ['lint'], passed: ['test'] });
    await octokit.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
      ...repo,
      sha,
      state: 'error',
      context: 'ci/legacy',
    });
    expect((await pulls.checks(sha)).failing).toEqual(['ci/legacy']);
  });

  it('merges at the expected head, idempotently; a moved head is refused', async () => {
    const { gh, pulls, pull } = await setup();
    await expect(
      pulls.merge(pull.number, { method: 'squash', sha: 'f'.repeat(40), title: 't', message: 'm' }),
    ).rejects.toMatchObject({ status: 409 });
    const sha = await pulls.merge(pull.number, { method: 'squash', sha: pull.head.sha, title: 't', message: 'm' });
    expect(gh.world.pulls.get(pull.number)!.merged).toBe(true);
    expect(await pulls.merge(pull.number, { method: 'squash', sha: pull.head.sha, title: 't', message: 'm' })).toBe(
      sha,
    );
  });

  it('deletes a branch, twice without error; closes an issue as completed', async () => {
    const { gh, pulls } = await setup();
    const issue = gh.world.issue({ title: 'x' });
    await pulls.deleteBranch('hydraflow/issue-1');
    await pulls.deleteBranch('hydraflow/issue-1');
    expect(gh.world.refs.has('refs/heads/hydraflow/issue-1')).toBe(false);
    await pulls.closeIssue(issue.number, 'completed');
    expect(gh.world.issues.get(issue.number)).toMatchObject({ state: 'closed', state_reason: 'completed' });
  });
});
