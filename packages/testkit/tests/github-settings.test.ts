/**
 * The repository reads a `doctor` check of a HydraFlow setup makes: file contents, Actions workflow permissions,
 * branch protection, workflows by file name; and the 403 GitHub answers the GITHUB_TOKEN when Actions may not create
 * pull requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, workflowId, type GitHubEmulator } from '../src/github/index';
import { runGit } from '../src/github/git';
import { commitToBranch, createSampleRepo, SAMPLE_CI_WORKFLOW, type SampleRepo } from '../src/sample-repo/index';
import { octokit, rejects, type OctokitClient } from './github-helpers';

const repo = { owner: 'acme', repo: 'widgets' };
const HYDRAFLOW_WORKFLOW = `name: "HydraFlow" # the orchestrator
on:
  issues:
    types: [labeled]
jobs: {}
`;
const decode = (content: string) => Buffer.from(content, 'base64').toString('utf8');

describe('a git-backed repository', () => {
  let dir: string;
  let sample: SampleRepo;
  let gh: GitHubEmulator;
  let admin: OctokitClient;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hydraflow-settings-test-'));
    sample = createSampleRepo(join(dir, 'sample'), { hydraflowWorkflow: HYDRAFLOW_WORKFLOW });
    gh = await startGitHubEmulator({ ...repo, git: { bareRepo: sample.bareRepo } });
    admin = octokit(gh.url, gh.world.users.get('acme')!.token);
  });
  afterEach(async () => {
    await gh.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a file base64-encoded as GitHub does, at the default branch or ?ref=, and 404s what is absent', async () => {
    const bot = octokit(gh.url, gh.botToken);
    const got = await bot.rest.repos.getContent({ ...repo, path: '.github/workflows/ci.yml' });
    const file = got.data as { type: string; encoding: string; content: string; sha: string; size: number };
    expect(file).toMatchObject({
      type: 'file',
      encoding: 'base64',
      name: 'ci.yml',
      path: '.github/workflows/ci.yml',
      size: Buffer.byteLength(SAMPLE_CI_WORKFLOW),
      sha: runGit(['--git-dir', sample.bareRepo, 'rev-parse', 'main:.github/workflows/ci.yml']).stdout.trim(),
      url: `${gh.url}/repos/acme/widgets/contents/.github/workflows/ci.yml?ref=main`,
      html_url: `${gh.url}/acme/widgets/blob/main/.github/workflows/ci.yml`,
    });
    expect(decode(file.content)).toBe(SAMPLE_CI_WORKFLOW);
    expect(file.content.split('\n').every((line) => line.length <= 60)).toBe(true);
    expect(file.content.endsWith('\n')).toBe(true);

    commitToBranch(sample.bareRepo, 'feature/x', { '.github/hydraflow.yml': 'version: 2\n' }, 'config v2');
    const onBranch = await bot.rest.repos.getContent({ ...repo, path: '.github/hydraflow.yml', ref: 'feature/x' });
    expect(decode((onBranch.data as { content: string }).content)).toBe('version: 2\n');
    const onMain = await bot.rest.repos.getContent({ ...repo, path: '.github/hydraflow.yml' });
    expect(decode((onMain.data as { content: string }).content)).not.toBe('version: 2\n');

    const missing = await rejects(bot.rest.repos.getContent({ ...repo, path: '.github/nope.yml' }));
    expect(missing).toMatchObject({ status: 404, message: expect.stringContaining('Not Found') });
    const badRef = await rejects(bot.rest.repos.getContent({ ...repo, path: 'README.md', ref: 'no-such-branch' }));
    expect(badRef).toMatchObject({ status: 404, message: expect.stringContaining('No commit found for the ref') });
    expectNoViolations(gh);
  });

  it('lists a directory', async () => {
    const got = await admin.rest.repos.getContent({ ...repo, path: '.github' });
    expect(Array.isArray(got.data)).toBe(true);
    const entries = got.data as Array<{ name: string; type: string; path: string; download_url: string | null }>;
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['hydraflow.yml', 'file'],
      ['workflows', 'dir'],
    ]);
    expect(entries[1]).toMatchObject({ path: '.github/workflows', download_url: null });
    expectNoViolations(gh);
  });

  it('serves a workflow by file name or id when .github/workflows/<file> exists on the default branch, else 404', async () => {
    const bot = octokit(gh.url, gh.botToken);
    const wf = await bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'hydraflow.yml' });
    expect(wf.data).toMatchObject({
      id: workflowId('.github/workflows/hydraflow.yml'),
      name: 'HydraFlow',
      path: '.github/workflows/hydraflow.yml',
      state: 'active',
      url: `${gh.url}/repos/acme/widgets/actions/workflows/${wf.data.id}`,
    });
    const byId = await bot.rest.actions.getWorkflow({ ...repo, workflow_id: wf.data.id });
    expect(byId.data.path).toBe('.github/workflows/hydraflow.yml');
    const list = await bot.rest.actions.listRepoWorkflows(repo);
    expect(list.data.workflows.map((w) => [w.path, w.name])).toEqual([
      ['.github/workflows/ci.yml', 'CI'],
      ['.github/workflows/hydraflow.yml', 'HydraFlow'],
    ]);

    // on another branch only: not a workflow of the repository
    commitToBranch(sample.bareRepo, 'feature/y', { '.github/workflows/extra.yml': 'on: push\njobs: {}\n' }, 'extra');
    expect((await rejects(bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'extra.yml' }))).status).toBe(404);
    // removed from the default branch: gone
    commitToBranch(sample.bareRepo, 'main', { '.github/workflows/hydraflow.yml': null }, 'remove hydraflow');
    expect((await rejects(bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'hydraflow.yml' }))).status).toBe(404);
    gh.world.workflowStates.set('.github/workflows/ci.yml', 'disabled_manually');
    expect((await bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'ci.yml' })).data.state).toBe(
      'disabled_manually',
    );
    expectNoViolations(gh);
  });
});

describe('a repository without git data', () => {
  let gh: GitHubEmulator;
  let bot: OctokitClient;
  let admin: OctokitClient;

  beforeEach(async () => {
    gh = await startGitHubEmulator({ ...repo, clock: () => Date.parse('2026-11-20T10:00:00Z') });
    bot = octokit(gh.url, gh.botToken);
    admin = octokit(gh.url, gh.world.users.get('acme')!.token);
  });
  afterEach(async () => {
    await gh.close();
  });

  it('serves files, directories and workflows from world.files, and 404s what is absent', async () => {
    gh.world.files.set('.github/hydraflow.yml', 'labels:\n  prefix: hydraflow\n');
    gh.world.files.set('.github/workflows/hydraflow.yml', 'name: HydraFlow\non: issues\n');
    const got = await bot.rest.repos.getContent({ ...repo, path: '.github/hydraflow.yml' });
    expect(got.data).toMatchObject({ type: 'file', encoding: 'base64', name: 'hydraflow.yml', size: 28 });
    expect(decode((got.data as { content: string }).content)).toBe('labels:\n  prefix: hydraflow\n');
    // git's blob id, as GitHub reports it
    expect((got.data as { sha: string }).sha).toBe(
      runGit(['hash-object', '--stdin'], { input: 'labels:\n  prefix: hydraflow\n' }).stdout.trim(),
    );
    const listing = await bot.rest.repos.getContent({ ...repo, path: '.github' });
    expect((listing.data as Array<{ name: string; type: string }>).map((e) => [e.name, e.type])).toEqual([
      ['hydraflow.yml', 'file'],
      ['workflows', 'dir'],
    ]);
    expect((await rejects(bot.rest.repos.getContent({ ...repo, path: 'README.md' }))).status).toBe(404);
    expect((await bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'hydraflow.yml' })).data.name).toBe('HydraFlow');
    expect((await rejects(bot.rest.actions.getWorkflow({ ...repo, workflow_id: 'ci.yml' }))).status).toBe(404);
    expectNoViolations(gh);
  });

  it("reports the Actions workflow permissions (a new repository's defaults), to admins only", async () => {
    const got = await admin.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(repo);
    expect(got.data).toEqual({ default_workflow_permissions: 'read', can_approve_pull_request_reviews: false });
    gh.world.actionsSettings = { default_workflow_permissions: 'write', can_approve_pull_request_reviews: true };
    const changed = await admin.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(repo);
    expect(changed.data).toEqual({ default_workflow_permissions: 'write', can_approve_pull_request_reviews: true });

    // the GITHUB_TOKEN has no `administration` permission
    const e = await rejects(bot.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(repo));
    expect(e).toMatchObject({
      status: 403,
      message: expect.stringContaining('Resource not accessible by integration'),
    });
    expectNoViolations(gh);
  });

  it('reports branch protection: 404 when none, the rule when set, 403 without admin rights', async () => {
    const none = await rejects(admin.rest.repos.getBranchProtection({ ...repo, branch: 'main' }));
    expect(none).toMatchObject({ status: 404, message: expect.stringContaining('Branch not protected') });
    const noBranch = await rejects(admin.rest.repos.getBranchProtection({ ...repo, branch: 'nope' }));
    expect(noBranch).toMatchObject({ status: 404, message: expect.stringContaining('Branch not found') });

    gh.world.branchProtection.set('main', {
      required_pull_request_reviews: { required_approving_review_count: 1, dismiss_stale_reviews: true },
      required_status_checks: { strict: true, contexts: ['CI / test'] },
      enforce_admins: true,
    });
    const got = await admin.rest.repos.getBranchProtection({ ...repo, branch: 'main' });
    expect(got.data).toMatchObject({
      url: `${gh.url}/repos/acme/widgets/branches/main/protection`,
      required_pull_request_reviews: {
        required_approving_review_count: 1,
        dismiss_stale_reviews: true,
        require_code_owner_reviews: false,
      },
      required_status_checks: {
        strict: true,
        contexts: ['CI / test'],
        checks: [{ context: 'CI / test', app_id: null }],
      },
      enforce_admins: { enabled: true },
      allow_force_pushes: { enabled: false },
    });
    // sections not required are absent, as on GitHub
    gh.world.ref('release/1.x');
    gh.world.branchProtection.set('release/1.x', { allow_deletions: false });
    const bare = await admin.rest.repos.getBranchProtection({ ...repo, branch: 'release/1.x' });
    expect(bare.data.required_pull_request_reviews).toBeUndefined();
    expect(bare.data.required_status_checks).toBeUndefined();
    expect(bare.data.url).toBe(`${gh.url}/repos/acme/widgets/branches/release/1.x/protection`);

    const fromBot = await rejects(bot.rest.repos.getBranchProtection({ ...repo, branch: 'main' }));
    expect(fromBot).toMatchObject({ status: 403, message: expect.stringContaining('Resource not accessible') });
    const writer = gh.addUser({ login: 'wanda', permission: 'write' });
    const fromWriter = await rejects(
      octokit(gh.url, writer.token).rest.repos.getBranchProtection({ ...repo, branch: 'main' }),
    );
    expect(fromWriter).toMatchObject({ status: 403, message: expect.stringContaining('Must have admin rights') });
    expectNoViolations(gh);
  });

  it('serves the labels', async () => {
    gh.world.label('hydraflow:plan', '0e8a16', 'Planning');
    const got = await bot.rest.issues.listLabelsForRepo(repo);
    expect(got.data.map((l) => l.name)).toEqual(['hydraflow:plan']);
    expectNoViolations(gh);
  });

  describe('"Allow GitHub Actions to create and approve pull requests"', () => {
    const create = (client: OctokitClient, head: string) =>
      client.rest.pulls.create({ ...repo, title: 'T', head, base: 'main' });

    it('is not modelled unless the world opts in: the GITHUB_TOKEN creates pull requests', async () => {
      gh.world.ref('hydraflow/issue-1');
      expect((await create(bot, 'hydraflow/issue-1')).status).toBe(201);
      expectNoViolations(gh);
    });

    it('when enforced and off, refuses the GITHUB_TOKEN (403) to create or approve, not users or apps', async () => {
      gh.world.enforceActionsPullRequestSetting = true;
      gh.world.ref('hydraflow/issue-1');
      const e = await rejects(create(bot, 'hydraflow/issue-1'));
      expect(e).toMatchObject({
        status: 403,
        message: expect.stringContaining('GitHub Actions is not permitted to create or approve pull requests.'),
      });
      expect(gh.world.pulls.size).toBe(0);

      const app = gh.addApp({ login: 'hydraflow-app' });
      const pr = await create(octokit(gh.url, app.token), 'hydraflow/issue-1');
      expect(pr.status).toBe(201);
      const approve = await rejects(
        bot.rest.pulls.createReview({ ...repo, pull_number: pr.data.number, event: 'APPROVE' }),
      );
      expect(approve.status).toBe(403);
      // commenting is not approving
      await bot.rest.pulls.createReview({ ...repo, pull_number: pr.data.number, event: 'COMMENT', body: 'ok' });

      gh.world.actionsSettings.can_approve_pull_request_reviews = true;
      gh.world.ref('hydraflow/issue-2');
      expect((await create(bot, 'hydraflow/issue-2')).status).toBe(201);
      expectNoViolations(gh);
    });
  });
});
