/**
 * budgets.per_day through the built action (issue #17 item 10): the repository's daily budget and the per-author cap
 * are kept in HydraFlow's spend ledger on the branch hydraflow/spend, outside every issue's state; reaching one pauses
 * the issue with a note and the day's spend, the run ends green, and the daily schedule resumes it the next UTC day.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeDayLedger, decodeStateBlock, encodeDayLedger, type DayLedger } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, expectNoViolations, runAction, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Touches one helper.',
  reasons: ['Precise expected behaviour.'],
};

/** The triage step alone (as actions/triage runs it): the next phase is dispatched, not run here. */
const TRIAGE_STEP = { inputs: { phase: 'triage' } };
const SPEND_REF = 'refs/heads/hydraflow/spend';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** GitHub's clock, which the test moves to a new UTC day. */
function clockAt(iso: string) {
  const clock = { now: Date.parse(iso), read: () => clock.now };
  return clock;
}

async function budgetWorld(config: string, clock: { read: () => number }): Promise<World> {
  const w = await createWorld({ script: { triage: { json: clearVerdict }, ...planScript }, config, clock: clock.read });
  for (const login of ['alice', 'bob', 'mallory']) w.gh.addUser({ login, permission: 'write' });
  return w;
}

/** Issues of the same length, so each triage costs the same. */
function openIssue(w: World, n: number, author = 'alice') {
  return w.gh.world.issue({
    title: `Add helper number ${String(n).padStart(3, '0')}`,
    body: 'Add a small helper with tests; nothing else changes.',
    author,
  });
}

/** The day's ledger on the branch, as HydraFlow reads it (signature and parent checked). */
function ledger(w: World): DayLedger {
  const head = w.gh.world.refs.get(SPEND_REF);
  expect(head, 'the spend ledger branch exists').toBeDefined();
  const data = w.gh.world.gitData();
  const file = data.fileAt(head!, 'spend.json');
  const decoded = decodeDayLedger(file!.text, {
    key: w.stateKey,
    repository: 'acme/widgets',
    parent: data.commit(head!)!.parents[0] ?? null,
  });
  if (decoded.status !== 'valid') throw new Error(decoded.detail);
  return decoded.ledger;
}

function progress(w: World, issue: number): string {
  return w.gh.world.commentsOn(issue).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:state'))!.body;
}

const triageCalls = (w: World) => w.models.calls.filter((c) => c.role === 'triage');

const pipelineLabels = (w: World, issue: number) =>
  w.gh.world.issues.get(issue)!.labels.filter((l) => l.startsWith('hydraflow-'));

/** A writer's own commit on top of the ledger branch (what anyone with write access can push). */
async function pushToLedger(w: World, login: string, text: string): Promise<void> {
  const token = w.gh.addUser({ login, permission: 'write' }).token;
  const api = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${w.gh.url}/repos/acme/widgets${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return (await res.json()) as { sha: string };
  };
  const head = w.gh.world.refs.get(SPEND_REF)!;
  const tree = await api('POST', '/git/trees', {
    base_tree: w.gh.world.gitData().commit(head)!.tree,
    tree: [{ path: 'spend.json', mode: '100644', type: 'blob', content: text }],
  });
  const commit = await api('POST', '/git/commits', { message: 'tidy', tree: tree.sha, parents: [head] });
  await api('PATCH', `/git/refs/heads/hydraflow/spend`, { sha: commit.sha });
}

/** A reservation as HydraFlow's routing job writes one for a coding agent (signed, on top of the branch's head). */
async function reserveOnLedger(w: World, reservation: DayLedger['reserved'][number]): Promise<void> {
  const head = w.gh.world.refs.get(SPEND_REF)!;
  const next = { ...ledger(w), parent: head, reserved: [...ledger(w).reserved, reservation] };
  await pushToLedger(w, 'hydraflow-stand-in', encodeDayLedger(next, { key: w.stateKey }));
}

/** The daily budget: three triages fit (each ~$0.0023, estimated at ~$0.0155 before the call), a fourth does not. */
const DAILY = 'budgets:\n  per_day:\n    usd: 0.021\n';

describe('budgets.per_day: the repository’s daily budget', () => {
  it('five issues in one day: the one over the line pauses with the day’s spend, none after it calls a model, and the runs end green', async () => {
    const clock = clockAt('2026-11-20T09:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const issues = [1, 2, 3, 4, 5].map((n) => openIssue(world!, n));
    const requests: string[][] = [];
    for (const issue of issues) {
      const before = world.gh.requests.length;
      const run = await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      requests.push(world.gh.requests.slice(before).map((r) => `${r.method} ${r.operationId ?? r.path}`));
    }
    // What a daily limit costs a triage once the branch exists: the six requests of a triage without one (issue #2's
    // run; the first also labels and creates the branch; its comments are read over GraphQL, ADR 0007), plus one
    // GraphQL read and one write of the ledger.
    expect(requests[1]!.filter((r) => r.includes('graphql')).sort()).toEqual([
      'POST graphql/mutation createCommitOnBranch',
      'POST graphql/query repository',
      'POST graphql/query repository',
    ]);
    expect(requests[1]!.filter((r) => !r.includes('graphql'))).toHaveLength(5);
    // a paused issue: the lock, its comments, the author's permission (asked while the model would read), the ledger
    // read, the progress comment, the lock released, the ledger written
    expect(requests[3]).toHaveLength(7);
    const [a, b, c, d, e] = issues.map((i) => i.number) as [number, number, number, number, number];
    expect(triageCalls(world)).toHaveLength(3);
    for (const n of [a, b, c]) expect(pipelineLabels(world, n)).toEqual(['hydraflow-plan']);
    for (const n of [d, e]) {
      // the issue keeps its stage (none yet): it waits, it did not fail
      expect(pipelineLabels(world, n)).toEqual([]);
      const note = progress(world, n);
      expect(note).toContain('Paused: the repository’s daily budget is spent');
      expect(note).toContain('the daily budget of $0.02 for 2026-11-20 (UTC) would be exceeded');
      expect(note).toContain('after 00:00 UTC');
      // the day's spend: the total, per issue, per phase
      expect(note).toMatch(
        /The repository's spend on 2026-11-20 \(UTC\)\*\*: \$0\.00\d+ of \$0\.02 in 3 model calls on 3 issue\(s\)/,
      );
      for (const n2 of [a, b, c]) expect(note).toContain(`| #${n2} | $0.00`);
      expect(note).toMatch(/\| triage \| \$0\.00\d+ \|/);
      expect(world.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.content === 'eyes')).toEqual([]);
    }
    const day = ledger(world);
    expect(day.day).toBe('2026-11-20');
    expect(day.spent.map((s) => s.issue).sort()).toEqual([a, b, c].sort());
    expect(day.spent.reduce((n, s) => n + s.usd, 0)).toBeLessThanOrEqual(0.021);
    expect(day.paused.map((p) => [p.issue, p.phase, p.reason])).toEqual([
      [d, 'triage', 'day'],
      [e, 'triage', 'day'],
    ]);
    expect(world.gh.world.dispatches.map((x) => x.inputs.issue)).toEqual([a, b, c].map(String));
    expectNoViolations(world.gh);
  });

  it('a reset or rejected issue state does not reset the day: the ledger lives outside it', async () => {
    const clock = clockAt('2026-11-20T09:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const issues = [1, 2, 3].map((n) => openIssue(world!, n));
    for (const issue of issues) await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(3);
    const first = issues[0]!.number;

    // A writer edits HydraFlow's progress comment on the first issue (its ledger zeroed): the state is rejected...
    const comment = world.gh.world.commentsOn(first).find((c) => c.body.includes('hydraflow:state'))!;
    comment.body = comment.body.replace(/"costUsd":[0-9.e-]+/g, '"costUsd":0');
    expect(decodeStateBlock(comment.body, { key: world.stateKey, issue: first }).status).toBe('rejected');
    // ...the next run says so and holds the issue for a human (ADR 0007)...
    const report = world.gh.world.comment(first, { author: 'bob', body: '/triage' });
    const held = await world.run('issue_comment', 'created', { issue: first, comment: report.id, sender: 'bob' });
    expect(held.exitCode, held.stdout + held.stderr).toBe(0);
    expect(progress(world, first)).toContain('HydraFlow cannot trust its state on this issue');
    // ...and a maintainer asks for a fresh triage: the issue starts over from an empty state, but not the day.
    const restart = world.gh.world.comment(first, { author: 'bob', body: '/triage' });
    const again = await world.run('issue_comment', 'created', { issue: first, comment: restart.id, sender: 'bob' });
    expect(again.exitCode, again.stdout + again.stderr).toBe(0);
    expect(triageCalls(world)).toHaveLength(3);
    expect(progress(world, first)).toContain('Paused: the repository’s daily budget is spent');
    expect(ledger(world).paused.map((p) => p.issue)).toEqual([first]);

    // A brand-new issue that day meets the same ledger.
    const fresh = openIssue(world, 9);
    await world.run('issues', 'opened', { issue: fresh.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(3);
    expect(progress(world, fresh.number)).toContain('Paused: the repository’s daily budget is spent');
  });

  it('a ledger a writer changed (edited, or an older one pasted back) stops spending for the rest of the day, and says so', async () => {
    const clock = clockAt('2026-11-20T09:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const one = openIssue(world, 1);
    await world.run('issues', 'opened', { issue: one.number }, TRIAGE_STEP);
    const head = world.gh.world.refs.get(SPEND_REF)!;
    const genuine = world.gh.world.gitData().fileAt(head, 'spend.json')!.text;
    const two = openIssue(world, 2);
    await world.run('issues', 'opened', { issue: two.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(2);

    // mallory pastes back the genuine, signed ledger of an hour ago: one issue's spend instead of two
    await pushToLedger(world, 'mallory', genuine);
    const three = openIssue(world, 3);
    const run = await world.run('issues', 'opened', { issue: three.number }, TRIAGE_STEP);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(triageCalls(world)).toHaveLength(2);
    const note = progress(world, three.number);
    expect(note).toContain('Paused: HydraFlow cannot trust its spend ledger today');
    expect(note).toContain('holds a commit HydraFlow did not make');
    // HydraFlow wrote a ledger of its own on top: the day stays closed for every run, whoever reads it
    expect(ledger(world).closed).toContain('did not make');

    // an edit of the file (a lower total, re-signed by nobody) is refused the same way the next day? no: the next day
    // starts afresh on top of HydraFlow's own commit
    clock.now = Date.parse('2026-11-21T00:10:00Z');
    const four = openIssue(world, 4);
    await world.run('issues', 'opened', { issue: four.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(3);
    expect(pipelineLabels(world, four.number)).toEqual(['hydraflow-plan']);

    await pushToLedger(world, 'mallory', genuine.replace(/"usd": [0-9.]+/g, '"usd": 0'));
    const five = openIssue(world, 5);
    await world.run('issues', 'opened', { issue: five.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(3);
    expect(progress(world, five.number)).toContain('the ledger signature does not verify');
  });
});

describe('budgets.per_day: what is reserved for coding agents', () => {
  it('a reservation its run never settled (cancelled, runner lost) stops counting at its time; one still in time counts', async () => {
    const clock = clockAt('2026-11-20T09:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const one = openIssue(world, 1);
    await world.run('issues', 'opened', { issue: one.number }, TRIAGE_STEP);
    // issue 7's run reserved nearly the whole day for its agent at 07:30, until 08:50; no publish job ever settled it
    await reserveOnLedger(world, { issue: 7, run: '4242', usd: 0.018, until: '2026-11-20T08:50:00.000Z' });
    const two = openIssue(world, 2);
    const run = await world.run('issues', 'opened', { issue: two.number }, TRIAGE_STEP);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(triageCalls(world)).toHaveLength(2);
    expect(pipelineLabels(world, two.number)).toEqual(['hydraflow-plan']);
    // HydraFlow's next write of the day drops it
    expect(ledger(world).reserved).toEqual([]);

    // issue 8's agent, reserved at 08:45 until 10:05, may still be running: what it may spend is not the day's to give
    await reserveOnLedger(world, { issue: 8, run: '4343', usd: 0.018, until: '2026-11-20T10:05:00.000Z' });
    const three = openIssue(world, 3);
    await world.run('issues', 'opened', { issue: three.number }, TRIAGE_STEP);
    expect(triageCalls(world)).toHaveLength(2);
    expect(progress(world, three.number)).toContain('Paused: the repository’s daily budget is spent');
    expect(progress(world, three.number)).toContain('reserved for coding agents still running (#8)');
    expect(ledger(world).reserved.map((r) => r.issue)).toEqual([8]);
  });
});

describe('budgets.per_day.issues_per_author', () => {
  it('an author’s issue beyond the cap pauses with a note; other authors go on', async () => {
    const clock = clockAt('2026-11-20T09:00:00Z');
    world = await budgetWorld('budgets:\n  per_day:\n    issues_per_author: 2\n', clock);
    const mine = [1, 2, 3].map((n) => openIssue(world!, n, 'alice'));
    const theirs = openIssue(world, 4, 'bob');
    for (const issue of [...mine, theirs]) {
      const run = await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    }
    expect(triageCalls(world)).toHaveLength(3);
    const third = mine[2]!.number;
    expect(pipelineLabels(world, third)).toEqual([]);
    const note = progress(world, third);
    expect(note).toContain('Paused: its author’s issues for today have been started');
    expect(note).toContain(
      `alice has had 2 issues started on 2026-11-20 (UTC) already (#${mine[0]!.number}, #${mine[1]!.number}), the most budgets.per_day.issues_per_author allows (2)`,
    );
    expect(pipelineLabels(world, theirs.number)).toEqual(['hydraflow-plan']);
    expect(ledger(world).started.map((s) => [s.issue, s.author])).toEqual([
      [mine[0]!.number, 'alice'],
      [mine[1]!.number, 'alice'],
      [theirs.number, 'bob'],
    ]);
  });
});

describe('the next UTC day', () => {
  it('the daily schedule resumes the paused issues: the dispatched triage runs on the new day’s budget', async () => {
    const clock = clockAt('2026-11-20T22:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const issues = [1, 2, 3, 4].map((n) => openIssue(world!, n));
    for (const issue of issues) await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    const paused = issues[3]!.number;
    expect(triageCalls(world)).toHaveLength(3);
    const dispatchesBefore = world.gh.world.dispatches.length;

    // The same day, the schedule finds nothing due (the pause is today's).
    const schedule = () =>
      runAction({
        gh: world!.gh,
        event: 'schedule',
        payload: {
          schedule: '7 0 * * *',
          workflow: '.github/workflows/hydraflow.yml',
          repository: { full_name: 'acme/widgets' },
        },
        config: DAILY,
        inputs: world!.inputs(),
      });
    const early = await schedule();
    expect(early.exitCode, early.stdout + early.stderr).toBe(0);
    expect(early.summary).toContain('no paused issue is due to resume');
    expect(world.gh.world.dispatches).toHaveLength(dispatchesBefore);

    clock.now = Date.parse('2026-11-21T00:07:00Z');
    const sweep = await schedule();
    expect(sweep.exitCode, sweep.stdout + sweep.stderr).toBe(0);
    expect(sweep.summary).toContain(`resumed 1 paused issue(s): #${paused} (triage)`);
    expect(world.gh.world.dispatches.slice(dispatchesBefore).map((x) => x.inputs)).toEqual([
      { issue: String(paused), phase: 'triage', actor: BOT_LOGIN },
    ]);
    expect(ledger(world).paused).toEqual([]);
    const resumed = await world.runDispatch();
    expect(resumed.exitCode, resumed.stdout + resumed.stderr).toBe(0);
    expect(triageCalls(world)).toHaveLength(4);
    expect(pipelineLabels(world, paused)).toEqual(['hydraflow-plan']);
    const day = ledger(world);
    expect(day.day).toBe('2026-11-21');
    expect(day.spent.map((s) => s.issue)).toEqual([paused]);
    expectNoViolations(world.gh);
  });

  it('a resumed issue a human moved meanwhile stays where the human put it', async () => {
    const clock = clockAt('2026-11-20T22:00:00Z');
    world = await budgetWorld(DAILY, clock);
    const issues = [1, 2, 3, 4].map((n) => openIssue(world!, n));
    for (const issue of issues) await world.run('issues', 'opened', { issue: issue.number }, TRIAGE_STEP);
    const paused = issues[3]!.number;
    // a maintainer sends it to a human before the night is over
    world.gh.world.label('hydraflow-hitl');
    world.gh.world.issues.get(paused)!.labels.push('hydraflow-hitl');
    clock.now = Date.parse('2026-11-21T00:07:00Z');
    await runAction({
      gh: world.gh,
      event: 'schedule',
      payload: { schedule: '7 0 * * *', repository: { full_name: 'acme/widgets' } },
      config: DAILY,
      inputs: world.inputs(),
    });
    const resumed = await world.runDispatch();
    expect(resumed.exitCode, resumed.stdout + resumed.stderr).toBe(0);
    expect(triageCalls(world)).toHaveLength(3);
    expect(pipelineLabels(world, paused)).toEqual(['hydraflow-hitl']);
  });
});
