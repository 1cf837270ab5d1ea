import type { HydraflowConfig } from '@hydraflow/core';
import type { Issue } from '@hydraflow/github';
import { ModelGateway, type EarlyCall, type LedgerSink, type StructuredCall } from '../agents/model-gateway';
import type { Models } from '../models';
import type { RunnerContext } from '../runner/context';
import { openedIssue } from '../runner/event-issue';
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
 * `step` is the step's phase input (undefined for the routing step): only the step the event started trusts the payload.
 */
export function beginEarlyCall(
  runner: RunnerContext,
  config: HydraflowConfig,
  models: Models,
  request: { phase: string; issue: number },
  step: string | undefined,
): EarlyCall | undefined {
  const call = EARLY_CALLS[request.phase];
  const issue = call && openedIssue(runner, request.issue, step);
  if (!call || !issue) return undefined;
  const nothingSpent: LedgerSink = { state: { ledger: [] }, record: () => undefined };
  return ModelGateway.forRun({ ...models, config, runner, now: () => new Date() }, request.phase, nothingSpent).begin(
    call(issue),
  );
}
