import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { runGit } from '../src/github/git';
import { commitToBranch, createSampleRepo, type SampleRepo } from '../src/sample-repo/index';
import { octokit, rejects } from './github-helpers';

let dir: string;
let sample: SampleRepo;
let gh: GitHubEmulator;

const STRINGS_FIX = `/** Lower-case words joined by dashes: "Hello, World!" -> "hello-world". */
export function slugify(text) {
  return String(text)
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The word with its first letter upper-cased. */
export function capitalize(word) {
  const s = String(word);
  return s.charAt(0).toUpperCase() + s.slice(1);
}
`;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hydraflow-git-test-'));
  sample = createSampleRepo(join(dir, 'sample'));
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: sample.bareRepo } });
});

afterEach(async () => {
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

function git(...args: string[]) {
  return runGit(['--git-dir', sample.bareRepo, ...args]).stdout.trim();
}

describe('git-backed emulator', () => {
  it('serves refs from the bare repository and follows direct pushes', async () => {
    const api = octokit(gh.url, gh.botToken);
    const main = await api.rest.git.getRef({ owner: 'acme', repo: 'widgets', ref: 'heads/main' });
    expect(main.data.object.sha).toBe(sample.initialSha);
    expect(gh.world.defaultBranch).toBe('main');
    const sha = commitToBranch(sample.bareRepo, 'feature', { 'NOTES.md': 'notes\n' }, 'notes');
    const refs = await api.rest.git.listMatchingRefs({ owner: 'acme', repo: 'widgets', ref: 'heads/' });
    expect(refs.data.map((r) => [r.ref, r.object.sha])).toEqual([
      ['refs/heads/feature', sha],
      ['refs/heads/main', sample.initialSha],
    ]);
    // a push made outside the API becomes an event when the simulator syncs
    const events = gh.syncGit({ actor: 'octocat', viaToken: 'user' });
    expect(events).toMatchObject([
      { name: 'push', ref: 'refs/heads/feature', created: true, after: sha, actor: 'octocat', viaToken: 'user' },
    ]);
    expect(gh.syncGit({ actor: 'octocat' })).toEqual([]);
    expectNoViolations(gh);
  });

  it('computes pull request files and patches from the merge-base diff, and follows pushes to the head', async () => {
    const api = octokit(gh.url, gh.botToken);
    commitToBranch(
      sample.bareRepo,
      'hydraflow/issue-1',
      { 'src/strings.js': STRINGS_FIX, 'src/new.js': 'export const x = 1;\n', 'test/numbers.test.js': null },
      'fix slugify',
    );
    // main moves on independently: GitHub's files are base...head, so this change is not part of the PR
    commitToBranch(sample.bareRepo, 'main', { 'README.md': 'changed on main\n' }, 'readme');
    const pr = await api.rest.pulls.create({
      owner: 'acme',
      repo: 'widgets',
      title: 'Fix slugify',
      head: 'hydraflow/issue-1',
      base: 'main',
      body: 'Closes #1',
    });
    expect(pr.data.head.sha).toBe(git('rev-parse', 'hydraflow/issue-1'));
    const files = await api.rest.pulls.listFiles({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number });
    expect(files.data.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
      ['src/new.js', 'added', 1, 0],
      ['src/strings.js', 'modified', 1, 0],
      ['test/numbers.test.js', 'removed', 0, 15],
    ]);
    expect(files.data[1]!.patch).toMatch(/^@@ -2,6 \+2,7 @@\n export function slugify/);
    expect(files.data[1]!.patch).toContain("+    .normalize('NFKD')");
    expect(pr.data.mergeable).toBe(true);

    // the implement phase pushes again with git: the PR's head follows, and syncGit reports a synchronize
    const second = commitToBranch(sample.bareRepo, 'hydraflow/issue-1', { 'src/new.js': 'export const x = 2;\n' }, 'x');
    const again = await api.rest.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number });
    expect(again.data.head.sha).toBe(second);
    const events = gh.syncGit({ actor: 'hydraflow-app[bot]', viaToken: 'app' });
    // both unreported pushes (main's and the branch's), then the PR's synchronize
    expect(events.map((e) => `${e.name}.${e.action ?? ''}.${e.ref ?? ''}`)).toEqual([
      'push..refs/heads/hydraflow/issue-1',
      'push..refs/heads/main',
      'pull_request.synchronize.',
    ]);
    expect(events[2]).toMatchObject({ pull: pr.data.number, after: second, viaToken: 'app' });
    expectNoViolations(gh);
  });

  it('refuses a pull request whose branches do not exist or have no commits', async () => {
    const api = octokit(gh.url, gh.botToken);
    const missing = await rejects(
      api.rest.pulls.create({ owner: 'acme', repo: 'widgets', title: 't', head: 'nope', base: 'main' }),
    );
    expect(missing.status).toBe(422);
    git('branch', 'same', 'main');
    const empty = await rejects(
      api.rest.pulls.create({ owner: 'acme', repo: 'widgets', title: 't', head: 'same', base: 'main' }),
    );
    expect(empty.status).toBe(422);
    expect(empty.message).toContain('No commits between main and same');
  });

  it('squash-merges for real: main moves in the bare repository, the PR closes, sha guards the head', async () => {
    const api = octokit(gh.url, gh.botToken);
    const head = commitToBranch(sample.bareRepo, 'hydraflow/issue-1', { 'src/strings.js': STRINGS_FIX }, 'fix');
    const pr = await api.rest.pulls.create({
      owner: 'acme',
      repo: 'widgets',
      title: 'Fix slugify',
      head: 'hydraflow/issue-1',
      base: 'main',
      body: 'Closes #1',
    });
    const stale = await rejects(
      api.rest.pulls.merge({
        owner: 'acme',
        repo: 'widgets',
        pull_number: pr.data.number,
        merge_method: 'squash',
        sha: sample.initialSha,
      }),
    );
    expect(stale.status).toBe(409);
    const merged = await api.rest.pulls.merge({
      owner: 'acme',
      repo: 'widgets',
      pull_number: pr.data.number,
      merge_method: 'squash',
      sha: head,
    });
    expect(merged.data.merged).toBe(true);
    expect(git('rev-parse', 'main')).toBe(merged.data.sha);
    expect(git('rev-parse', `${merged.data.sha}^`)).toBe(sample.initialSha);
    expect(git('log', '-1', '--format=%s%n%n%b', 'main')).toBe('Fix slugify (#1)\n\nCloses #1');
    expect(git('show', 'main:src/strings.js')).toBe(STRINGS_FIX.trimEnd());
    const after = await api.rest.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number });
    expect(after.data).toMatchObject({ merged: true, state: 'closed', merge_commit_sha: merged.data.sha });
    // delete the branch, as the merge phase does
    await api.rest.git.deleteRef({ owner: 'acme', repo: 'widgets', ref: 'heads/hydraflow/issue-1' });
    expect(git('branch', '--list', 'hydraflow/issue-1')).toBe('');
    expect(gh.events.map((e) => `${e.name}.${e.action ?? ''}.${e.viaToken}`)).toEqual([
      'pull_request.opened.GITHUB_TOKEN',
      'push..GITHUB_TOKEN',
      'pull_request.closed.GITHUB_TOKEN',
      'push..GITHUB_TOKEN',
    ]);
    expectNoViolations(gh);
  });

  it('merge and rebase methods: two parents, and replayed commits', async () => {
    const api = octokit(gh.url, gh.botToken);
    commitToBranch(sample.bareRepo, 'a', { 'a.txt': 'a\n' }, 'add a');
    commitToBranch(sample.bareRepo, 'b', { 'b.txt': 'b\n' }, 'add b');
    commitToBranch(sample.bareRepo, 'b', { 'b2.txt': 'b2\n' }, 'add b2');
    const prA = await api.rest.pulls.create({ owner: 'acme', repo: 'widgets', title: 'A', head: 'a', base: 'main' });
    const prB = await api.rest.pulls.create({ owner: 'acme', repo: 'widgets', title: 'B', head: 'b', base: 'main' });
    const m = await api.rest.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: prA.data.number });
    expect(git('rev-list', '--parents', '-n1', m.data.sha).split(' ')).toHaveLength(3);
    const r = await api.rest.pulls.merge({
      owner: 'acme',
      repo: 'widgets',
      pull_number: prB.data.number,
      merge_method: 'rebase',
    });
    expect(git('log', '--format=%s', '-3', r.data.sha).split('\n')).toEqual([
      'add b2',
      'add b',
      'Merge pull request #1 from acme/a',
    ]);
    expect(git('ls-tree', '--name-only', 'main').split('\n')).toEqual(
      expect.arrayContaining(['a.txt', 'b.txt', 'b2.txt']),
    );
    expectNoViolations(gh);
  });

  it('a conflicting pull request is not mergeable and cannot be merged', async () => {
    const api = octokit(gh.url, gh.botToken);
    commitToBranch(sample.bareRepo, 'left', { 'README.md': 'left\n' }, 'left');
    commitToBranch(sample.bareRepo, 'main', { 'README.md': 'right\n' }, 'right');
    const pr = await api.rest.pulls.create({ owner: 'acme', repo: 'widgets', title: 'L', head: 'left', base: 'main' });
    expect(pr.data.mergeable).toBe(false);
    expect(pr.data.mergeable_state).toBe('dirty');
    const e = await rejects(
      api.rest.pulls.merge({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number, merge_method: 'squash' }),
    );
    expect(e.status).toBe(405);
    expect(git('show', 'main:README.md')).toBe('right');
    expectNoViolations(gh);
  });

  it('ref updates: create, fast-forward, non-fast-forward rejected unless forced, delete', async () => {
    const api = octokit(gh.url, gh.botToken);
    const base = { owner: 'acme', repo: 'widgets' };
    const missing = await rejects(api.rest.git.createRef({ ...base, ref: 'refs/heads/x', sha: 'a'.repeat(40) }));
    expect(missing.status).toBe(422);
    await api.rest.git.createRef({ ...base, ref: 'refs/heads/work', sha: sample.initialSha });
    expect(git('rev-parse', 'work')).toBe(sample.initialSha);
    const dup = await rejects(api.rest.git.createRef({ ...base, ref: 'refs/heads/work', sha: sample.initialSha }));
    expect(dup.status).toBe(422);
    const next = commitToBranch(sample.bareRepo, 'other', { 'o.txt': 'o\n' }, 'o', { from: 'main' });
    await api.rest.git.updateRef({ ...base, ref: 'heads/work', sha: next });
    expect(git('rev-parse', 'work')).toBe(next);
    const back = await rejects(api.rest.git.updateRef({ ...base, ref: 'heads/work', sha: sample.initialSha }));
    expect(back.status).toBe(422);
    expect(back.message).toContain('Update is not a fast forward');
    expect(git('rev-parse', 'work')).toBe(next);
    await api.rest.git.updateRef({ ...base, ref: 'heads/work', sha: sample.initialSha, force: true });
    expect(git('rev-parse', 'work')).toBe(sample.initialSha);
    await api.rest.git.deleteRef({ ...base, ref: 'heads/work' });
    expect(git('for-each-ref', 'refs/heads/work')).toBe('');
    expectNoViolations(gh);
  });

  it('review comments must sit on lines of the diff', async () => {
    const api = octokit(gh.url, gh.botToken);
    const author = gh.addUser({ login: 'dev', permission: 'write' });
    commitToBranch(sample.bareRepo, 'feat', { 'src/strings.js': STRINGS_FIX }, 'fix');
    const pr = await octokit(gh.url, author.token).rest.pulls.create({
      owner: 'acme',
      repo: 'widgets',
      title: 'Fix',
      head: 'feat',
      base: 'main',
    });
    const review = (path: string, line: number, side: 'LEFT' | 'RIGHT' = 'RIGHT') =>
      api.rest.pulls.createReview({
        owner: 'acme',
        repo: 'widgets',
        pull_number: pr.data.number,
        event: 'COMMENT',
        body: 'review',
        comments: [{ path, line, side, body: 'here' }],
      });
    const outside = await rejects(review('src/strings.js', 12));
    expect(outside.status).toBe(422);
    expect(JSON.stringify(outside.response?.data)).toContain(
      'Pull request review thread line must be part of the diff',
    );
    const otherFile = await rejects(review('src/numbers.js', 1));
    expect(otherFile.status).toBe(422);
    const ok = await review('src/strings.js', 5);
    expect(ok.data.state).toBe('COMMENTED');
    const left = await review('src/strings.js', 4, 'LEFT');
    expect(left.status).toBe(200);
    expect(gh.events.filter((e) => e.name === 'pull_request_review')).toHaveLength(2);
    expectNoViolations(gh);
  });

  it('graphql: markPullRequestReadyForReview turns a draft ready; what is not emulated is a GraphQL error', async () => {
    const api = octokit(gh.url, gh.botToken);
    commitToBranch(sample.bareRepo, 'draft', { 'd.txt': 'd\n' }, 'd');
    const pr = await api.rest.pulls.create({
      owner: 'acme',
      repo: 'widgets',
      title: 'Draft',
      head: 'draft',
      base: 'main',
      draft: true,
    });
    expect(pr.data.draft).toBe(true);
    const res = await api.graphql<{ markPullRequestReadyForReview: { pullRequest: { isDraft: boolean } } }>(
      `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft number } } }`,
      { id: pr.data.node_id },
    );
    expect(res.markPullRequestReadyForReview.pullRequest).toEqual({ isDraft: false, number: pr.data.number });
    const after = await api.rest.pulls.get({ owner: 'acme', repo: 'widgets', pull_number: pr.data.number });
    expect(after.data.draft).toBe(false);
    expect(gh.events.at(-1)).toMatchObject({ name: 'pull_request', action: 'ready_for_review', pull: pr.data.number });
    expect(gh.requests.filter((r) => r.path === '/graphql')).toHaveLength(1);
    expectNoViolations(gh);
    await expect(api.graphql('query { viewer { login } }')).rejects.toThrow(/does not implement Query.viewer/);
    expect(gh.violations).toMatchObject([
      { kind: 'not-emulated', path: '/graphql', errors: ['Query.viewer is not emulated'] },
    ]);
  });
});

describe('events from the REST API', () => {
  it('records issues, labels, comments and dispatches with the token kind', async () => {
    const user = gh.addUser({ login: 'alice', permission: 'write' });
    const app = gh.addApp({ login: 'hydraflow-app' });
    const asUser = octokit(gh.url, user.token);
    const issue = await asUser.rest.issues.create({ owner: 'acme', repo: 'widgets', title: 'Bug', labels: ['bug'] });
    await octokit(gh.url, gh.botToken).rest.issues.addLabels({
      owner: 'acme',
      repo: 'widgets',
      issue_number: issue.data.number,
      labels: ['hydraflow-plan'],
    });
    await octokit(gh.url, app.token).rest.issues.createComment({
      owner: 'acme',
      repo: 'widgets',
      issue_number: issue.data.number,
      body: 'hi',
    });
    await octokit(gh.url, gh.botToken).rest.actions.createWorkflowDispatch({
      owner: 'acme',
      repo: 'widgets',
      workflow_id: 'hydraflow.yml',
      ref: 'main',
      inputs: { issue: '1', phase: 'plan' },
    });
    await asUser.rest.issues.update({ owner: 'acme', repo: 'widgets', issue_number: 1, state: 'closed' });
    expect(gh.events.map((e) => [e.name, e.action, e.label, e.viaToken])).toEqual([
      ['issues', 'opened', undefined, 'user'],
      ['issues', 'labeled', 'bug', 'user'],
      ['issues', 'labeled', 'hydraflow-plan', 'GITHUB_TOKEN'],
      ['issue_comment', 'created', undefined, 'app'],
      ['workflow_dispatch', undefined, undefined, 'GITHUB_TOKEN'],
      ['issues', 'closed', undefined, 'user'],
    ]);
    expect(gh.events[4]).toMatchObject({ workflow: 'hydraflow.yml', ref: 'refs/heads/main', sha: sample.initialSha });
    expectNoViolations(gh);
  });
});
