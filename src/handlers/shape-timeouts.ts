import { labelFor, pipelineLabelsOf, RateLimitedError } from '@hydraflow/core';
import type { App } from '../app';
import { handlePhase } from './phase';

/**
 * Requests one issue waiting in shape costs the sweep at most, once nothing has happened on it for shape_timeout_minutes
 * (before that it costs none): the issue and its comments read (state), and when its conversation timed out the lock
 * (2), the label move (2), the progress comment and the lock freed.
 */
export const SHAPE_TIMEOUT_REQUESTS = 8;
/** Pages of issues waiting in shape (100 each) one sweep looks at most. */
const MAX_PAGES = 5;

/**
 * The shape timeout (docs/adr/0016-shape.md), part of the hourly sweep (sweep.ts, ADR 0014): every open issue
 * waiting at hydraflow-shape is looked at through the shape phase in its swept mode, which escalates a conversation
 * with no human reply for shape_timeout_minutes to hydraflow-hitl — no model call — and writes nothing otherwise.
 * Within the hour's budget the sweep leaves (`left`); what does not fit waits for the next hour.
 */
export async function sweepShapeTimeouts(
  app: App,
  left: () => number,
): Promise<{ escalated: number[]; stopped?: string }> {
  const escalated: number[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    if (left() < 1 + SHAPE_TIMEOUT_REQUESTS) return { escalated, stopped: 'the hour’s GitHub budget is spent' };
    const issues = await app.issues.listOpenIssues({ label: labelFor('shape'), page });
    for (const issue of issues) {
      if (issue.isPullRequest) continue;
      // Silent for shape_timeout_minutes means nothing happened on the issue for that long: the listing says when
      // something last did, so an issue active since costs no request (a backlog of issues waiting in shape read one by
      // one every hour spent more than the hour's budget: pnpm bench, backlog500_*). HydraFlow's last post is no later
      // than that, so an issue quiet that long is due, and its state is read only then.
      // A second pipeline label beside it is a move cut short (an escalation's own): always looked at, to finish it.
      // So is an issue with a 👀 on a re-run of the sweep: its dead attempt may have taken that lock for a timeout and
      // died before publishing a claim; a human's reply since (refused by that lock) makes the issue look active, and
      // nothing else would free it for an hour (property test, product seed -1453069572). The swept look frees it
      // (handlers/phase.ts) and times out nothing: the timeout waits for the quiet itself (phases/shape timeout).
      const quietMs = issue.updatedAt ? app.now().getTime() - Date.parse(issue.updatedAt) : Infinity;
      const deadAttemptLock = app.runner.runAttempt > 1 && issue.eyes > 0;
      const single = pipelineLabelsOf(issue.labels).length === 1;
      if (single && !deadAttemptLock && quietMs < app.config.shape_timeout_minutes * 60_000) continue;
      if (left() < SHAPE_TIMEOUT_REQUESTS) return { escalated, stopped: 'the hour’s GitHub budget is spent' };
      try {
        const outcome = await handlePhase(app, {
          phase: 'shape',
          issue: issue.number,
          actor: app.config.bot_logins[0],
          dispatched: false,
          forced: false,
          swept: true,
        });
        if (outcome.stage === 'hitl') escalated.push(issue.number);
      } catch (error) {
        if (error instanceof RateLimitedError) return { escalated, stopped: `GitHub's rate limit: ${error.message}` };
        throw error;
      }
    }
    if (issues.length < 100) break;
  }
  return { escalated };
}
