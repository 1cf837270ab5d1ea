import { labelFor, RateLimitedError } from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { TRIAGE_REQUESTS } from '../phases/triage';
import { handlePhase } from './phase';
import { resumePaused } from './resume-paused';

/** Requests a swept triage makes at most: the issue and its comments read, then the triage itself. */
const SWEPT_TRIAGE_REQUESTS = TRIAGE_REQUESTS + 2;
/** The share of the hourly budget the sweep leaves to the events of the hour (a human's label, a comment, CI). */
const RESERVE_SHARE = 0.1;
/** The sweep stops starting triages after this long, well inside the template's job timeout (30 minutes). */
const SWEEP_MAX_MS = 20 * 60_000;
/** Pages of open hydraflow-find issues (100 each) one sweep lists at most. */
const MAX_PAGES = 10;

/**
 * The workflow's hourly `schedule` (ADR 0008). First what budgets.per_day paused on an earlier UTC day resumes
 * (resume-paused.ts). Then the issues that still carry `hydraflow-find` — a backlog labelled faster than GitHub's rate
 * limits let HydraFlow triage, whose runs gave up before writing anything, or a triage cut short after its verdict —
 * are triaged here, oldest first, one at a time, each as any triage (lock, one model call, labels, progress comment),
 * with the next phase dispatched rather than run here. Within the budget that remains: the sweep reads it from GET
 * /rate_limit (GitHub does not count it), leaves a tenth of the hour to other events, and stops when the next triage
 * would not fit; what is left waits for the next hour's sweep. A triage GitHub's rate limit stops ends the sweep,
 * leaving that issue resumable as it left every other.
 */
export async function handleSweep(app: App): Promise<PhaseOutcome> {
  const paused = await resumePaused(app);
  const started = app.now().getTime();
  const budget = app.rate.core ?? (await readBudget(app));
  const reserve = Math.ceil(budget.limit * RESERVE_SHARE);
  const left = () => (app.rate.core?.remaining ?? 0) - reserve;
  const sweeping: App = { ...app, chain: false };
  const triaged: number[] = [];
  const failed: string[] = [];
  let stopped: string | undefined;
  let remainingIssues = 0;
  const seen = new Set<number>();
  pages: for (let page = 1; page <= MAX_PAGES; page++) {
    if (left() < 1 + SWEPT_TRIAGE_REQUESTS) {
      stopped = 'the hour’s GitHub budget is spent';
      break;
    }
    const issues = await app.issues.listOpenIssues({ label: labelFor('find'), page });
    const todo = issues.filter((i) => !i.isPullRequest && !paused.issues.has(i.number) && !seen.has(i.number));
    for (const [at, issue] of todo.entries()) {
      seen.add(issue.number);
      if (left() < SWEPT_TRIAGE_REQUESTS) stopped = 'the hour’s GitHub budget is spent';
      else if (app.now().getTime() - started > SWEEP_MAX_MS) stopped = 'this run’s time is up';
      if (stopped) {
        remainingIssues += todo.length - at;
        break pages;
      }
      try {
        const outcome = await handlePhase(sweeping, {
          phase: 'triage',
          issue: issue.number,
          actor: undefined,
          dispatched: false,
          forced: false,
          swept: true,
        });
        if (outcome.failed) failed.push(`#${issue.number}: ${outcome.summary}`);
        else triaged.push(issue.number);
      } catch (error) {
        if (error instanceof RateLimitedError) {
          stopped = `GitHub's rate limit: ${error.message}`;
          remainingIssues += todo.length - at;
          break pages;
        }
        failed.push(`#${issue.number}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (issues.length < 100) break;
  }
  const parts = [
    paused.summary,
    triaged.length === 0 && !stopped && failed.length === 0
      ? 'no issue waits for triage'
      : `swept ${triaged.length} issue(s) waiting for triage${triaged.length ? `: ${triaged.map((n) => `#${n}`).join(', ')}` : ''}`,
  ];
  if (stopped) parts.push(`stopped: ${stopped}; ${remainingIssues || 'the'} remaining issue(s) wait for the next hour's sweep`);
  if (failed.length) parts.push(`failed: ${failed.join('; ')}`);
  return { summary: parts.join('; '), stage: null, ...(failed.length ? { failed: true } : {}) };
}

async function readBudget(app: App) {
  // GET /rate_limit, which GitHub does not count against the budget it reports
  await app.ensureRequests(0, 'the sweep');
  return app.rate.core!;
}
