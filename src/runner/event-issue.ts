import type { Issue } from '@hydraflow/github';
import type { RunnerContext } from './context';

/**
 * The issue as this run's event delivered it, when that snapshot can be trusted: only an issue's own `opened` event,
 * on a first attempt. Any other payload can be older than a close that came before its run (a comment's; a
 * redelivered `labeled`, whose forced triage then labelled a closed issue), and an opened issue's redelivery finds its
 * triage done. Property test tests/property/pipeline-histories found both. Everything else reads the issue.
 */
export function openedIssue(runner: RunnerContext, issueNumber: number): Issue | undefined {
  const fromEvent = runner.payload.issue as Record<string, any> | undefined;
  const opened = runner.eventName === 'issues' && runner.payload.action === 'opened' && runner.runAttempt <= 1;
  if (!opened || fromEvent?.number !== issueNumber) return undefined;
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
