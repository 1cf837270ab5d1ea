import { pipelineLabelsOf } from '@hydraflow/core';
import type { App } from '../app';
import { clearLeftoverRunningLabels } from '../phases/adversarial/running-label';
import { advanceParentEpic } from '../phases/epic';
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
  const ctx = await openPhase(app, { issue, phase: 'close', actor, dispatched: false, forced: true });
  const { session } = ctx;
  // A transient `hydraflow-adv-*-running` label a dead run left would claim forever that a stage runs on a closed
  // issue (packages/core/src/adversarial/labels.ts): it goes too. No request when none is on.
  const transient = await clearLeftoverRunningLabels(ctx);
  // Labels gone is not enough: a run that died after stripping them left the state (and the 👀) behind, and its re-run
  // must still finish the job (property test tests/property/pipeline-histories).
  if (stale.length === 0 && (session.currentStage === null || session.currentStage === 'fixed')) {
    await session.dropLock();
    return {
      summary: transient.length ? `closed: took off ${transient.join(', ')}` : 'no pipeline label to strip',
      stage: null,
    };
  }
  session.update((s) => ({ ...s, claim: undefined }));
  const stage = await session.moveToByHuman(null, actor);
  await session.publish({
    headline: `Issue closed by ${actor}; HydraFlow stopped`,
    next: 'Nothing: HydraFlow acts on open issues only. Reopen and set hydraflow-find to start again.',
  });
  await advanceParentEpic(ctx);
  // A hand-off to the next phase kept the 👀 lock; that phase will find the issue closed and never release it
  // (property test tests/property/pipeline-histories found the lock left on closed issues).
  await session.dropLock();
  const stripped = [...stale, ...transient].join(', ');
  return { summary: `closed: stripped ${stripped || 'nothing (labels were already gone)'}`, stage };
}
