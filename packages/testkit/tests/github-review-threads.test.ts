/**
 * Review threads on a pull request, as HydraFlow needs them to answer humans: a review with inline comments, replies
 * over REST (pulls/create-reply-for-review-comment), and the threads and their resolution over GraphQL
 * (PullRequest.reviewThreads, resolveReviewThread, unresolveReviewThread). Driven by the real Octokit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { octokit, rejects, type OctokitClient } from './github-helpers';

const repo = { owner: 'acme', repo: 'widgets' };
let gh: GitHubEmulator;
let bot: OctokitClient;
let human: OctokitClient;

beforeEach(async () => {
  gh = await startGitHubEmulator(repo);
  bot = octokit(gh.url, gh.botToken);
  human = octokit(gh.url, gh.addUser({ login: 'alice', type: 'User', permission: 'write' }).token);
});
afterEach(async () => {
  await gh.close();
});

const THREADS = `query Threads($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50) {
        totalCount
        nodes {
          id
          isResolved
          path
          line
          comments(first: 50) { nodes { databaseId body author { login } replyTo { databaseId } } }
        }
      }
    }
  }
}`;

interface Thread {
  id: string;
  isResolved: boolean;
  path: string;
  line: number | null;
  comments: { nodes: { databaseId: number; body: string; author: { login: string }; replyTo: unknown }[] };
}

async function threads(client: OctokitClient, number: number): Promise<Thread[]> {
  const r = await client.graphql<{
    repository: { pullRequest: { reviewThreads: { totalCount: number; nodes: Thread[] } } };
  }>(THREADS, { ...{ owner: repo.owner, name: repo.repo }, number });
  return r.repository.pullRequest.reviewThreads.nodes;
}

const RESOLVE = `mutation Resolve($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id isResolved } } }`;
const UNRESOLVE = `mutation Unresolve($id: ID!) { unresolveReviewThread(input: { threadId: $id }) { thread { id isResolved } } }`;

/** HydraFlow's pull request with a diff on two files. */
function seedPull(head = 'hydraflow/issue-1') {
  return gh.world.pull({
    title: 'Add dark mode',
    head,
    author: 'github-actions[bot]',
    files: [
      {
        filename: 'src/a.ts',
        status: 'modified',
        additions: 2,
        deletions: 0,
        patch: '@@ -1,1 +1,3 @@\n one\n+two\n+three',
      },
      { filename: 'src/b.ts', status: 'added', additions: 1, deletions: 0, patch: '@@ -0,0 +1,1 @@\n+b' },
    ],
  }).pull;
}

describe('review threads', () => {
  it('a human requests changes inline, HydraFlow replies in the thread and resolves it; replies elsewhere 404', async () => {
    const pull = seedPull();
    const eventsBefore = gh.events.length;
    const review = await human.rest.pulls.createReview({
      ...repo,
      pull_number: pull.number,
      event: 'REQUEST_CHANGES',
      body: 'two things',
      comments: [
        { path: 'src/a.ts', line: 2, body: 'rename two' },
        { path: 'src/b.ts', line: 1, body: 'why a new file?' },
      ],
    });
    expect(review.data.state).toBe('CHANGES_REQUESTED');
    const submitted = gh.events.slice(eventsBefore).filter((e) => e.name === 'pull_request_review');
    expect(submitted).toMatchObject([
      { action: 'submitted', pull: pull.number, review: review.data.id, actor: 'alice' },
    ]);
    expect(gh.world.reviews.get(Number(review.data.id))).toMatchObject({ state: 'CHANGES_REQUESTED', user: 'alice' });

    const listed = await bot.rest.pulls.listCommentsForReview({
      ...repo,
      pull_number: pull.number,
      review_id: Number(review.data.id),
    });
    expect(listed.data).toMatchObject([
      { pull_request_review_id: review.data.id, user: { login: 'alice' }, body: 'rename two', path: 'src/a.ts' },
      { pull_request_review_id: review.data.id, user: { login: 'alice' }, body: 'why a new file?', path: 'src/b.ts' },
    ]);
    expect(listed.data.every((c) => !('in_reply_to_id' in c))).toBe(true);
    const [first, second] = listed.data;

    const reply = await bot.rest.pulls.createReplyForReviewComment({
      ...repo,
      pull_number: pull.number,
      comment_id: first!.id,
      body: 'Renamed to `second`.',
    });
    expect(reply.status).toBe(201);
    expect(reply.data).toMatchObject({
      in_reply_to_id: first!.id,
      path: 'src/a.ts',
      line: 2,
      commit_id: first!.commit_id,
      user: { login: 'github-actions[bot]' },
      body: 'Renamed to `second`.',
    });
    expect(reply.headers.location).toBe(`${gh.url}/repos/acme/widgets/pulls/comments/${reply.data.id}`);
    // GitHub files the reply as a COMMENTED review of its own, and reports it as one
    const replyReview = gh.world.reviews.get(Number(reply.data.pull_request_review_id));
    expect(replyReview).toMatchObject({ state: 'COMMENTED', body: '', user: 'github-actions[bot]' });
    expect(gh.events.at(-1)).toMatchObject({
      name: 'pull_request_review',
      action: 'submitted',
      review: replyReview!.id,
      viaToken: 'GITHUB_TOKEN',
    });

    // a reply to the reply stays in the same thread
    const again = await human.rest.pulls.createReplyForReviewComment({
      ...repo,
      pull_number: pull.number,
      comment_id: reply.data.id,
      body: 'thanks',
    });
    expect(again.data.in_reply_to_id).toBe(first!.id);

    const all = await bot.rest.pulls.listReviewComments({ ...repo, pull_number: pull.number });
    expect(all.data.map((c) => [c.id, c.in_reply_to_id, c.line])).toEqual([
      [first!.id, undefined, 2],
      [second!.id, undefined, 1],
      [reply.data.id, first!.id, 2],
      [again.data.id, first!.id, 2],
    ]);
    const single = await bot.rest.pulls.getReviewComment({ ...repo, comment_id: reply.data.id });
    expect(single.data.in_reply_to_id).toBe(first!.id);
    const gotReview = await bot.rest.pulls.getReview({
      ...repo,
      pull_number: pull.number,
      review_id: Number(review.data.id),
    });
    expect(gotReview.data.state).toBe('CHANGES_REQUESTED');

    let ts = await threads(bot, pull.number);
    expect(ts.map((t) => [t.path, t.line, t.isResolved, t.comments.nodes.length])).toEqual([
      ['src/a.ts', 2, false, 3],
      ['src/b.ts', 1, false, 1],
    ]);
    expect(ts[0]!.id).toMatch(/^PRRT_/);
    expect(ts[0]!.comments.nodes).toEqual([
      { databaseId: first!.id, body: 'rename two', author: { login: 'alice' }, replyTo: null },
      {
        databaseId: reply.data.id,
        body: 'Renamed to `second`.',
        author: { login: 'github-actions' }, // GraphQL names an App's bot without the `[bot]` REST adds
        replyTo: { databaseId: first!.id },
      },
      { databaseId: again.data.id, body: 'thanks', author: { login: 'alice' }, replyTo: { databaseId: first!.id } },
    ]);

    const resolved = await bot.graphql<{ resolveReviewThread: { thread: { id: string; isResolved: boolean } } }>(
      RESOLVE,
      { id: ts[0]!.id },
    );
    expect(resolved.resolveReviewThread.thread).toEqual({ id: ts[0]!.id, isResolved: true });
    ts = await threads(bot, pull.number);
    expect(ts.map((t) => t.isResolved)).toEqual([true, false]);
    expect(gh.world.resolvedThreads.get(Number(first!.id))).toBe('github-actions[bot]');
    // stable ids: the same thread, still resolved, after more activity
    await human.rest.pulls.createReplyForReviewComment({
      ...repo,
      pull_number: pull.number,
      comment_id: second!.id,
      body: 'never mind',
    });
    const after = await threads(bot, pull.number);
    expect(after.map((t) => [t.id, t.isResolved])).toEqual([
      [ts[0]!.id, true],
      [ts[1]!.id, false],
    ]);

    const unresolved = await human.graphql<{ unresolveReviewThread: { thread: { isResolved: boolean } } }>(UNRESOLVE, {
      id: ts[0]!.id,
    });
    expect(unresolved.unresolveReviewThread.thread.isResolved).toBe(false);

    // a comment id of another pull request: 404 on this one, nothing created
    const other = seedPull('hydraflow/issue-2');
    const elsewhere = await human.rest.pulls.createReview({
      ...repo,
      pull_number: other.number,
      event: 'COMMENT',
      comments: [{ path: 'src/a.ts', line: 3, body: 'and here' }],
    });
    const [foreign] = (
      await bot.rest.pulls.listCommentsForReview({
        ...repo,
        pull_number: other.number,
        review_id: Number(elsewhere.data.id),
      })
    ).data;
    const count = gh.world.reviewComments.size;
    const e = await rejects(
      bot.rest.pulls.createReplyForReviewComment({
        ...repo,
        pull_number: pull.number,
        comment_id: foreign!.id,
        body: 'wrong pull request',
      }),
    );
    expect(e.status).toBe(404);
    expect(
      (
        await rejects(
          bot.rest.pulls.createReplyForReviewComment({ ...repo, pull_number: pull.number, comment_id: 1, body: 'x' }),
        )
      ).status,
    ).toBe(404);
    expect(gh.world.reviewComments.size).toBe(count);
    // the other pull request's review and thread are its own
    expect(
      (
        await rejects(
          bot.rest.pulls.getReview({ ...repo, pull_number: pull.number, review_id: Number(elsewhere.data.id) }),
        )
      ).status,
    ).toBe(404);
    expect((await threads(bot, other.number)).map((t) => t.comments.nodes.map((c) => c.body))).toEqual([['and here']]);
    expectNoViolations(gh);
  });

  it('a COMMENT review is reported with its comments recorded; a pending review has no threads yet', async () => {
    const pull = seedPull();
    const seen: number[] = [];
    gh.onEvent((e) => {
      if (e.name === 'pull_request_review') seen.push(gh.world.reviewThreadsOf(e.pull!).length);
    });
    const commented = await human.rest.pulls.createReview({
      ...repo,
      pull_number: pull.number,
      event: 'COMMENT',
      comments: [{ path: 'src/b.ts', line: 1, body: 'nit' }],
    });
    expect(commented.data.state).toBe('COMMENTED');
    // the listener saw the review's comments already recorded
    expect(seen).toEqual([1]);
    await human.rest.pulls.createReview({
      ...repo,
      pull_number: pull.number,
      comments: [{ path: 'src/a.ts', line: 3, body: 'draft' }],
    });
    expect(seen).toEqual([1]);
    expect((await threads(bot, pull.number)).map((t) => t.comments.nodes[0]!.body)).toEqual(['nit']);
    expectNoViolations(gh);
  });

  it('resolving: unknown thread ids are NOT_FOUND, a read-only stranger is FORBIDDEN, GitHub-invalid documents fail', async () => {
    const pull = seedPull();
    gh.world.review(pull.number, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      comments: [{ path: 'src/a.ts', line: 2, body: 'rename two' }],
    });
    const [t] = await threads(bot, pull.number);

    const missing = await rejects(bot.graphql(RESOLVE, { id: 'PRRT_nope' }));
    expect(missing.message).toContain("Could not resolve to a node with the global id of 'PRRT_nope'");

    const stranger = octokit(gh.url, gh.addUser({ login: 'eve', type: 'User', permission: 'read' }).token);
    const forbidden = (await rejects(stranger.graphql(RESOLVE, { id: t!.id }))) as unknown as {
      errors: { type: string }[];
    };
    expect(forbidden.errors[0]!.type).toBe('FORBIDDEN');
    expect(gh.world.resolvedThreads.size).toBe(0);

    // isResolved is a thread field, not a comment one; resolveReviewThread takes threadId, not id
    const before = gh.violations.length;
    await rejects(
      bot.graphql(`query { repository(owner: "acme", name: "widgets") { pullRequest(number: ${pull.number}) {
        reviewThreads(first: 5) { nodes { comments(first: 5) { nodes { isResolved } } } } } } }`),
    );
    await rejects(bot.graphql(`mutation { resolveReviewThread(input: { id: "${t!.id}" }) { thread { id } } }`));
    expect(gh.violations.slice(before).map((v) => v.kind)).toEqual(['request', 'request']);
    expect(gh.world.resolvedThreads.size).toBe(0);
  });
});
