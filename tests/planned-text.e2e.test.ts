/**
 * The agent works on the text that was planned (issue #17, item 5; ADR 0004): an issue whose title or body changed
 * after its plan was accepted is planned again before any more work, through the built dist on real webhook payloads.
 * The outsider's issue, the refiner and the reviewer are in tests/lifecycle/planned-text.e2e.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, type World } from '@hydraflow/testkit';
import { planScript } from './support/plans';

const clear = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Clear.',
  reasons: ['One endpoint.'],
};

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const progress = (w: World, n: number) =>
  w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))!;
const stateOf = (w: World, n: number) => {
  const decoded = decodeStateBlock(progress(w, n).body, { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};

describe('an issue edited after its plan was accepted', () => {
  it('is planned again when implement is to start, and the new plan answers the new text', async () => {
    world = await createWorld({ script: { triage: { json: clear }, ...planScript } });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Export users', body: 'Add a CSV export.', author: 'lee' });
    expect((await world.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    // This world's job has no checkout: implement is dispatched, and its run starts after the edit.
    expect(world.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['implement']);
    const planned = stateOf(world, issue.number).plan!;

    world.gh.world.issues.get(issue.number)!.body = 'Add a CSV export, and a JSON one.';
    const run = await world.runDispatch();
    expect(run.exitCode, run.stdout).toBe(0);
    const plans = world.models.calls.filter((c) => c.role === 'plan');
    expect(plans).toHaveLength(2);
    expect(plans[1]!.request!.messages[0]!.content).toContain('and a JSON one');
    const state = stateOf(world, issue.number);
    expect(state.plan!.issueHash).not.toBe(planned.issueHash);
    expect(state.history.find((h) => h.from === 'ready' && h.to === 'plan')).toMatchObject({
      by: 'hydraflow',
      reason: expect.stringContaining('edited after its plan was accepted') as string,
    });
    expect(world.gh.world.issues.get(issue.number)!.labels).toEqual(['hydraflow-ready']);
    expect(world.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['implement', 'implement']);
  });
});
