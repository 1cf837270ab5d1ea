import { untrustedExcerpt } from '@hydraflow/core';
import type { RestClient } from './client';
import type { GroomContext, GroomingPort, NewSubIssue, RelatedItem, SubIssue } from './grooming-port';
import type { LabelSpec } from './port';
import type { Repo } from './rest-issues';

const EXCERPT = 300;

type RawItem = {
  __typename?: string;
  number?: number;
  title?: string;
  state?: string;
  prState?: string;
  url?: string;
  body?: string | null;
};

function toRelated(raw: RawItem): RelatedItem | undefined {
  if (typeof raw?.number !== 'number') return undefined;
  return {
    number: raw.number,
    title: raw.title ?? '',
    state: (raw.state ?? raw.prState) === 'OPEN' ? 'open' : 'closed',
    isPullRequest: raw.__typename === 'PullRequest',
    url: raw.url ?? '',
    // Sanitised before it is cut: a cut through a hidden construct (a definition's title) would make it text.
    excerpt: untrustedExcerpt(raw.body ?? '', EXCERPT),
  };
}

// IssueState and PullRequestState differ: one response key for both breaks the GraphQL spec (GitHub only warns).
const ITEM_FIELDS = `__typename ... on Issue { number title state url body } ... on PullRequest { number title prState: state url body }`;

/** GitHub rejects a search whose text, qualifiers aside, is longer than this. */
const MAX_SEARCH_TEXT = 256;

/** Search terms are the caller's; qualifiers pin the search to this repository whatever the terms say. */
function scoped(repo: Repo, query: string): string {
  let terms = query
    .replace(/\b(repo|org|user):\S+/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (terms.length > MAX_SEARCH_TEXT) terms = terms.slice(0, MAX_SEARCH_TEXT).replace(/\s+\S*$/, ''); // no half word
  return `repo:${repo.owner}/${repo.repo} ${terms}`.trim();
}

/** GroomingPort over GitHub's GraphQL API. */
export class GraphqlGrooming implements GroomingPort {
  constructor(
    private readonly octokit: RestClient,
    private readonly repo: Repo,
  ) {}

  async groomContext(
    issue: number,
    args: { search: string; relatedLimit: number; labels: readonly string[] },
  ): Promise<GroomContext> {
    const labelFields = args.labels.map((name, i) => `l${i}: label(name: ${JSON.stringify(name)}) { id name }`);
    // Re-reading the sub-issues alone (the epic, a reconcile after a lost answer) needs no search.
    const searching = args.relatedLimit > 0;
    const data = await this.octokit.graphql<{
      repository: {
        id: string;
        issue: { id: string; subIssues: { nodes: (SubIssueRaw | null)[] } } | null;
        [label: `l${number}`]: { id: string; name: string } | null;
      };
      search?: { nodes: (RawItem | null)[] };
    }>(
      `query($owner: String!, $name: String!, $number: Int!${searching ? ', $q: String!, $n: Int!' : ''}) {
        repository(owner: $owner, name: $name) {
          id
          issue(number: $number) { id subIssues(first: 50) { nodes { id number title body state labels(first: 20) { nodes { name } } } } }
          ${labelFields.join('\n          ')}
        }
        ${searching ? `search(query: $q, type: ISSUE, first: $n) { nodes { ${ITEM_FIELDS} } }` : ''}
      }`,
      {
        owner: this.repo.owner,
        name: this.repo.repo,
        number: issue,
        ...(searching ? { q: scoped(this.repo, args.search), n: Math.min(args.relatedLimit + 1, 50) } : {}),
        request: { hydraflowIdempotent: true } as never,
      },
    );
    const repository = data.repository;
    if (!repository.issue) throw new Error(`issue #${issue} was not found by GraphQL`);
    const labelIds: Record<string, string> = {};
    args.labels.forEach((_, i) => {
      const label = repository[`l${i}`];
      if (label) labelIds[label.name] = label.id;
    });
    return {
      repositoryId: repository.id,
      issueNodeId: repository.issue.id,
      subIssues: repository.issue.subIssues.nodes.filter((n): n is SubIssueRaw => n !== null).map(toSubIssue),
      related: (data.search?.nodes ?? [])
        .map((n) => (n ? toRelated(n) : undefined))
        .filter((n): n is RelatedItem => n !== undefined && n.number !== issue)
        .slice(0, args.relatedLimit),
      labelIds,
    };
  }

  async searchIssues(query: string, limit: number): Promise<RelatedItem[]> {
    const data = await this.octokit.graphql<{ search: { nodes: (RawItem | null)[] } }>(
      `query($q: String!, $n: Int!) { search(query: $q, type: ISSUE, first: $n) { nodes { ${ITEM_FIELDS} } } }`,
      {
        q: scoped(this.repo, query),
        n: Math.max(1, Math.min(limit, 50)),
        request: { hydraflowIdempotent: true } as never,
      },
    );
    return data.search.nodes.map((n) => (n ? toRelated(n) : undefined)).filter((n): n is RelatedItem => !!n);
  }

  async createSubIssue(parentNodeId: string, repositoryId: string, issue: NewSubIssue): Promise<{ number: number }> {
    const data = await this.octokit.graphql<{ createIssue: { issue: { number: number } } }>(
      `mutation($repo: ID!, $parent: ID!, $title: String!, $body: String, $labels: [ID!]) {
        createIssue(input: { repositoryId: $repo, parentIssueId: $parent, title: $title, body: $body, labelIds: $labels }) {
          issue { number }
        }
      }`,
      { repo: repositoryId, parent: parentNodeId, title: issue.title, body: issue.body, labels: issue.labelIds },
    );
    return data.createIssue.issue;
  }

  async createLabels(repositoryId: string, labels: readonly LabelSpec[]): Promise<Record<string, string>> {
    if (labels.length === 0) return {};
    // One document, one aliased createLabel per label.
    const vars: Record<string, unknown> = { repo: repositoryId };
    const params = ['$repo: ID!'];
    const fields = labels.map((label, i) => {
      vars[`n${i}`] = label.name;
      vars[`c${i}`] = label.color;
      vars[`d${i}`] = label.description;
      params.push(`$n${i}: String!`, `$c${i}: String!`, `$d${i}: String`);
      return `l${i}: createLabel(input: { repositoryId: $repo, name: $n${i}, color: $c${i}, description: $d${i} }) { label { id name } }`;
    });
    const data = await this.octokit.graphql<Record<string, { label: { id: string; name: string } }>>(
      `mutation(${params.join(', ')}) {\n  ${fields.join('\n  ')}\n}`,
      vars,
    );
    return Object.fromEntries(labels.map((_, i) => [data[`l${i}`]!.label.name, data[`l${i}`]!.label.id]));
  }
}

type SubIssueRaw = {
  id: string;
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels?: { nodes: ({ name: string } | null)[] } | null;
};

function toSubIssue(raw: SubIssueRaw): SubIssue {
  return {
    number: raw.number,
    nodeId: raw.id,
    title: raw.title,
    body: raw.body ?? '',
    state: raw.state === 'OPEN' ? 'open' : 'closed',
    labels: (raw.labels?.nodes ?? []).flatMap((l) => (l ? [l.name] : [])),
  };
}
