/**
 * The GitHub side of a run, loaded by run.ts only once its decision needs it: the client, the handlers and the phases.
 */
import { labelFor, type route } from '@hydraflow/core';
import type { EarlyCall } from './agents/model-gateway';
import type { App } from './app';
import { handleClose } from './handlers/close';
import { handleDoctor } from './handlers/doctor';
import { handleCommand } from './handlers/command';
import { belowSteering, refuseLabelChange } from './handlers/label-steering';
import { handleOverride } from './handlers/override';
import { handlePhase } from './handlers/phase';
import { handlePullWork } from './handlers/pull';
import { handleStateCheck } from './handlers/untrusted-state';
import type { PhaseOutcome } from './phases/phase-context';

export { createApp } from './app';

export type Decision = ReturnType<typeof route>;

/** Does what the router decided, on the adapters of `app`; `early` is the phase's model call, if it already began. */
export async function execute(
  app: App,
  decision: Exclude<Decision, { kind: 'skip' }>,
  forced: boolean,
  early: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  switch (decision.kind) {
    case 'phase':
      // A pull-request or CI event: the phase checks the pull request it names (if any) is the issue's own.
      if (
        !decision.dispatched &&
        (decision.phase === 'review' || decision.phase === 'merge' || decision.phase === 'feedback')
      ) {
        return handlePullWork(app, {
          phase: decision.phase,
          issue: decision.issue,
          ...(decision.pull !== undefined ? { pull: decision.pull } : {}),
          actor: decision.actor || undefined,
        });
      }
      if (forced && decision.phase === 'triage') {
        // hydraflow-find set by a human: steering, if they may (label-steering.ts)
        const permission = await belowSteering(app, decision.actor);
        if (permission !== undefined) {
          const change = { issue: decision.issue, label: labelFor('find'), added: true, actor: decision.actor };
          return refuseLabelChange(app, change, permission);
        }
      }
      return handlePhase(
        app,
        {
          phase: decision.phase,
          issue: decision.issue,
          actor: decision.actor || undefined,
          dispatched: decision.dispatched === true,
          forced,
        },
        early,
      );
    case 'command':
      return handleCommand(app, decision);
    case 'override':
      return handleOverride(app, decision);
    case 'close':
      return handleClose(app, decision);
    case 'doctor':
      return handleDoctor(app);
    case 'state-check':
      return handleStateCheck(app, decision);
  }
}
