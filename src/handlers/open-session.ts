import type { Issue } from '@hydraflow/github';
import { ModelGateway } from '../agents/model-gateway';
import type { App } from '../app';
import type { PhaseContext } from '../phases/phase-context';
import { IssueSession } from '../session/issue-session';

/**
 * The issue as the event delivered it, so the common case costs no GET; dispatched runs fetch it. So do re-runs: a
 * re-run replays the ORIGINAL payload, which may be days old — the issue may be closed since (property test
 * tests/property/pipeline-histories: a re-run of a crashed triage labelled a closed issue).
 */
export async function loadIssue(app: App, issueNumber: number): Promise<Issue> {
  const fromEvent = app.runner.payload.issue as Record<string, any> | undefined;
  // Only an issues event's own snapshot: a comment's payload can be older than a close that happened before its run
  // started (the property test tests/property/pipeline-histories found a closed issue re-labelled that way).
  if (fromEvent?.number === issueNumber && app.runner.eventName === 'issues' && app.runner.runAttempt <= 1) {
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
  return app.issues.getIssue(issueNumber);
}

/**
 * A re-run (attempt > 1) that finds nothing to do must still free the 👀 lock its dead earlier attempt may have left
 * (no claim is published before a run's end), unless the lock was handed to the next phase — and on a closed issue
 * even then, since no phase will run on it. Property test tests/property/pipeline-histories found such locks leaked
 * after crash + re-run.
 */
export async function freeLockOfDeadAttempt(app: App, issue: Pick<Issue, 'number' | 'state'>): Promise<void> {
  const issueNumber = issue.number;
  if (app.runner.runAttempt <= 1) return;
  const session = await IssueSession.open(app.issues, {
    issue: issueNumber,
    phase: 'cleanup',
    runId: app.runner.runId,
    runAttempt: app.runner.runAttempt,
    botLogins: app.config.bot_logins,
    stateKey: app.inputs.stateKey,
    labelsAtStart: [],
    now: app.now,
  });
  if (issue.state === 'closed' || !session.state.claim?.runId.startsWith('handoff:')) await session.dropLock();
}

export async function openPhase(
  app: App,
  args: { issue: Issue; phase: string; actor: string | undefined; dispatched: boolean; forced: boolean },
): Promise<PhaseContext> {
  const session = await IssueSession.open(app.issues, {
    issue: args.issue.number,
    phase: args.phase,
    runId: app.runner.runId,
    runAttempt: app.runner.runAttempt,
    botLogins: app.config.bot_logins,
    stateKey: app.inputs.stateKey,
    labelsAtStart: args.issue.labels,
    now: app.now,
    dispatched: args.dispatched,
  });
  const models = new ModelGateway({
    providerFor: app.providerFor,
    prices: app.prices,
    budgets: app.config.budgets,
    session,
    phase: args.phase,
    runId: app.runner.runId,
    now: app.now,
  });
  return {
    issue: args.issue,
    session,
    models,
    config: app.config,
    next: { workflow: app.workflow, ref: app.runner.defaultBranch },
    actor: args.actor,
    forced: args.forced,
    workspace: app.runner.workspace,
    issues: app.issues,
    pulls: app.pulls,
    grooming: app.grooming,
    tempDir: app.runner.tempDir,
    remoteUrl: `${app.runner.serverUrl.replace(/\/$/, '')}/${app.runner.owner}/${app.runner.repo}.git`,
    gitToken: app.inputs.pushToken ?? app.inputs.githubToken,
  };
}
