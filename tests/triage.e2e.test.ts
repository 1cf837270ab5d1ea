import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock, PROGRESS_MARKER } from '@hydraflow/core';
import { buildEvent, createWorld, expectNoViolations, runAction, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Touches the pagination helper of the users endpoint.',
  reasons: ['Precise expected behaviour.', 'One endpoint.'],
};

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function hydraflowComments(w: World, issue: number) {
  return w.gh.world.commentsOn(issue).filter((c) => c.user === 'github-actions[bot]');
}

/** The triage step alone, as `actions/triage` runs it: a step that runs one named phase dispatches the next. */
const TRIAGE_STEP = { inputs: { phase: 'triage' } };

describe.each(['anthropic', 'openai'] as const)('triage of a real issues.opened payload (%s)', (provider) => {
  it('the triage step labels, comments once, signs state, dispatches the next phase; a re-run changes nothing', async () => {
    world = await createWorld({ provider, script: { triage: { json: clearVerdict } } });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({
      title: 'Paginate GET /users',
      body: 'GET /users returns every user at once. Return 50 per page with a Link header; add tests.',
      author: 'alice',
      labels: ['bug'],
    });

    const requestsBefore = world.gh.requests.length;
    const first = await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    expect(first.exitCode, first.stdout + first.stderr).toBe(0);
    expect(first.outputs.decision).toBe('triage');
    expect(first.outputs.stage).toBe('plan');
    const triageRequests = world.gh.requests.length - requestsBefore;

    const labels = world.gh.world.issues.get(issue.number)!.labels;
    expect(labels.sort()).toEqual(['bug', 'hydraflow-plan']);
    const comments = hydraflowComments(world, issue.number);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(PROGRESS_MARKER);
    expect(comments[0]!.body).toContain('clarity 9/10');
    const decoded = decodeStateBlock(comments[0]!.body, { key: world.stateKey, issue: issue.number });
    expect(decoded.status).toBe('valid');
    if (decoded.status === 'valid') {
      expect(decoded.state.triage?.route).toBe('plan');
      expect(decoded.state.stage).toBe('plan');
      expect(decoded.state.ledger.length).toBeGreaterThan(0);
      expect(decoded.state.ledger[0]!.provider).toBe(provider);
    }
    expect(world.gh.world.dispatches).toHaveLength(1);
    expect(world.gh.world.dispatches[0]).toMatchObject({
      workflow_id: 'hydraflow.yml',
      ref: 'main',
      inputs: { issue: String(issue.number), phase: 'plan', actor: 'alice' },
    });
    expect(first.summary).toContain('triaged');
    // The first run in a repository also gives the new label its colour and description (one PATCH, once); the
    // author's permission is asked of the API (the outsider rule: author_association is not access).
    expect(triageRequests).toBeLessThanOrEqual(7);
    expect(world.gh.world.getLabel('hydraflow-plan')).toMatchObject({
      color: 'fef2c0',
      description: 'HydraFlow: needs a plan',
    });

    // Re-run the very same event: a re-run attempt of the same run, then a redelivery as a new run.
    const again = await world.run('issues', 'opened', { issue: issue.number }, { ...TRIAGE_STEP, runAttempt: 2 });
    const redelivered = await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    for (const r of [again, redelivered]) expect(r.exitCode, r.stdout).toBe(0);
    expect(hydraflowComments(world, issue.number)).toHaveLength(1);
    expect(hydraflowComments(world, issue.number)[0]!.body).toBe(comments[0]!.body);
    expect(world.gh.world.issues.get(issue.number)!.labels.sort()).toEqual(['bug', 'hydraflow-plan']);
    expect(world.gh.world.dispatches).toHaveLength(1);
    // The redelivery's early call (the step trusts an opened event's payload) was not adopted: one call is ledgered.
    const ledger = decodeStateBlock(comments[0]!.body, { key: world.stateKey, issue: issue.number });
    expect(ledger.status === 'valid' && ledger.state.ledger).toHaveLength(1);
    expectNoViolations(world.gh);

    // Steady state: once the labels exist, triaging an issue takes six GitHub requests (one of them the author's
    // permission, asked while the model reads: the outsider rule goes by access, not author_association).
    const second = world.gh.world.issue({
      title: 'Sort users by name',
      body: 'Add ?sort=name to GET /users.',
      author: 'alice',
    });
    const before = world.gh.requests.length;
    expect((await world.run('issues', 'opened', { issue: second.number }, TRIAGE_STEP)).exitCode).toBe(0);
    expect(world.gh.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toHaveLength(6);
  });

  it('the routing step goes on from a clear triage into planning in the same run: no workflow run for the plan', async () => {
    world = await createWorld({
      provider,
      script: { triage: { json: clearVerdict }, ...planScript },
    });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'alice' });

    const run = await world.run('issues', 'opened', { issue: issue.number });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.phases).toBe('triage,plan');
    expect(world.models.calls.map((c) => c.role)).toEqual(['triage', 'plan', 'plan_review']);
    // The plan's first draft went out as the verdict came, before triage wrote a thing: the planner reads meanwhile.
    const drafted = world.models.calls[1]!.at;
    const moved = world.gh.requests.find((r) => r.method === 'POST' && r.path.endsWith('/labels'))!.at;
    expect(drafted).toBeLessThanOrEqual(moved);
    expect(world.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
    // This world's job has no checkout, which implement works on: implement is dispatched; planning never was.
    expect(world.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['implement']);
    const [progress, plan, ...more] = hydraflowComments(world, issue.number);
    expect(more).toEqual([]);
    expect(plan!.body).toContain('hydraflow:plan');
    const decoded = decodeStateBlock(progress!.body, { key: world.stateKey, issue: issue.number });
    expect(decoded.status === 'valid' && [decoded.state.triage?.route, decoded.state.plan?.status]).toEqual([
      'plan',
      'accepted',
    ]);
    expectNoViolations(world.gh);
  });
});

describe('the triage call started before the state is read', () => {
  it('is cancelled when a redelivered issues.opened finds the issue triaged: nothing ledgered, posted or sent twice', async () => {
    // A latency long enough that the redelivery has read the state (and cancelled) before any answer could come.
    world = await createWorld({
      script: { triage: { json: clearVerdict, latencyMs: 1_500 }, ...planScript },
    });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'alice' });
    // GitHub redelivers the payload it first sent: the issue as it was opened, without the label triage added since.
    const original = buildEvent(world.gh, 'issues', 'opened', { issue: issue.number });
    const deliver = () => runAction({ gh: world!.gh, event: 'issues', payload: original, inputs: world!.inputs() });

    expect((await deliver()).exitCode).toBe(0);
    const progress = hydraflowComments(world, issue.number).filter((c) => c.body.includes(PROGRESS_MARKER));
    expect(progress).toHaveLength(1);
    const redelivered = await deliver();
    expect(redelivered.exitCode, redelivered.stdout).toBe(0);
    expect(redelivered.stdout).toContain('already triaged');

    // The first delivery's call was answered and adopted; the redelivery's was sent early, then cancelled.
    const calls = world.models.calls.filter((c) => c.role === 'triage');
    expect(calls.map((c) => [c.status, c.error])).toEqual([
      [200, undefined],
      [0, 'aborted'],
    ]);
    expect(hydraflowComments(world, issue.number).filter((c) => c.body.includes(PROGRESS_MARKER))).toEqual(progress);
    const decoded = decodeStateBlock(progress[0]!.body, { key: world.stateKey, issue: issue.number });
    expect(decoded.status === 'valid' && decoded.state.ledger.filter((e) => e.phase === 'triage')).toHaveLength(1);
    // the first delivery went on into planning; the redelivery changed nothing
    expect(world.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
    expect(world.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['implement']);
    expectNoViolations(world.gh);
  });
});

describe('an issue opened by someone outside the repository (config outsider_issues)', () => {
  async function outsiderWorld(config?: string) {
    world = await createWorld({
      script: { triage: { json: clearVerdict }, ...planScript },
      ...(config ? { config } : {}),
    });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    world.gh.addUser({ login: 'mallory', permission: 'read' }); // author_association CONTRIBUTOR, permission read
    const issue = world.gh.world.issue({
      title: 'Paginate GET /users',
      body: 'Return 50 per page.',
      author: 'mallory',
    });
    return { w: world, issue };
  }
  const progressOf = (w: World, n: number) => hydraflowComments(w, n).find((c) => c.body.includes(PROGRESS_MARKER))!;

  it('is triaged, then waits: nothing planned or dispatched, no lock left; a maintainer’s /retry plans it', async () => {
    const { w, issue } = await outsiderWorld();
    const run = await w.run('issues', 'opened', { issue: issue.number });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.phases).toBe('triage');
    expect(w.models.calls.map((c) => c.role)).toEqual(['triage']);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-plan']);
    expect(w.gh.world.dispatches).toEqual([]);
    expect(w.gh.world.reactionsFor({ type: 'issue', number: issue.number })).toEqual([]);
    const waiting = progressOf(w, issue.number).body;
    expect(waiting).toContain(
      'Planning waits for a maintainer: `mallory` does not have write access to this repository',
    );
    expect(waiting).toContain('Someone with write access comments `/retry`');
    const decoded = decodeStateBlock(waiting, { key: w.stateKey, issue: issue.number });
    expect(decoded.status === 'valid' && [decoded.state.triage?.route, decoded.state.claim]).toEqual([
      'plan',
      undefined,
    ]);

    // The outsider cannot send it on; a maintainer can.
    const own = w.gh.world.comment(issue.number, { author: 'mallory', body: '/retry' });
    await w.run('issue_comment', 'created', { issue: issue.number, comment: own.id });
    expect(w.models.calls.map((c) => c.role)).toEqual(['triage']);
    const retry = w.gh.world.comment(issue.number, { author: 'alice', body: '/retry' });
    const planned = await w.run('issue_comment', 'created', { issue: issue.number, comment: retry.id });
    expect(planned.exitCode, planned.stdout + planned.stderr).toBe(0);
    expect(w.models.calls.map((c) => c.role)).toEqual(['triage', 'plan', 'plan_review']);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
    expectNoViolations(w.gh);
  });

  // author_association is not access: MEMBER says nothing of this repository, COLLABORATOR includes read and triage
  for (const association of ['MEMBER', 'COLLABORATOR']) {
    it(`an author shown as ${association} but with read permission only is an outsider too`, async () => {
      const { w } = await outsiderWorld();
      w.gh.addUser({ login: 'mia', permission: 'read', association });
      const issue = w.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'mia' });
      const run = await w.run('issues', 'opened', { issue: issue.number });
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(w.models.calls.map((c) => c.role)).toEqual(['triage']);
      expect(progressOf(w, issue.number).body).toContain('Planning waits for a maintainer: `mia`');
    });
  }

  it('goes on like anyone’s with outsider_issues: go', async () => {
    const { w, issue } = await outsiderWorld('outsider_issues: go\n');
    const run = await w.run('issues', 'opened', { issue: issue.number });
    expect(run.outputs.phases).toBe('triage,plan');
    expect(w.models.calls.map((c) => c.role)).toEqual(['triage', 'plan', 'plan_review']);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
  });
});

describe('a re-run of a /triage that escalated again', () => {
  it('keeps hydraflow-hitl: a move from a stage to itself is no half-finished label swap', async () => {
    // pipeline property test (seed -1932684471): the re-run took hydraflow-hitl for a cut swap's old label and removed it
    world = await createWorld({ script: { triage: { json: { clarity_score: 'clear' } } } });
    const w = world;
    w.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = w.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'alice' });
    expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-hitl']);
    const command = w.gh.world.comment(issue.number, { author: 'alice', body: '/triage' });
    const first = await w.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '7200' },
    );
    const rerun = await w.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: command.id },
      { runId: '7200', runAttempt: 2 },
    );
    for (const r of [first, rerun]) expect(r.exitCode, r.stdout).toBe(0);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-hitl']);
  });
});
