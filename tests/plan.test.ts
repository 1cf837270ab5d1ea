import type { HydraflowConfig } from '@hydraflow/core';
/**
 * The plan phase in-process, through the real session, RestIssues and the model gateway, against the GitHub emulator
 * and the scripted model server (the router wiring comes later; this calls runPlan with a PhaseContext from openPhase).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchedApp } from './support/in-process';
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { PLAN_MARKER, planHash, readPlanComment, type Plan, type PlanReview } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, MODEL_API_KEY, type Script, type World } from '@hydraflow/testkit';
import { openPhase } from '../src/handlers/open-session';
import { runPlan } from '../src/phases/plan';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const plan: Plan = {
  summary: 'Add cursor pagination to GET /users.',
  goal: 'GET /users returns at most `limit` users and a `next` cursor.',
  approach: 'Parse limit and cursor in src/users/list.ts; query with id > cursor; return next.',
  files_to_touch: [
    { path: 'src/users/list.ts', action: 'modify', change: 'Accept limit/cursor and return next.' },
    { path: 'src/users/list.test.ts', action: 'create', change: 'Tests for the pages.' },
  ],
  test_plan: ['A first page of 2 has a next cursor', 'The last page has no cursor'],
  risks: [{ risk: 'Clients relying on the full list', mitigation: 'Default limit 1000' }],
  acceptance_criteria: ['limit caps the result', 'next is absent on the last page'],
};
const revised: Plan = { ...plan, summary: 'Add cursor pagination to GET /users, with tests of both pages.' };

const scores = (n: number): PlanReview['scores'] => ({
  correctness: n,
  completeness: n,
  scope: n,
  testability: n,
  risk_handling: n,
  conventions: n,
  clarity: n,
});
const good: PlanReview = { scores: scores(8), issues: [], verdict: 'accept' };
const weak: PlanReview = {
  scores: { ...scores(8), testability: 4 },
  issues: [{ dimension: 'testability', problem: 'No test of the last page.', fix: 'Add one.' }],
  verdict: 'revise',
};

/** A checked-out repository for the plan phase to read. */
function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'hydraflow-plan-'));
  mkdirSync(join(root, 'src/users'), { recursive: true });
  mkdirSync(join(root, 'node_modules/x'), { recursive: true });
  writeFileSync(join(root, 'README.md'), '# Widgets\n\nA users service.\n');
  writeFileSync(join(root, 'CONTRIBUTING.md'), 'Run `npm test`.\n');
  writeFileSync(join(root, 'src/users/list.ts'), 'export function listUsers() { return db.all(); }\n');
  writeFileSync(join(root, 'src/users/create.ts'), 'export function createUser() {}\n');
  writeFileSync(join(root, 'node_modules/x/users.js'), 'ignored');
  return root;
}

async function setup(script: Script, planConfig?: Partial<HydraflowConfig['plan']>) {
  world = await createWorld({ script });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({
    title: 'Paginate the users list',
    body: 'GET /users returns every user; add `limit` and a cursor.',
    author: 'lee',
    labels: ['hydraflow-plan'],
  });
  const app = dispatchedApp(w, { issue: issue.number, phase: 'plan', runId: '7001' });
  const root = workspace();
  /** `inline`: whether the step can go on with the next phase itself (the routing step) or must dispatch it. */
  const open = async (forced = false, inline = false) => {
    const fresh = await app.issues.getIssue(issue.number);
    const ctx = await openPhase(app, { issue: fresh, phase: 'plan', actor: 'lee', dispatched: false, forced });
    return {
      ...ctx,
      canContinueWith: () => inline,
      config: planConfig ? { ...ctx.config, plan: { ...ctx.config.plan, ...planConfig } } : ctx.config,
      workspace: root,
      issues: app.issues,
    };
  };
  expect(MODEL_API_KEY).toBeTruthy();
  return { w, issue, open, app };
}

const botComments = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const planComment = (w: World, n: number) => botComments(w, n).filter((c) => c.body.startsWith(PLAN_MARKER));

describe('runPlan', () => {
  it('revises a plan that falls short once, accepts the revision, posts one plan comment, moves to ready and dispatches implement', async () => {
    const { w, issue, open } = await setup({
      plan: [{ json: plan }, { json: revised }],
      plan_review: [{ json: weak }, { json: good }],
    });
    const outcome = await runPlan(await open());
    expect(outcome.stage, outcome.summary).toBe('ready');

    const calls = w.models.calls.map((c) => c.role);
    expect(calls).toEqual(['plan', 'plan_review', 'plan', 'plan_review']);
    // The planner read the repository: README, CONTRIBUTING, the tree (no node_modules) and the matching file.
    const first = w.models.calls[0]!.request!;
    expect(first.system).toContain('# Widgets');
    expect(first.system).toContain('Run `npm test`.');
    expect(first.system).toContain('src/users/create.ts');
    expect(first.system).toContain('export function listUsers()');
    expect(first.system).not.toContain('node_modules');
    // The revision saw the review's shortcomings.
    expect(w.models.calls[2]!.request!.messages[0]!.content).toContain('No test of the last page.');

    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
    const comments = planComment(w, issue.number);
    expect(comments).toHaveLength(1);
    const state = stateOf(w, issue.number);
    // The dispatch of implement is recorded with the hand-off; the run's entry sends it as its last act.
    expect(state.dispatches?.map((d) => [d.phase, d.runId, d.takenBy])).toEqual([['implement', '7001', undefined]]);
    expect(state.claim).toMatchObject({ runId: 'handoff:7001', phase: 'implement' });
    expect(state.plan).toMatchObject({
      status: 'accepted',
      commentId: comments[0]!.id,
      hash: planHash(revised),
      revisions: 1,
      mean: 8,
    });
    expect(readPlanComment(comments[0]!.body, state.plan!.hash)).toEqual(revised);
    // No plan text in the signed state.
    expect(JSON.stringify(state)).not.toContain('pagination');
    expect(state.ledger.map((e) => e.role)).toEqual(['plan', 'plan_review', 'plan', 'plan_review']);

    // A re-run after success does nothing.
    const again = await runPlan(await open());
    expect(again.summary).toContain('already planned');
    expect(w.models.calls).toHaveLength(4);
    expect(planComment(w, issue.number)).toHaveLength(1);
    expect(stateOf(w, issue.number).dispatches).toHaveLength(1);
  });

  it('a step that can run implement itself goes on with it: no dispatch, the lock kept and claimed for implement', async () => {
    const { w, issue, open } = await setup({ plan: { json: plan }, plan_review: { json: good } });
    const outcome = await runPlan(await open(false, true));
    expect(outcome).toMatchObject({ stage: 'ready', continueWith: 'implement' });
    expect(w.gh.world.dispatches).toEqual([]);
    const state = stateOf(w, issue.number);
    expect(state.claim).toMatchObject({ runId: '7001', phase: 'implement' });
    const eyes = w.gh.world.reactionsFor({ type: 'issue', number: issue.number });
    expect(eyes.map((r) => [r.user, r.content, r.id])).toEqual([[BOT_LOGIN, 'eyes', state.claim!.reaction]]);
    const progress = botComments(w, issue.number).find((c) => c.body.includes('hydraflow:progress'))!;
    expect(progress.body).toContain('Implementation starts now, in this run.');
  });

  it('a plan that never passes goes to a human after two revisions; the plan comment says why', async () => {
    const { w, issue, open } = await setup({ plan: { json: plan }, plan_review: { json: weak } });
    const outcome = await runPlan(await open());
    expect(outcome.stage).toBe('hitl');
    expect(w.models.calls.map((c) => c.role)).toEqual([
      'plan',
      'plan_review',
      'plan',
      'plan_review',
      'plan',
      'plan_review',
    ]);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-hitl']);
    expect(w.gh.world.dispatches).toHaveLength(0);
    const [comment] = planComment(w, issue.number);
    expect(comment!.body).toContain('not accepted: a human decides');
    expect(comment!.body).toContain('testability 4/10 is below 6');
    const state = stateOf(w, issue.number);
    expect(state.plan).toMatchObject({ status: 'rejected', revisions: 2 });
    expect(state.lastError?.message).toContain('testability 4/10 is below 6');

    // /retry (forced) plans again and updates the same comment in place.
    w.models.setScript({ plan: { json: revised }, plan_review: { json: good } });
    const retried = await runPlan(await open(true));
    expect(retried.stage).toBe('ready');
    const comments = planComment(w, issue.number);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.id).toBe(comment!.id);
    expect(readPlanComment(comments[0]!.body, planHash(revised))).toEqual(revised);
  });

  it('the thresholds come from config (plan.min_score, plan.max_revisions)', async () => {
    const { w, issue, open } = await setup(
      { plan: { json: plan }, plan_review: { json: { ...weak, verdict: 'accept' } } },
      { min_score: 4, max_revisions: 0 },
    );
    const outcome = await runPlan(await open());
    expect(outcome.stage).toBe('ready');
    expect(w.models.calls).toHaveLength(2);
    expect(stateOf(w, issue.number).plan?.revisions).toBe(0);
  });

  it('a file to modify that does not exist is caught by HydraFlow and sent back to the planner', async () => {
    const ghost: Plan = { ...plan, files_to_touch: [{ path: 'src/users/ghost.ts', action: 'modify', change: 'x' }] };
    const { w, issue, open } = await setup({ plan: [{ json: ghost }, { json: revised }], plan_review: { json: good } });
    const outcome = await runPlan(await open());
    expect(outcome.stage).toBe('ready');
    expect(w.models.calls[1]!.request!.messages[0]!.content).toContain(
      '"src/users/ghost.ts" is to be modified but does not exist',
    );
    expect(w.models.calls[2]!.request!.messages[0]!.content).toContain('HydraFlow check: "src/users/ghost.ts"');
    expect(stateOf(w, issue.number).plan?.revisions).toBe(1);
  });

  it('the first draft starts while the lock is taken; another run holding the issue cancels it, nothing is ledgered', async () => {
    const { w, issue, open, app } = await setup({
      plan: { json: plan, latencyMs: 1_500 },
      plan_review: { json: good },
    });
    await app.issues.reactToIssue(issue.number, 'eyes'); // another run's lock, taken a moment ago
    const outcome = await runPlan(await open());
    expect(outcome.summary).toMatch(/^skipped: issue #\d+ is being worked on/);
    // The draft went out before the lock was refused, and was cancelled rather than waited for and billed in full.
    await expect.poll(() => w.models.calls.map((c) => [c.role, c.status, c.error])).toEqual([['plan', 0, 'aborted']]);
    expect(planComment(w, issue.number)).toHaveLength(0);
    expect(botComments(w, issue.number)).toHaveLength(0);
  });

  it('an answer that does not parse goes to a human, never a guessed plan', async () => {
    const { w, issue, open } = await setup({ plan: { json: { summary: 'only this' } }, plan_review: { json: good } });
    const outcome = await runPlan(await open());
    expect(outcome.stage).toBe('hitl');
    expect(planComment(w, issue.number)).toHaveLength(0);
    expect(stateOf(w, issue.number).lastError?.message).toContain('did not parse');
  });
});
