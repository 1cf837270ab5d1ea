import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
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

describe('authentication', () => {
  it('401s unknown or missing tokens and attributes writes to the token user', async () => {
    const e = await rejects(octokit(gh.url, 'nope').rest.repos.get(repo));
    expect(e.status).toBe(401);
    const anon = await fetch(`${gh.url}/repos/acme/widgets`);
    expect(anon.status).toBe(401);

    const alice = gh.addUser({ login: 'alice', type: 'User', permission: 'read' });
    const issue = gh.world.issue({ title: 'Bug', body: 'it breaks', author: 'alice' });
    await octokit(gh.url, alice.token).rest.issues.createComment({
      ...repo,
      issue_number: issue.number,
      body: 'me too',
    });
    const [c] = gh.world.commentsOn(issue.number);
    expect(c?.user).toBe('alice');
    expect(gh.requests.at(-1)).toMatchObject({
      method: 'POST',
      status: 201,
      actor: 'alice',
      operationId: 'issues/create-comment',
    });
    expectNoViolations(gh);
  });

  it('serves the repository and an issue with every required field', async () => {
    const r = await bot.rest.repos.get(repo);
    expect(r.data.full_name).toBe('acme/widgets');
    expect(r.data.default_branch).toBe('main');
    expect(r.headers['x-github-request-id']).toBeTruthy();
    const i = gh.world.issue({ title: 'T', body: 'B', author: 'bob', labels: ['bug'] });
    const got = await bot.rest.issues.get({ ...repo, issue_number: i.number });
    expect(got.data).toMatchObject({ number: 1, title: 'T', body: 'B', state: 'open', user: { login: 'bob' } });
    expect(got.data.labels).toMatchObject([{ name: 'bug', color: 'ededed' }]);
    expect(got.data.url).toBe(`${gh.url}/repos/acme/widgets/issues/1`);
    expectNoViolations(gh);
  });
});

describe('labels', () => {
  it('adds (auto-creating unknown labels), replaces, removes, and clears', async () => {
    gh.world.label('hydraflow:plan', '0e8a16', 'Planning');
    const issue = gh.world.issue({ title: 'Add dark mode', author: 'alice', labels: ['hydraflow:plan'] });
    const n = issue.number;

    const added = await bot.rest.issues.addLabels({ ...repo, issue_number: n, labels: ['invented-by-model'] });
    expect(added.data.map((l) => l.name)).toEqual(['hydraflow:plan', 'invented-by-model']);
    expect(gh.world.getLabel('invented-by-model')).toMatchObject({ color: 'ededed', description: null });

    const set = await bot.rest.issues.setLabels({ ...repo, issue_number: n, labels: ['hydraflow:implement'] });
    expect(set.data.map((l) => l.name)).toEqual(['hydraflow:implement']);

    const e = await rejects(bot.rest.issues.removeLabel({ ...repo, issue_number: n, name: 'hydraflow:plan' }));
    expect(e.status).toBe(404);

    await bot.rest.issues.addLabels({ ...repo, issue_number: n, labels: ['a b: c'] });
    const left = await bot.rest.issues.removeLabel({ ...repo, issue_number: n, name: 'a b: c' });
    expect(left.data.map((l) => l.name)).toEqual(['hydraflow:implement']);

    await bot.rest.issues.removeAllLabels({ ...repo, issue_number: n });
    expect(gh.world.issues.get(n)!.labels).toEqual([]);

    const created = await bot.rest.issues.createLabel({ ...repo, name: 'triage', color: 'ff0000', description: 'x' });
    expect(created.status).toBe(201);
    const dup = await rejects(bot.rest.issues.createLabel({ ...repo, name: 'Triage', color: 'ff0000' }));
    expect(dup.status).toBe(422);
    await bot.rest.issues.updateLabel({ ...repo, name: 'triage', new_name: 'needs-triage' });
    expect((await bot.rest.issues.getLabel({ ...repo, name: 'needs-triage' })).data.color).toBe('ff0000');
    await bot.rest.issues.deleteLabel({ ...repo, name: 'needs-triage' });
    expect(gh.world.getLabel('needs-triage')).toBeUndefined();
    const all = await bot.paginate(bot.rest.issues.listLabelsForRepo, { ...repo, per_page: 100 });
    expect(all.map((l) => l.name).sort()).toEqual([
      'a b: c',
      'hydraflow:implement',
      'hydraflow:plan',
      'invented-by-model',
    ]);
    // the dup 422 and the 404 are GitHub behaviour, not description violations
    expectNoViolations(gh);
  });

  it('a read-only user cannot label', async () => {
    const eve = gh.addUser({ login: 'eve', type: 'User', permission: 'read' });
    const issue = gh.world.issue({ title: 'x', author: 'eve' });
    const e = await rejects(
      octokit(gh.url, eve.token).rest.issues.addLabels({ ...repo, issue_number: issue.number, labels: ['p0'] }),
    );
    expect(e.status).toBe(403);
    expect(gh.world.issues.get(issue.number)!.labels).toEqual([]);
  });
});

describe('issues', () => {
  it('creates, edits and closes issues; issues and PRs share numbering', async () => {
    const created = await bot.rest.issues.create({ ...repo, title: 'Epic', body: 'b', labels: ['epic'] });
    expect(created.data.number).toBe(1);
    gh.world.pull({ title: 'PR', head: 'feature' });
    const next = await bot.rest.issues.create({ ...repo, title: 'Next' });
    expect(next.data.number).toBe(3);
    const closed = await bot.rest.issues.update({
      ...repo,
      issue_number: 1,
      state: 'closed',
      state_reason: 'not_planned',
    });
    expect(closed.data).toMatchObject({ state: 'closed', state_reason: 'not_planned' });
    expect(gh.world.issues.get(1)).toMatchObject({
      state: 'closed',
      closed_by: 'github-actions[bot]',
      labels: ['epic'],
    });
    const list = await bot.rest.issues.listForRepo({ ...repo, state: 'all' });
    expect(list.data.map((i) => i.number)).toEqual([3, 2, 1]);
    expect(list.data.find((i) => i.number === 2)?.pull_request).toBeTruthy();
    expectNoViolations(gh);
  });
});

describe('comments', () => {
  it('paginates across pages with a Link header that Octokit paginate follows', async () => {
    const issue = gh.world.issue({ title: 'long thread', author: 'alice' });
    for (let i = 0; i < 75; i++) gh.world.comment(issue.number, { author: i % 2 ? 'alice' : 'bob', body: `c${i}` });
    gh.world.comment(issue.number, { author: 'github-actions[bot]', body: '<!-- hydraflow:state -->' });

    const first = await bot.rest.issues.listComments({ ...repo, issue_number: issue.number });
    expect(first.data).toHaveLength(30);
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.link).toContain('page=3>; rel="last"');

    const all = await bot.paginate(bot.rest.issues.listComments, {
      ...repo,
      issue_number: issue.number,
      per_page: 100,
    });
    expect(all).toHaveLength(76);
    const small = await bot.paginate(bot.rest.issues.listComments, {
      ...repo,
      issue_number: issue.number,
      per_page: 7,
    });
    expect(small.map((c) => c.body)).toEqual(all.map((c) => c.body));
    expect(small.at(-1)?.user?.login).toBe('github-actions[bot]');
    const ids = all.map((c) => Number(c.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(ids[0]).toBeGreaterThan(1_000_000_000);
    expect(gh.world.issues.get(issue.number)!.comments).toBe(76);
    expectNoViolations(gh);
  });

  it("caps bodies at 65,536 characters with GitHub's validation error", async () => {
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    await bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'a'.repeat(65_536) });
    const e = await rejects(
      bot.rest.issues.createComment({ ...repo, issue_number: issue.number, body: 'a'.repeat(65_537) }),
    );
    expect(e.status).toBe(422);
    expect(e.response?.data).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'IssueComment', field: 'body', code: 'custom' }],
    });
    expect(gh.world.commentsOn(issue.number)).toHaveLength(1);
    expectNoViolations(gh);
  });

  it('lets the author or a write user edit/delete, not other read users; records updated_at', async () => {
    const alice = gh.addUser({ login: 'alice', type: 'User', permission: 'read' });
    const mallory = gh.addUser({ login: 'mallory', type: 'User', permission: 'read' });
    const writer = gh.addUser({ login: 'wendy', type: 'User', permission: 'write' });
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    const c = gh.world.comment(issue.number, { author: 'github-actions[bot]', body: 'state' });

    const e = await rejects(
      octokit(gh.url, mallory.token).rest.issues.updateComment({ ...repo, comment_id: c.id, body: 'forged' }),
    );
    expect(e.status).toBe(403);
    now += 60_000;
    await octokit(gh.url, writer.token).rest.issues.updateComment({
      ...repo,
      comment_id: c.id,
      body: 'edited by a write user',
    });
    expect(gh.world.comments.get(c.id)).toMatchObject({
      body: 'edited by a write user',
      updated_at: '2026-11-20T10:01:00Z',
    });
    expect(gh.world.comments.get(c.id)!.created_at).toBe('2026-11-20T10:00:00Z');

    const own = await octokit(gh.url, alice.token).rest.issues.createComment({
      ...repo,
      issue_number: issue.number,
      body: 'mine',
    });
    await octokit(gh.url, alice.token).rest.issues.deleteComment({ ...repo, comment_id: own.data.id });
    expect(gh.world.comments.has(Number(own.data.id))).toBe(false);
    expect(gh.world.issues.get(issue.number)!.comments).toBe(1);
    expectNoViolations(gh);
  });
});

describe('reactions', () => {
  it('201 when created, 200 with the existing reaction when repeated; per user', async () => {
    const alice = gh.addUser({ login: 'alice', type: 'User', permission: 'read' });
    const issue = gh.world.issue({ title: 'x', author: 'alice' });
    const c = gh.world.comment(issue.number, { author: 'alice', body: '/hydraflow plan' });

    const r1 = await bot.rest.reactions.createForIssueComment({ ...repo, comment_id: c.id, content: 'eyes' });
    expect(r1.status).toBe(201);
    const r2 = await bot.rest.reactions.createForIssueComment({ ...repo, comment_id: c.id, content: 'eyes' });
    expect(r2.status).toBe(200);
    expect(r2.data.id).toBe(r1.data.id);
    const r3 = await octokit(gh.url, alice.token).rest.reactions.createForIssueComment({
      ...repo,
      comment_id: c.id,
      content: 'eyes',
    });
    expect(r3.status).toBe(201);
    await bot.rest.reactions.createForIssue({ ...repo, issue_number: issue.number, content: 'rocket' });

    const got = await bot.rest.issues.getComment({ ...repo, comment_id: c.id });
    expect(got.data.reactions).toMatchObject({ total_count: 2, eyes: 2 });
    const list = await bot.rest.reactions.listForIssueComment({ ...repo, comment_id: c.id });
    expect(list.data.map((r) => r.user?.login)).toEqual(['github-actions[bot]', 'alice']);
    await bot.rest.reactions.deleteForIssueComment({ ...repo, comment_id: c.id, reaction_id: r1.data.id });
    expect(gh.world.reactionsFor({ type: 'comment', id: c.id }).map((r) => r.user)).toEqual(['alice']);
    expect(gh.world.reactionsFor({ type: 'issue', number: issue.number })).toMatchObject([
      { content: 'rocket', user: 'github-actions[bot]' },
    ]);
    expectNoViolations(gh);
  });
});

describe('collaborator permission', () => {
  it('reports maintain as write and triage as read, with the real role in role_name', async () => {
    for (const p of ['admin', 'maintain', 'write', 'triage', 'read'] as const)
      gh.addUser({ login: `u-${p}`, type: 'User', permission: p });
    const get = (username: string) => bot.rest.repos.getCollaboratorPermissionLevel({ ...repo, username });
    expect((await get('u-maintain')).data).toMatchObject({ permission: 'write', role_name: 'maintain' });
    expect((await get('u-triage')).data).toMatchObject({ permission: 'read', role_name: 'triage' });
    expect((await get('u-admin')).data).toMatchObject({ permission: 'admin', role_name: 'admin' });
    expect((await get('u-write')).data).toMatchObject({ permission: 'write', role_name: 'write' });
    expect((await get('u-read')).data).toMatchObject({ permission: 'read', role_name: 'read' });
    expect((await rejects(get('stranger'))).status).toBe(404);
    expectNoViolations(gh);
  });
});

describe('git refs', () => {
  it('creates, conflicts on existing refs, updates, matches and deletes', async () => {
    const main = await bot.rest.git.getRef({ ...repo, ref: 'heads/main' });
    const sha = main.data.object.sha;
    const created = await bot.rest.git.createRef({ ...repo, ref: 'refs/heads/hydraflow/claim-7', sha });
    expect(created.status).toBe(201);
    const e = await rejects(bot.rest.git.createRef({ ...repo, ref: 'refs/heads/hydraflow/claim-7', sha }));
    expect(e.status).toBe(422);
    expect(e.message).toContain('Reference already exists');

    const sha2 = 'b'.repeat(40);
    await bot.rest.git.updateRef({ ...repo, ref: 'heads/hydraflow/claim-7', sha: sha2, force: true });
    expect(gh.world.refs.get('refs/heads/hydraflow/claim-7')).toBe(sha2);
    const matching = await bot.rest.git.listMatchingRefs({ ...repo, ref: 'heads/hydraflow/' });
    expect(matching.data.map((r) => r.ref)).toEqual(['refs/heads/hydraflow/claim-7']);
    await bot.rest.git.deleteRef({ ...repo, ref: 'heads/hydraflow/claim-7' });
    expect(gh.world.refs.has('refs/heads/hydraflow/claim-7')).toBe(false);
    expect((await rejects(bot.rest.git.getRef({ ...repo, ref: 'heads/hydraflow/claim-7' }))).status).toBe(404);
    expectNoViolations(gh);
  });
});

describe('actions', () => {
  it('records workflow dispatches with the actor and rejects non-string or too many inputs', async () => {
    await bot.rest.actions.createWorkflowDispatch({
      ...repo,
      workflow_id: 'hydraflow.yml',
      ref: 'main',
      inputs: { issue: '7', actor: 'alice' },
    });
    expect(gh.world.dispatches).toEqual([
      {
        workflow_id: 'hydraflow.yml',
        ref: 'main',
        inputs: { issue: '7', actor: 'alice' },
        actor: 'github-actions[bot]',
        at: now,
      },
    ]);
    const bad = await rejects(
      bot.rest.actions.createWorkflowDispatch({
        ...repo,
        workflow_id: 'hydraflow.yml',
        ref: 'main',
        inputs: { issue: 7 } as unknown as Record<string, string>,
      }),
    );
    expect(bad.status).toBe(422);
    const many = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, 'v']));
    expect(
      (
        await rejects(
          bot.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 'hydraflow.yml', ref: 'main', inputs: many }),
        )
      ).status,
    ).toBe(422);
    expect(
      (await rejects(bot.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 'x.yml', ref: 'nope' }))).status,
    ).toBe(422);
    expect(gh.world.dispatches).toHaveLength(1);
    const runs = await bot.rest.actions.listWorkflowRunsForRepo(repo);
    expect(runs.data.total_count).toBe(1);
    expect(runs.data.workflow_runs[0]).toMatchObject({ event: 'workflow_dispatch', head_branch: 'main' });
    // >25 inputs is also outside the description (maxProperties), so exactly that one is a recorded violation
    expect(
      gh.violations.map((v) => v.kind),
      JSON.stringify(gh.violations),
    ).toEqual(['request']);
  });

  it('checks the inputs against the workflow file at the ref, as GitHub does (422 with its message)', async () => {
    gh.world.files.set(
      '.github/workflows/hydraflow.yml',
      [
        'on:',
        '  issues:',
        '  workflow_dispatch:',
        '    inputs:',
        '      issue: { required: false, type: string }',
        '      phase: { required: true, type: string }',
        'jobs: {}',
      ].join('\n'),
    );
    gh.world.files.set('.github/workflows/ci.yml', 'on: [push]\njobs: {}\n');
    const said = (e: { response?: { data: unknown } }) => (e.response?.data as { message: string }).message;
    const dispatch = (workflow_id: string, inputs: Record<string, string>) =>
      rejects(bot.rest.actions.createWorkflowDispatch({ ...repo, workflow_id, ref: 'main', inputs }));
    const unexpected = await dispatch('hydraflow.yml', { phase: 'plan', issue: '7', sweep: 'yes' });
    expect([unexpected.status, said(unexpected)]).toEqual([422, 'Unexpected inputs provided: ["sweep"]']);
    const missing = await dispatch('hydraflow.yml', { issue: '7' });
    expect([missing.status, said(missing)]).toEqual([422, "Required input 'phase' not provided"]);
    const untriggered = await dispatch('ci.yml', {});
    expect([untriggered.status, said(untriggered)]).toEqual([
      422,
      "Workflow does not have 'workflow_dispatch' trigger",
    ]);
    expect(gh.world.dispatches).toEqual([]);
    await bot.rest.actions.createWorkflowDispatch({
      ...repo,
      workflow_id: 'hydraflow.yml',
      ref: 'main',
      inputs: { phase: 'plan' },
    });
    expect(gh.world.dispatches.map((d) => d.inputs)).toEqual([{ phase: 'plan' }]);
  });
});

describe('checks and statuses', () => {
  it('creates/updates check runs and combines statuses', async () => {
    const sha = gh.world.refs.get('refs/heads/main')!;
    const run = await bot.rest.checks.create({
      ...repo,
      name: 'hydraflow/review',
      head_sha: sha,
      status: 'in_progress',
    });
    await bot.rest.checks.update({
      ...repo,
      check_run_id: Number(run.data.id),
      conclusion: 'success',
      output: { title: 'ok', summary: 'fine' },
    });
    const list = await bot.rest.checks.listForRef({ ...repo, ref: 'main' });
    expect(list.data.check_runs).toMatchObject([
      { name: 'hydraflow/review', status: 'completed', conclusion: 'success' },
    ]);
    await bot.rest.repos.createCommitStatus({ ...repo, sha, state: 'success', context: 'ci' });
    await bot.rest.repos.createCommitStatus({ ...repo, sha, state: 'failure', context: 'lint' });
    const combined = await bot.rest.repos.getCombinedStatusForRef({ ...repo, ref: sha });
    expect(combined.data).toMatchObject({ state: 'failure', total_count: 2 });
    expectNoViolations(gh);
  });
});

describe('pulls', () => {
  it('creates, lists with filters, reviews with inline comments, and merges', async () => {
    gh.world.ref('hydraflow/issue-1');
    const pr = await bot.rest.pulls.create({
      ...repo,
      title: 'Fix',
      head: 'hydraflow/issue-1',
      base: 'main',
      body: 'Closes #1',
    });
    expect(pr.status).toBe(201);
    const dup = await rejects(
      bot.rest.pulls.create({ ...repo, title: 'Fix', head: 'hydraflow/issue-1', base: 'main' }),
    );
    expect(dup.status).toBe(422);
    gh.world.pulls.get(pr.data.number)!.files = [
      {
        filename: 'src/a.ts',
        status: 'modified',
        additions: 2,
        deletions: 1,
        patch: '@@ -1,2 +1,3 @@\n line1\n-old\n+new\n+added',
      },
    ];
    const files = await bot.rest.pulls.listFiles({ ...repo, pull_number: pr.data.number });
    expect(files.data).toMatchObject([{ filename: 'src/a.ts', changes: 3 }]);
    const filtered = await bot.rest.pulls.list({ ...repo, head: 'acme:hydraflow/issue-1' });
    expect(filtered.data.map((p) => p.number)).toEqual([pr.data.number]);

    const reviewer = gh.addUser({ login: 'rev', type: 'User', permission: 'write' });
    const rv = octokit(gh.url, reviewer.token);
    const badLine = await rejects(
      rv.rest.pulls.createReview({
        ...repo,
        pull_number: pr.data.number,
        event: 'COMMENT',
        body: 'x',
        comments: [{ path: 'src/a.ts', line: 40, side: 'RIGHT', body: 'no' }],
      }),
    );
    expect(badLine.status).toBe(422);
    const review = await rv.rest.pulls.createReview({
      ...repo,
      pull_number: pr.data.number,
      event: 'REQUEST_CHANGES',
      body: 'see inline',
      comments: [{ path: 'src/a.ts', line: 3, side: 'RIGHT', body: 'name this better' }],
    });
    expect(review.data.state).toBe('CHANGES_REQUESTED');
    const rc = await bot.rest.pulls.listReviewComments({ ...repo, pull_number: pr.data.number });
    expect(rc.data).toMatchObject([
      { path: 'src/a.ts', line: 3, body: 'name this better', pull_request_review_id: review.data.id },
    ]);
    expect((await bot.rest.pulls.listReviews({ ...repo, pull_number: pr.data.number })).data).toHaveLength(1);

    expect(
      (await rejects(bot.rest.pulls.merge({ ...repo, pull_number: pr.data.number, sha: 'c'.repeat(40) }))).status,
    ).toBe(409);
    const merged = await bot.rest.pulls.merge({ ...repo, pull_number: pr.data.number });
    expect(merged.data.merged).toBe(true);
    expect((await rejects(bot.rest.pulls.merge({ ...repo, pull_number: pr.data.number }))).status).toBe(405);
    expect(gh.world.pulls.get(pr.data.number)).toMatchObject({ merged: true, merged_by: 'github-actions[bot]' });
    expect(gh.world.issues.get(pr.data.number)!.state).toBe('closed');
    const got = await bot.rest.pulls.get({ ...repo, pull_number: pr.data.number });
    expect(got.data).toMatchObject({ merged: true, state: 'closed', head: { ref: 'hydraflow/issue-1' } });
    expectNoViolations(gh);
  });
});
