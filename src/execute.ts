/**
 * The GitHub side of a run, loaded by run.ts only once its decision needs it: the client, the handlers and the phases.
 */
import { labelFor, permissionAtLeast, type Permission, type route } from '@hydraflow/core';
import type { EarlyCall } from './agents/model-gateway';
import type { App } from './app';
import { handleClose } from './handlers/close';
import { handleDoctor } from './handlers/doctor';
import { handleCommand } from './handlers/command';
import { refuseLabelChange } from './handlers/label-steering';
import { belowSteering } from './handlers/may-steer';
import { handleOverride } from './handlers/override';
import { handlePhase } from './handlers/phase';
import { handlePullWork } from './handlers/pull';
import { handleResumePaused } from './handlers/resume-paused';
import { handleSweep } from './handlers/sweep';
import { handleStateCheck } from './handlers/untrusted-state';
import type { PhaseOutcome } from './phases/phase-context';
import { TRIAGE_REQUESTS } from './phases/triage';
import { StateChangedError } from './session/issue-session';

export { createApp } from './app';

export type Decision = ReturnType<typeof route>;

/**
 * Does what the router decided, on the adapters of `app`; `early` is the phase's model call, if it already began. What
 * the step added to the repository's day (budgets.per_day) is written at its end, also when it failed (its spend was
 * real); a failure to write it is this step's failure only when nothing else failed first.
 */
export async function execute(
  app: App,
  decision: Exclude<Decision, { kind: 'skip' }>,
  forced: boolean,
  early: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  let outcome: PhaseOutcome;
  try {
    outcome = await decideOnFreshState(app, decision, forced, early);
  } catch (error) {
    await app.daySpend?.flush().catch(() => undefined);
    throw error;
  }
  await app.daySpend?.flush();
  return outcome;
}

/** How often a run starts over when another run wrote the state between its reading and its lock. */
const MAX_FRESH_STARTS = 3;

/**
 * `decide`, started over when the state this run read was written over before it took the lock (StateChangedError,
 * session/issue-session.ts): what it decided from that read may be wrong, so it decides again from a fresh one.
 */
async function decideOnFreshState(
  app: App,
  decision: Exclude<Decision, { kind: 'skip' }>,
  forced: boolean,
  early: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  for (let start = 1; ; start++) {
    try {
      return await decide(app, decision, forced, early);
    } catch (error) {
      if (!(error instanceof StateChangedError) || start >= MAX_FRESH_STARTS) throw error;
    }
  }
}

async function decide(
  app: App,
  decision: Exclude<Decision, { kind: 'skip' }>,
  forced: boolean,
  early: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  switch (decision.kind) {
    case 'phase':
      if (decision.minPermission && !(await mayAct(app, decision.actor, decision.minPermission))) {
        return {
          summary: `${decision.actor} may not start ${decision.phase} (needs ${decision.minPermission})`,
          stage: null,
        };
      }
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
        // A maintainer may label a whole backlog at once: before its first request, each run checks the token's hourly
        // budget has room for the triage (GET /rate_limit, which GitHub does not count), so the runs GitHub starts
        // beyond the budget cost nothing and leave hydraflow-find to the hourly sweep (ADR 0014).
        await app.ensureRequests(TRIAGE_REQUESTS + 4, `triage of #${decision.issue}`);
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
          ...(decision.comment !== undefined ? { commandId: decision.comment } : {}),
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
    case 'resume-paused':
      return handleResumePaused(app);
    case 'sweep':
      return handleSweep(app);
    case 'state-check':
      return handleStateCheck(app, decision);
  }
}

/** Does the actor hold `floor` on this repository? Asked of the permission API (author_association is not access). */
async function mayAct(app: App, actor: string, floor: Permission): Promise<boolean> {
  return permissionAtLeast(await app.issues.getPermission(actor), floor);
}
