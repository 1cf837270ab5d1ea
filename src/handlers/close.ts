import { pipelineLabelsOf } from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { openPhase, loadIssue } from './open-session';

/**
 * A closed issue leaves the pipeline: its stage label is stripped so nothing picks it up again (field notes: a closed
 * issue kept its label and was rebuilt a day later). hydraflow-fixed stays: it records the outcome.
 */
export async function handleClose(app: App, request: { issue: number }): Promise<PhaseOutcome> {
  const actor = String(app.runner.payload.sender?.login ?? 'someone');
  const issue = await loadIssue(app, request.issue);
  const stale = pipelineLabelsOf(issue.labels).filter((l) => l !== 'hydraflow-fixed');
  if (stale.length === 0) return { summary: 'no pipeline label to strip', stage: null };
  const ctx = await openPhase(app, { issue, phase: 'close', actor, dispatched: false, forced: true });
  const { session } = ctx;
  session.update((s) => ({ ...s, claim: undefined }));
  const stage = await session.moveToByHuman(null, actor);
  await session.publish({
    headline: `Issue closed by ${actor}; HydraFlow stopped`,
    next: 'Nothing: HydraFlow acts on open issues only. Reopen and set hydraflow-find to start again.',
  });
  return { summary: `closed: stripped ${stale.join(', ')}`, stage };
}
