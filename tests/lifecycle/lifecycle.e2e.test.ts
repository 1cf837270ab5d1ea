/**
 * HydraFlow's lifecycle as a user lives it: their workflow template, GitHub's event routing (simulated), the built
 * dist/, a real git remote with a sample project whose tests really run. Assertions are on the world's end state.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline } from '@hydraflow/testkit';
import {
  AVERAGE_GOOD,
  AVERAGE_ISSUE,
  averagePlan,
  implementAverage,
  lifecycleWorld,
  planAccepted,
  reviewClean,
  triageClear,
  type LifecycleWorld,
} from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function openIssue(w: LifecycleWorld, issue = AVERAGE_ISSUE) {
  const created = w.gh.world.issue({ ...issue, author: 'alice' });
  w.lc.dispatch('issues', 'opened', { issue: created.number, sender: 'alice' });
  return created;
}

describe('a clear issue', () => {
  it('is triaged, planned, implemented on a branch with passing tests, and gets a reviewed pull request', async () => {
    world = await lifecycleWorld({
      triage: triageClear,
      plan: averagePlan,
      plan_review: planAccepted,
      implement: implementAverage(AVERAGE_GOOD),
      review: reviewClean,
    }, {}, (await import('node:fs')).readFileSync('/tmp/wf.yml', 'utf8'));
    const issue = openIssue(world);
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    const pull = [...world.gh.world.pulls.values()][0];
    expect(pull, timeline).toBeDefined();
    expect(pull!.head.ref).toBe(`hydraflow/issue-${issue.number}`);
    expect(world.gh.world.issues.get(pull!.number)!.body).toContain(`Fixes #${issue.number}`);
    expect(world.gh.world.issues.get(issue.number)!.labels).toContain('hydraflow-review');
    // the code really changed on the remote branch
    const branchFile = execFileSync('git', ['show', `${pull!.head.ref}:src/numbers.js`], { cwd: world.sample.bareRepo }).toString();
    expect(branchFile).toContain('export function average(numbers)');
  }, 180_000);
});
