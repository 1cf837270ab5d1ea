/**
 * POST /graphql: exactly the mutations HydraFlow uses. Anything else is answered like GitHub answers a query it
 * cannot resolve: HTTP 200 with an `errors` array.
 */
import type { RouteResult } from './routes';
import { PERMISSION_RANK, type EmulatedUser, type GitHubWorld } from './world';

function gqlError(message: string, type = 'UNPROCESSABLE'): RouteResult {
  return { status: 200, body: { data: null, errors: [{ type, message, locations: [{ line: 1, column: 1 }] }] } };
}

export function handleGraphql(world: GitHubWorld, actor: EmulatedUser, body: unknown): RouteResult {
  const b = (body ?? {}) as { query?: unknown; variables?: Record<string, unknown> };
  if (typeof b.query !== 'string')
    return { status: 400, body: { message: 'A query attribute must be specified and must be a string.' } };
  const query = b.query;
  if (!/^\s*mutation\b/.test(query) || !/\bmarkPullRequestReadyForReview\s*\(/.test(query)) {
    return gqlError('The emulator supports only the mutation markPullRequestReadyForReview(input: {pullRequestId})');
  }
  // pullRequestId: a literal in the query, or a variable
  let id: unknown;
  const literal = /pullRequestId\s*:\s*"([^"]+)"/.exec(query);
  const variable = /pullRequestId\s*:\s*\$(\w+)/.exec(query);
  const inputVar = /input\s*:\s*\$(\w+)/.exec(query);
  if (literal) id = literal[1];
  else if (variable) id = b.variables?.[variable[1]!];
  else if (inputVar) id = (b.variables?.[inputVar[1]!] as { pullRequestId?: unknown } | undefined)?.pullRequestId;
  if (typeof id !== 'string') return gqlError('Argument pullRequestId on InputObject is required', 'INVALID_ARGUMENT');
  const pull = [...world.pulls.values()].find((p) => p.node_id === id);
  if (!pull) return gqlError(`Could not resolve to a node with the global id of '${id}'`, 'NOT_FOUND');
  if (PERMISSION_RANK[actor.permission] < PERMISSION_RANK.write) {
    return gqlError('Resource not accessible by integration', 'FORBIDDEN');
  }
  const issue = world.issues.get(pull.number)!;
  if (issue.state !== 'open') return gqlError('Pull request is closed');
  if (pull.draft) {
    pull.draft = false;
    issue.updated_at = world.now();
    world.emit({ name: 'pull_request', action: 'ready_for_review', pull: pull.number, actor: actor.login });
  }
  return {
    status: 200,
    body: { data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false, number: pull.number } } } },
  };
}
