import { hasLogin } from '@hydraflow/core';
import type { LabelEvent } from '@hydraflow/core';
import { RequestError } from '@octokit/request-error';
import type { RestClient } from './client';
import { UncertainWriteError } from './client';
import { restLogin, type GraphqlActor } from './graphql-actor';
import type {
  Annotation,
  Author,
  IssueComment,
  Issue,
  IssuesPort,
  LabelSpec,
  Permission,
  Reaction,
  RunJob,
} from './port';

export interface Repo {
  owner: string;
  repo: string;
}

type RawComment = {
  id: number;
  node_id: string;
  body?: string | null;
  user: { login: string; type: string } | null;
  created_at: string;
  updated_at: string;
  html_url: string;
};

/**
 * The issue's comments with what REST gives and who edited each last (`editor`), in one answer per 100 comments. The
 * id is `fullDatabaseId` (GitHub's comment ids outgrew GraphQL's 32-bit `databaseId`).
 */
const COMMENTS_QUERY = `query($owner: String!, $repo: String!, $issue: Int!, $after: String) {
  repository(owner: $owner, name: $repo) {
    issue(number: $issue) {
      comments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id fullDatabaseId body createdAt updatedAt url
          author { __typename login }
          editor { __typename login }
        }
      }
    }
  }
}`;

type GraphqlComment = {
  id: string;
  fullDatabaseId: string | number | null;
  body: string;
  createdAt: string;
  updatedAt: string;
  url: string;
  author: GraphqlActor | null;
  editor: GraphqlActor | null;
};
type CommentsPage = {
  repository: {
    issue: {
      comments: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: (GraphqlComment | null)[] };
    } | null;
  } | null;
};

const actor = (a: GraphqlActor | null): Author | null =>
  a ? { login: restLogin(a), type: a.__typename === 'Bot' ? 'Bot' : 'User' } : null;

function fromGraphql(node: GraphqlComment): IssueComment {
  return {
    id: Number(node.fullDatabaseId),
    nodeId: node.id,
    body: node.body,
    user: actor(node.author),
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
    htmlUrl: node.url,
    editor: actor(node.editor),
  };
}

function toComment(raw: RawComment): IssueComment {
  return {
    id: raw.id,
    nodeId: raw.node_id,
    body: raw.body ?? '',
    user: raw.user ? { login: raw.user.login, type: raw.user.type } : null,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    htmlUrl: raw.html_url,
  };
}

type RawLabel = string | { name?: string; color?: string | null; description?: string | null };

function toLabel(raw: RawLabel): LabelSpec {
  if (typeof raw === 'string') return { name: raw, color: '', description: '' };
  return { name: raw.name ?? '', color: raw.color ?? '', description: raw.description ?? '' };
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof RequestError && error.status === status;
}

type RawIssue = {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels: RawLabel[];
  user: { login: string; type: string } | null;
  author_association?: string;
  pull_request?: unknown;
  html_url: string;
  reactions?: { eyes?: number };
  parent_issue_url?: string | null;
  updated_at?: string;
};

function toIssue(data: RawIssue): Issue {
  return {
    number: data.number,
    title: data.title,
    body: data.body ?? '',
    state: data.state === 'closed' ? 'closed' : 'open',
    labels: data.labels.map((l) => toLabel(l).name),
    author: data.user ? { login: data.user.login, type: data.user.type } : null,
    authorAssociation: data.author_association ?? 'NONE',
    isPullRequest: Boolean(data.pull_request),
    htmlUrl: data.html_url,
    ...parentOf(data.parent_issue_url),
    ...(data.updated_at ? { updatedAt: data.updated_at } : {}),
  };
}

/** `…/issues/<n>` → `{ parent: n }`; nothing for no parent (or a URL that is not an issue's). */
function parentOf(url: string | null | undefined): { parent?: number } {
  const n = /\/issues\/(\d+)$/.exec(url ?? '')?.[1];
  return n ? { parent: Number(n) } : {};
}

/** The IssuesPort over GitHub's REST API. `self` is the login HydraFlow writes as (to find its own comments). */
export class RestIssues implements IssuesPort {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
    private readonly selfLogins: readonly string[],
  ) {}

  async getIssue(issue: number): Promise<Issue> {
    const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}', {
      ...this.repo,
      issue_number: issue,
    });
    return toIssue(data as RawIssue);
  }

  async listOpenIssues(options: { label?: string; page: number }): Promise<(Issue & { eyes: number })[]> {
    const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/issues', {
      ...this.repo,
      state: 'open',
      ...(options.label ? { labels: options.label } : {}),
      sort: 'created',
      direction: 'asc',
      per_page: 100,
      page: options.page,
    });
    return (data as RawIssue[]).map((raw) => ({ ...toIssue(raw), eyes: raw.reactions?.eyes ?? 0 }));
  }

  async updateIssue(
    issue: number,
    changes: { body?: string; labels?: string[] },
  ): Promise<Issue & { labelSpecs: LabelSpec[] }> {
    // Setting the same body and labels twice is the same result: a 5xx may be retried.
    const { data } = await this.octokit.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
      ...this.repo,
      issue_number: issue,
      ...changes,
      request: { hydraflowIdempotent: true } as never,
    });
    return { ...toIssue(data as RawIssue), labelSpecs: (data.labels as RawLabel[]).map(toLabel) };
  }

  async listComments(issue: number): Promise<IssueComment[]> {
    const raw = await this.octokit.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...this.repo,
      issue_number: issue,
      per_page: 100,
    });
    return (raw as RawComment[]).map(toComment);
  }

  async createComment(issue: number, body: string, marker: string): Promise<IssueComment> {
    const post = async () => {
      const { data } = await this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...this.repo,
        issue_number: issue,
        body,
      });
      return toComment(data as RawComment);
    };
    try {
      return await post();
    } catch (error) {
      if (!(error instanceof UncertainWriteError)) throw error;
      // GitHub may have created it before failing: look before writing again.
      const existing = (await this.listComments(issue)).find(
        (c) => c.user && hasLogin(this.selfLogins, c.user.login) && c.body.includes(marker),
      );
      return existing ?? post();
    }
  }

  async updateComment(commentId: number, body: string): Promise<IssueComment> {
    const { data } = await this.octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
      ...this.repo,
      comment_id: commentId,
      body,
    });
    return toComment(data as RawComment);
  }

  async readComments(issue: number): Promise<IssueComment[]> {
    const comments: IssueComment[] = [];
    for (let after: string | null = null; ;) {
      let data: CommentsPage;
      try {
        data = await this.octokit.graphql(COMMENTS_QUERY, {
          owner: this.repo.owner,
          repo: this.repo.repo,
          issue,
          after,
          // a read: a 5xx may be retried
          request: { hydraflowIdempotent: true } as never,
        });
      } catch (error) {
        // GitHub answers an issue that is gone (or a pull request's number) with NOT_FOUND in an HTTP 200: reported
        // as REST's 404 would be (run.ts says there is nothing left to do)
        const errors = (error as { errors?: { type?: string }[] } | null)?.errors;
        if (!errors?.length || !errors.every((e) => e.type === 'NOT_FOUND')) throw error;
        const url = `${String(this.octokit.request.endpoint.DEFAULTS.baseUrl)}/graphql`;
        throw new RequestError(`issue #${issue} was not found`, 404, {
          request: { method: 'POST', url, headers: {} },
        });
      }
      const page = data.repository?.issue?.comments;
      if (!page) throw new Error(`issue #${issue}: GitHub returned no comments connection`);
      for (const node of page.nodes) if (node) comments.push(fromGraphql(node));
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return comments;
      after = page.pageInfo.endCursor;
    }
  }

  async deleteComment(commentId: number): Promise<void> {
    try {
      await this.octokit.request('DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}', {
        ...this.repo,
        comment_id: commentId,
      });
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
    }
  }

  async addLabels(issue: number, labels: string[]): Promise<LabelSpec[]> {
    const { data } = await this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
      ...this.repo,
      issue_number: issue,
      labels,
    });
    return (data as RawLabel[]).map(toLabel);
  }

  async removeLabel(issue: number, label: string): Promise<void> {
    try {
      await this.octokit.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
        ...this.repo,
        issue_number: issue,
        name: label,
      });
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
    }
  }

  async describeLabels(labels: LabelSpec[]): Promise<void> {
    for (const label of labels) {
      try {
        await this.octokit.request('PATCH /repos/{owner}/{repo}/labels/{name}', {
          ...this.repo,
          name: label.name,
          color: label.color,
          description: label.description,
        });
      } catch (error) {
        if (!isStatus(error, 404)) throw error;
        await this.octokit.request('POST /repos/{owner}/{repo}/labels', { ...this.repo, ...label });
      }
    }
  }

  async getPermission(login: string): Promise<Permission> {
    try {
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
        ...this.repo,
        username: login,
      });
      const permission = data.permission;
      return permission === 'admin' || permission === 'write' || permission === 'read' ? permission : 'none';
    } catch (error) {
      // Not a collaborator (or a user GitHub does not know): no permission, not a failure.
      if (isStatus(error, 404) || isStatus(error, 403)) return 'none';
      throw error;
    }
  }

  async labelEvents(issue: number): Promise<LabelEvent[]> {
    // Events are listed oldest first; an issue with more than 100 has its latest on a later page, which the first
    // response's Link header names (one more request, on a rare path).
    const first = await this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/events', {
      ...this.repo,
      issue_number: issue,
      per_page: 100,
    });
    let events = first.data;
    const last = /<[^>]*[?&]page=(\d+)[^>]*>;\s*rel="last"/.exec(first.headers.link ?? '')?.[1];
    if (last && last !== '1') {
      const page = await this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/events', {
        ...this.repo,
        issue_number: issue,
        per_page: 100,
        page: Number(last),
      });
      events = [...events, ...page.data];
    }
    return events.flatMap((raw) => {
      const e = raw as { event?: string; actor?: { login?: string } | null; label?: { name?: string } };
      if ((e.event !== 'labeled' && e.event !== 'unlabeled') || !e.label?.name) return [];
      return [{ event: e.event, label: e.label.name, actor: e.actor?.login ?? undefined }];
    });
  }

  async reactToComment(commentId: number, reaction: Reaction): Promise<void> {
    await this.octokit.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
      ...this.repo,
      comment_id: commentId,
      content: reaction,
    });
  }

  async reactToIssue(issue: number, reaction: Reaction): Promise<{ id: number; created: boolean; createdAt: string }> {
    const response = await this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/reactions', {
      ...this.repo,
      issue_number: issue,
      content: reaction,
    });
    return { id: response.data.id, created: response.status === 201, createdAt: response.data.created_at };
  }

  async removeIssueReaction(issue: number, reactionId: number): Promise<boolean> {
    try {
      await this.octokit.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/reactions/{reaction_id}', {
        ...this.repo,
        issue_number: issue,
        reaction_id: reactionId,
      });
      return true;
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
      return false;
    }
  }

  async dispatchWorkflow(workflow: string, ref: string, inputs: Record<string, string>): Promise<void> {
    await this.octokit.request('POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', {
      ...this.repo,
      workflow_id: workflow,
      ref,
      inputs,
      // A duplicate dispatch is harmless: every phase re-reads state and does nothing if its work is done.
      request: { hydraflowIdempotent: true } as never,
    });
  }

  async runJobs(runId: number, attempt: number): Promise<RunJob[]> {
    const { data } = await this.octokit.request(
      'GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs',
      { ...this.repo, run_id: runId, attempt_number: attempt, per_page: 100 },
    );
    return data.jobs.map((job) => ({
      name: job.name,
      conclusion: job.conclusion,
      htmlUrl: job.html_url ?? '',
      checkRunId: Number(/\/check-runs\/(\d+)$/.exec(job.check_run_url)?.[1]) || undefined,
      steps: (job.steps ?? []).map((step) => ({ name: step.name, number: step.number, conclusion: step.conclusion })),
    }));
  }

  async checkRunAnnotations(checkRunId: number): Promise<Annotation[]> {
    const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations', {
      ...this.repo,
      check_run_id: checkRunId,
      per_page: 50,
    });
    return data.map((a) => ({ level: a.annotation_level ?? '', title: a.title ?? '', message: a.message ?? '' }));
  }
}
