/**
 * The backlog at once (issue #17 item 14) for `pnpm bench`: 500 open issues labelled `hydraflow-find` by a maintainer
 * in a minute, under GitHub's real limits for GITHUB_TOKEN (1,000 requests an hour, ~80 content-creating requests a
 * minute), on a simulated clock (tests/lifecycle/backlog.ts), then the template's hourly schedule until nothing is left.
 * OpenAPI validation is off here (the CI-size test, tests/lifecycle/backlog.e2e.test.ts, keeps it on): it would triple
 * the wall time of ~2,000 jobs.
 */
import { pipelineLabelsOf } from '@hydraflow/core';
import { BOT_LOGIN } from '@hydraflow/testkit';
import { HOUR, locks, runBacklog, stoppedByRateLimit, waiting } from '../../tests/lifecycle/backlog';

export interface BacklogMetrics {
  issues: number;
  /** HydraFlow's requests GitHub performed (not GET /rate_limit, which it does not count; not those a limit refused) */
  requests: number;
  /** every request HydraFlow sent, GET /rate_limit and refused ones included */
  requestsSent: number;
  simulatedHours: number;
  /** requests ÷ the hourly limit: the fewest hours any client could take */
  floorHours: number;
  triageCalls: number;
  /** issues triaged more than once, or never */
  triagedNotOnce: number;
  /** 403/429 answers HydraFlow got (each waited out, or its run stopped with the rate-limit warning) */
  limitedAnswers: number;
  /** waits on the simulated clock (secondary limit retry-after, or a primary reset that fitted) */
  waits: number;
  /** HydraFlow jobs that stopped for the rate limit, green, with the warning */
  stoppedRuns: number;
  failedJobs: number;
  sweeps: number;
  /** issues left waiting, or with a lock, at the end */
  leftOver: number;
  /** issues that end with no pipeline label or more than one (the state machine is one label per issue) */
  notOneLabel: number;
  wallMs: number;
  jobs: number;
}

export async function backlogBench(n = 500): Promise<BacklogMetrics> {
  const started = performance.now();
  const run = await runBacklog({ n, primary: 1000, writesPerMinute: 80, maxSweeps: 48, validate: false });
  try {
    const { world, issues, jobs } = run;
    const wallMs = performance.now() - started;
    const sent = world.gh.requests.filter((r) => r.actor === BOT_LOGIN);
    // the work: every request GitHub performed, but GET /rate_limit (which it does not count)
    const counted = sent.filter((r) => r.path !== '/rate_limit' && r.status !== 403 && r.status !== 429);
    const calls = world.models.calls.filter((c) => c.role === 'triage' && c.status === 200);
    const perIssue = new Map<number, number>();
    for (const c of calls) perIssue.set(c.issue!, (perIssue.get(c.issue!) ?? 0) + 1);
    const hydraflow = jobs.filter((j) => j.workflow === 'hydraflow.yml' && j.status !== 'skipped');
    return {
      issues: n,
      requests: counted.length,
      requestsSent: sent.length,
      simulatedHours: Math.round((run.simulatedMs / HOUR) * 100) / 100,
      floorHours: Math.round((counted.length / 1000) * 100) / 100,
      triageCalls: calls.length,
      triagedNotOnce: issues.filter((i) => perIssue.get(i) !== 1).length,
      limitedAnswers: sent.filter((r) => r.status === 403 || r.status === 429).length,
      waits: run.clock.sleeps.length,
      stoppedRuns: hydraflow.filter(stoppedByRateLimit).length,
      failedJobs: hydraflow.filter((j) => j.status === 'failure').length,
      sweeps: run.sweeps,
      leftOver: waiting(world, issues).length + locks(world, issues).length,
      notOneLabel: issues.filter((i) => pipelineLabelsOf(world.gh.world.issues.get(i)!.labels).length !== 1).length,
      wallMs,
      jobs: hydraflow.length,
    };
  } finally {
    await run.close();
  }
}
