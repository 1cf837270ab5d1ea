/**
 * Humans steer by labels and commands; the suite's own writes never start work; config mistakes are reported with the
 * key and the value. Each through the built dist on real webhook payloads.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock } from '@hydraflow/core';
import { BOT_LOGIN, createSampleRepo, createWorld, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';
import { discoverScript } from './support/briefs';

const vague = {
  clarity_score: 3,
  complexity_score: 6,
  needs_discovery: true,
  enrichment: 'Needs a direction.',
  reasons: ['No success criterion.'],
};
/** Triage routes the vague issue to discovery, which goes on in the same run: the brief, then hydraflow-shape. */
const vagueScript = { triage: { json: vague }, ...discoverScript };

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const bodiesOf = (w: World, n: number) =>
  w.gh.world
    .commentsOn(n)
    .filter((c) => c.user === BOT_LOGIN)
    .map((c) => c.body)
    .join('\n');
const progress = (w: World, n: number) =>
  w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))!;
const stateOf = (w: World, n: number) => {
  const decoded = decodeStateBlock(progress(w, n).body, { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};

async function triaged(w: World) {
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({
    title: 'Better onboarding',
    body: 'Users get lost.',
    author: 'lee',
    labels: ['ux'],
  });
  expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
  expect(labelsOf(w, issue.number)).toEqual(['hydraflow-shape', 'ux']);
  return issue;
}

/** A human edits labels on GitHub, which then delivers the labeled/unlabeled event. */
function humanLabels(w: World, issue: number, add: string[], remove: string[]) {
  const labels = w.gh.world.issues.get(issue)!.labels;
  for (const l of remove) labels.splice(labels.indexOf(l), 1);
  for (const l of add) {
    w.gh.world.label(l);
    labels.push(l);
  }
}

describe('human overrides by label (ADR-0002)', () => {
  it('a human moving the issue to another stage wins; the old stage label goes, other labels stay', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    humanLabels(world, issue.number, ['hydraflow-plan'], []);
    const run = await world.run('issues', 'labeled', { issue: issue.number, label: 'hydraflow-plan', sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.decision).toBe('override');
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-plan', 'ux']);
    const state = stateOf(world, issue.number);
    expect(state.stage).toBe('plan');
    expect(state.history.at(-1)).toMatchObject({ from: 'shape', to: 'plan', by: 'human', actor: 'lee' });
    expect(progress(world, issue.number).body).toContain('Moved to plan by lee');
  });

  it('hydraflow-find set by a human triages the issue again', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    humanLabels(world, issue.number, ['hydraflow-find'], ['hydraflow-shape']);
    const run = await world.run('issues', 'labeled', { issue: issue.number, label: 'hydraflow-find', sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(
      world.models.calls.filter((c) => c.role === 'triage'),
      run.stdout,
    ).toHaveLength(2);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape', 'ux']);
  });

  it('removing the pipeline label takes the issue out of the pipeline', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    humanLabels(world, issue.number, [], ['hydraflow-shape']);
    const run = await world.run('issues', 'unlabeled', {
      issue: issue.number,
      label: 'hydraflow-shape',
      sender: 'lee',
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['ux']);
    expect(stateOf(world, issue.number).stage ?? null).toBeNull();
  });

  it('closing an issue strips its stage label', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    world.gh.world.issues.get(issue.number)!.state = 'closed';
    const run = await world.run('issues', 'closed', { issue: issue.number, sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['ux']);
    expect(progress(world, issue.number).body).toContain('Issue closed by lee');
  });
});

describe('commands and chains', () => {
  it('/retry resumes triage after an escalation', async () => {
    world = await createWorld({
      script: { triage: [{ fault: 'junk' }, { fault: 'junk' }, { json: vague }], ...discoverScript },
    });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Better onboarding', body: 'Users get lost.', author: 'lee' });
    await world.run('issues', 'opened', { issue: issue.number });
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    const retry = world.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const run = await world.run('issue_comment', 'created', { issue: issue.number, comment: retry.id });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape']);
    expect(stateOf(world, issue.number).lastError).toBeUndefined();
  });

  it('/retry on an issue at hydraflow-ready starts the implement phase: the coding agent gets its task', async () => {
    // property test tests/property/pipeline-histories: "/retry starts the ready phase, which this version does not
    // include yet"
    const clear = { ...vague, clarity_score: 9, needs_discovery: false, enrichment: 'Clear.' };
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    const w = world;
    w.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = w.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'lee' });
    expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-ready']); // implement was dispatched (this job has no checkout)
    // the job of the /retry checks the repository out, as the template's routing job does
    const dir = mkdtempSync(join(tmpdir(), 'hydraflow-retry-'));
    const sample = createSampleRepo(join(dir, 'sample'));
    mkdirSync(join(dir, 'server/acme'), { recursive: true });
    symlinkSync(sample.bareRepo, join(dir, 'server/acme/widgets.git'));
    const retry = w.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const run = await w.run(
      'issue_comment',
      'created',
      { issue: issue.number, comment: retry.id },
      { workspace: sample.clone(join(dir, 'workspace')), env: { GITHUB_SERVER_URL: `file://${join(dir, 'server')}` } },
    );
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.agent, run.stdout).toBe('implement');
    expect(bodiesOf(w, issue.number)).not.toMatch(/does not include/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('/triage of an unchanged planned issue keeps its plan; after an edit, it plans anew, in the same run', async () => {
    const clear = { ...vague, clarity_score: 9, needs_discovery: false, enrichment: 'Clear.' };
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Export users', body: 'Add a CSV export.', author: 'lee' });
    expect((await world.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
    const planned = stateOf(world, issue.number).plan!;
    const retriage = async () => {
      const command = world!.gh.world.comment(issue.number, { author: 'lee', body: '/triage' });
      const run = await world!.run('issue_comment', 'created', { issue: issue.number, comment: command.id });
      expect(run.exitCode, run.stdout).toBe(0);
      return run;
    };
    // This world's job has no checkout, so each time implement is dispatched and holds the 👀 until it starts.
    const waitsForImplement = () => {
      const claim = stateOf(world!, issue.number).claim;
      return [claim?.runId.startsWith('handoff:'), claim?.phase, world!.gh.world.dispatches.at(-1)?.inputs.phase];
    };
    expect(waitsForImplement()).toEqual([true, 'implement', 'implement']);

    // Unchanged: triage routes to planning again; the plan accepted for this very text stands, without a model call.
    const again = await retriage();
    expect(again.outputs.phases).toBe('triage,plan');
    expect(world.models.calls.filter((c) => c.role === 'plan')).toHaveLength(1);
    expect(progress(world, issue.number).body).toContain('The accepted plan stands');
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
    expect(waitsForImplement()).toEqual([true, 'implement', 'implement']);

    // Edited: the plan answered another text, so it is drafted and reviewed anew, in place of the old one.
    world.gh.world.issues.get(issue.number)!.body = 'Add a CSV export, and a JSON one.';
    await retriage();
    expect(world.models.calls.filter((c) => c.role === 'plan')).toHaveLength(2);
    const replanned = stateOf(world, issue.number).plan!;
    expect([replanned.status, replanned.commentId]).toEqual(['accepted', planned.commentId]);
    expect(replanned.issueHash).not.toBe(planned.issueHash);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-ready']);
    expect(waitsForImplement()).toEqual([true, 'implement', 'implement']);
  });

  it('a command is done once per comment: redeliveries of /triage call no model and dispatch nothing', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    const command = world.gh.world.comment(issue.number, { author: 'lee', body: '/triage' });
    const first = await world.run('issue_comment', 'created', { issue: issue.number, comment: command.id });
    expect(first.exitCode, first.stdout).toBe(0);
    const calls = world.models.calls.length;
    const dispatches = world.gh.world.dispatches.length;
    const lock = world.gh.world.reactionsFor({ type: 'issue', number: issue.number }).map((r) => r.id);
    expect(calls).toBe(4); // triage and discovery, twice: the issue's opening, then /triage
    const redelivered = await world.run('issue_comment', 'created', { issue: issue.number, comment: command.id });
    const again = await world.run('issue_comment', 'created', { issue: issue.number, comment: command.id });
    for (const r of [redelivered, again]) expect(r.exitCode, r.stdout).toBe(0);
    expect(world.models.calls).toHaveLength(calls);
    expect(world.gh.world.dispatches).toHaveLength(dispatches);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape', 'ux']);
    // the lock the first run handed to the next phase is left as it was
    expect(world.gh.world.reactionsFor({ type: 'issue', number: issue.number }).map((r) => r.id)).toEqual(lock);
  });

  it('an issue a human labelled hydraflow-epic without phase sub-issues is not closed as done by /retry', async () => {
    // property test tests/property/pipeline-histories: "all 0 phases are done" closed it as completed
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world);
    humanLabels(world, issue.number, ['hydraflow-epic'], []);
    const moved = await world.run('issues', 'labeled', { issue: issue.number, label: 'hydraflow-epic', sender: 'lee' });
    expect(moved.exitCode, moved.stdout).toBe(0);
    world.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const retry = await world.run('issue_comment', 'created', { issue: issue.number });
    expect(retry.exitCode, retry.stdout).toBe(0);
    expect(world.gh.world.issues.get(issue.number)!.state).toBe('open');
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl', 'ux']);
    expect(progress(world, issue.number).body).toMatch(/no phase sub-issues/);
  });

  it('/help answers with the command list, once', async () => {
    world = await createWorld({ script: {} });
    world.gh.addUser({ login: 'lee', permission: 'read' });
    const issue = world.gh.world.issue({ title: 'Question', body: 'How?', author: 'lee' });
    const help = world.gh.world.comment(issue.number, { author: 'lee', body: '/help' });
    await world.run('issue_comment', 'created', { issue: issue.number, comment: help.id });
    await world.run('issue_comment', 'created', { issue: issue.number, comment: help.id });
    const replies = world.gh.world.commentsOn(issue.number).filter((c) => c.user === BOT_LOGIN);
    expect(replies).toHaveLength(1);
    for (const name of ['/triage', '/retry', '/groom', '/ship-it', '/help']) expect(replies[0]!.body).toContain(name);
  });

  it('the shape phase discovery dispatches posts its directions and keeps the other labels', async () => {
    world = await createWorld({ script: vagueScript });
    const issue = await triaged(world); // triage, then discovery in the same run: the brief, then hydraflow-shape
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ phase: 'shape', issue: String(issue.number) });
    const next = await world.runDispatch();
    expect(next.exitCode, next.stdout).toBe(0);
    expect(next.outputs.decision).toBe('shape');
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape', 'ux']);
    expect(progress(world, issue.number).body).toContain('product directions posted');
    expect(world.gh.world.reactionsFor({ type: 'issue', number: issue.number })).toHaveLength(0);
  });
});

describe('state across comment pages', () => {
  it('finds its state comment behind 150 human comments and updates it in place', async () => {
    world = await createWorld({ script: vagueScript });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Busy thread', body: 'Users get lost.', author: 'lee' });
    for (let i = 0; i < 120; i++) world.gh.world.comment(issue.number, { author: 'lee', body: `before ${i}` });
    expect((await world.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    for (let i = 0; i < 150; i++) world.gh.world.comment(issue.number, { author: 'lee', body: `after ${i}` });
    const relabel = await world.run('issues', 'labeled', {
      issue: issue.number,
      label: 'hydraflow-shape',
      sender: 'lee',
    });
    expect(relabel.exitCode, relabel.stdout).toBe(0);
    const comments = world.gh.world.commentsOn(issue.number).filter((c) => c.user === BOT_LOGIN);
    expect(comments.filter((c) => c.body.includes('hydraflow:progress'))).toHaveLength(1);
    expect(comments).toHaveLength(2); // the progress comment and the discovery brief
    expect(stateOf(world, issue.number).history.at(-1)).toMatchObject({ by: 'human', actor: 'lee' });
  });
});

describe('guards', () => {
  it('the suite’s own writes never start work', async () => {
    world = await createWorld({ script: {} });
    const issue = world.gh.world.issue({ title: 'Made by HydraFlow', body: 'x', author: BOT_LOGIN });
    const run = await world.run('issues', 'opened', { issue: issue.number, sender: BOT_LOGIN });
    expect(run.exitCode).toBe(0);
    expect(run.outputs.decision).toBe('skip');
    expect(world.gh.requests).toHaveLength(0);
    expect(world.models.calls).toHaveLength(0);
  });

  it('a budget that the next call would exceed stops work before the call, visibly', async () => {
    world = await createWorld({ script: vagueScript });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Anything', body: 'x'.repeat(4000), author: 'lee' });
    const run = await world.run(
      'issues',
      'opened',
      { issue: issue.number },
      { env: { HYDRAFLOW_BUDGET_RUN_USD: '0.0001' } },
    );
    expect(run.exitCode).toBe(1);
    expect(world.models.calls).toHaveLength(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(world, issue.number).body).toContain('per-run budget of $0.00');
  });

  it('a malformed config fails the run with the key, the value and the expectation, and touches nothing', async () => {
    world = await createWorld({ script: {}, config: 'clarity_treshold: 5\nbudgets:\n  per_run:\n    usd: lots\n' });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Anything', body: 'x', author: 'lee' });
    const run = await world.run('issues', 'opened', { issue: issue.number });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('clarity_treshold');
    expect(run.stdout).toContain('did you mean "clarity_threshold"');
    expect(run.stdout).toMatch(/budgets\.per_run\.usd: expected .*got "lots"/);
    expect(world.gh.requests).toHaveLength(0);
  });
});
