/**
 * HydraFlow's state is what HydraFlow last wrote (issue #17, item 6 and item 13, bullets 3 and 4; ADR 0007), through
 * the built dist/ on real webhook payloads. A writer who edits HydraFlow's progress comment, pastes an older genuine
 * block back into it or deletes it cannot make HydraFlow obey that, nor count less spend: the issue stops at
 * hydraflow-hitl with one note, holds no lock, and a permitted human's /triage starts over with the spend kept. A
 * rotated key verifies old blocks through HYDRAFLOW_STATE_KEY_PREVIOUS, and the next write re-signs them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock, type IssueState } from '@hydraflow/core';
import { BOT_LOGIN, buildEvent, createWorld, runAction, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';

const clear = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Clear.',
  reasons: ['Says what and where.'],
};

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const botComments = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const progressOf = (w: World, n: number) => botComments(w, n).find((c) => c.body.includes('hydraflow:progress'))!;
const eyes = (w: World, n: number) =>
  w.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.content === 'eyes');
const spend = (s: IssueState) => s.ledger.reduce((a, e) => a + e.costUsd, 0);

function stateIn(body: string, issue: number, key: string): IssueState {
  const decoded = decodeStateBlock(body, { key, issue });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
}

/**
 * lee's clear issue, triaged and planned by its `opened` run; implement is dispatched and holds the 👀 until it starts
 * (this world's job has no checkout). mallory can write to the repository.
 */
async function readyIssue(options: { stateKey?: string; clock?: () => number } = {}) {
  world = await createWorld({ script: { triage: { json: clear }, ...planScript }, ...options });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  w.gh.addUser({ login: 'mallory', permission: 'write' });
  const issue = w.gh.world.issue({ title: 'Export users', body: 'Add a CSV export.', author: 'lee' });
  const opened = await w.run('issues', 'opened', { issue: issue.number });
  expect(opened.exitCode, opened.stdout).toBe(0);
  expect(labelsOf(w, issue.number)).toEqual(['hydraflow-ready']);
  expect(eyes(w, issue.number)).toHaveLength(1);
  const progress = progressOf(w, issue.number);
  // GitHub's timestamps are whole seconds: a 👀 taken in the second of a change counts as taken since it (a run beside
  // the one that changed it), and the run that finds the change waits for it. mallory's change comes a second later.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  return { w, n: issue.number, progress, newest: progress.body };
}

/** mallory changes HydraFlow's progress comment; GitHub delivers `issue_comment.edited` with the text before. */
function edit(w: World, n: number, id: number, body: string) {
  const from = w.gh.world.comments.get(id)!.body;
  w.gh.world.editComment(id, body, 'mallory');
  return () =>
    w.run('issue_comment', 'edited', { issue: n, comment: id, sender: 'mallory', changes: { body: { from } } });
}

async function command(w: World, n: number, text: string, author = 'lee') {
  const c = w.gh.world.comment(n, { author, body: text });
  const run = await w.run('issue_comment', 'created', { issue: n, comment: c.id });
  expect(run.exitCode, run.stdout).toBe(0);
  return run;
}

/** The issue is held for a human: one pipeline label (hitl), no 👀, no model called or phase dispatched since. */
function expectHeld(w: World, n: number, since: { calls: number; dispatches: number }) {
  expect(labelsOf(w, n)).toEqual(['hydraflow-hitl']);
  expect(eyes(w, n)).toEqual([]);
  expect(w.models.calls).toHaveLength(since.calls);
  expect(w.gh.world.dispatches).toHaveLength(since.dispatches);
}

describe('a human who edits HydraFlow’s progress comment (item 13, third bullet)', () => {
  it('is reported once, holds no lock, leaves one pipeline label, and a permitted /triage starts over', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const before = stateIn(newest, n, w.stateKey);
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    const edited = edit(w, n, progress.id, newest.replace(/"costUsd":[0-9.e-]+/, '"costUsd":0'));
    const run = await edited();
    expect(run.exitCode, run.stdout).toBe(0);
    expectHeld(w, n, since);
    const note = progressOf(w, n).body;
    expect(note).toMatch(/changed by `mallory`/);
    expect(note).toMatch(/\/triage/);
    const comments = botComments(w, n).length;

    // the implement run that was waiting for the lock: it does nothing and says nothing more
    const dispatched = await w.runDispatch();
    expect(dispatched.exitCode, dispatched.stdout).toBe(0);
    expectHeld(w, n, since);
    expect(progressOf(w, n).body).toBe(note);
    expect(botComments(w, n)).toHaveLength(comments);

    // a writer's /triage starts over, with the spend HydraFlow had counted (the text GitHub sent with the edit)
    await command(w, n, '/triage');
    expect(w.models.calls.filter((c) => c.role === 'triage')).toHaveLength(2);
    expect(labelsOf(w, n)).toEqual(['hydraflow-ready']);
    const after = stateIn(progressOf(w, n).body, n, w.stateKey);
    expect(spend(after)).toBeGreaterThan(spend(before));
    expect(after.incident).toMatchObject({ reason: 'bad-signature', by: 'mallory', restartedBy: 'lee' });
  });

  it('without the edit’s event, the next run finds it by itself (GitHub says who edited the comment last)', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    // an edit that keeps the block intact still is not HydraFlow's word: it may hide an older block (next test)
    edit(w, n, progress.id, newest.replace('**', '**Edited: '));
    const dispatched = await w.runDispatch();
    expect(dispatched.exitCode, dispatched.stdout).toBe(0);
    expectHeld(w, n, since);
    const note = progressOf(w, n).body;
    expect(note).toMatch(/changed by `mallory`/);
    // a reader's command changes nothing and says nothing
    w.gh.addUser({ login: 'rita', permission: 'read' });
    await command(w, n, '/retry', 'rita');
    expectHeld(w, n, since);
    expect(progressOf(w, n).body).toBe(note);
  });
});

describe('an older genuine block pasted back (item 13, fourth bullet; item 6)', () => {
  it('is refused as a rollback and reported; the spend is not rolled back', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const current = stateIn(newest, n, w.stateKey);
    const older = w.gh.world.comments.get(progress.id)!.revisions[0]!.body;
    expect(spend(stateIn(older, n, w.stateKey))).toBeLessThan(spend(current));
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };

    const run = await edit(w, n, progress.id, older)();
    expect(run.exitCode, run.stdout).toBe(0);
    expectHeld(w, n, since);
    const note = progressOf(w, n).body;
    expect(note).toMatch(/changed by `mallory`/);
    expect(note).toMatch(/older/);
    const held = stateIn(note, n, w.stateKey);
    expect(spend(held)).toBeCloseTo(spend(current), 9);
    expect(held.seq).toBeGreaterThan(current.seq);

    await command(w, n, '/triage');
    expect(labelsOf(w, n)).toEqual(['hydraflow-ready']);
    expect(spend(stateIn(progressOf(w, n).body, n, w.stateKey))).toBeGreaterThan(spend(current));
  });

  it('without the edit’s event: refused all the same, and the spend it could not verify is said to be missing', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const older = w.gh.world.comments.get(progress.id)!.revisions[0]!.body;
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    edit(w, n, progress.id, older);
    const dispatched = await w.runDispatch();
    expect(dispatched.exitCode, dispatched.stdout).toBe(0);
    expectHeld(w, n, since);
    const held = stateIn(progressOf(w, n).body, n, w.stateKey);
    expect(held.seq).toBeGreaterThan(stateIn(older, n, w.stateKey).seq);
    expect(held.incident).toMatchObject({ reason: 'edited', by: 'mallory' });
    expect(progressOf(w, n).body).toMatch(/at least/);
    expect(stateIn(newest, n, w.stateKey).seq).toBeGreaterThan(stateIn(older, n, w.stateKey).seq);
  });
});

describe('the comment’s text and its last editor come from one answer of GitHub’s', () => {
  it('an older block pasted back is refused though HydraFlow writes between a run’s reading of the two', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const older = w.gh.world.comments.get(progress.id)!.revisions[0]!.body;
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    const edited = edit(w, n, progress.id, older);
    // The dispatched implement run reads the issue; before GitHub tells it who edited the comment last, the run for
    // mallory's edit holds the issue and writes its note (HydraFlow is then the comment's last editor).
    let checked: Awaited<ReturnType<typeof edited>> | undefined;
    w.gh.faults.beforeNext({ methods: ['POST'], pathIncludes: '/graphql', bodyIncludes: 'editor' }, async () => {
      checked = await edited();
    });
    const dispatched = await w.runDispatch();
    expect(checked?.exitCode, checked?.stdout).toBe(0);
    expect(dispatched.exitCode, dispatched.stdout).toBe(0);
    expectHeld(w, n, since);
    const held = stateIn(progressOf(w, n).body, n, w.stateKey);
    expect(held.incident).toMatchObject({ reason: 'rollback', by: 'mallory' });
    expect(spend(held)).toBeCloseTo(spend(stateIn(newest, n, w.stateKey)), 9);
  });
});

describe('a re-run that stops on a held issue', () => {
  it('frees the 👀 its dead first attempt left (ADR 0007, ADR 0010)', async () => {
    // property test tests/property/pull-histories: a merge gate's run died after it put its 👀 on first (loadIssueAndComments
    // lockFirst) on an issue held after a rollback; its re-run stopped for the held issue and left that 👀 for ever
    const { w, n, progress, newest } = await readyIssue();
    const older = w.gh.world.comments.get(progress.id)!.revisions[0]!.body;
    expect(older).not.toBe(newest);
    expect((await edit(w, n, progress.id, older)()).exitCode).toBe(0);
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    expectHeld(w, n, since);
    const dispatch = w.gh.world.dispatches.length - 1;
    // the first attempt of the dispatched phase's run: its 👀, put on first, then it died
    w.gh.world.reactions.push({
      id: w.gh.world.nextId('reaction'),
      node_id: 'REA_dead',
      user: BOT_LOGIN,
      content: 'eyes',
      created_at: w.gh.world.now(),
      subject: { type: 'issue', number: n },
    });
    const rerun = await w.runDispatch(dispatch, { runId: '7700', runAttempt: 2 });
    expect(rerun.exitCode, rerun.stdout).toBe(0);
    expectHeld(w, n, since);
  });
});

describe('a run reads the state again once it holds the lock', () => {
  it('a run that wrote between another’s reading and its lock is not written over: the later run starts over', async () => {
    // a verdict that never parses: triage stops the issue at hydraflow-hitl and frees the lock
    world = await createWorld({ script: { triage: { text: 'No idea.' } } });
    const w = world;
    w.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = w.gh.world.issue({ title: 'Better onboarding', body: 'Users get lost.', author: 'lee' });
    const n = issue.number;
    // The issue's own run has read the state (none yet) and is about to take the lock when lee's /triage runs whole.
    let triaged: IssueState | undefined;
    w.gh.faults.beforeNext({ methods: ['POST'], pathIncludes: `/issues/${n}/reactions` }, async () => {
      await command(w, n, '/triage');
      triaged = stateIn(progressOf(w, n).body, n, w.stateKey);
    });
    const opened = await w.run('issues', 'opened', { issue: n });
    expect(opened.exitCode, opened.stdout).toBe(0);
    expect(triaged).toBeDefined();
    const progress = botComments(w, n).filter((c) => c.body.includes('hydraflow:progress'));
    expect(progress).toHaveLength(1);
    const state = stateIn(progress[0]!.body, n, w.stateKey);
    // what the /triage run wrote stands: its spend counted, its sequence number not gone back
    expect(spend(state)).toBeGreaterThanOrEqual(spend(triaged!));
    expect(state.seq).toBeGreaterThan(triaged!.seq);
    expect(state.handled).toEqual(triaged!.handled);
    expect(labelsOf(w, n)).toEqual(['hydraflow-hitl']);
    expect(eyes(w, n)).toEqual([]);
  });
});

describe('a deleted progress comment', () => {
  it('is recreated from the text GitHub sends with the deletion, and the issue waits for a human', async () => {
    const { w, n, progress, newest } = await readyIssue();
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    const payload = buildEvent(w.gh, 'issue_comment', 'deleted', { issue: n, comment: progress.id, sender: 'mallory' });
    w.gh.world.comments.delete(progress.id);
    const run = await runAction({ gh: w.gh, event: 'issue_comment', payload, inputs: w.inputs() });
    expect(run.exitCode, run.stdout).toBe(0);
    expectHeld(w, n, since);
    const recreated = progressOf(w, n);
    expect(recreated.body).toMatch(/deleted by `mallory`/);
    expect(spend(stateIn(recreated.body, n, w.stateKey))).toBeCloseTo(spend(stateIn(newest, n, w.stateKey)), 9);
  });
  it('whose block a writer had broken first is no new issue: held at once; the edit’s late event counts the spend', async () => {
    // the pipeline property test's fast-check seed -1055792285: the deletion's text did not verify, the issue was
    // taken for a new one, and the spend HydraFlow had counted was lost
    const { w, n, progress, newest } = await readyIssue();
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    w.gh.world.editComment(progress.id, newest.replace(/"costUsd":[0-9.e-]+/, '"costUsd":0'), 'mallory');
    const changes = { body: { from: newest } };
    const editPayload = buildEvent(w.gh, 'issue_comment', 'edited', {
      issue: n,
      comment: progress.id,
      sender: 'mallory',
      changes,
    });
    const payload = buildEvent(w.gh, 'issue_comment', 'deleted', { issue: n, comment: progress.id, sender: 'mallory' });
    w.gh.world.comments.delete(progress.id);
    const run = await runAction({ gh: w.gh, event: 'issue_comment', payload, inputs: w.inputs() });
    expect(run.exitCode, run.stdout).toBe(0);
    expectHeld(w, n, since);
    const recreated = progressOf(w, n);
    expect(recreated.body).toMatch(/deleted by `mallory`/);
    expect(spend(stateIn(recreated.body, n, w.stateKey))).toBe(0);

    // the edit's own event, delivered late, carries HydraFlow's newest block: its spend is counted
    const late = await runAction({ gh: w.gh, event: 'issue_comment', payload: editPayload, inputs: w.inputs() });
    expect(late.exitCode, late.stdout).toBe(0);
    expectHeld(w, n, since);
    expect(botComments(w, n).filter((c) => c.body.includes('hydraflow:progress'))).toHaveLength(1);
    expect(spend(stateIn(progressOf(w, n).body, n, w.stateKey))).toBeCloseTo(spend(stateIn(newest, n, w.stateKey)), 9);
  });

  it('whose block was broken first, both events late, after a run that took the issue for a new one: held, spend kept', async () => {
    // the pipeline property test's fast-check seed -1055792285 again: the edit's event found a comment written afresh
    // with a higher sequence number than its text's, trusted it, and the spend HydraFlow had counted was lost
    let shift = -31 * 60_000;
    const { w, n, progress, newest } = await readyIssue({ clock: () => Date.now() + shift });
    w.gh.world.editComment(progress.id, newest.replace(/"costUsd":[0-9.e-]+/, '"costUsd":0'), 'mallory');
    const changes = { body: { from: newest } };
    const editPayload = buildEvent(w.gh, 'issue_comment', 'edited', {
      issue: n,
      comment: progress.id,
      sender: 'mallory',
      changes,
    });
    const payload = buildEvent(w.gh, 'issue_comment', 'deleted', { issue: n, comment: progress.id, sender: 'mallory' });
    w.gh.world.comments.delete(progress.id);
    // half an hour later (the dispatched run never started: its 👀 may be taken over), lee's /triage finds no comment
    // and triages the issue as new, as far as anyone can tell without the events; HydraFlow wrote more since
    shift = 0;
    await command(w, n, '/triage');
    await command(w, n, '/triage');
    expect(stateIn(progressOf(w, n).body, n, w.stateKey).seq).toBeGreaterThanOrEqual(
      stateIn(newest, n, w.stateKey).seq,
    );
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };

    const late = await runAction({ gh: w.gh, event: 'issue_comment', payload: editPayload, inputs: w.inputs() });
    expect(late.exitCode, late.stdout).toBe(0);
    expectHeld(w, n, since);
    const note = progressOf(w, n).body;
    const kept = spend(stateIn(note, n, w.stateKey));
    expect(kept).toBeGreaterThanOrEqual(spend(stateIn(newest, n, w.stateKey)));

    // the deletion's event, later still: nothing more to say, nothing taken away
    const deleted = await runAction({ gh: w.gh, event: 'issue_comment', payload, inputs: w.inputs() });
    expect(deleted.exitCode, deleted.stdout).toBe(0);
    expectHeld(w, n, since);
    expect(progressOf(w, n).body).toBe(note);
  });
});

describe('key rotation (item 6)', () => {
  it('the previous key verifies old blocks, the next write re-signs with the new key, the ledger is kept', async () => {
    const { w, n, newest } = await readyIssue();
    const before = stateIn(newest, n, w.stateKey);
    const rotated = { 'state-key': 'the-new-state-key-0123456789', 'state-key-previous': w.stateKey };
    const c = w.gh.world.comment(n, { author: 'lee', body: '/triage' });
    const run = await w.run('issue_comment', 'created', { issue: n, comment: c.id }, { inputs: rotated });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(labelsOf(w, n)).toEqual(['hydraflow-ready']);
    const body = progressOf(w, n).body;
    expect(decodeStateBlock(body, { key: w.stateKey, issue: n }).status).toBe('rejected');
    const after = stateIn(body, n, rotated['state-key']);
    expect(spend(after)).toBeGreaterThan(spend(before));
    expect(after.incident).toBeUndefined();
  });

  it('a block signed with a key HydraFlow no longer holds is not obeyed: the issue waits for a human', async () => {
    const { w, n } = await readyIssue();
    const since = { calls: w.models.calls.length, dispatches: w.gh.world.dispatches.length };
    const run = await w.runDispatch(undefined, { inputs: { 'state-key': 'the-new-state-key-0123456789' } });
    expect(run.exitCode, run.stdout).toBe(0);
    expectHeld(w, n, since);
    expect(progressOf(w, n).body).toMatch(/HYDRAFLOW_STATE_KEY_PREVIOUS/);
  });
});
