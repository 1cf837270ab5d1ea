import type { Issue } from '@hydraflow/github';
import type { RunnerContext } from './context';

/**
 * The issue as this run's event delivered it, when that snapshot can be trusted: only an issue's own `opened` event,
 * on a first attempt, in the step that handles the event (`step`, the step's phase input: undefined for the routing
 * step, or triage). Any other payload can be older than a close that came before its run (a comment's; a redelivered
 * `labeled`, whose forced triage then labelled a closed issue), and an opened issue's redelivery finds its triage done.
 * Property test tests/property/pipeline-histories found both. A later step of the same job (publish) runs after
 * HydraFlow itself relabelled the issue, so its copy of the payload is stale too. Everything else reads the issue.
 */
export function openedIssue(runner: RunnerContext, issueNumber: number, step: string | undefined): Issue | undefined {
  const fromEvent = runner.payload.issue as Record<string, any> | undefined;
  const opened =
    runner.eventName === 'issues' &&
    runner.payload.action === 'opened' &&
    runner.runAttempt <= 1 &&
    (step === undefined || step === 'triage');
  if (!opened || fromEvent?.number !== issueNumber) return undefined;
  return {
    number: fromEvent.number,
    title: String(fromEvent.title ?? ''),
    body: String(fromEvent.body ?? ''),
    state: fromEvent.state === 'closed' ? 'closed' : 'open',
    labels: ((fromEvent.labels ?? []) as { name?: string }[]).map((l) => l.name ?? '').filter(Boolean),
    author: fromEvent.user ? { login: fromEvent.user.login, type: fromEvent.user.type } : null,
    authorAssociation: String(fromEvent.author_association ?? 'NONE'),
    isPullRequest: Boolean(fromEvent.pull_request),
    htmlUrl: String(fromEvent.html_url ?? ''),
  };
}
