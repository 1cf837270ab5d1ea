import type { HydraflowConfig } from '@hydraflow/core';
import type { Issue } from '@hydraflow/github';
import { ModelGateway, type EarlyCall, type LedgerSink, type StructuredCall } from '../agents/model-gateway';
import type { Models } from '../models';
import type { RunnerContext } from '../runner/context';
import { issueFromEvent } from '../runner/event-issue';
import { triageCall } from './triage-call';

/**
 * Phases whose first model call depends on the issue's text alone, so it can start before the phase reads the issue's
 * state and takes its lock; the phase adopts it (ModelGateway.structured, by key) or run.ts cancels it.
 */
const EARLY_CALLS: Readonly<Record<string, (issue: Issue) => StructuredCall<unknown>>> = {
  triage: triageCall,
};

/**
 * Starts `phase`'s first model call before anything of GitHub is loaded or read, when that is safe: the run was
 * started by the opening of this very issue (first attempt), so there is no state that could change the call — no
 * earlier verdict, no spend against the budget — and the model's latency hides the session's reads, the lock and the
 * rest of the start-up. A re-run, a dispatch or a human's command reads the state first, like every other phase.
 */
export function beginEarlyCall(
  runner: RunnerContext,
  config: HydraflowConfig,
  models: Models,
  request: { phase: string; issue: number; dispatched?: boolean },
): EarlyCall | undefined {
  const call = EARLY_CALLS[request.phase];
  if (!call || request.dispatched || runner.runAttempt > 1) return undefined;
  if (runner.eventName !== 'issues' || runner.payload.action !== 'opened') return undefined;
  const issue = issueFromEvent(runner.payload);
  if (issue?.number !== request.issue || issue.state === 'closed' || issue.isPullRequest) return undefined;
  const nothingSpent: LedgerSink = { state: { ledger: [] }, record: () => undefined };
  const gateway = new ModelGateway({
    ...models,
    budgets: config.budgets,
    session: nothingSpent,
    phase: request.phase,
    runId: runner.runId,
    now: () => new Date(),
  });
  return gateway.begin(call(issue));
}
