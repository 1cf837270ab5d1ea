/**
 * The backlog world (issue #17 item 14), shared by tests/lifecycle/backlog.e2e.test.ts and `pnpm bench`
 * (bench/lib/backlog.ts): open issues nobody triaged, labelled `hydraflow-find` at once by a maintainer, under both of
 * GitHub's rate limits on a simulated clock, then the template's hourly schedule until nothing is left.
 */
import { BOT_LOGIN, SAMPLE_CONFIG, SimulatedClock, type JobRecord } from '@hydraflow/testkit';
import { discoverScript } from '../support/briefs';
import { lifecycleWorld, type LifecycleWorld } from './scenario';

export const HOUR = 3_600_000;

/**
 * Each backlog item is vague product intent: triage routes it to product discovery, which goes on in the same run: its
 * research agent posts a complete brief at once (tests/support/briefs.ts) and moves the issue on to shape, whose
 * dispatched run posts the directions and waits for a human — one more run and two more model calls per issue, also
 * under the limits.
 */
export const triageVague = {
  json: {
    clarity_score: 4,
    complexity_score: 3,
    needs_discovery: true,
    enrichment: 'Which reports, which page size, and who asked for it is not said.',
    reasons: ['The expected behaviour is a wish, not a specification.'],
  },
};

/**
 * A backlog of `n` open issues by bob, a maintainer, none triaged. (An outsider's issue that the sweep triages waits for
 * a maintainer's /retry: the sweep cannot tell who set its label, so it applies the outsider rule.)
 */
export function backlog(w: LifecycleWorld, n: number): number[] {
  w.gh.addUser({ login: 'bob', permission: 'write' });
  return Array.from({ length: n }, (_, i) => {
    const issue = w.gh.world.issue({
      title: `Backlog item ${i + 1}: paginate the ${i + 1}th report`,
      body: `The report endpoint number ${i + 1} returns every row at once; it should return pages of 50 rows with a next link.`,
      author: 'bob',
    });
    return issue.number;
  });
}

/** alice labels every issue hydraflow-find within a minute: one `issues.labeled` event, hence one run, per issue. */
export function labelAll(w: LifecycleWorld, issues: number[]): void {
  w.gh.world.label('hydraflow-find');
  for (const n of issues) {
    w.gh.world.issues.get(n)!.labels.push('hydraflow-find');
    w.lc.dispatch('issues', 'labeled', { issue: n, label: 'hydraflow-find', sender: 'alice' });
  }
}

/** The template's hourly schedule fires (GitHub starts it as the workflow's last editor). */
export function schedule(w: LifecycleWorld): void {
  w.gh.emitEvent({ name: 'schedule', actor: 'acme', viaToken: 'user' });
}

/** The issues still labelled hydraflow-find. */
export const waiting = (w: LifecycleWorld, issues: number[]) =>
  issues.filter((n) => w.gh.world.issues.get(n)!.labels.includes('hydraflow-find'));

/** HydraFlow's 👀 locks on the issues. */
export const locks = (w: LifecycleWorld, issues: number[]) =>
  issues.flatMap((n) => w.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.user === BOT_LOGIN));

/** Whether a HydraFlow job ended by GitHub's rate limit: green, with the warning that says so. */
export const stoppedByRateLimit = (job: JobRecord) =>
  job.steps.some((s) => s.stdout.includes("::warning::HydraFlow stopped for GitHub's rate limit"));

export interface BacklogRun {
  world: LifecycleWorld;
  clock: SimulatedClock;
  issues: number[];
  jobs: JobRecord[];
  /** hourly schedules it took */
  sweeps: number;
  /** simulated time from the labels to the end, ms */
  simulatedMs: number;
  close(): Promise<void>;
}

/**
 * `n` issues labelled at once under `primary` requests an hour and `writesPerMinute` content-creating requests a
 * minute, then the hourly schedule until no issue waits and no lock is left (at most `maxSweeps`).
 */
export async function runBacklog(options: {
  n: number;
  primary: number;
  writesPerMinute: number;
  maxSweeps: number;
  validate?: boolean;
}): Promise<BacklogRun> {
  const clock = await new SimulatedClock(Date.parse('2026-11-27T09:00:00Z')).listen();
  const world = await lifecycleWorld(
    { triage: triageVague, ...discoverScript },
    {},
    {
      clock,
      // the issues end waiting in shape for a human, over the many hours the budget takes: no shape timeout meanwhile
      sample: { extraFiles: { '.github/hydraflow.yml': `${SAMPLE_CONFIG}shape_timeout_minutes: 43200\n` } },
      rateLimit: options.primary,
      maxJobs: options.n * 20,
      ...(options.validate === false ? { validate: false } : {}),
    },
  );
  const close = async () => {
    await world.close();
    await clock.close();
  };
  try {
    world.gh.faults.secondaryRateLimit({ writesPerMinute: options.writesPerMinute });
    const issues = backlog(world, options.n);
    const started = clock.now();
    labelAll(world, issues);
    const jobs: JobRecord[] = [...(await world.lc.runUntilQuiet())];
    let sweeps = 0;
    while ((waiting(world, issues).length > 0 || locks(world, issues).length > 0) && sweeps < options.maxSweeps) {
      clock.advance(HOUR);
      schedule(world);
      jobs.push(...(await world.lc.runUntilQuiet()));
      sweeps++;
    }
    return { world, clock, issues, jobs, sweeps, simulatedMs: clock.now() - started, close };
  } catch (error) {
    await close();
    throw error;
  }
}
