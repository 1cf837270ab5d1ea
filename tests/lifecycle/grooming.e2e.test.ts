/**
 * The seed's grooming scenarios in the lifecycle world (the user's workflow template, GitHub's event routing, the
 * built dist/, a real git remote): grooming-ready, grooming-with-subissues, grooming-supersede. Assertions are on the
 * world's end state.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, type JobRecord } from '@hydraflow/testkit';
import {
  groomModeQuestions,
  groomReady,
  implementMedian,
  implementMode,
  medianPlan,
  modePlan,
  MODE_ISSUE,
  STATS_ISSUE,
  STATS_PHASES,
  TIES_ANSWER,
  triageComplex,
  triageModeComplex,
} from './grooming';
import {
  AVERAGE_GOOD,
  AVERAGE_ISSUE,
  averagePlan,
  implementAverage,
  lifecycleWorld,
  planAccepted,
  reviewClean,
  type LifecycleWorld,
} from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labels = (w: LifecycleWorld, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
/** The phases the jobs ran, in order (the routing step's `decision` output). */
/** The phases the jobs' steps ran, in order (a step goes on with the next phase when it can: outputs.phases). */
const phasesRun = (jobs: JobRecord[]) =>
  jobs
    .flatMap((j) =>
      j.steps.flatMap((s) => s.outputs.phases?.split(',') ?? (s.outputs.decision ? [s.outputs.decision] : [])),
    )
    .filter((d) => d !== 'skip');

async function approveAndMerge(w: LifecycleWorld, pull: number) {
  await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { event: 'APPROVE', body: 'Ship it.' });
  return w.lc.runUntilQuiet();
}

describe('grooming-ready', () => {
  it('a complex issue is groomed (all agents ready), then planned, implemented, reviewed and merged', async () => {
    world = await lifecycleWorld({
      triage: triageComplex,
      ...groomReady(),
      plan: averagePlan,
      plan_review: planAccepted,
      implement: implementAverage(AVERAGE_GOOD),
      review: reviewClean,
    });
    const issue = world.gh.world.issue({ ...AVERAGE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(phasesRun(jobs).slice(0, 3), timeline).toEqual(['triage', 'groom', 'plan']);
    const pull = [...world.gh.world.pulls.values()][0];
    expect(pull, timeline).toBeDefined();
    expect(labels(world, issue.number)).toEqual(['groomed', 'hydraflow-review']);
    await approveAndMerge(world, pull!.number);
    expect(world.gh.world.pulls.get(pull!.number)!.merged).toBe(true);
    expect(labels(world, issue.number)).toEqual(['groomed', 'hydraflow-fixed']);
  }, 180_000);
});

describe('grooming-with-subissues', () => {
  it('the engineer’s phases become sub-issues run one at a time; the parent closes when the last merges', async () => {
    world = await lifecycleWorld({
      triage: triageComplex,
      ...groomReady({ phases: STATS_PHASES }),
      plan: averagePlan,
      'plan#3': medianPlan,
      plan_review: planAccepted,
      implement: implementAverage(AVERAGE_GOOD),
      'implement#3': implementMedian(AVERAGE_GOOD),
      review: reviewClean,
    });
    const parent = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: parent.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    const [one, two] = world.gh.world.subIssuesOf(parent.number).map((s) => s.number) as [number, number];
    expect([one, two], timeline).toEqual([2, 3]);
    expect(labels(world, parent.number)).toEqual(['groomed', 'hydraflow-epic']);
    expect(labels(world, one)).toEqual(['groomed', 'hydraflow-review']);
    expect(labels(world, two)).toEqual(['groomed']); // waits for phase 1

    // Phase 1 merges: phase 2 starts on its own and reaches review.
    const first = [...world.gh.world.pulls.values()].find((p) => p.head.ref === `hydraflow/issue-${one}`)!;
    const after1 = await approveAndMerge(world, first.number);
    const timeline1 = formatTimeline(after1, { steps: true });
    expect(world.gh.world.issues.get(one)!.state, timeline1).toBe('closed');
    expect(labels(world, two), timeline1).toEqual(['groomed', 'hydraflow-review']);
    expect(world.gh.world.issues.get(parent.number)!.body).toContain(`- [x] #${one}`);

    // Phase 2 merges: the parent is done.
    const second = [...world.gh.world.pulls.values()].find((p) => p.head.ref === `hydraflow/issue-${two}`)!;
    const after2 = await approveAndMerge(world, second.number);
    expect(world.gh.world.issues.get(parent.number)!.state, formatTimeline(after2, { steps: true })).toBe('closed');
    expect(labels(world, parent.number)).toEqual(['groomed', 'hydraflow-fixed']);
    const main = execFileSync('git', ['show', 'main:src/numbers.js'], { cwd: world.sample.bareRepo }).toString();
    expect(main).toContain('export function average(numbers)');
    expect(main).toContain('export function describe(numbers)');
  }, 300_000);
});

describe('grooming-supersede', () => {
  it('a re-run after answers marks the questions answered and the issue ready', async () => {
    world = await lifecycleWorld({
      triage: triageModeComplex,
      ...groomModeQuestions(),
      plan: modePlan,
      plan_review: planAccepted,
      implement: implementMode,
      review: reviewClean,
    });
    const issue = world.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    expect(labels(world, issue.number), formatTimeline(jobs, { steps: true })).toEqual(['hydraflow-groom']);
    const asked = world.gh.world.issues.get(issue.number)!.body ?? '';
    expect(asked).toContain('`id:tie-behaviour`');

    // alice ticks the empty-list box in the issue, and answers the tie question in a comment.
    await world.asAlice('PATCH', `/repos/acme/widgets/issues/${issue.number}`, {
      body: asked.replace('- [ ] **What does mode([]) return?**', '- [x] **What does mode([]) return?**'),
    });
    await world.asAlice('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { body: TIES_ANSWER });
    const again = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(again, { steps: true });
    const body = world.gh.world.issues.get(issue.number)!.body ?? '';
    expect(body, timeline).toContain('- [x] ~~What does mode() return on ties?~~ - ');
    expect(body).toContain('- [x] **What does mode([]) return?**');
    // Ready: planned with the answer, implemented, reviewed; the pull request waits for alice.
    expect(labels(world, issue.number)).toEqual(['groomed', 'hydraflow-review']);
    expect(phasesRun(again)).toEqual(expect.arrayContaining(['groom', 'plan', 'review']));
    // Two events (the edit and the comment), one grooming run that used them: the other found nothing new.
    expect(world.models.calls.filter((c) => c.role === 'groom_summary')).toHaveLength(2);
  }, 180_000);
});
