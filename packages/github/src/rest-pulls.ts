/**
 * The PullsPort over GitHub's REST API (and one GraphQL mutation: REST cannot take a pull request out of draft).
 * Same request policy as rest-issues.ts: reads and idempotent writes retry, a POST that GitHub may have performed before
 * failing (UncertainWriteError) is looked up before it is repeated, a 404 on a removal is success.
 */
import { hasLogin } from '@hydraflow/core';
import { RequestError } from '@octokit/request-error';
import type { RestClient } from './client';
import { UncertainWriteError } from './client';
import { restLogin, type GraphqlActor } from './graphql-actor';
import type { Repo } from './rest-issues';
import type {
  ChecksSummary,
  InlineComment,
  MergeMethod,
  PullFile,
  PullRequest,
  PullsPort,
  Review,
  ReviewComment,
  ReviewEvent,
} from './pulls-port';

type RawUser = { login: string; type: string } | null | undefined;

type RawPull = {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  merge_commit_sha?: string | null;
  draft?: boolean | null;
  head: { ref: string; sha: string; repo?: { full_name: string } | null };
  base: { ref: string };
  mergeable?: boolean | null;
  changed_files?: number;
  user?: RawUser;
  html_url: string;
  node_id: string;
};

type RawReview = {
  id: number;
  state: string;
  body?: string | null;
  user?: RawUser;
  commit_id?: string | null;
};

type RawReviewComment = {
  id: number;
  pull_request_review_id?: number | null;
  in_reply_to_id?: number;
  path: string;
  line?: number | null;
  body: string;
  user?: RawUser;
};

type ThreadsQuery = {
  repository: {
    pullRequest: {
      reviewThreads: {
        nodes: {
          id: string;
          isResolved: boolean;
          comments: { nodes: { databaseId: number | null; body: string; author: GraphqlActor | null }[] };
        }[];
      };
    } | null;
  } | null;
};

function toReviewComment(raw: RawReviewComment): ReviewComment {
  return {
    id: raw.id,
    reviewId: raw.pull_request_review_id ?? null,
    inReplyTo: raw.in_reply_to_id ?? null,
    path: raw.path,
    line: raw.line ?? null,
    body: raw.body,
    author: author(raw.user),
  };
}

function author(user: RawUser) {
  return user ? { login: user.login, type: user.type } : null;
}

function toPull(raw: RawPull): PullRequest {
  return {
    number: raw.number,
    title: raw.title,
    body: raw.body ?? '',
    state: raw.state === 'closed' ? 'closed' : 'open',
    merged: raw.merged === true || Boolean(raw.merged_at),
    draft: raw.draft === true,
    headRef: raw.head.ref,
    headSha: raw.head.sha,
    headRepo: raw.head.repo?.full_name ?? null,
    baseRef: raw.base.ref,
    mergeable: raw.mergeable ?? null,
    author: author(raw.user),
    htmlUrl: raw.html_url,
    nodeId: raw.node_id,
    ...(typeof raw.changed_files === 'number' ? { changedFiles: raw.changed_files } : {}),
  };
}

function toReview(raw: RawReview): Review {
  return {
    id: raw.id,
    state: raw.state,
    body: raw.body ?? '',
    author: author(raw.user),
    commitId: raw.commit_id ?? null,
  };
}

function status(error: unknown): number | undefined {
  return error instanceof RequestError ? error.status : undefined;
}

function messages(error: unknown): string {
  if (!(error instanceof RequestError)) return String(error);
  const data = error.response?.data as { message?: string; errors?: unknown[] } | undefined;
  return [
    error.message,
    data?.message,
    ...(data?.errors ?? []).map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
  ]
    .filter(Boolean)
    .join(' ');
}

/** Check-run conclusions that fail a commit. `neutral` and `skipped` do not. */
const FAILED = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure', 'stale']);

export class RestPulls implements PullsPort {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
    /** Logins HydraFlow writes as (to recognise its own reviews when reconciling an uncertain write). */
    private readonly selfLogins: readonly string[],
  ) {}

  async findOpenPull(branch: string): Promise<PullRequest | undefined> {
    const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/pulls', {
      ...this.repo,
      state: 'open',
      head: `${this.repo.owner}:${branch}`,
      per_page: 10,
    });
    const raw = (data as RawPull[]).find((p) => p.head.ref === branch);
    return raw ? toPull(raw) : undefined;
  }

  async getPull(pull: number): Promise<PullRequest> {
    const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
      ...this.repo,
      pull_number: pull,
    });
    return toPull(data as RawPull);
  }

  /**
   * Opens a pull request exactly once: if GitHub failed after maybe creating it, or says one already exists for the
   * branch (a re-run), the open pull request of `head` is returned instead of a second one.
   */
  async createPull(args: {
    title: string;
    body: string;
    head: string;
    base: string;
    draft: boolean;
  }): Promise<PullRequest> {
    const create = async () => {
      const { data } = await this.octokit.request('POST /repos/{owner}/{repo}/pulls', { ...this.repo, ...args });
      return toPull(data as RawPull);
    };
    try {
      return await create();
    } catch (error) {
      const exists = status(error) === 422 && /already exists/i.test(messages(error));
      if (!(error instanceof UncertainWriteError) && !exists) throw error;
      const found = await this.findOpenPull(args.head);
      if (found) return found;
      if (exists) throw error;
      return create();
    }
  }

  async updatePull(pull: number, args: { title?: string; body?: string }): Promise<PullRequest> {
    const { data } = await this.octokit.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
      ...this.repo,
      pull_number: pull,
      ...args,
    });
    return toPull(data as RawPull);
  }

  /** Draft → ready for review through GraphQL. Nothing to do for a pull request that is not a draft (any more). */
  async markReady(pull: PullRequest): Promise<void> {
    if (!pull.draft) return;
    try {
      await this.octokit.graphql(
        `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
        // Marking ready twice changes nothing, so a 5xx may be retried.
        { id: pull.nodeId, request: { hydraflowIdempotent: true } as never },
      );
    } catch (error) {
      // Already ready (a re-run, or a human did it): GitHub reports an error, but the goal is reached.
      const fresh = await this.getPull(pull.number);
      if (!fresh.draft) return;
      throw error;
    }
  }

  async listFiles(pull: number): Promise<PullFile[]> {
    const raw = await this.octokit.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/files', {
      ...this.repo,
      pull_number: pull,
      per_page: 100,
    });
    return (raw as { filename: string; status: string; additions: number; deletions: number; patch?: string }[]).map(
      (f) => ({
        path: f.filename,
        status: f.status,
        additions: f.additions,
        deletions: f.deletions,
        ...(f.patch !== undefined ? { patch: f.patch } : {}),
      }),
    );
  }

  async listReviewComments(pull: number, review: number): Promise<ReviewComment[]> {
    const raw = await this.octokit.paginate(
      'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments',
      { ...this.repo, pull_number: pull, review_id: review, per_page: 100 },
    );
    return (raw as RawReviewComment[]).map(toReviewComment);
  }

  async answerReviewThread(pull: number, comment: number, body: string, resolve: boolean): Promise<void> {
    const thread = await this.reviewThreadOf(pull, comment);
    const answered = thread?.comments.some((c) => c.body.trim() === body.trim() && this.isSelf(c.author));
    if (!answered) {
      await this.octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies', {
        ...this.repo,
        pull_number: pull,
        comment_id: comment,
        body,
      });
    }
    if (resolve && thread && !thread.isResolved) {
      await this.octokit.graphql(
        `mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { isResolved } } }`,
        // Resolving twice changes nothing, so a 5xx may be retried.
        { id: thread.id, request: { hydraflowIdempotent: true } as never },
      );
    }
  }

  /** The review thread whose first comment is `comment`, with what was said in it. */
  private async reviewThreadOf(pull: number, comment: number) {
    const data = await this.octokit.graphql<ThreadsQuery>(
      `query($owner: String!, $repo: String!, $pull: Int!) {
        repository(owner: $owner, name: $repo) {
          pullRequest(number: $pull) {
            reviewThreads(first: 100) {
              nodes { id isResolved comments(first: 50) { nodes { databaseId body author { __typename login } } } }
            }
          }
        }
      }`,
      { owner: this.repo.owner, repo: this.repo.repo, pull },
    );
    const threads = data.repository?.pullRequest?.reviewThreads.nodes ?? [];
    const thread = threads.find((t) => t.comments.nodes[0]?.databaseId === comment);
    if (!thread) return undefined;
    return {
      id: thread.id,
      isResolved: thread.isResolved,
      comments: thread.comments.nodes.map((c) => ({
        body: c.body,
        author: c.author ? restLogin(c.author) : undefined,
      })),
    };
  }

  private isSelf(login: string | undefined): boolean {
    return hasLogin(this.selfLogins, login);
  }

  async listReviews(pull: number): Promise<Review[]> {
    const raw = await this.octokit.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
      ...this.repo,
      pull_number: pull,
      per_page: 100,
    });
    return (raw as RawReview[]).map(toReview);
  }

  /**
   * One review with all its inline comments. Exactly once: after an uncertain write, HydraFlow's review of the same
   * commit with the same body is looked for before posting again.
   *
   * Two refusals are absorbed, because the review still has to be said:
   * - APPROVE refused with 422 (GitHub does not let an identity approve its own pull request, nor GITHUB_TOKEN approve
   *   unless the repository allows Actions to approve): posted as COMMENT instead; the returned state says COMMENTED.
   * - inline comments refused with 422 (a line GitHub could not resolve, e.g. the diff moved): posted again with the
   *   comments folded into the body, so nothing is lost and nothing is posted twice.
   */
  async createReview(
    pull: number,
    args: { commitId: string; event: ReviewEvent; body: string; comments: InlineComment[]; pullAuthor?: string },
  ): Promise<Review> {
    const post = async (event: ReviewEvent, body: string, comments: InlineComment[]): Promise<Review> => {
      const request = {
        ...this.repo,
        pull_number: pull,
        commit_id: args.commitId,
        event,
        body,
        ...(comments.length
          ? { comments: comments.map((c) => ({ path: c.path, line: c.line, side: 'RIGHT' as const, body: c.body })) }
          : {}),
      };
      try {
        const { data } = await this.octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', request);
        return toReview(data as RawReview);
      } catch (error) {
        if (!(error instanceof UncertainWriteError)) throw error;
        const existing = (await this.listReviews(pull)).find(
          (r) =>
            r.author !== null &&
            hasLogin(this.selfLogins, r.author.login) &&
            r.commitId === args.commitId &&
            r.body.trim() === body.trim(),
        );
        if (existing) return existing;
        const { data } = await this.octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', request);
        return toReview(data as RawReview);
      }
    };
    // The pull request is HydraFlow's own (opened with the token that reviews): GitHub would refuse the approval.
    const own = hasLogin(this.selfLogins, args.pullAuthor);
    try {
      return await post(args.event === 'APPROVE' && own ? 'COMMENT' : args.event, args.body, args.comments);
    } catch (error) {
      if (status(error) !== 422) throw error;
      const text = messages(error);
      if (args.event === 'APPROVE' && /approve/i.test(text)) {
        return post('COMMENT', args.body, args.comments);
      }
      if (args.comments.length > 0 && /line|path|position|resolve/i.test(text)) {
        const folded = [
          args.body,
          '',
          '#### Findings (inline placement was refused by GitHub)',
          '',
          ...args.comments.map((c) => `- \`${c.path}\` line ${c.line}: ${c.body.replace(/\s*\n\s*/g, ' ')}`),
        ].join('\n');
        return post(args.event, folded, []);
      }
      throw error;
    }
  }

  /**
   * Check runs and commit statuses of `ref`, combined: failure if any failed, else pending if any is not finished,
   * else success (also when the commit has no checks at all). A re-run check counts by its latest run.
   */
  async checks(ref: string): Promise<ChecksSummary> {
    // Check runs and commit statuses are two reads of their own: ask for both at once.
    const [listed, { data }] = await Promise.all([
      this.octokit.paginate('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { ...this.repo, ref, per_page: 100 }),
      this.octokit.request('GET /repos/{owner}/{repo}/commits/{ref}/status', { ...this.repo, ref, per_page: 100 }),
    ]);
    const runs = listed as unknown as { id: number; name: string; status: string; conclusion: string | null }[];
    const latest = new Map<string, (typeof runs)[number]>();
    for (const run of runs) {
      const seen = latest.get(run.name);
      if (!seen || run.id > seen.id) latest.set(run.name, run);
    }
    const failing: string[] = [];
    const pending: string[] = [];
    const passed: string[] = [];
    for (const run of latest.values()) {
      if (run.status !== 'completed') pending.push(run.name);
      else if (run.conclusion !== null && FAILED.has(run.conclusion)) failing.push(run.name);
      else passed.push(run.name);
    }
    for (const s of data.statuses) {
      if (s.state === 'pending') pending.push(s.context);
      else if (s.state === 'failure' || s.state === 'error') failing.push(s.context);
      else passed.push(s.context);
    }
    const state = failing.length ? 'failure' : pending.length ? 'pending' : 'success';
    return { state, failing: failing.sort(), pending: pending.sort(), passed: passed.sort() };
  }

  /**
   * Merges if the head is still `sha`. Idempotent: a pull request already merged at that head (a re-run, or a merge
   * that GitHub performed before answering 5xx) returns its merge commit.
   */
  async merge(
    pull: number,
    args: { method: MergeMethod; sha: string; title: string; message: string },
  ): Promise<string> {
    try {
      const { data } = await this.octokit.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...this.repo,
        pull_number: pull,
        sha: args.sha,
        merge_method: args.method,
        commit_title: args.title,
        commit_message: args.message,
      });
      return data.sha;
    } catch (error) {
      if (status(error) !== 405 && status(error) !== 409) throw error;
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
        ...this.repo,
        pull_number: pull,
      });
      const raw = data as RawPull;
      if ((raw.merged === true || raw.merged_at) && raw.head.sha === args.sha && raw.merge_commit_sha) {
        return raw.merge_commit_sha;
      }
      throw error;
    }
  }

  /** Deletes the branch; one already gone is not an error. */
  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.octokit.request('DELETE /repos/{owner}/{repo}/git/refs/{ref}', {
        ...this.repo,
        ref: `heads/${branch}`,
      });
    } catch (error) {
      const s = status(error);
      if (s === 404 || (s === 422 && /does not exist/i.test(messages(error)))) return;
      throw error;
    }
  }

  async closeIssue(issue: number, reason: 'completed' | 'not_planned'): Promise<void> {
    await this.octokit.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
      ...this.repo,
      issue_number: issue,
      state: 'closed',
      state_reason: reason,
    });
  }
}
