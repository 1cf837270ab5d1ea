import { RequestError } from '@octokit/request-error';
import type { RestClient } from './client';
import type { Repo } from './rest-issues';

/** HydraFlow's spend ledger branch and its file (packages/core/src/budget/day-ledger-codec.ts describes the file). */
export const SPEND_BRANCH = 'hydraflow/spend';
export const SPEND_FILE = 'spend.json';

const README = `# HydraFlow's spend ledger

This branch holds HydraFlow's daily spend ledger (\`${SPEND_FILE}\`): what each issue and phase spent on model calls
today, against \`budgets.per_day\` in \`.github/hydraflow.yml\`. HydraFlow writes it with the workflow's token and signs it with
\`HYDRAFLOW_STATE_KEY\`; a commit HydraFlow did not make stops its spending for the rest of the UTC day. Do not edit it.
Protect it from force pushes and deletion (a branch protection rule with nothing ticked does both).
`;

/** The branch's head as GitHub answered it, with GitHub's clock, which decides the UTC day. */
export interface SpendSnapshot {
  /** The head commit; null when the branch does not exist yet. */
  head: string | null;
  /** The head's first parent; null for a root commit (or no branch). */
  parent: string | null;
  /** spend.json at the head; null when absent, binary or truncated. */
  text: string | null;
  /** When GitHub answered (its Date header). */
  serverTime: Date;
}

export type SpendWrite = { ok: true; head: string } | { ok: false };

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

/**
 * The spend ledger on GitHub: one GraphQL query reads the branch's head, its parent and the file; one
 * `createCommitOnBranch` with `expectedHeadOid` writes the next commit, a compare-and-swap (GitHub refuses it when the
 * branch moved), so concurrent runs never overwrite each other. The branch is created once as a commit of its own (no
 * history of the repository's code), with the workflow's token: its writes start no workflow.
 */
export class SpendLedgerBranch {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
  ) {}

  async read(): Promise<SpendSnapshot> {
    const { data: answer, headers } = await this.graphql<RawRead>(
      `query($owner: String!, $name: String!, $ref: String!, $path: String!) {
        repository(owner: $owner, name: $name) {
          ref(qualifiedName: $ref) {
            target { oid ... on Commit { parents(first: 1) { nodes { oid } } file(path: $path) { object { ... on Blob { text isTruncated } } } } }
          }
        }
      }`,
      { owner: this.repo.owner, name: this.repo.repo, ref: `refs/heads/${SPEND_BRANCH}`, path: SPEND_FILE },
    );
    if (answer.errors?.length) throw graphqlError('read the spend ledger', answer.errors);
    const target = answer.data?.repository?.ref?.target ?? null;
    const blob = target?.file?.object;
    const date = Date.parse(String(headers.date ?? ''));
    return {
      head: target?.oid ?? null,
      parent: target?.parents?.nodes[0]?.oid ?? null,
      text: blob && typeof blob.text === 'string' && blob.isTruncated !== true ? blob.text : null,
      serverTime: Number.isNaN(date) ? new Date() : new Date(date),
    };
  }

  /**
   * Writes `text` as spend.json in the commit after `expectedHead` (null: creates the branch with it). Not ok when the
   * branch is no longer at `expectedHead` (or was created meanwhile): read again and retry.
   */
  async write(expectedHead: string | null, text: string, headline: string): Promise<SpendWrite> {
    if (expectedHead === null) return this.create(text, headline);
    const { data: answer } = await this.graphql<{ createCommitOnBranch: { commit: { oid: string } | null } | null }>(
      `mutation($input: CreateCommitOnBranchInput!) { createCommitOnBranch(input: $input) { commit { oid } } }`,
      {
        input: {
          branch: { repositoryNameWithOwner: `${this.repo.owner}/${this.repo.repo}`, branchName: SPEND_BRANCH },
          expectedHeadOid: expectedHead,
          message: { headline },
          fileChanges: { additions: [{ path: SPEND_FILE, contents: Buffer.from(text).toString('base64') }] },
        },
      },
    );
    if (answer.errors?.some((e) => /expected branch to point to|STALE_DATA/i.test(`${e.type} ${e.message}`)))
      return { ok: false };
    if (answer.errors?.length) throw graphqlError('write the spend ledger', answer.errors);
    const oid = answer.data?.createCommitOnBranch?.commit?.oid;
    if (!oid) throw new Error('GitHub answered the spend ledger write without a commit');
    return { ok: true, head: oid };
  }

  /** The branch's first commit: a tree of its own (README and ledger), no parent. */
  private async create(text: string, headline: string): Promise<SpendWrite> {
    const { owner, repo } = this.repo;
    // Content-addressed: repeating either after an uncertain answer makes the same object.
    const again = { hydraflowIdempotent: true };
    const tree = await this.octokit.request('POST /repos/{owner}/{repo}/git/trees', {
      owner,
      repo,
      tree: [
        { path: 'README.md', mode: '100644', type: 'blob', content: README },
        { path: SPEND_FILE, mode: '100644', type: 'blob', content: text },
      ],
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
        ref: `refs/heads/${SPEND_BRANCH}`,
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
