/**
 * The publish job goes on into the review and begins the reviewer's call from the staged diff, before GitHub lists the
 * pull request's files (src/phases/publish.ts, beginReview): the rules of what the reviewer is shown hold there too
 * (issue #17 item 4). A file the reviewer could not see — a binary file the agent added, a file too large for the
 * reviewer's prompt — is never approved by HydraFlow: the issue goes to a human, the review names the file, and
 * nothing merges, even when a human approves. Through the template a user copies and the built dist/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, type ScriptEntry } from '@hydraflow/testkit';
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

/** The recorded implement session, with one more file written alongside the tests. */
function implementWith(path: string, content: string): ScriptEntry[] {
  const session = implementAverage(AVERAGE_GOOD) as { toolCalls?: { name: string; input: unknown }[] }[];
  return session.map((turn, i) =>
    i === 1 ? { toolCalls: [...turn.toolCalls!, { name: 'write_file', input: { path, content } }] } : turn,
  ) as ScriptEntry[];
}

async function lifecycleWith(path: string, content: string) {
  world = await lifecycleWorld({
    triage: triageClear,
    plan: averagePlan,
    plan_review: planAccepted,
    implement: implementWith(path, content),
    review: reviewClean,
  });
  const w = world;
  openIssue(w);
  const jobs = await w.lc.runUntilQuiet();
  const timeline = formatTimeline(jobs, { steps: true });
  const pull = [...w.gh.world.pulls.values()][0];
  expect(pull, timeline).toBeDefined();
  const reviews = [...w.gh.world.reviews.values()].filter((r) => r.pull_number === pull!.number);
  expect(reviews, timeline).toHaveLength(1);
  // the clean verdict did not become HydraFlow's approval (its own pull request: an approval would be posted as a
  // comment review saying Approved): a human decides
  expect(reviews[0]!.body, timeline).not.toContain('**Approved**');
  expect(reviews[0]!.body).toContain(path);
  expect(reviews[0]!.body).toMatch(/could not see/i);
  expect(w.gh.world.pulls.get(pull!.number)!.merged).toBe(false);
  expect(w.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-hitl']);
  expect(progressOf(w)).toMatch(/could not see/i);
  // a human's approval does not make it HydraFlow's: the merge gate does not merge on it
  await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull!.number}/reviews`, { event: 'APPROVE', body: 'Fine.' });
  await w.lc.runUntilQuiet();
  expect(w.gh.world.pulls.get(pull!.number)!.merged).toBe(false);
  // the one review call was begun by the publish job (from the staged diff) or made by the review: once either way
  expect(w.models.calls.filter((c) => c.role === 'review' && c.status === 200)).toHaveLength(1);
  return { w, shown: w.models.calls.filter((c) => c.role === 'review')[0]!.request!.messages[0]!.content };
}

describe('the publish job’s early review follows the same rules', () => {
  it('a binary file the agent adds is not approved: the issue goes to a human, the review names the file', async () => {
    const { shown } = await lifecycleWith('assets/icon.bin', '\u0000\u0001\u0002binary\u0000');
    expect(shown).toContain('assets/icon.bin');
  }, 180_000);

  it('a file too large for the reviewer’s prompt is not approved: the issue goes to a human, the review names it', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => `export const row${i} = ${JSON.stringify('y'.repeat(16))};`);
    const { shown } = await lifecycleWith('src/table.js', `${rows.join('\n')}\n`);
    expect(shown).toContain('row0 =');
    expect(shown).not.toContain('row1199 =');
  }, 180_000);
});
