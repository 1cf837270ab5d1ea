/**
 * What `doctor` reads of a repository's setup (src/handlers/doctor.ts). Each read answers `undefined` when GitHub
 * does not tell this token (403: e.g. branch protection needs admin), so the doctor says it could not check instead of
 * guessing; a 404 is an answer (no such file, no protection).
 */
import { RequestError } from '@octokit/request-error';
import type { RestClient } from './client';
import type { Repo } from './rest-issues';

function statusOf(error: unknown): number | undefined {
  return error instanceof RequestError ? error.status : undefined;
}

/** `read` as the value, 404 as `absent`, 401/403 as undefined; anything else is an error. */
async function answer<T>(read: () => Promise<T>, absent: T): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return absent;
    if (status === 401 || status === 403) return undefined;
    throw error;
  }
}

export interface BranchProtection {
  requiredApprovals: number;
  dismissStaleReviews: boolean;
  requiredChecks: string[];
}

export class RestSetup {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
  ) {}

  /** The text of the file at `path` on `ref`; null when there is none (or it is a directory, a link, over 1 MB). */
  fileText(path: string, ref: string): Promise<string | null | undefined> {
    return answer<string | null>(async () => {
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/contents/{path}', {
        ...this.repo,
        path,
        ref,
      });
      if (Array.isArray(data) || data.type !== 'file' || !('content' in data) || data.encoding !== 'base64')
        return null;
      return Buffer.from(data.content, 'base64').toString('utf8');
    }, null);
  }

  /** The names at the root of `ref` (a branch), from its tree. */
  rootNames(ref: string): Promise<string[] | undefined> {
    return answer(async () => {
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', {
        ...this.repo,
        tree_sha: ref,
      });
      return data.tree.flatMap((e) => (e.path ? [e.path] : []));
    }, []);
  }

  /** Settings → Actions → General → Workflow permissions. */
  workflowPermissions(): Promise<{ canCreatePullRequests: boolean; defaults: 'read' | 'write' } | undefined> {
    return answer(async () => {
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/actions/permissions/workflow', {
        ...this.repo,
      });
      return {
        canCreatePullRequests: data.can_approve_pull_request_reviews,
        defaults: data.default_workflow_permissions,
      };
    }, undefined);
  }

  labelNames(): Promise<string[] | undefined> {
    return answer(async () => {
      const labels = await this.octokit.paginate('GET /repos/{owner}/{repo}/labels', { ...this.repo, per_page: 100 });
      return (labels as { name: string }[]).map((l) => l.name);
    }, []);
  }

  /** The branch's protection; null when it has none. */
  protection(branch: string): Promise<BranchProtection | null | undefined> {
    return answer<BranchProtection | null>(async () => {
      const { data } = await this.octokit.request('GET /repos/{owner}/{repo}/branches/{branch}/protection', {
        ...this.repo,
        branch,
      });
      return {
        requiredApprovals: data.required_pull_request_reviews?.required_approving_review_count ?? 0,
        dismissStaleReviews: data.required_pull_request_reviews?.dismiss_stale_reviews ?? false,
        requiredChecks: data.required_status_checks?.contexts ?? [],
      };
    }, null);
  }
}
