/**
 * POST /graphql against GitHub's GraphQL schema, driven by the real Octokit and by HydraFlow's own grooming client
 * (its exact documents), plus the sub-issue and search REST endpoints that expose the same state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GraphqlGrooming } from '../../github/src/graphql-grooming';
import { expectNoViolations, graphqlSchemaStats, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { octokit, rejects, type OctokitClient } from './github-helpers';

const repo = { owner: 'acme', repo: 'widgets' };
let gh: GitHubEmulator;
let bot: OctokitClient;
let grooming: GraphqlGrooming;

beforeEach(async () => {
  gh = await startGitHubEmulator(repo);
  bot = octokit(gh.url, gh.botToken);
  grooming = new GraphqlGrooming(bot, repo);
});
afterEach(async () => {
  await gh.close();
});

const graphqlRequests = () => gh.requests.filter((r) => r.method === 'POST' && r.path === '/graphql');

/** Issue #1 (the epic) with two sub-issues, related issues and pull requests, and an unrelated issue. */
function seed() {
  gh.world.label('hydraflow:plan', '0e8a16');
  gh.world.label('phase');
  const epic = gh.world.issue({ title: 'Dark mode', body: 'Support a dark mode theme everywhere.' });
  const s1 = gh.world.issue({ title: 'Phase 1: palette', body: 'Colors for dark mode', labels: ['phase'] });
  const s2 = gh.world.issue({ title: 'Phase 2: toggle', body: 'A switch', state: 'closed' });
  gh.world.linkSubIssue(epic.number, s1.number);
  gh.world.linkSubIssue(epic.number, s2.number);
  const old = gh.world.issue({ title: 'Dark mode flickers', body: 'On startup', state: 'closed' });
  const { issue: pr } = gh.world.pull({ title: 'Add dark mode CSS', body: 'Part of dark mode', head: 'dark' });
  const unrelated = gh.world.issue({ title: 'Crash on save', body: 'Stack trace attached' });
  return { epic, s1, s2, old, pr, unrelated };
}

describe('GitHub GraphQL schema', () => {
  it('is built once per process, lazily', async () => {
    await bot.graphql('query { repository(owner: "acme", name: "widgets") { id } }');
    expect(graphqlSchemaStats.buildMs).toBeGreaterThan(0);
    const builds = graphqlSchemaStats.builds;
    await bot.graphql('query { repository(owner: "acme", name: "widgets") { id } }');
    expect(graphqlSchemaStats.builds).toBe(builds);
    expectNoViolations(gh);
  });
});

describe("HydraFlow's grooming documents", () => {
  it('groomContext: node ids, sub-issues, related issues and pull requests, label ids in one request', async () => {
    const { epic, s1, s2, old, pr } = seed();
    const ctx = await grooming.groomContext(epic.number, {
      search: 'dark mode',
      relatedLimit: 5,
      labels: ['hydraflow:plan', 'PHASE', 'no-such-label'],
    });
    const restRepo = await bot.rest.repos.get(repo);
    const restIssue = await bot.rest.issues.get({ ...repo, issue_number: epic.number });
    expect(ctx.repositoryId).toBe(restRepo.data.node_id);
    expect(ctx.issueNodeId).toBe(restIssue.data.node_id);
    expect(ctx.subIssues).toMatchObject([
      { number: s1.number, nodeId: s1.node_id, title: 'Phase 1: palette', body: 'Colors for dark mode', state: 'open' },
      { number: s2.number, nodeId: s2.node_id, title: 'Phase 2: toggle', body: 'A switch', state: 'closed' },
    ]);
    // newest first; the epic itself is dropped by the client; "toggle" and the crash do not mention dark mode
    expect(ctx.related.map((r) => [r.number, r.isPullRequest, r.state])).toEqual([
      [pr.number, true, 'open'],
      [old.number, false, 'closed'],
      [s1.number, false, 'open'],
    ]);
    expect(ctx.related[0]!.url).toBe(`${gh.url}/acme/widgets/pull/${pr.number}`);
    expect(ctx.labelIds).toEqual({
      'hydraflow:plan': gh.world.getLabel('hydraflow:plan')!.node_id,
      phase: gh.world.getLabel('phase')!.node_id,
    });
    const restLabels = await bot.rest.issues.listLabelsForRepo(repo);
    expect(restLabels.data.find((l) => l.name === 'phase')?.node_id).toBe(ctx.labelIds.phase);
    expect(graphqlRequests()).toHaveLength(1);
    expect(graphqlRequests()[0]!.operationId).toBe('graphql/query repository,search');
    expectNoViolations(gh);
  });

  it('createLabels and createSubIssue: labels by id, linked to the parent, the same events as REST', async () => {
    const { epic } = seed();
    const events: string[] = [];
    gh.onEvent((e) => events.push(`${e.name}.${e.action ?? ''}#${e.issue ?? ''}${e.label ? `:${e.label}` : ''}`));
    const ctx = await grooming.groomContext(epic.number, { search: 'x', relatedLimit: 1, labels: ['phase'] });
    const ids = await grooming.createLabels(ctx.repositoryId, [
      { name: 'hydraflow:groomed', color: '5319e7', description: 'Groomed' },
      { name: 'size:s', color: 'c2e0c6', description: '' },
    ]);
    expect(ids).toEqual({
      'hydraflow:groomed': gh.world.getLabel('hydraflow:groomed')!.node_id,
      'size:s': gh.world.getLabel('size:s')!.node_id,
    });
    expect(gh.world.getLabel('hydraflow:groomed')).toMatchObject({ color: '5319e7', description: 'Groomed' });
    const taken = (await rejects(
      grooming.createLabels(ctx.repositoryId, [{ name: 'PHASE', color: 'ffffff', description: '' }]),
    )) as {
      errors?: { type?: string; message: string }[];
    };
    expect(taken.errors).toMatchObject([{ type: 'UNPROCESSABLE', message: 'Name has already been taken' }]);

    const created = await grooming.createSubIssue(ctx.issueNodeId, ctx.repositoryId, {
      title: 'Phase 3: docs',
      body: 'Write docs',
      labelIds: [ctx.labelIds.phase!, ids['size:s']!],
    });
    expect(gh.world.issues.get(created.number)).toMatchObject({
      title: 'Phase 3: docs',
      body: 'Write docs',
      labels: ['phase', 'size:s'],
      user: 'github-actions[bot]',
    });
    expect(gh.world.parentOf(created.number)?.number).toBe(epic.number);
    expect(events).toEqual([
      `issues.opened#${created.number}`,
      `issues.labeled#${created.number}:phase`,
      `issues.labeled#${created.number}:size:s`,
    ]);
    const again = await grooming.groomContext(epic.number, { search: 'x', relatedLimit: 1, labels: [] });
    expect(again.subIssues.at(-1)).toMatchObject({ number: created.number, labels: ['phase', 'size:s'] });
    expectNoViolations(gh);
  });

  it('aliased createIssue mutations in one document run in order; REST sees labels and the parent link', async () => {
    const { epic } = seed();
    const repoId = (await bot.rest.repos.get(repo)).data.node_id;
    const phase = gh.world.getLabel('phase')!.node_id;
    const data = await bot.graphql<Record<string, { issue: { number: number; title: string; url: string } }>>(
      `mutation($repo: ID!, $parent: ID!, $t0: String!, $b0: String, $l0: [ID!], $t1: String!, $b1: String, $l1: [ID!]) {
        c0: createIssue(input: { repositoryId: $repo, parentIssueId: $parent, title: $t0, body: $b0, labelIds: $l0 }) { issue { number title url } }
        c1: createIssue(input: { repositoryId: $repo, parentIssueId: $parent, title: $t1, body: $b1, labelIds: $l1 }) { issue { number title url } }
      }`,
      { repo: repoId, parent: epic.node_id, t0: 'Phase 3', b0: 'docs', l0: [phase], t1: 'Phase 4', b1: null, l1: [] },
    );
    const n3 = data.c0!.issue.number;
    expect(data.c1!.issue).toEqual({
      number: n3 + 1,
      title: 'Phase 4',
      url: `${gh.url}/acme/widgets/issues/${n3 + 1}`,
    });
    const subs = await bot.rest.issues.listSubIssues({ ...repo, issue_number: epic.number });
    expect(subs.data.map((i) => [i.number, i.labels.map((l) => (typeof l === 'string' ? l : l.name))])).toEqual([
      [2, ['phase']],
      [3, []],
      [n3, ['phase']],
      [n3 + 1, []],
    ]);
    const parent = await bot.rest.issues.getParent({ ...repo, issue_number: n3 + 1 });
    expect(parent.data.number).toBe(epic.number);
    const restEpic = await bot.rest.issues.get({ ...repo, issue_number: epic.number });
    expect(restEpic.data.sub_issues_summary).toEqual({ total: 4, completed: 1, percent_completed: 25 });
    const restSub = await bot.rest.issues.get({ ...repo, issue_number: n3 });
    expect(restSub.data.parent_issue_url).toBe(`${gh.url}/repos/acme/widgets/issues/${epic.number}`);
    expect(graphqlRequests().at(-1)).toMatchObject({ status: 200, operationId: 'graphql/mutation createIssue' });
    expectNoViolations(gh);
  });

  it('searchIssues: repo:, is:issue|pr|open|closed, in:title, words', async () => {
    const { epic, s1, old, pr } = seed();
    const nums = async (q: string) => (await grooming.searchIssues(q, 10)).map((r) => r.number);
    expect(await nums('dark mode')).toEqual([pr.number, old.number, s1.number, epic.number]);
    expect(await nums('dark mode is:issue is:open')).toEqual([s1.number, epic.number]);
    expect(await nums('is:pr')).toEqual([pr.number]);
    expect(await nums('is:closed DARK')).toEqual([old.number]);
    expect(await nums('dark in:title')).toEqual([pr.number, old.number, epic.number]);
    expect(await nums('"mode theme"')).toEqual([epic.number]);
    expect(await nums('repo:other/place dark')).toEqual([pr.number, old.number, s1.number, epic.number]); // the client re-scopes
    expect(await grooming.searchIssues('dark', 2)).toHaveLength(2);
    const direct = await bot.graphql<{ search: { issueCount: number; nodes: unknown[] } }>(
      'query { search(query: "repo:other/place dark", type: ISSUE, first: 5) { issueCount nodes { __typename } } }',
    );
    expect(direct.search).toEqual({ issueCount: 0, nodes: [] });
    expectNoViolations(gh);
  });
});

describe('GraphQL errors, as GitHub answers them', () => {
  it('a document GitHub would reject: HTTP 200 with errors, nothing run, a violation recorded', async () => {
    seed();
    const e = (await rejects(bot.graphql('query { repository(owner: "acme", name: "widgets") { nope } }'))) as {
      errors?: { message: string }[];
    };
    expect(e.errors?.[0]?.message).toBe("Field 'nope' doesn't exist on type 'Repository'");
    expect(graphqlRequests().at(-1)).toMatchObject({ status: 200 });
    expect(gh.violations).toMatchObject([{ kind: 'request', method: 'POST', path: '/graphql' }]);
    expect(() => expectNoViolations(gh)).toThrow(/doesn't exist on type 'Repository'/);

    gh.violations.length = 0;
    await rejects(
      bot.graphql('query($n: Int!) { repository(owner: "acme", name: "widgets") { issue(number: $n) { id } } }'),
    );
    expect(gh.violations).toMatchObject([{ kind: 'request', errors: [expect.stringMatching(/\$n/)] }]);

    gh.violations.length = 0;
    const unpaged = (await rejects(
      bot.graphql('query { repository(owner: "acme", name: "widgets") { labels { nodes { name } } } }'),
    )) as { errors?: { type?: string }[] };
    expect(unpaged.errors?.[0]?.type).toBe('MISSING_PAGINATION_BOUNDARIES');
    expect(gh.violations).toMatchObject([{ kind: 'request' }]);
  });

  it("accepts what GitHub's graphql-ruby accepts: differing types across exclusive fragments; not real conflicts", async () => {
    const { pr } = seed();
    const items = await bot.graphql<{ search: { nodes: { state: string }[] } }>(
      'query { search(query: "is:pr", type: ISSUE, first: 1) { nodes { ... on Issue { state } ... on PullRequest { state } } } }',
    );
    expect(items.search.nodes).toEqual([{ state: 'OPEN' }]);
    expect(pr.isPullRequest).toBe(true);
    const e = (await rejects(
      bot.graphql('query { repository(owner: "acme", name: "widgets") { issue(number: 1) { x: title x: number } } }'),
    )) as { errors?: { message: string }[] };
    expect(e.errors?.[0]?.message).toMatch(/"x" conflict because "title" and "number" are different fields/);
    expect(gh.violations).toMatchObject([{ kind: 'request' }]);
  });

  it('unknown node ids and missing issues are NOT_FOUND errors (no violation: GitHub answers the same)', async () => {
    const { epic } = seed();
    const repoId = (await bot.rest.repos.get(repo)).data.node_id;
    const e = (await rejects(
      bot.graphql(
        'mutation($r: ID!, $p: ID!) { createIssue(input: { repositoryId: $r, title: "t", parentIssueId: $p }) { issue { number } } }',
        { r: repoId, p: 'I_nope' },
      ),
    )) as { errors?: { type?: string; message: string; path: string[] }[]; data?: unknown };
    expect(e.errors).toMatchObject([
      {
        type: 'NOT_FOUND',
        path: ['createIssue'],
        message: "Could not resolve to a node with the global id of 'I_nope'.",
      },
    ]);
    expect(e.data).toEqual({ createIssue: null });
    expect(gh.world.issues.size).toBe(6); // nothing created

    const missing = (await rejects(
      bot.graphql('query { repository(owner: "acme", name: "widgets") { issue(number: 999) { id } } }'),
    )) as { errors?: { type?: string }[] };
    expect(missing.errors?.[0]?.type).toBe('NOT_FOUND');
    await expect(
      bot.graphql(`query { repository(owner: "acme", name: "widgets") { issue(number: ${epic.number}) { id } } }`),
    ).resolves.toBeTruthy();
    expectNoViolations(gh);
  });

  it('what the emulator does not model is an error and a not-emulated violation, never a silent null', async () => {
    seed();
    await rejects(
      bot.graphql('query { repository(owner: "acme", name: "widgets") { issue(number: 1) { milestone { id } } } }'),
    );
    expect(gh.violations).toMatchObject([{ kind: 'not-emulated', errors: ['Issue.milestone is not emulated'] }]);
    gh.violations.length = 0;
    await grooming.searchIssues('dark label:phase sort:updated-desc', 5);
    expect(gh.violations).toMatchObject([
      { kind: 'not-emulated', errors: ['search qualifier "sort:updated-desc" is not emulated'] },
    ]);
  });

  it('a read-only user cannot link sub-issues: FORBIDDEN and nothing created', async () => {
    const { epic } = seed();
    const alice = gh.addUser({ login: 'alice', permission: 'read' });
    const asAlice = octokit(gh.url, alice.token);
    const repoId = (await bot.rest.repos.get(repo)).data.node_id;
    const e = (await rejects(
      asAlice.graphql(
        'mutation($r: ID!, $p: ID!) { createIssue(input: { repositoryId: $r, title: "t", parentIssueId: $p }) { issue { number } } }',
        { r: repoId, p: epic.node_id },
      ),
    )) as { errors?: { type?: string; message: string }[] };
    expect(e.errors).toMatchObject([{ type: 'FORBIDDEN', message: 'Must have triage access to repository.' }]);
    expect(gh.world.issues.size).toBe(6);
    expectNoViolations(gh);
  });
});

describe('sub-issue mutations and REST endpoints', () => {
  it('addSubIssue / removeSubIssue, and the same rules over REST', async () => {
    const { epic, s1, s2, unrelated, old } = seed();
    const add = await bot.graphql<{ addSubIssue: { issue: { number: number }; subIssue: { number: number } } }>(
      'mutation($p: ID!, $c: ID!) { addSubIssue(input: { issueId: $p, subIssueId: $c }) { issue { number } subIssue { number } } }',
      { p: epic.node_id, c: unrelated.node_id },
    );
    expect(add.addSubIssue).toEqual({ issue: { number: epic.number }, subIssue: { number: unrelated.number } });
    expect(gh.world.parentOf(unrelated.number)?.number).toBe(epic.number);

    // one parent only (unless replaced), no cycles
    const twice = await rejects(
      bot.rest.issues.addSubIssue({ ...repo, issue_number: old.number, sub_issue_id: s1.id }),
    );
    expect(twice.status).toBe(422);
    const cycle = await rejects(
      bot.rest.issues.addSubIssue({ ...repo, issue_number: s1.number, sub_issue_id: epic.id }),
    );
    expect(cycle.status).toBe(422);
    const moved = await bot.rest.issues.addSubIssue({
      ...repo,
      issue_number: old.number,
      sub_issue_id: s1.id,
      replace_parent: true,
    });
    expect(moved.status).toBe(201);
    expect(gh.world.subIssuesOf(old.number).map((i) => i.number)).toEqual([s1.number]);

    const removed = await bot.rest.issues.removeSubIssue({ ...repo, issue_number: old.number, sub_issue_id: s1.id });
    expect(removed.data.number).toBe(s1.number);
    expect(gh.world.parentOf(s1.number)).toBeUndefined();
    const noParent = await rejects(
      bot.request('GET /repos/{owner}/{repo}/issues/{issue_number}/parent', { ...repo, issue_number: s1.number }),
    );
    expect(noParent.status).toBe(404);

    await bot.graphql(
      'mutation($p: ID!, $c: ID!) { removeSubIssue(input: { issueId: $p, subIssueId: $c }) { subIssue { number } } }',
      { p: epic.node_id, c: unrelated.node_id },
    );
    expect(gh.world.subIssuesOf(epic.number).map((i) => i.number)).toEqual([s2.number]);
    expectNoViolations(gh);
  });

  it('GET /search/issues speaks the same query language in the REST shape', async () => {
    const { s1, epic, old, pr } = seed();
    const r = await bot.rest.search.issuesAndPullRequests({ q: 'repo:acme/widgets dark mode is:issue', per_page: 2 });
    expect(r.data.total_count).toBe(3);
    expect(r.data.incomplete_results).toBe(false);
    expect(r.data.items.map((i) => i.number)).toEqual([old.number, s1.number]);
    const page2 = await bot.rest.search.issuesAndPullRequests({
      q: 'repo:acme/widgets dark mode is:issue',
      per_page: 2,
      page: 2,
    });
    expect(page2.data.items.map((i) => i.number)).toEqual([epic.number]);
    const prs = await bot.rest.search.issuesAndPullRequests({ q: 'repo:acme/widgets is:pr is:open' });
    expect(prs.data.items).toMatchObject([{ number: pr.number, pull_request: { url: expect.any(String) } }]);
    expectNoViolations(gh);
  });

  it('rejects searches whose text is longer than 256 characters, like GitHub (REST and GraphQL)', async () => {
    seed();
    const long = `repo:acme/widgets is:issue ${'word '.repeat(52)}`;
    expect((await rejects(bot.rest.search.issuesAndPullRequests({ q: long }))).status).toBe(422);
    const e = (await rejects(
      bot.graphql('query($q: String!) { search(query: $q, type: ISSUE, first: 5) { issueCount } }', { q: long }),
    )) as { errors?: { message: string }[] };
    expect(e.errors?.[0]?.message).toBe('The search is longer than 256 characters.');
    expect(gh.violations.map((v) => [v.kind, v.path])).toEqual([
      ['request', '/search/issues'],
      ['request', '/graphql'],
    ]);
    // HydraFlow's client cuts the text at a word boundary below the limit, so its searches never hit it.
    expect(await grooming.searchIssues('word '.repeat(60), 5)).toEqual([]);
    expect(gh.violations).toHaveLength(2);
  });
});

/** Two sub-issues of `parent` in one document, as grooming batches them. */
async function createTwo(client: OctokitClient, parent: { node_id: string }, titles = ['A', 'B']) {
  const repoId = gh.world.nodeId('R', gh.world.repoId);
  return client.graphql(
    `mutation($r: ID!, $p: ID!, $a: String!, $b: String!) {
      a: createIssue(input: { repositoryId: $r, parentIssueId: $p, title: $a }) { issue { number } }
      b: createIssue(input: { repositoryId: $r, parentIssueId: $p, title: $b }) { issue { number } }
    }`,
    { r: repoId, p: parent.node_id, a: titles[0], b: titles[1] },
  );
}

describe('faults on POST /graphql', () => {
  it('a createIssue mutation whose write succeeds then 502s: the issues exist, the client sees 502', async () => {
    const { epic } = seed();
    gh.faults.writeSucceedsThen502(1, { pathIncludes: '/graphql' });
    const e = await rejects(createTwo(bot, epic));
    expect(e.status).toBe(502);
    expect(gh.world.subIssuesOf(epic.number).map((i) => i.title)).toEqual([
      'Phase 1: palette',
      'Phase 2: toggle',
      'A',
      'B',
    ]);
    expect(graphqlRequests().at(-1)).toMatchObject({ status: 502, operationId: 'graphql/mutation createIssue' });
  });

  it('queries are not writes: a write fault waits for the next mutation; failNext answers without running', async () => {
    const { epic } = seed();
    gh.faults.writeSucceedsThen502(1, { pathIncludes: '/graphql' });
    await grooming.groomContext(epic.number, { search: 'x', relatedLimit: 1, labels: [] });
    expect((await rejects(createTwo(bot, epic))).status).toBe(502);
    gh.faults.failNext(1, 502, { pathIncludes: '/graphql' });
    expect((await rejects(createTwo(bot, epic, ['C', 'D']))).status).toBe(502);
    expect(
      gh.world
        .subIssuesOf(epic.number)
        .map((i) => i.title)
        .slice(2),
    ).toEqual(['A', 'B']);
  });

  it('secondary rate limit counts mutations, not queries; GraphQL has its own primary budget', async () => {
    const { epic } = seed();
    gh.faults.secondaryRateLimit({ writesPerMinute: 1 });
    await grooming.groomContext(epic.number, { search: 'x', relatedLimit: 1, labels: [] });
    await grooming.groomContext(epic.number, { search: 'x', relatedLimit: 1, labels: [] });
    await createTwo(bot, epic);
    const e = await rejects(createTwo(bot, epic, ['C', 'D']));
    expect(e.status).toBe(403);
    expect(e.message).toContain('secondary rate limit');
    const rate = await bot.rest.rateLimit.get();
    expect(rate.data.resources.graphql).toMatchObject({ used: 4, limit: 1000 });
    expect(rate.data.resources.core.used).toBe(0);
  });

  it('an exhausted GraphQL budget is a 200 with a RATE_LIMITED error and x-ratelimit-remaining 0', async () => {
    seed();
    gh.faults.primaryRemaining(0);
    const e = (await rejects(grooming.searchIssues('dark', 5))) as {
      errors?: { type?: string }[];
      headers?: Record<string, string>;
    };
    expect(e.errors).toMatchObject([{ type: 'RATE_LIMITED' }]);
    expect(e.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'x-ratelimit-resource': 'graphql' });
    expect(graphqlRequests().at(-1)).toMatchObject({ status: 200 });
  });
});
