/**
 * Done once (issue #17, item 13, first and second bullets): a workflow_dispatch that GitHub performed but answered 5xx,
 * and a slash command, are acted on once, whatever the duplicates, deliveries and re-runs — and a run that died half-way
 * is still finished by its re-run. Through the built dist on real webhook payloads, with GitHub's faults injected; the
 * assertions are on the world: model calls, dispatches, labels, the progress comment and the lock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';
import { discoverScript } from './support/briefs';
import { groomReady, STATS_ISSUE } from './lifecycle/grooming';

const clear = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Clear.',
  reasons: ['One endpoint.'],
};
const vague = { ...clear, clarity_score: 3, needs_discovery: true, enrichment: 'Needs a direction.' };

/** The triage step alone, as `actions/triage` runs it: a step that runs one named phase dispatches the next. */
const TRIAGE_STEP = { inputs: { phase: 'triage' } };

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const progress = (w: World, n: number) =>
  w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))!;
const stateOf = (w: World, n: number) => {
  const decoded = decodeStateBlock(progress(w, n).body, { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};
const roles = (w: World) => w.models.calls.map((c) => c.role);
const lockOf = (w: World, n: number) =>
  w.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.user === BOT_LOGIN && r.content === 'eyes');

async function openIssue(w: World) {
  w.gh.addUser({ login: 'lee', permission: 'write' });
  return w.gh.world.issue({ title: 'Export users', body: 'Add a CSV export of the users list.', author: 'lee' });
}

describe('a workflow_dispatch GitHub performed but answered 5xx', () => {
  it('starts the next phase once: every other run GitHub starts for it does nothing, and the hand-off stays intact', async () => {
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    const issue = await openIssue(world);
    world.gh.faults.writeSucceedsThen502(1, { pathIncludes: '/dispatches' });
    const triage = await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    expect(triage.exitCode, triage.stdout).toBe(0);

    // GitHub runs the workflow once per dispatch it performed, in order.
    const sent = world.gh.world.dispatches.length;
    const runs = [];
    for (let i = 0; i < sent; i++) runs.push(await world.runDispatch(i));
    for (const r of runs) expect(r.exitCode, r.stdout).toBe(0);
    expect(roles(world)).toEqual(['triage', 'plan', 'plan_review']);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
    const body = progress(world, issue.number).body;
    expect(body).toContain('Planned');
    expect(body).not.toContain('did not start');
    // The plan's hand-off to implement is left as the plan run left it: its claim, and the 👀 it names.
    const state = stateOf(world, issue.number);
    expect(state.history.filter((h) => h.by === 'human')).toEqual([]);
    expect(state.claim).toMatchObject({ phase: 'implement' });
    expect(state.claim?.runId.startsWith('handoff:')).toBe(true);
    expect(lockOf(world, issue.number).map((r) => r.id)).toEqual([state.claim?.reaction]);
  });

  it('answered 5xx on every attempt: the run stops with one line; the re-run sends nothing more once the phase ran', async () => {
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    const issue = await openIssue(world);
    world.gh.faults.writeSucceedsThen502(4, { pathIncludes: '/dispatches' });
    const triage = await world.run('issues', 'opened', { issue: issue.number }, { ...TRIAGE_STEP, runId: '4100' });
    expect(triage.exitCode).toBe(1);
    const errors = triage.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/GitHub answered 502 to POST \/repos\/acme\/widgets\/actions\/workflows\/.*re-run/);
    // The triage verdict and the hand-off to planning were written before the dispatch went out.
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-plan']);
    expect(stateOf(world, issue.number).claim).toMatchObject({ runId: 'handoff:4100', phase: 'plan' });

    const sent = world.gh.world.dispatches.length;
    for (let i = 0; i < sent; i++) expect((await world.runDispatch(i)).exitCode).toBe(0);
    const dispatches = world.gh.world.dispatches.length; // and the plan run's own, of implement
    // A human re-runs the failed run: the phase it handed on to has run, so nothing is sent or done again.
    const rerun = await world.run(
      'issues',
      'opened',
      { issue: issue.number },
      { ...TRIAGE_STEP, runId: '4100', runAttempt: 2 },
    );
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(world.gh.world.dispatches).toHaveLength(dispatches);
    expect(roles(world)).toEqual(['triage', 'plan', 'plan_review']);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
    expect(progress(world, issue.number).body).not.toContain('did not start');
  });

  it('not performed on any attempt: the re-run sends it, once, and the next phase runs', async () => {
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    const issue = await openIssue(world);
    world.gh.faults.failNext(4, 502, { pathIncludes: '/dispatches' });
    const triage = await world.run('issues', 'opened', { issue: issue.number }, { ...TRIAGE_STEP, runId: '4200' });
    expect(triage.exitCode).toBe(1);
    expect(world.gh.world.dispatches).toHaveLength(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-plan']);

    const rerun = await world.run(
      'issues',
      'opened',
      { issue: issue.number },
      { ...TRIAGE_STEP, runId: '4200', runAttempt: 2 },
    );
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(world.gh.world.dispatches.map((d) => d.inputs)).toEqual([
      { issue: String(issue.number), phase: 'plan', actor: 'lee' },
    ]);
    expect((await world.runDispatch()).exitCode).toBe(0);
    expect(roles(world)).toEqual(['triage', 'plan', 'plan_review']);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
  });
});

/**
 * A vague issue, triaged and discovered by its opened run; the next triage says clear, and once its verdict is in the
 * progress comment GitHub fails every attempt of the next read (the plan's fresh look at the issue): a run that goes
 * on into the plan dies there.
 */
async function vagueThenClearDyingInPlan() {
  world = await createWorld({
    script: { triage: [{ json: vague }, { json: clear }], ...discoverScript, ...planScript },
  });
  const w = world;
  const issue = await openIssue(w);
  expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
  let armed = false;
  w.gh.onEvent((e) => {
    if (armed || e.name !== 'issue_comment' || e.action !== 'edited') return;
    if (!progress(w, issue.number).body.includes('Triaged: clarity 9/10')) return;
    armed = true;
    w.gh.faults.failNext(4, 500, { methods: ['GET'], pathIncludes: `/issues/${issue.number}` });
  });
  return { w, issue };
}

describe('a command is done once per comment, re-runs included', () => {
  it('a re-run of a /triage run that finished calls no model, dispatches nothing and writes nothing', async () => {
    world = await createWorld({ script: { triage: { json: vague }, ...discoverScript } });
    const issue = await openIssue(world);
    // triage, and discovery in the same run: the brief, then hydraflow-shape
    expect((await world.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect((await world.runDispatch()).exitCode).toBe(0); // shape: the directions
    const command = world.gh.world.comment(issue.number, { author: 'lee', body: '/triage' });
    const first = await world.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '5100' },
    );
    expect(first.exitCode, first.stdout).toBe(0);
    expect((await world.runDispatch()).exitCode).toBe(0); // GitHub runs the shape it dispatched after discovery
    expect(roles(world)).toEqual(['triage', 'discover', 'shape', 'triage', 'discover', 'shape']);
    const before = {
      dispatches: world.gh.world.dispatches.length,
      progress: progress(world, issue.number).body,
      labels: labelsOf(world, issue.number),
      comments: world.gh.world.commentsOn(issue.number).length,
    };

    const rerun = await world.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '5100', runAttempt: 2 },
    );
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(roles(world)).toEqual(['triage', 'discover', 'shape', 'triage', 'discover', 'shape']);
    expect({
      dispatches: world.gh.world.dispatches.length,
      progress: progress(world, issue.number).body,
      labels: labelsOf(world, issue.number),
      comments: world.gh.world.commentsOn(issue.number).length,
    }).toEqual(before);
    expect(lockOf(world, issue.number)).toEqual([]);
  });

  it('a re-run of a /triage run that died in the plan it went on to finishes the plan, without triaging again', async () => {
    const { w, issue } = await vagueThenClearDyingInPlan();
    const command = w.gh.world.comment(issue.number, { author: 'lee', body: '/triage' });
    const died = await w.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '5200' },
    );
    expect(died.exitCode, died.stdout).toBe(1);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-plan']);

    const rerun = await w.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '5200', runAttempt: 2 },
    );
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-ready']);
    expect(roles(w).filter((r) => r === 'triage')).toHaveLength(2);
    expect(roles(w).filter((r) => r === 'plan_review')).toHaveLength(1);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase).at(-1)).toBe('implement');
  });

  it('the same re-run, after a triage-role user set hydraflow-ready meanwhile: her label is undone, the plan finished, triage not asked again', async () => {
    // Found by tests/label-permissions.e2e.test.ts on the product track (docs/adr/0025): a forced /triage re-run
    // triaged again, and a re-run that undid a label of someone who may not steer stopped there, with the issue at
    // hydraflow-plan and no run on the way
    const { w, issue } = await vagueThenClearDyingInPlan();
    w.gh.addUser({ login: 'tina', permission: 'triage' });
    const command = w.gh.world.comment(issue.number, { author: 'lee', body: '/triage' });
    const run = (runAttempt: number) =>
      w.run('issue_comment', 'created', { issue: issue.number, comment: command.id }, { runId: '5300', runAttempt });
    expect((await run(1)).exitCode).toBe(1);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-plan']);
    w.gh.world.setLabelsAs(issue.number, 'tina', { add: ['hydraflow-ready'] });

    const rerun = await run(2);
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(roles(w).filter((r) => r === 'triage')).toHaveLength(2);
    expect(roles(w).filter((r) => r === 'plan_review')).toHaveLength(1);
    const said = w.gh.world
      .commentsOn(issue.number)
      .filter((c) => c.user === BOT_LOGIN)
      .map((c) => c.body)
      .join('\n');
    expect(said).toMatch(/`tina`.*hydraflow-ready.*undone/s);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-ready']); // the plan's move, not tina's
    expect(progress(w, issue.number).body).toContain('Planned');
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase).at(-1)).toBe('implement');
  });

  /** What a duplicate delivery or a re-run must leave as it was: the models' record and every trace on GitHub. */
  const worldOf = (w: World, n: number) => ({
    models: roles(w),
    dispatches: w.gh.world.dispatches.map((d) => d.inputs),
    labels: labelsOf(w, n),
    body: w.gh.world.issues.get(n)!.body,
    comments: w.gh.world.commentsOn(n).map((c) => `${c.user}: ${c.body}`),
    issues: w.gh.world.issues.size,
    lock: lockOf(w, n).map((r) => r.id),
  });

  it('/groom delivered three times, then its run re-run: grooms once, posts nothing twice, dispatches the plan once', async () => {
    world = await createWorld({ script: { ...groomReady(), ...planScript } });
    const w = world;
    w.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = w.gh.world.issue({ ...STATS_ISSUE, author: 'lee' });
    const command = w.gh.world.comment(issue.number, { author: 'lee', body: '/groom' });
    const deliver = (runId: string, runAttempt?: number) =>
      w.run(
        'issue_comment',
        'created',
        { issue: issue.number, comment: command.id },
        { runId, ...(runAttempt ? { runAttempt } : {}) },
      );
    const first = await deliver('6100');
    expect(first.exitCode, first.stdout).toBe(0);
    const groomed = roles(w);
    expect(groomed.filter((r) => r?.startsWith('groom'))).not.toEqual([]);
    expect(labelsOf(w, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['plan']);
    const before = worldOf(w, issue.number);

    // GitHub delivers the same webhook twice more (a redelivery is a new run of the workflow)
    for (const runId of ['6101', '6102']) {
      const again = await deliver(runId);
      expect(again.exitCode, again.stdout).toBe(0);
    }
    expect(worldOf(w, issue.number)).toEqual(before);

    // the plan GitHub was asked for runs; then a human re-runs the /groom run
    expect((await w.runDispatch()).exitCode).toBe(0);
    expect(roles(w)).toEqual([...groomed, 'plan', 'plan_review']);
    const planned = worldOf(w, issue.number);
    const rerun = await deliver('6100', 2);
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expect(worldOf(w, issue.number)).toEqual(planned);
    expect(w.gh.world.dispatches.filter((d) => d.inputs.phase === 'plan')).toHaveLength(1);
  });

  it('/retry delivered three times, and its run re-run: the phases run once, one reply at most', async () => {
    world = await createWorld({
      script: { triage: [{ fault: 'junk' }, { fault: 'junk' }, { json: vague }], ...discoverScript },
    });
    const w = world;
    const issue = await openIssue(w);
    expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-hitl']);
    const escalated = roles(w).length;
    const command = w.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const deliver = (runId: string, runAttempt?: number) =>
      w.run(
        'issue_comment',
        'created',
        { issue: issue.number, comment: command.id },
        { runId, ...(runAttempt ? { runAttempt } : {}) },
      );
    const first = await deliver('6200');
    expect(first.exitCode, first.stdout).toBe(0);
    expect(roles(w).slice(escalated)).toEqual(['triage', 'discover']); // discovery goes on in the same run
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-shape']);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['shape']);
    const before = worldOf(w, issue.number);

    for (const runId of ['6201', '6202']) {
      const again = await deliver(runId);
      expect(again.exitCode, again.stdout).toBe(0);
    }
    expect(worldOf(w, issue.number)).toEqual(before);

    // a re-run before the shape run started: it cannot know whether GitHub performed the dispatch, so it may send it
    // again (src/session/issue-session.ts, sendDispatches); it triages and discovers nothing and writes nothing else
    const rerun = await deliver('6200', 2);
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    const { dispatches: _d, ...rest } = before;
    const { dispatches: sent, ...restAfter } = worldOf(w, issue.number);
    expect(restAfter).toEqual(rest);
    expect(sent.every((d) => d.phase === 'shape')).toBe(true);
    expect(sent.length).toBeLessThanOrEqual(2);

    // GitHub runs every dispatch it got, in order: each phase runs once
    for (let i = 0; i < w.gh.world.dispatches.length; i++) expect((await w.runDispatch(i)).exitCode).toBe(0);
    expect(roles(w).slice(escalated)).toEqual(['triage', 'discover', 'shape']);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-shape']);
    expect(lockOf(w, issue.number)).toEqual([]);

    // and a re-run after all that changes nothing at all
    const shaped = worldOf(w, issue.number);
    const late = await deliver('6200', 3);
    expect(late.exitCode, late.stdout).toBe(0);
    expect(worldOf(w, issue.number)).toEqual(shaped);
    // the phases' comments once each, and at most one reply to the command (any other comment of HydraFlow's)
    const mine = w.gh.world.commentsOn(issue.number).filter((c) => c.user === BOT_LOGIN);
    const marked = (marker: string) => mine.filter((c) => c.body.includes(`<!-- hydraflow:${marker}`));
    expect(marked('progress')).toHaveLength(1);
    expect(marked('brief -->')).toHaveLength(1);
    expect(marked('shape-directions')).toHaveLength(1);
    expect(mine.length - 3).toBeLessThanOrEqual(1);
  });
});
