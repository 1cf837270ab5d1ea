import type { IssuePhase } from '@hydraflow/core';
import type { PhaseContext } from './phase-context';

/** How the next phase was started: `inline` goes in the phase's outcome (`continueWith`), the entry runs it next. */
export interface NextPhase {
  inline: boolean;
  /** For the progress comment's "what happens next". */
  note: string;
  /** Spread into the PhaseOutcome. */
  outcome: { continueWith?: string };
}

/**
 * Starts the phase that follows: in this very run when it can (the routing step runs any token-side phase, and the
 * implement phase's agent and publish steps follow it in the same job; the publish step runs the review), else by
 * workflow_dispatch of the user's workflow. Running on in the same job saves a whole workflow run per hand-off: on
 * GitHub a queued run, a runner, a checkout and a billed minute; the lock simply stays held. Call before the final
 * publish, so the state published names the phase that runs next (a re-run after a crash resumes it).
 */
export async function startNextPhase(
  ctx: PhaseContext,
  phase: IssuePhase,
  what: string,
  options: { handOff?: boolean } = {},
): Promise<NextPhase> {
  if (options.handOff !== false && ctx.canContinueWith(phase)) {
    ctx.session.continueWith(phase);
    return { inline: true, note: `${what} starts now, in this run.`, outcome: { continueWith: phase } };
  }
  ctx.session.dispatch(ctx.next.workflow, ctx.next.ref, phase, ctx.actor, options);
  return { inline: false, note: `${what} starts next (HydraFlow dispatches the ${phase} phase).`, outcome: {} };
}
