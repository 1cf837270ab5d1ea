import type { Issue } from '@hydraflow/github';

/** The issue an `issues` event carries, as HydraFlow reads issues (an event's snapshot, as old as the event). */
export function issueFromEvent(payload: Record<string, any>): Issue | undefined {
  const fromEvent = payload.issue as Record<string, any> | undefined;
  if (typeof fromEvent?.number !== 'number') return undefined;
  return {
    number: fromEvent.number,
    title: String(fromEvent.title ?? ''),
    body: String(fromEvent.body ?? ''),
    state: fromEvent.state === 'closed' ? 'closed' : 'open',
    labels: ((fromEvent.labels ?? []) as { name?: string }[]).map((l) => l.name ?? '').filter(Boolean),
    author: fromEvent.user ? { login: fromEvent.user.login, type: fromEvent.user.type } : null,
    isPullRequest: Boolean(fromEvent.pull_request),
    htmlUrl: String(fromEvent.html_url ?? ''),
  };
}
