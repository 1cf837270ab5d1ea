import { DailyLimitError, type BudgetExceededError, type CreditExhaustedError } from '@hydraflow/core';
import { escalate } from './escalate';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { endPhase } from './end-phase';

const HEADLINES: Readonly<Record<DailyLimitError['reason'], string>> = {
  day: 'Paused: the repository’s daily budget is spent',
  author: 'Paused: its author’s issues for today have been started',
  ledger: 'Paused: HydraFlow cannot trust its spend ledger today',
};

const RESUMES =
  'HydraFlow resumes this issue by itself after 00:00 UTC (the workflow’s daily scheduled run), or sooner when someone with write access comments `/retry` and the day has room again.';

/**
 * The way out when the repository's day is spent (budgets.per_day; docs/adr/0005-daily-budget.md): the issue keeps
 * its stage label, the progress comment says why it waits and what the day spent (total, per issue, per phase), and
 * the issue goes on the day's paused list, which the scheduled run after 00:00 UTC resumes. Nothing failed: the run
 * ends green.
 */
export async function pauseForTheDay(
  ctx: PhaseContext,
  error: DailyLimitError,
  /** The phase that resumes, when it is not this one (the publish job's agent resumes as implement). */
  phase = ctx.session.options.phase,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const summary = (await ctx.daySpend?.pause(ctx.issue.number, phase, error.reason)) ?? '';
  await endPhase(session, {
    headline: HEADLINES[error.reason],
    next:
      error.reason === 'ledger'
        ? `${RESUMES} Look at the branch \`hydraflow/spend\`: a commit on it is not HydraFlow's.`
        : RESUMES,
    details: `Why: ${error.message}.\n\n${summary}`,
  });
  return { summary: `${phase} paused until the next UTC day: ${error.message}`, stage: session.currentStage };
}

/** A phase stopped before spending more: a day's limit pauses the issue; a run or issue budget, or credit, escalates. */
export function stopSpending(
  ctx: PhaseContext,
  error: BudgetExceededError | CreditExhaustedError,
  headline: string,
): Promise<PhaseOutcome> {
  if (error instanceof DailyLimitError) return pauseForTheDay(ctx, error);
  return escalate(ctx, { headline, reason: error.message, failed: true });
}
