/**
 * A backlog at once (issue #17 item 14): a maintainer labels a whole backlog `hydraflow-find` in a minute, far more
 * than the repository's GITHUB_TOKEN may triage in an hour. Through the real template and dist/, on a simulated clock
 * the emulator and every step share (packages/testkit/src/clock): both of GitHub's limits enforced — the primary one
 * per token per hour, the secondary one on content-creating requests per minute — at a CI size (24 issues, 60
 * requests an hour, 6 writes a minute; `pnpm bench` runs 500 at GitHub's real limits). The runs GitHub starts beyond
 * the budget give up before writing anything and end green with a warning; the hourly sweep (the template's
 * `schedule`) triages what is left, hour after hour, within what the budget lets it (ADR 0014).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BRIEF_MARKER, DIRECTIONS_MARKER, decodeStateBlock, pipelineLabelsOf } from '@hydraflow/core';
import { BOT_LOGIN, expectNoViolations, formatTimeline, SimulatedClock, type JobRecord } from '@hydraflow/testkit';
import { discoverScript } from '../support/briefs';
import {
  backlog,
  HOUR,
  labelAll,
  locks,
  runBacklog,
  schedule,
  stoppedByRateLimit,
  triageVague,
  waiting,
  type BacklogRun,
} from './backlog';
import { lifecycleWorld } from './scenario';

let run: BacklogRun | undefined;
afterEach(async () => {
  await run?.close();
  run = undefined;
});

describe('a backlog labelled at once', () => {
  it('24 issues at 60 requests an hour and 6 writes a minute: every issue triaged exactly once, over the hours the budget takes, nothing half-done', async () => {
    run = await runBacklog({ n: 24, primary: 60, writesPerMinute: 6, maxSweeps: 24 });
    const { world, clock, issues, jobs } = run;
    const timeline = formatTimeline(jobs, { steps: true });
    expect(waiting(world, issues), timeline).toEqual([]);
    expect(locks(world, issues), timeline).toEqual([]);
    // the first hour's budget did not stretch to the whole backlog: the hourly sweep took the rest
    expect(run.sweeps).toBeGreaterThan(1);

    // every issue triaged exactly once: one triage call each at the model server, one verdict in its signed state
    const calls = world.models.calls.filter((c) => c.role === 'triage' && c.status === 200);
    expect(calls.map((c) => c.issue).sort((a, b) => a! - b!)).toEqual(issues);
    // and discovered: research for each, one brief each (below). A discover run checks the hour's budget before its
    // research call (ADR 0014), but runs in parallel share that budget: one cut after its call and before posting the
    // brief recorded nothing, so the run the sweep dispatches again asks once more. Never more often than GitHub's
    // limit stopped a run.
    const research = world.models.calls.filter((c) => c.role === 'discover' && c.status === 200);
    expect([...new Set(research.map((c) => c.issue))].sort((a, b) => a! - b!)).toEqual(issues);
    const hydraflowJobs = jobs.filter((j) => j.workflow === 'hydraflow.yml' && j.job === 'hydraflow');
    expect(research.length - issues.length).toBeLessThanOrEqual(hydraflowJobs.filter(stoppedByRateLimit).length);
    for (const n of issues) {
      const issue = world.gh.world.issues.get(n)!;
      // one pipeline label: discovery posted its brief once and the issue waits in shape for a human
      const progress = world.gh.world.commentsOn(n).map((c) => c.body);
      expect(pipelineLabelsOf(issue.labels), `#${n}: ${progress.join('\n')}`).toEqual(['hydraflow-shape']);
      const comments = world.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
      expect(comments.filter((c) => c.body.startsWith(BRIEF_MARKER)).length, `#${n}`).toBe(1);
      const state = decodeStateBlock(comments.find((c) => c.body.includes('hydraflow:state'))!.body, {
        key: world.stateKey,
        issue: n,
      });
      expect(state.status, `#${n}`).toBe('valid');
      if (state.status === 'valid') {
        expect(state.state.triage?.route).toBe('discover');
        expect(state.state.claim).toBeUndefined();
      }
    }

    // no 403 or 429 unhandled: every job green; those GitHub's limits stopped say so in a warning
    const hydraflow = jobs.filter((j) => j.workflow === 'hydraflow.yml' && j.job === 'hydraflow');
    expect(
      hydraflow.filter((j) => j.status !== 'success' && j.status !== 'skipped'),
      timeline,
    ).toEqual([]);
    expect(world.gh.requests.filter((r) => r.status === 403 || r.status === 429).length).toBeGreaterThan(0);
    expect(hydraflow.filter(stoppedByRateLimit).length).toBeGreaterThan(0);
    // the secondary limit was waited out on the simulated clock, never more than 2 minutes at once
    expect(clock.sleeps.length).toBeGreaterThan(0);
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(121_000);
    expectNoViolations(world.gh);
  }, 300_000);

  it('a dispatched run cut between removing the hand-off 👀 and taking its own: the hourly sweep resumes the phase, whose issue has no 👀 left', async () => {
    const clock = await new SimulatedClock(Date.parse('2026-11-27T09:00:00Z')).listen();
    const world = await lifecycleWorld({ triage: triageVague, ...discoverScript }, {}, { clock });
    try {
      const [n] = backlog(world, 1);
      // The shape run takes the lock discovery handed it over (triage went on with discovery in its own run): it
      // deletes the hand-off 👀 (its compare-and-swap), and GitHub's hourly budget ends with that request, so the 👀 it
      // puts on next meets the primary limit, an hour away.
      world.gh.faults.beforeNext({ methods: ['DELETE'], pathIncludes: '/reactions/' }, () =>
        world.gh.faults.primaryRemaining(1),
      );
      labelAll(world, [n!]);
      const jobs: JobRecord[] = [...(await world.lc.runUntilQuiet())];
      const issue = world.gh.world.issues.get(n!)!;
      const directions = () =>
        world.gh.world.commentsOn(n!).filter((c) => c.user === BOT_LOGIN && c.body.startsWith(DIRECTIONS_MARKER));
      // the cut as it happened: shape waits with no 👀 on the issue (the listing's count the sweep looks at)
      expect(pipelineLabelsOf(issue.labels), formatTimeline(jobs)).toEqual(['hydraflow-shape']);
      expect(directions()).toEqual([]);
      expect(locks(world, [n!])).toEqual([]);
      expect(jobs.filter(stoppedByRateLimit).length).toBe(1);

      for (let sweep = 0; sweep < 2 && directions().length === 0; sweep++) {
        clock.advance(HOUR);
        schedule(world);
        jobs.push(...(await world.lc.runUntilQuiet()));
      }
      const timeline = formatTimeline(jobs, { steps: true });
      expect(pipelineLabelsOf(issue.labels), timeline).toEqual(['hydraflow-shape']);
      expect(directions(), timeline).toHaveLength(1);
      expect(locks(world, [n!]), timeline).toEqual([]);
      const bot = world.gh.world.commentsOn(n!).filter((c) => c.user === BOT_LOGIN);
      expect(bot.filter((c) => c.body.startsWith(BRIEF_MARKER)).length).toBe(1);
      // the cut run stopped before its call: shape asked the model once
      for (const role of ['triage', 'discover', 'shape'])
        expect(world.models.calls.filter((c) => c.role === role && c.status === 200).length, role).toBe(1);
      expectNoViolations(world.gh);
    } finally {
      await world.close();
      await clock.close();
    }
  }, 120_000);
});
