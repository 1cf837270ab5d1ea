/**
 * GitHub's rate limits through the built action (issue #17 item 14, ADR 0014): a wait is waited out when it fits the
 * run (at most 2 minutes at once, 10 in all), on a simulated clock here; otherwise the run stops green with a warning,
 * having written nothing it cannot finish; and the hourly sweep (the template's `schedule`) resumes what was left —
 * a triage cut short after publishing its verdict is finished without asking the model again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock, pipelineLabelsOf } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, runAction, SimulatedClock, type World } from '@hydraflow/testkit';

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Touches one helper.',
  reasons: ['Precise expected behaviour.'],
};

/** The triage step alone (as actions/triage runs it): the next phase is dispatched, not run here. */
const TRIAGE_STEP = { inputs: { phase: 'triage' } };

let world: World | undefined;
let clock: SimulatedClock | undefined;
afterEach(async () => {
  await world?.close();
  await clock?.close();
  world = undefined;
  clock = undefined;
});

async function limitedWorld(): Promise<{ w: World; clock: SimulatedClock }> {
  clock = await new SimulatedClock(Date.parse('2026-11-27T09:00:00Z')).listen();
  const sim = clock;
  world = await createWorld({ script: { triage: { json: clearVerdict } }, clock: () => sim.now() });
  world.gh.addUser({ login: 'alice', permission: 'write' });
  return { w: world, clock };
}

/** An issue alice labels hydraflow-find (the label on it, the event about to run). */
function labelled(w: World) {
  const issue = w.gh.world.issue({
    title: 'Paginate the users report',
    body: 'It returns every row at once; pages of 50 with a next link.',
    author: 'alice',
    labels: ['hydraflow-find'],
  });
  return issue.number;
}

const labelledRun = (w: World, n: number, sim: SimulatedClock) =>
  w.run(
    'issues',
    'labeled',
    { issue: n, label: 'hydraflow-find', sender: 'alice' },
    { ...TRIAGE_STEP, env: sim.stepEnv(), timeoutMs: 30_000 },
  );

const sweep = (w: World, sim: SimulatedClock) =>
  runAction({
    gh: w.gh,
    event: 'schedule',
    payload: { schedule: '17 * * * *', repository: { full_name: 'acme/widgets' } },
    inputs: w.inputs(),
    env: sim.stepEnv(),
    timeoutMs: 30_000,
  });

const eyes = (w: World, n: number) =>
  w.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.user === BOT_LOGIN);
const triageCalls = (w: World) => w.models.calls.filter((c) => c.role === 'triage' && c.status === 200);

function state(w: World, n: number) {
  const body = w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN)!.body;
  const decoded = decodeStateBlock(body, { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state is ${decoded.status}`);
  return decoded.state;
}

describe('GitHub rate limits', () => {
  it('a labelled triage beyond the hour’s budget writes nothing and ends green with a warning; the next hour’s sweep triages it', async () => {
    const { w, clock: sim } = await limitedWorld();
    const n = labelled(w);
    w.gh.faults.primaryRemaining(5); // not enough for a triage, and the reset is an hour away
    const run = await labelledRun(w, n, sim);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("::warning::HydraFlow stopped for GitHub's rate limit");
    // nothing written: no lock, no comment, the label as the human left it, no model call
    expect(eyes(w, n)).toEqual([]);
    expect(w.gh.world.commentsOn(n)).toEqual([]);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-find']);
    expect(triageCalls(w)).toEqual([]);

    sim.advance(3_600_000); // the window resets
    const swept = await sweep(w, sim);
    expect(swept.exitCode, swept.stdout + swept.stderr).toBe(0);
    expect(swept.summary).toContain(`swept 1 issue(s) waiting for triage: #${n}`);
    expect(triageCalls(w)).toHaveLength(1);
    expect(pipelineLabelsOf(w.gh.world.issues.get(n)!.labels)).toEqual(['hydraflow-plan']);
    // the plan phase is dispatched (the sweep goes on with no issue's next phase itself), its lock handed to it
    expect(w.gh.world.dispatches.map((d) => d.inputs)).toEqual([{ issue: String(n), phase: 'plan', actor: BOT_LOGIN }]);
  }, 60_000);

  it('a secondary limit’s retry-after is waited out on the run’s clock and the triage finishes', async () => {
    const { w, clock: sim } = await limitedWorld();
    const n = labelled(w);
    w.gh.faults.secondaryRateLimit({ writesPerMinute: 2 });
    const run = await labelledRun(w, n, sim);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(sim.sleeps.length).toBeGreaterThan(0);
    expect(sim.sleeps.every((ms) => ms <= 60_000)).toBe(true);
    expect(pipelineLabelsOf(w.gh.world.issues.get(n)!.labels)).toEqual(['hydraflow-plan']);
    expect(eyes(w, n)).toHaveLength(1); // handed to the plan phase with its dispatch
    expect(state(w, n).claim?.phase).toBe('plan');
  }, 60_000);

  it('the sweep finishes a triage cut short after publishing its verdict, without a second model call', async () => {
    const { w, clock: sim } = await limitedWorld();
    const n = labelled(w);
    const run = await labelledRun(w, n, sim);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    // The cut: GitHub's limit stopped the run after it published its verdict and before hydraflow-find came off.
    w.gh.world.issues.get(n)!.labels.push('hydraflow-find');
    sim.advance(3_600_000);
    const swept = await sweep(w, sim);
    expect(swept.exitCode, swept.stdout + swept.stderr).toBe(0);
    expect(triageCalls(w)).toHaveLength(1);
    expect(pipelineLabelsOf(w.gh.world.issues.get(n)!.labels)).toEqual(['hydraflow-plan']);
    expect(state(w, n).triage?.route).toBe('plan');
  }, 60_000);

  it('hydraflow-find alone on a triaged issue is a human’s request: the sweep triages it again', async () => {
    const { w, clock: sim } = await limitedWorld();
    const n = labelled(w);
    expect((await labelledRun(w, n, sim)).exitCode).toBe(0);
    // a maintainer sends it back to triage; the run their label started could not start (the hour was spent)
    const issue = w.gh.world.issues.get(n)!;
    issue.labels = issue.labels.filter((l) => !l.startsWith('hydraflow-')).concat('hydraflow-find');
    for (const r of eyes(w, n)) w.gh.world.reactions.splice(w.gh.world.reactions.indexOf(r), 1);
    sim.advance(3_600_000);
    const swept = await sweep(w, sim);
    expect(swept.exitCode, swept.stdout + swept.stderr).toBe(0);
    expect(triageCalls(w)).toHaveLength(2);
    expect(pipelineLabelsOf(issue.labels)).toEqual(['hydraflow-plan']);
  }, 60_000);
});
