/**
 * What every grooming agent reads: one fetch, one text. It is the cacheable prefix of every call of the run (see
 * prompts.ts), so it must not depend on the agent — and it is sanitised, because all of it is untrusted.
 */
import { issueKeywords, sanitizeUntrusted, untrustedExcerpt, untrustedTitle, type IssueState } from '@hydraflow/core';
import type { GroomContext, Issue, IssueComment } from '@hydraflow/github';
import { readRepositoryContext } from '../repository-context';

const LIMITS = { comments: 20, comment: 2_000, related: 8 };

/** The search that finds related issues and pull requests: the issue title's most telling words. */
export function relatedSearch(issue: Pick<Issue, 'title' | 'body'>): string {
  return issueKeywords(issue.title, 4).join(' ') || issueKeywords(issue.body, 4).join(' ');
}

export const RELATED_LIMIT = LIMITS.related;

/** Human comments (not HydraFlow's, which are progress and replies), newest last, capped. */
export function humanComments(comments: readonly IssueComment[], botLogins: readonly string[]): IssueComment[] {
  const bots = new Set(botLogins.map((l) => l.toLowerCase()));
  return comments.filter((c) => c.user && !bots.has(c.user.login.toLowerCase())).slice(-LIMITS.comments);
}

export function sharedContext(args: {
  issue: Issue;
  comments: readonly IssueComment[];
  state: IssueState;
  found: GroomContext;
  workspace: string | undefined;
}): string {
  const { issue, comments, state, found } = args;
  const triage = state.triage;
  const parts = [
    `# Issue #${issue.number}`,
    `Title: ${untrustedTitle(issue.title)}`,
    `Author: ${issue.author?.login ?? 'unknown'}`,
    ...(triage ? [`Triage: clarity ${triage.clarity_score}/10, complexity ${triage.complexity_score}/10.`] : []),
    '',
    sanitizeUntrusted(issue.body) || '(no description)',
    '',
    `# Comments (${comments.length}${comments.length >= LIMITS.comments ? ', the latest' : ''})`,
    ...(comments.length === 0
      ? ['(none)']
      : comments.map(
          (c) =>
            `## Comment ${c.id} by ${c.user?.login ?? 'unknown'} (${c.createdAt})\n${sanitizeUntrusted(c.body, LIMITS.comment)}`,
        )),
    '',
    '# Sub-issues',
    ...(found.subIssues.length === 0
      ? ['(none)']
      : found.subIssues.map((s) => `- #${s.number} (${s.state}) ${untrustedTitle(s.title, 200)}`)),
    '',
    '# Related issues and pull requests (search of this repository)',
    ...(found.related.length === 0
      ? ['(none found)']
      : found.related.map(
          (r) =>
            `- ${r.isPullRequest ? 'PR' : 'Issue'} #${r.number} (${r.state}) ${untrustedTitle(r.title, 200)}: ${untrustedExcerpt(r.excerpt, 300)}`,
        )),
    '',
    readRepositoryContext(args.workspace, issue).text,
  ];
  return parts.join('\n');
}
