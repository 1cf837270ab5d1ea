/**
 * The review phase in-process, through the real session, RestIssues/RestPulls and the model gateway, against the
 * GitHub emulator and the scripted model server (the router wiring comes later; this calls runReview directly).
 */
import { dispatchedApp } from './support/in-process';
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { findingKey, readReviewFindings, type Finding } from '@hydraflow/core';
import { createRestClient } from '@hydraflow/github';
import { BOT_LOGIN, createWorld, fakeSha, type Script, type World } from '@hydraflow/testkit';
import { RestPulls } from '../packages/github/src/rest-pulls';
import { openPhase } from '../src/handlers/open-session';
import { runReview } from '../src/phases/review';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** Lines 1-5 of the new file are in the diff (2 and 3 added); line 40 is not. */
const PATCH_V1 = '@@ -1,4 +1,5 @@\n import x\n-const a = 1;\n+const a = input;\n+use(a.value);\n export {}\n more';
/** The next push: the same code moved down two lines (lines 3-7 in the diff). */
const PATCH_V2 =
  '@@ -1,4 +1,7 @@\n import x\n+// guard\n+\n-const a = 1;\n+const a = input;\n+use(a.value);\n export {}\n more';

function finding(over: Partial<Finding> = {}): Finding {
  return {
    severity: 'critical',
    path: 'src/a.ts',
    line: 3,
    title: 'Null dereference of input',
    recommendation: 'Check `input` for null before reading `.value`.',
    needs_human_decision: false,
    ...over,
  };
}
const verdict = (findings: Finding[], summary = 'Reviewed.') => ({ json: { summary, findings } });

async function setup(script: Script, reviewConfig: Record<string, number> = {}) {
  world = await createWorld({ script });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({
    title: 'Use the input',
    body: 'Read a from input.',
    author: 'lee',
    labels: ['hydraflow-review'],
  });
  const { pull } = w.gh.world.pull({
    title: `Resolve #${issue.number}`,
    head: `hydraflow/issue-${issue.number}`,
    headSha: fakeSha('v1'),
    files: [{ filename: 'src/a.ts', status: 'modified', additions: 2, deletions: 1, patch: PATCH_V1 }],
  });
  const appFor = (attempt: number) =>
    dispatchedApp(w, { issue: issue.number, phase: 'review', runId: '8001', attempt });
  const pulls = new RestPulls(
    createRestClient({ token: w.gh.botToken, baseUrl: w.gh.url }),
    { owner: 'acme', repo: 'widgets' },
    [BOT_LOGIN],
  );
  /** One run of the review phase; `attempt` > 1 is a re-run of the same workflow run. */
  const review = async (attempt = 1) => {
    const app = appFor(attempt);
    const fresh = await app.issues.getIssue(issue.number);
    const ctx = await openPhase(app, { issue: fresh, phase: 'review', actor: 'lee', dispatched: false, forced: false });
    const base = ctx.config as unknown as { review?: Record<string, unknown> };
    const merged = { ...ctx.config, review: { ...base.review, ...reviewConfig } } as typeof ctx.config;
    return runReview({ ...ctx, config: merged, issues: app.issues, pulls }, await pulls.getPull(pull.number));
  };
  /** A push to the pull request's branch: new head, new diff. */
  const push = (seed: string, patch: string) => {
    const p = w.gh.world.pulls.get(pull.number)!;
    p.head.sha = fakeSha(seed);
    p.files = [{ filename: 'src/a.ts', status: 'modified', additions: 4, deletions: 1, patch }];
  };
  return { w, issue, pull, review, push };
}

const reviewsOf = (w: World) => [...w.gh.world.reviews.values()];
const inlineOf = (w: World) => [...w.gh.world.reviewComments.values()];

describe('runReview', () => {
  it('a critical finding → refine with the finding; the next round never repeats it; the same sha posts nothing', async () => {
    const second = finding({ title: 'Missing test for null input', severity: 'high', path: 'src/a.ts', line: 4 });
    const { w, issue, review, push } = await setup({
      review: [verdict([finding()]), verdict([finding({ line: 5 }), second])],
    });

    const first = await review();
    expect(first.kind).toBe('refine');
    if (first.kind !== 'refine') return;
    expect(first.findings).toEqual([finding()]);
    expect(reviewsOf(w)).toHaveLength(1);
    expect(reviewsOf(w)[0]).toMatchObject({ state: 'CHANGES_REQUESTED', commit_id: fakeSha('v1') });
    expect(inlineOf(w).map((c) => [c.path, c.line])).toEqual([['src/a.ts', 3]]);
    expect(inlineOf(w)[0]!.body).toContain('Null dereference of input');
    // The reviewer saw line numbers it can use.
    expect(w.models.calls[0]!.request!.messages[0]!.content).toContain('    3 + use(a.value);');

    // Re-running the same round: no model call, nothing posted, the same outcome and findings.
    const same = await review();
    expect(same).toMatchObject({ kind: 'refine', round: 1, findings: [finding()] });
    expect(w.models.calls).toHaveLength(1);
    expect(reviewsOf(w)).toHaveLength(1);

    // The refiner pushed; the critical finding is still open (moved to line 5), and a new one appears.
    push('v2', PATCH_V2);
    const next = await review();
    expect(next).toMatchObject({ kind: 'refine', round: 2 });
    if (next.kind !== 'refine') return;
    expect(next.findings.map((f) => f.title)).toEqual(['Null dereference of input', 'Missing test for null input']);
    // The reviewer was told what was open before.
    expect(w.models.calls[1]!.request!.messages[0]!.content).toContain(
      '[critical] src/a.ts: Null dereference of input',
    );
    const round2 = reviewsOf(w)[1]!;
    expect(round2.commit_id).toBe(fakeSha('v2'));
    const visible = round2.body.slice(0, round2.body.indexOf('<!-- hydraflow:review-data'));
    expect(visible).not.toContain('Null dereference');
    expect(round2.body).toContain('1 finding from earlier rounds still open');
    const inline2 = inlineOf(w).filter((c) => c.review_id === round2.id);
    expect(inline2.map((c) => [c.line, c.body.includes('Missing test for null input')])).toEqual([[4, true]]);
    expect(inlineOf(w).filter((c) => c.body.includes('Null dereference'))).toHaveLength(1);
    // The refiner can read every open finding back from the review, checked against the state.
    const state = stateOf(w, issue.number);
    expect(state.review?.rounds.map((r) => r.score)).toEqual([5, 2]);
    expect(state.review?.raised).toEqual([findingKey(finding()), findingKey(second)]);
    expect(readReviewFindings(round2.body, state.review!.rounds[1]!.findingsHash)).toEqual(next.findings);
    expect(JSON.stringify(state)).not.toContain('Null dereference');
  });

  it('the score dropping twice in a row escalates to a human', async () => {
    const { w, issue, review, push } = await setup(
      {
        review: [
          verdict([finding({ severity: 'high', title: 'A' })]),
          verdict([finding({ severity: 'high', title: 'B' }), finding({ severity: 'medium', title: 'M' })]),
          verdict([finding({ severity: 'critical', title: 'C' })]),
        ],
      },
      { max_rounds: 5 },
    );
    expect((await review()).kind).toBe('refine');
    push('v2', PATCH_V2);
    expect((await review()).kind).toBe('refine');
    push('v3', PATCH_V2);
    const third = await review();
    expect(third).toMatchObject({ kind: 'escalate', reason: 'diverging', round: 3, score: 5 });
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-hitl']);
    const state = stateOf(w, issue.number);
    expect(state.review?.rounds.map((r) => r.score)).toEqual([7, 6, 5]);
    expect(state.review).toMatchObject({ outcome: 'escalate', reason: 'diverging' });
    expect(state.lastError?.message).toContain('dropped twice in a row');
    expect(reviewsOf(w)).toHaveLength(3);
    expect(reviewsOf(w)[2]!.body).toContain('A human decides');
  });

  it('the same critical finding open after a refinement escalates (the refiner is not converging)', async () => {
    const { w, review, push } = await setup({ review: verdict([finding()]) });
    expect((await review()).kind).toBe('refine');
    push('v2', PATCH_V2);
    expect(await review()).toMatchObject({ kind: 'escalate', reason: 'repeating', findings: [finding()] });
    expect(inlineOf(w)).toHaveLength(1); // never repeated
  });

  it('a finding on a line outside the diff goes into the review body instead of an inline comment', async () => {
    const outside = finding({ severity: 'medium', line: 40, title: 'Stale comment at the end of the file' });
    const { w, review } = await setup({
      review: verdict([outside, finding({ severity: 'low', line: null, title: 'Naming' })]),
    });
    const outcome = await review();
    expect(outcome.kind).toBe('approve'); // 10 - 1 - 0.25 = 8.75 with nothing critical or high
    expect(inlineOf(w)).toHaveLength(0);
    const [posted] = reviewsOf(w);
    expect(posted!.state).toBe('APPROVED');
    expect(posted!.body).toContain('Stale comment at the end of the file');
    expect(posted!.body).toContain('`src/a.ts` line 40');
    expect(posted!.body).toContain('Naming');
  });

  it('a clean diff is approved in one round', async () => {
    const { w, issue, review } = await setup({ review: verdict([]) });
    const outcome = await review();
    expect(outcome).toMatchObject({ kind: 'approve', round: 1, score: 10, findings: [] });
    expect(reviewsOf(w).map((r) => r.state)).toEqual(['APPROVED']);
    expect(w.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-review']);
  });

  it('a review posted before a crash is reused, not posted again', async () => {
    const { w, issue, review } = await setup({ review: verdict([finding()]) });
    await review();
    // The run died before its state was written: drop the review from the state.
    const progress = w.gh.world.commentsOn(issue.number).find((c) => c.body.includes('hydraflow:progress'))!;
    w.gh.world.comments.delete(progress.id);
    const again = await review(2);
    expect(again).toMatchObject({ kind: 'refine', findings: [finding()] });
    expect(reviewsOf(w)).toHaveLength(1);
    expect(w.models.calls).toHaveLength(1);
  });
});
