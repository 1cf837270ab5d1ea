/**
 * Humans reviewing HydraFlow's pull request (issue #16; src/phases/feedback.ts), through the built dist/ and the
 * template a user copies: alice requests a change on a line; the run her review starts goes through the feedback
 * phase into implement, the agent job, and the publish job, which pushes the fix, answers her thread (resolved) and
 * reviews the new head; she approves and it merges. `/fix` on the pull request does the same without a review.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { BOT_LOGIN, commitToBranch, formatTimeline, type ParsedRequest, type ScriptEntry } from '@hydraflow/testkit';
import { openIssue, progressOf } from './agent-world';
import {
  AVERAGE_GOOD,
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

const ALIAS = 'export const mean = average;\n';

/**
 * The coding agent: the recorded first session, then, on a round whose task carries a human's review, an edit that
 * does what the reviewer asked and a summary that reports on each numbered comment.
 */
function implement(request: ParsedRequest): ScriptEntry {
  const task = request.messages[0]?.content ?? '';
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  if (!task.includes('A human reviewed the pull request'))
    return (implementAverage(AVERAGE_GOOD) as ScriptEntry[])[turn]!;
  const ids = [...task.matchAll(/\[c(\d+)\]/g)].map((m) => m[1]);
  const reports = ids.map((id) => `[c${id}] done: exported mean as an alias of average`).join('\n');
  return [
    {
      toolCalls: [
        {
          name: 'edit_file',
          input: { path: 'src/numbers.js', old_string: AVERAGE_GOOD, new_string: `${AVERAGE_GOOD}\n${ALIAS}` },
        },
      ],
    },
    { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
    { text: `Added the alias the review asked for.\n${reports}` },
  ][turn]!;
}

async function reviewedPull(): Promise<{ w: LifecycleWorld; pull: number }> {
  world = await lifecycleWorld({
    triage: triageClear,
    plan: averagePlan,
    plan_review: planAccepted,
    implement,
    review: reviewClean,
  });
  openIssue(world);
  const jobs = await world.lc.runUntilQuiet();
  const pull = [...world.gh.world.pulls.values()][0];
  expect(pull, formatTimeline(jobs, { steps: true })).toBeDefined();
  expect(world.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-review']);
  return { w: world, pull: pull!.number };
}

const git = (w: LifecycleWorld, ...args: string[]) => execFileSync('git', args, { cwd: w.sample.bareRepo }).toString();

describe('a human reviews HydraFlow’s pull request', () => {
  it('a change request on a line leads to a pushed fix, an answered and resolved thread, a new review; then it merges', async () => {
    const { w, pull } = await reviewedPull();
    const line =
      git(w, 'show', 'hydraflow/issue-1:src/numbers.js').split('\n').indexOf('export function average(numbers) {') + 1;
    const before = git(w, 'rev-parse', 'hydraflow/issue-1').trim();
    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, {
      event: 'REQUEST_CHANGES',
      body: 'Nearly there.',
      comments: [{ path: 'src/numbers.js', line, body: 'Please also export `mean` as an alias of average.' }],
    });
    const jobs = await w.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    // one run: the routing job (feedback → implement), the agent job, the publish job (push, answers, review)
    expect(
      jobs.filter((j) => j.status === 'success').map((j) => j.job),
      timeline,
    ).toEqual(expect.arrayContaining(['hydraflow', 'agent', 'publish']));
    const after = git(w, 'rev-parse', 'hydraflow/issue-1').trim();
    expect(after).not.toBe(before);
    expect(git(w, 'show', 'hydraflow/issue-1:src/numbers.js')).toContain(ALIAS);
    expect(git(w, 'rev-parse', 'hydraflow/issue-1^').trim()).toBe(before); // on top of the reviewed head
    const [thread] = w.gh.world.reviewThreadsOf(pull);
    expect(thread!.comments.map((c) => c.user)).toEqual(['alice', 'github-actions[bot]']);
    expect(thread!.comments[1]!.body).toBe(`Done in ${after.slice(0, 7)}: exported mean as an alias of average`);
    expect(thread!.resolved_by).toBe('github-actions[bot]');
    expect(w.models.calls.filter((c) => c.role === 'review' && c.status === 200)).toHaveLength(2); // reviewed again
    expect(w.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-review']);

    // a redelivery of her review takes nothing twice
    const reviewEvent = w.gh.events.filter((e) => e.name === 'pull_request_review' && e.actor === 'alice').at(-1)!;
    w.gh.world.emit({ ...reviewEvent, at: undefined });
    const again = await w.lc.runUntilQuiet();
    expect(git(w, 'rev-parse', 'hydraflow/issue-1').trim(), formatTimeline(again)).toBe(after);

    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { event: 'APPROVE', body: 'Thanks.' });
    const merged = await w.lc.runUntilQuiet();
    expect(w.gh.world.pulls.get(pull)!.merged, formatTimeline(merged, { steps: true })).toBe(true);
    expect(git(w, 'show', 'main:src/numbers.js')).toContain(ALIAS);
  }, 240_000);

  it('/fix on the pull request starts the same round; a comment-only review without inline comments starts nothing', async () => {
    const { w, pull } = await reviewedPull();
    const before = git(w, 'rev-parse', 'hydraflow/issue-1').trim();
    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, {
      event: 'COMMENT',
      body: 'Looks fine so far.',
    });
    await w.lc.runUntilQuiet();
    expect(git(w, 'rev-parse', 'hydraflow/issue-1').trim()).toBe(before);

    const fix = w.gh.world.comment(pull, { body: '/fix export mean as an alias of average', author: 'alice' });
    w.lc.dispatch('issue_comment', 'created', { issue: pull, comment: fix.id, sender: 'alice' });
    const jobs = await w.lc.runUntilQuiet();
    expect(git(w, 'show', 'hydraflow/issue-1:src/numbers.js'), formatTimeline(jobs, { steps: true })).toContain(ALIAS);
    const task = w.models.calls.filter((c) => c.role === 'implement').at(-1)!.request!.messages[0]!.content;
    expect(task).toContain('### /fix by alice');
    expect(task).toContain('export mean as an alias of average');
  }, 240_000);

  it('a human who pushes to the branch while the agent works on their /fix keeps their push: the agent’s change is dropped, the new head reviewed', async () => {
    // property test tests/property/pull-histories: the publish job failed on its refused push
    const { w, pull } = await reviewedPull();
    let human: string | undefined;
    w.gh.onEvent((e) => {
      // the routing job says the agent starts: alice pushes a commit of her own while it works
      if (human || e.name !== 'issue_comment' || !progressOf(w).includes('addressing the human review')) return;
      human = commitToBranch(w.sample.bareRepo, 'hydraflow/issue-1', { 'NOTES.md': 'Mine.\n' }, 'A note', {
        author: { name: 'alice', email: 'alice@example.com' },
      });
      w.gh.syncGit({ actor: 'alice', viaToken: 'user' });
    });
    const fix = w.gh.world.comment(pull, { body: '/fix export mean as an alias of average', author: 'alice' });
    w.lc.dispatch('issue_comment', 'created', { issue: pull, comment: fix.id, sender: 'alice' });
    const jobs = await w.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(human, timeline).toBeDefined();
    expect(
      jobs.filter((j) => j.status === 'failure').map((j) => j.job),
      timeline,
    ).toEqual([]);
    expect(git(w, 'rev-parse', 'hydraflow/issue-1').trim()).toBe(human);
    expect(git(w, 'show', 'hydraflow/issue-1:src/numbers.js')).not.toContain(ALIAS);
    expect(progressOf(w)).toContain('someone pushed to it meanwhile'); // the stage history: ready → review
    expect(w.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-review']);
    // her head was reviewed
    const rounds = [...w.gh.world.reviews.values()].filter((r) => r.user === BOT_LOGIN).map((r) => r.commit_id);
    expect(rounds).toContain(human);
  }, 240_000);
});
