/**
 * Issue search, shared by REST `GET /search/issues` and GraphQL `search(type: ISSUE)`. The emulated subset of GitHub's
 * syntax: `repo:`, `is:issue|pr|open|closed|merged`, `type:issue|pr`, `state:open|closed`, `label:`, `author:`,
 * `in:title|body`, and free-text terms (each must appear, as whole words in order, in the title or body;
 * case-insensitive; quotes group words). Results are newest first. Any other GitHub qualifier, negation or boolean
 * operator is reported in `notEmulated` (and otherwise ignored) so tests notice instead of trusting a wrong answer.
 * Like GitHub, the text without qualifiers may be at most 256 characters (`tooLong`; GitHub rejects the search).
 */
import type { EmulatedIssue, GitHubWorld } from './world';

/** Qualifiers GitHub knows for issues; a `name:value` term whose name is not one of these is plain text on GitHub. */
const GITHUB_QUALIFIERS = new Set(
  `repo org user is type state in label author assignee mentions commenter involves team milestone project no
  language comments interactions reactions created updated closed merged status head base review reviewed-by
  review-requested draft linked archived reason sort parent-issue sub-issue has`.split(/\s+/),
);

export interface IssueSearchResult {
  items: EmulatedIssue[];
  notEmulated: string[];
  tooLong?: string;
}

export const SEARCH_TEXT_MAX = 256;

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

function containsRun(haystack: string[], run: string[]): boolean {
  outer: for (let i = 0; i + run.length <= haystack.length; i++) {
    for (let j = 0; j < run.length; j++) if (haystack[i + j] !== run[j]) continue outer;
    return true;
  }
  return false;
}

export function searchIssues(world: GitHubWorld, query: string): IssueSearchResult {
  const notEmulated: string[] = [];
  const textTerms: string[] = [];
  const filters: Array<(i: EmulatedIssue) => boolean> = [];
  const texts: string[][] = [];
  let fields: Array<'title' | 'body'> = ['title', 'body'];
  const repos: string[] = [];
  const terms = query.match(/-?(?:[\w-]+:)?"[^"]*"|\S+/g) ?? [];
  for (const term of terms) {
    const q = /^([\w-]+):(.+)$/.exec(term);
    const name = q?.[1]?.toLowerCase();
    const value = q?.[2]?.replace(/^"|"$/g, '').toLowerCase() ?? '';
    if (term.startsWith('-') || ['AND', 'OR', 'NOT'].includes(term) || /^\(|\)$/.test(term)) {
      notEmulated.push(`search syntax "${term}"`);
      continue;
    }
    if (!name || !GITHUB_QUALIFIERS.has(name)) {
      textTerms.push(term);
      const run = words(term);
      if (run.length) texts.push(run);
      continue;
    }
    const kind = `${name}:${value}`;
    if (name === 'repo') repos.push(value);
    else if (kind === 'is:issue' || kind === 'type:issue') filters.push((i) => !i.isPullRequest);
    else if (['is:pr', 'is:pull-request', 'type:pr', 'type:pull-request'].includes(kind))
      filters.push((i) => i.isPullRequest);
    else if (kind === 'is:open' || kind === 'state:open') filters.push((i) => i.state === 'open');
    else if (kind === 'is:closed' || kind === 'state:closed') filters.push((i) => i.state === 'closed');
    else if (kind === 'is:merged') filters.push((i) => world.pulls.get(i.number)?.merged === true);
    else if (name === 'label') filters.push((i) => i.labels.some((l) => l.toLowerCase() === value));
    else if (name === 'author') filters.push((i) => i.user.toLowerCase() === value);
    else if (name === 'in' && value.split(',').every((f) => f === 'title' || f === 'body'))
      fields = value.split(',') as typeof fields;
    else notEmulated.push(`search qualifier "${term}"`);
  }
  if (textTerms.join(' ').length > SEARCH_TEXT_MAX)
    return { items: [], notEmulated, tooLong: `The search is longer than ${SEARCH_TEXT_MAX} characters.` };
  const here = `${world.owner}/${world.repo}`.toLowerCase();
  if (repos.length > 0 && !repos.includes(here)) return { items: [], notEmulated };
  const items = [...world.issues.values()]
    .filter((i) => filters.every((f) => f(i)))
    .filter((i) => {
      const hay = fields.map((f) => words((f === 'title' ? i.title : i.body) ?? ''));
      return texts.every((run) => hay.some((h) => containsRun(h, run)));
    })
    .sort((a, b) => b.number - a.number);
  return { items, notEmulated };
}
