import { isBuiltPhase, labelFor, pipelineLabelsOf, RateLimitedError, stageOf } from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';
import { TRIAGE_REQUESTS } from '../phases/triage';
import { IssueSession, StateChangedError } from '../session/issue-session';
import { sessionOptions } from './open-session';
import { dropUnpublishedMoves } from './own-labels';
import { handlePhase } from './phase';
import { resumePaused } from './resume-paused';
import { sweepShapeTimeouts } from './shape-timeouts';

/** Requests a swept triage makes at most: the issue and its comments read, then the triage itself. */
const SWEPT_TRIAGE_REQUESTS = TRIAGE_REQUESTS + 2;
/** The share of the hourly budget the sweep leaves to the events of the hour (a human's label, a comment, CI). */
const RESERVE_SHARE = 0.1;
/** The sweep stops starting triages after this long, well inside the template's job timeout (30 minutes). */
const SWEEP_MAX_MS = 20 * 60_000;
/** Pages of open issues (100 each) one sweep lists at most, for each of its two listings. */
const MAX_PAGES = 10;
/**
 * Requests to resume a stale lock at most: the comments, who edited the state, 👀 found and removed, a dead run's
 * unpublished label (its events, the removal: own-labels.ts), state, dispatch.
 */
const STALE_LOCK_REQUESTS = 8;
/**
 * What the start of a dispatched phase costs (the issue and its state read, the lock taken over, the progress comment,
 * the lock freed): the sweep leaves that much of the hour to each run it dispatches, so that they are not cut short.
 */
const NEXT_PHASE_REQUESTS = 8;
/** A 👀 with no claim behind it is a run's that died before publishing one once it is this old (a claim's lifetime). */
const LOCK_TTL_MS = 30 * 60_000;

/**
 * The workflow's hourly `schedule` (ADR 0014). First what budgets.per_day paused on an earlier UTC day resumes
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
  // GET /rate_limit, which GitHub does not count against the budget it reports
  await app.ensureRequests(0, 'the sweep');
  const reserve = Math.ceil((app.rate.core?.limit ?? 0) * RESERVE_SHARE);
  // what the runs this sweep dispatches will need: the hour's budget is theirs too
  const owed = { count: 0 };
  // without a rate limit (GitHub Enterprise may have none), the sweep triages everything it lists
  const left = () => (app.rate.core ? app.rate.core.remaining - reserve - owed.count : Number.POSITIVE_INFINITY);
  const stale = await resumeStaleLocks(app, left, owed);
  const sweeping: App = { ...app, chain: false };
  // shape conversations waiting for a human past shape_timeout_minutes go to a human (no model call)
  const shape = await sweepShapeTimeouts(sweeping, left);
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
          // the dispatch of the next phase names who started the chain: HydraFlow's schedule, as resume-paused does
          actor: app.config.bot_logins[0],
          dispatched: false,
          forced: false,
          swept: true,
        });
        if (outcome.failed) failed.push(`#${issue.number}: ${outcome.summary}`);
        else triaged.push(issue.number);
        owed.count += NEXT_PHASE_REQUESTS;
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
    ...(stale.resumed.length
      ? [`resumed ${stale.resumed.length} phase(s) whose run stopped holding the lock: ${stale.resumed.join(', ')}`]
      : []),
    ...(stale.freed.length ? [`freed ${stale.freed.length} stale lock(s): ${stale.freed.join(', ')}`] : []),
    ...(shape.escalated.length
      ? [
          `escalated ${shape.escalated.length} shape conversation(s) past shape_timeout_minutes: ${shape.escalated.map((n) => `#${n}`).join(', ')}`,
        ]
      : []),
    triaged.length === 0 && !stopped && failed.length === 0
      ? 'no issue waits for triage'
      : `swept ${triaged.length} issue(s) waiting for triage${triaged.length ? `: ${triaged.map((n) => `#${n}`).join(', ')}` : ''}`,
  ];
  stopped ??= stale.stopped ?? shape.stopped;
  if (stopped)
    parts.push(`stopped: ${stopped}; ${remainingIssues || 'the'} remaining issue(s) wait for the next hour's sweep`);
  if (failed.length) parts.push(`failed: ${failed.join('; ')}`);
  return { summary: parts.join('; '), stage: null, ...(failed.length ? { failed: true } : {}) };
}

/**
 * Issues elsewhere in the pipeline whose 👀 lock outlived its run: the run stopped (GitHub's rate limit, a runner lost)
 * before it finished a phase. Found by their 👀 count in the listing of open issues; each is read (its state) only
 * then. An expired claim's phase is dispatched again, its lock freed first (the dispatched run takes a fresh one); a 👀
 * with no claim behind it, older than a claim lives, is freed. Epics keep their 👀 while their sub-issues run. Issues
 * at a built phase's stage with no 👀 are read too: an expired claim there is a run cut between removing a 👀 and
 * putting its own on, resumed the same way.
 */
async function resumeStaleLocks(
  app: App,
  left: () => number,
  owed: { count: number },
): Promise<{ resumed: string[]; freed: string[]; stopped?: string }> {
  const resumed: string[] = [];
  const freed: string[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    if (left() < 1 + STALE_LOCK_REQUESTS) return { resumed, freed, stopped: 'the hour’s GitHub budget is spent' };
    const issues = await app.issues.listOpenIssues({ page });
    for (const issue of issues) {
      const pipeline = pipelineLabelsOf(issue.labels);
      if (issue.isPullRequest || pipeline.length === 0) continue;
      // triaged below; epics keep their 👀 — unless another stage label is beside it: a human's move refused by a lock
      if (pipeline.length === 1 && (pipeline[0] === labelFor('find') || pipeline[0] === labelFor('epic'))) continue;
      // No 👀: a run may still have been cut between removing a 👀 (taking a lock over is a delete, then a fresh 👀:
      // IssueSession.tryAcquire, and this sweep's own resume below) and putting its own on — its state then names a
      // claim nobody holds, and nothing else would ever look (tests/lifecycle/backlog.e2e). Only where a built phase
      // runs by itself; the state read costs a request per such issue and sweep (one waiting for a human, too).
      const unlocked = issue.eyes === 0;
      if (unlocked && !pipeline.some((l) => isBuiltPhase(stageOf(l.toLowerCase()) ?? ''))) continue;
      if (left() < STALE_LOCK_REQUESTS) return { resumed, freed, stopped: 'the hour’s GitHub budget is spent' };
      const session = await IssueSession.open(app.issues, sessionOptions(app, issue.number, 'sweep', issue.labels));
      if (session.state.stage === 'epic') continue; // an epic, whatever stray label is beside it: as above
      const claim = session.state.claim;
      const now = app.now().getTime();
      if (claim && Date.parse(claim.expiresAt) > now) continue; // a run holds it
      if (unlocked) {
        // no claim: the phase ended (or escalated) and freed its lock; a triage's claim: its hydraflow-find is swept
        if (!claim || claim.phase === 'triage') continue;
      } else {
        const lock = await app.issues.reactToIssue(issue.number, 'eyes');
        const young = now - Date.parse(lock.createdAt) <= LOCK_TTL_MS;
        // No claim published yet: a run at work, unless its 👀 is older than any claim lives, or is the one the state
        // says its holder released and was about to take off (`released`: that run died in between; property test
        // tests/property/pipeline-histories, product seed -1768124150: a sweep timed a shape conversation out).
        if (!claim && !lock.created && young && session.state.released !== lock.id) continue;
        // A 👀 that is not the one the claim names was put on since the claim was written: a run took the lock over
        // (the dispatched run the claim hands it to, started late — GitHub starts runs when it can), and it publishes
        // its own claim only when its phase ends. At work, unless its 👀 is older than a claim lives (it died before
        // publishing). Removing it would take the lock from a live run, whose work this sweep would then dispatch
        // again (property test tests/property/pipeline-histories, product seed -392832811; tests/sweep-handoff.e2e).
        // A re-run of this sweep presumes such a 👀 its own dead attempt's, put on after it removed the claimed one (the
        // presumption IssueSession.tryAcquire makes for a phase's re-run): else the issue waits a claim's life for it
        // (property test tests/property/pipeline-histories, product seed 78838780).
        if (claim && !lock.created && young && !namedBy(claim, lock) && app.runner.runAttempt <= 1) continue;
        // Removed by its id: the claimed 👀, or a dead run's. Gone already: a run took the lock over just now (its
        // compare-and-swap on the same id), and this sweep leaves the issue to it. A cut from here to the acquire below
        // leaves no 👀: the next sweep finds it as above.
        const removed = await app.issues.removeIssueReaction(issue.number, lock.id);
        if (!removed) continue;
        if (!claim || claim.phase === 'triage') {
          if (!lock.created) freed.push(`#${issue.number}`);
          continue;
        }
      }
      // Take the lock afresh and hand it to the phase dispatched again: should that run be stopped too, the next sweep
      // finds this lock, not a free issue nobody resumes.
      let taken;
      try {
        taken = await session.acquire();
      } catch (error) {
        // a run wrote the state between this sweep's reading of it and its lock (the lock is freed again): that run
        // was at work after all; the next sweep looks again
        if (error instanceof StateChangedError) continue;
        throw error;
      }
      if (!taken.ok) continue; // another run took it meanwhile
      await dropUnpublishedMoves(app, issue.number, issue.labels, session.state.stage ?? null);
      owed.count += NEXT_PHASE_REQUESTS;
      const actor = app.config.bot_logins[0];
      session.dispatch(app.workflow, app.runner.defaultBranch, claim.phase, actor);
      await session.publish({
        headline: `The ${claim.phase} phase starts again: its run stopped before it finished`,
        next: `HydraFlow's hourly sweep found its lock expired and dispatches the ${claim.phase} phase again.`,
      });
      await session.sendDispatches({ workflow: app.workflow, ref: app.runner.defaultBranch }, { resend: false, actor });
      resumed.push(`#${issue.number} (${claim.phase})`);
    }
    if (issues.length < 100) break;
  }
  return { resumed, freed };
}

/**
 * Whether the 👀 is the one `claim` names: by the reaction's id the claim records, else (a claim written without one) by
 * its age — a 👀 put on after the claim was written is another run's.
 */
function namedBy(
  claim: { at: string; reaction?: number | undefined },
  lock: { id: number; createdAt: string },
): boolean {
  if (claim.reaction !== undefined) return claim.reaction === lock.id;
  // GitHub's timestamps have whole seconds: a 👀 of the claim's own second counts as the claim's
  return Date.parse(lock.createdAt) < Math.floor(Date.parse(claim.at) / 1000) * 1000 + 1000;
}
