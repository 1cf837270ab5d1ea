import { RequestError } from '@octokit/request-error';
import type { RestClient } from './client';
import type { Repo } from './rest-issues';

/**
 * One file on a branch of HydraFlow's own (the spend ledger, the memory store), read and written with a compare-and-
 * swap, the only one GitHub has (a ref): one GraphQL query reads the branch's head, its first parent and the file; one
 * `createCommitOnBranch` with `expectedHeadOid` writes the next commit, refused when the branch moved, so concurrent
 * writers never overwrite each other. The branch is created on first write as a commit of its own (no history of the
 * repository's code): a tree, a commit, a ref (three requests, once). Written with the workflow's token, its commits
 * start no workflow.
 */
export interface BranchFileSnapshot {
  /** The head commit; null when the branch does not exist yet. */
  head: string | null;
  /** The head's first parent; null for a root commit (or no branch). */
  parent: string | null;
  /** The file at the head; null when the branch or the file is absent, or the file unreadable. */
  text: string | null;
  /** The file is there but GitHub gave no text: binary, or too large (truncated). */
  unreadable: boolean;
  /** When GitHub answered (its Date header). */
  serverTime: Date;
}

export type BranchFileWrite = { ok: true; head: string } | { ok: false };

type RawRead = {
  repository: {
    ref: {
      target: {
        oid: string;
        parents?: { nodes: ({ oid: string } | null)[] };
        file?: { object: { text?: string | null; isTruncated?: boolean } | null } | null;
      } | null;
    } | null;
  } | null;
};

type GraphqlAnswer<T> = { data?: T | null; errors?: { type?: string; message?: string }[] };

export class BranchFile {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
    private readonly where: {
      branch: string;
      path: string;
      /** What the branch's first commit holds beside the file (a README). */
      companions?: readonly { path: string; content: string }[];
      /** For error messages: "the spend ledger". */
      what: string;
    },
  ) {}

  async read(): Promise<BranchFileSnapshot> {
    const { data: answer, headers } = await this.graphql<RawRead>(
      `query($owner: String!, $name: String!, $ref: String!, $path: String!) {
        repository(owner: $owner, name: $name) {
          ref(qualifiedName: $ref) {
            target { oid ... on Commit { parents(first: 1) { nodes { oid } } file(path: $path) { object { ... on Blob { text isTruncated } } } } }
          }
        }
      }`,
      { owner: this.repo.owner, name: this.repo.repo, ref: `refs/heads/${this.where.branch}`, path: this.where.path },
    );
    if (answer.errors?.length) throw graphqlError(`read ${this.where.what}`, answer.errors);
    const target = answer.data?.repository?.ref?.target ?? null;
    const blob = target?.file?.object;
    const text = blob && typeof blob.text === 'string' && blob.isTruncated !== true ? blob.text : null;
    const date = Date.parse(String(headers.date ?? ''));
    return {
      head: target?.oid ?? null,
      parent: target?.parents?.nodes[0]?.oid ?? null,
      text,
      unreadable: Boolean(target?.file) && text === null,
      serverTime: Number.isNaN(date) ? new Date() : new Date(date),
    };
  }

  /**
   * Writes `text` as the file in the commit after `expectedHead` (null: creates the branch with it). Not ok when the
   * branch is no longer at `expectedHead` (or was created meanwhile): read again and retry.
   */
  async write(expectedHead: string | null, text: string, headline: string): Promise<BranchFileWrite> {
    if (expectedHead === null) return this.create(text, headline);
    const { data: answer } = await this.graphql<{ createCommitOnBranch: { commit: { oid: string } | null } | null }>(
      `mutation($input: CreateCommitOnBranchInput!) { createCommitOnBranch(input: $input) { commit { oid } } }`,
      {
        input: {
          branch: { repositoryNameWithOwner: `${this.repo.owner}/${this.repo.repo}`, branchName: this.where.branch },
          expectedHeadOid: expectedHead,
          message: { headline },
          fileChanges: { additions: [{ path: this.where.path, contents: Buffer.from(text).toString('base64') }] },
        },
      },
    );
    if (answer.errors?.some((e) => /expected branch to point to|STALE_DATA/i.test(`${e.type} ${e.message}`)))
      return { ok: false };
    if (answer.errors?.length) throw graphqlError(`write ${this.where.what}`, answer.errors);
    const oid = answer.data?.createCommitOnBranch?.commit?.oid;
    if (!oid) throw new Error(`GitHub answered the write of ${this.where.what} without a commit`);
    return { ok: true, head: oid };
  }

  /** The branch's first commit: a tree of its own (the companions and the file), no parent. */
  private async create(text: string, headline: string): Promise<BranchFileWrite> {
    const { owner, repo } = this.repo;
    // Content-addressed: repeating either after an uncertain answer makes the same object.
    const again = { hydraflowIdempotent: true };
    const tree = await this.octokit.request('POST /repos/{owner}/{repo}/git/trees', {
      owner,
      repo,
      tree: [...(this.where.companions ?? []), { path: this.where.path, content: text }].map((f) => ({
        path: f.path,
        mode: '100644' as const,
        type: 'blob' as const,
        content: f.content,
      })),
      request: again,
    });
    const commit = await this.octokit.request('POST /repos/{owner}/{repo}/git/commits', {
      owner,
      repo,
      message: headline,
      tree: tree.data.sha,
      parents: [],
      request: again,
    });
    try {
      await this.octokit.request('POST /repos/{owner}/{repo}/git/refs', {
        owner,
        repo,
        ref: `refs/heads/${this.where.branch}`,
        sha: commit.data.sha,
      });
    } catch (error) {
      // created by a concurrent run (or by this very request, answered late): the caller reads it back
      if (error instanceof RequestError && error.status === 422) return { ok: false };
      throw error;
    }
    return { ok: true, head: commit.data.sha };
  }

  private async graphql<T>(query: string, variables: Record<string, unknown>) {
    // A query, and a compare-and-swap that fails if repeated after it took effect: both safe to send again.
    const response = await this.octokit.request('POST /graphql', {
      query,
      variables,
      request: { hydraflowIdempotent: true },
    });
    return { data: response.data as GraphqlAnswer<T>, headers: response.headers };
  }
}

function graphqlError(what: string, errors: readonly { type?: string; message?: string }[]): Error {
  const first = errors[0];
  return new Error(`GitHub refused to ${what}: ${first?.message ?? first?.type ?? 'a GraphQL error'}`);
}
