/**
 * The template's routing job has no checkout step (docs/adr/0020-no-checkout-in-the-routing-job.md): HydraFlow reads
 * its configuration from the default branch through the contents API, and fetches the code itself only for the runs
 * whose phases read it. Run through the template a user copies and the built dist/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, SAMPLE_CONFIG } from '@hydraflow/testkit';
import { openIssue } from './agent-world';
import { clearIssueScript, lifecycleWorld, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const TRIAGE_MODEL = 'claude-triage-from-the-file';
/** The configuration read: one GraphQL request for both names at the default branch's last commit. */
const isConfigRead = (r: { method: string; path: string; body?: unknown }) =>
  r.method === 'POST' && r.path === '/graphql' && JSON.stringify(r.body).includes('defaultBranchRef');

function configuredWorld(config: string) {
  return lifecycleWorld(clearIssueScript(), {}, { sample: { extraFiles: { '.github/hydraflow.yml': config } } });
}

describe('the routing job without a checkout', () => {
  it('reads the default branch’s configuration through the API, and fetches the code only for the run that plans', async () => {
    world = await configuredWorld(`${SAMPLE_CONFIG}models:\n  triage: ${TRIAGE_MODEL}\n`);
    const w = world;
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const pull = [...w.gh.world.pulls.values()][0];
    expect(pull, formatTimeline(jobs, { steps: true })).toBeDefined();
    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull!.number}/reviews`, {
      event: 'APPROVE',
      body: 'Ship it.',
    });
    const all = [...jobs, ...(await w.lc.runUntilQuiet())];
    const timeline = formatTimeline(all, { steps: true });
    expect(w.gh.world.pulls.get(pull!.number)!.merged, timeline).toBe(true);

    // Only the agent job checked the repository out; both routing jobs (the issue's and the merge's) read the file.
    const checkouts = all.flatMap((j) => j.steps.filter((s) => /checkout/i.test(s.name)).map(() => j.job));
    expect(checkouts, timeline).toEqual(['agent']);
    const routing = all.filter((j) => j.job === 'hydraflow' && j.status !== 'skipped');
    expect(routing.length, timeline).toBe(2);
    const reads = w.gh.requests.filter(isConfigRead);
    expect(reads.map((r) => r.status)).toEqual([200, 200]);
    // The file's setting is the one the run used; and the planner read the repository it fetched (its README).
    const triage = w.models.calls.filter((c) => c.role === 'triage');
    expect(triage.map((c) => c.model)).toEqual([TRIAGE_MODEL]);
    const plan = w.models.calls.find((c) => c.role === 'plan');
    expect(`${plan?.request?.system}${JSON.stringify(plan?.request?.messages)}`).toContain(
      'Tiny string and number helpers',
    );
  }, 180_000);

  it('asks again when GitHub answers 5xx to the configuration read; a file that is not YAML stops the run with one line naming it, and nothing is written', async () => {
    world = await configuredWorld(`${SAMPLE_CONFIG}models:\n  triage: ${TRIAGE_MODEL}\n`);
    const w = world;
    w.gh.faults.failNext(2, 502, { pathIncludes: '/graphql', bodyIncludes: 'defaultBranchRef' });
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect([...w.gh.world.pulls.values()].length, timeline).toBe(1);
    expect(w.models.calls.filter((c) => c.role === 'triage').map((c) => c.model)).toEqual([TRIAGE_MODEL]);
    await w.close();

    world = await configuredWorld('implement: [this is: not: yaml\n');
    const broken = world;
    const issue = openIssue(broken);
    const failed = await broken.lc.runUntilQuiet();
    const routing = failed.find((j) => j.job === 'hydraflow')!;
    expect(routing.status, formatTimeline(failed, { steps: true })).toBe('failure');
    const step = routing.steps.find((s) => s.id === 'hydraflow')!;
    const errors = `${step.stdout}`.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors.length).toBe(1);
    expect(errors[0]).toContain('.github/hydraflow.yml');
    expect(broken.models.calls).toEqual([]);
    expect(broken.gh.world.issues.get(issue.number)!.labels).toEqual([]);
    expect([...broken.gh.world.comments.values()]).toEqual([]);
  }, 180_000);
});
