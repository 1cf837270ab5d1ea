import type { LabelSpec } from './port';

/**
 * What grooming needs from GitHub beyond IssuesPort: one read of everything the agents share (the issue's sub-issues,
 * related issues and pull requests, label ids) and sub-issue creation. GraphQL does each in ONE request (REST needs
 * one per list, and two per sub-issue: create, then link): grooming's request budget is 8 + 1 per sub-issue.
 */
export interface RelatedItem {
  number: number;
  title: string;
  state: 'open' | 'closed';
  isPullRequest: boolean;
  url: string;
  /**
   * The first characters of the body as GitHub shows it, sanitised (search results are context, not whole documents;
   * callers sanitise again, cheaply, so that no path depends on this one).
   */
  excerpt: string;
}

export interface SubIssue {
  number: number;
  nodeId: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
}

export interface GroomContext {
  repositoryId: string;
  issueNodeId: string;
  subIssues: SubIssue[];
  related: RelatedItem[];
  /** Node ids of the labels asked for that exist in the repository, by name. */
  labelIds: Record<string, string>;
}

export interface NewSubIssue {
  title: string;
  body: string;
  labelIds: string[];
}

export interface GroomingPort {
  /** The issue's node id and sub-issues, up to `relatedLimit` issues/PRs matching `search`, and the ids of `labels`. */
  groomContext(
    issue: number,
    args: { search: string; relatedLimit: number; labels: readonly string[] },
  ): Promise<GroomContext>;
  /** Issues and pull requests of this repository matching `query` (GitHub search syntax), newest first. */
  searchIssues(query: string, limit: number): Promise<RelatedItem[]>;
  /**
   * Creates an issue linked as a sub-issue of `parentNodeId`, in one request. Not idempotent: on an
   * UncertainWriteError the caller re-reads the sub-issues before creating it again.
   */
  createSubIssue(parentNodeId: string, repositoryId: string, issue: NewSubIssue): Promise<{ number: number }>;
  /** Creates the labels (in one request) and returns their node ids by name. */
  createLabels(repositoryId: string, labels: readonly LabelSpec[]): Promise<Record<string, string>>;
}
