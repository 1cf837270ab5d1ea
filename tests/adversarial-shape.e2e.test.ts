/**
 * The adversarial shape council (issue #19; docs/adr/0018-adversarial-layer.md, src/phases/adversarial/shape-council.ts)
 * between the shape agent's first directions and their posting, with `adversarial.enabled`, through the built dist on
 * real webhook payloads: a vague issue is triaged, researched (discover) and shaped. Asserts the world's end state:
 * the model server's recorded calls, the directions comment, the labels and the signed state's adversarial record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { completeBrief, direction, shapedDirections, vague } from './support/briefs';
import { DIRECTIONS_MARKER, readShapeData } from '@hydraflow/core';
import {
  BOT_LOGIN,
  createWorld,
  type ParsedRequest,
  type Script,
  type ScriptEntry,
  type World,
} from '@hydraflow/testkit';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const ON = 'adversarial:\n  enabled: true\n';
const RUNNING = 'hydraflow-adv-shape-running';
const FIRST = shapedDirections;
const REVISED = [FIRST[0]!, direction('B', 'Hint With An Opt-Out', 'M'), ...FIRST.slice(2)];
const NAG = 'Every direction prints on every run: nobody can turn the hint off, which scripts and CI will hate.';

/** The shape agent: the first directions; a revision (with the council's concern attached) revises them. */
function shaper(request: ParsedRequest): ScriptEntry {
  const text = request.messages[0]!.content;
  return { json: { reply: '', directions: text.includes('Blocking concerns') ? REVISED : FIRST } };
}
const none = { json: { concerns: [] } };
const nag = { json: { concerns: [{ severity: 'high', blocking: true, text: NAG, evidence: ['direction A'] }] } };

const progress = (w: World, n: number) =>
  w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))!.body;
const roles = (w: World) => w.models.calls.map((c) => c.role);

/** Discover's stages sign off (tests/adversarial-discover.e2e.test.ts has them at work). */
const DISCOVER_SIGNS_OFF: Script = {
  'adv_assumption-surfacer': { json: { assumptions: [] } },
  'adv_problem-sharpener': none,
  'adv_existing-solution-hunter': none,
  'adv_cheapest-test-advocate': none,
};

/** A vague issue by lee, through triage, discover and shape's first turn. */
async function shaped(script: Script, config = ON) {
  world = await createWorld({
    script: {
      triage: { json: vague },
      discover: { toolCalls: [{ name: 'submit_brief', input: completeBrief }] },
      ...DISCOVER_SIGNS_OFF,
      ...script,
    },
    config,
  });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({ title: 'Make onboarding better', body: 'New users get lost.', author: 'lee' });
  expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0); // triage, then discover
  const shape = await w.runDispatch();
  return { w, n: issue.number, shape };
}

describe('the adversarial shape council', () => {
  it('the Challenger blocks once, the shape agent revises with its concern, and the revision is what a human sees', async () => {
    const { w, n, shape } = await shaped({
      shape: shaper,
      adv_challenger: [nag, none],
      'adv_expert-council': none,
    });
    expect(shape.exitCode, shape.stdout).toBe(0);
    const calls = roles(w).slice(roles(w).indexOf('shape'));
    expect(calls[0]).toBe('shape');
    expect([...calls.slice(1, 3)].sort()).toEqual(['adv_challenger', 'adv_expert-council']); // in parallel
    expect(calls.slice(3)).toEqual(['shape', 'adv_challenger']); // the revision, round 2: only the blocker
    const revision = w.models.calls.filter((c) => c.role === 'shape')[1]!.request!.messages[0]!.content;
    expect(revision).toContain(NAG);
    expect(revision).toContain('# The directions as they stand');

    const state = stateOf(w, n);
    const posted = w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN && c.body.startsWith(DIRECTIONS_MARKER));
    expect(posted).toHaveLength(1);
    expect(readShapeData(posted[0]!.body, state.shape!.hash)).toEqual(REVISED);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-shape']); // the transient label is off
    const adv = state.adversarial!;
    expect(adv.gate).toMatchObject({ decision: 'load_bearing' });
    expect(adv.gate!.reasons).toContain('product-track');
    expect(adv.stages['shape-council']).toMatchObject({ status: 'converged', retries: 1, agentRuns: 1, calls: 4 });
    expect(adv.pending).toEqual([]);
    expect(progress(w, n)).toContain('**Complexity gate:** load-bearing: the shape council runs.');
    expect(shape.summary).toContain('| shape-council | converged |'); // the job summary shows the stage too
  });

  it('what two revisions cannot settle waits for the plan reviewer; a human’s hydraflow-adv-skip asks no voter', async () => {
    const { w, n } = await shaped({ shape: shaper, adv_challenger: nag, 'adv_expert-council': none });
    const adv = stateOf(w, n).adversarial!;
    // the same concern after the revision: an oscillation, so no third round is spent
    expect(adv.stages['shape-council']).toMatchObject({ status: 'oscillated', retries: 1 });
    expect(adv.pending).toEqual([expect.objectContaining({ voter: 'challenger', must_address_by: 'plan-review' })]);
    expect(w.gh.world.issues.get(n)!.labels).not.toContain(RUNNING);

    await world!.close();
    world = undefined;
    // the same issue with a writer's skip label: the gate obeys it
    world = await createWorld({
      script: {
        triage: { json: vague },
        discover: { toolCalls: [{ name: 'submit_brief', input: completeBrief }] },
        shape: shaper,
      },
      config: ON,
    });
    const v = world;
    v.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = v.gh.world.issue({ title: 'Make onboarding better', body: 'New users get lost.', author: 'lee' });
    v.gh.world.setLabelsAs(issue.number, 'lee', { add: ['hydraflow-adv-skip'] });
    expect((await v.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0); // triage, then discover
    expect((await v.runDispatch()).exitCode).toBe(0); // shape
    expect(roles(v).filter((r) => r?.startsWith('adv_'))).toEqual([]);
    expect(stateOf(v, issue.number).adversarial!.gate).toMatchObject({ decision: 'trivial', source: 'label' });
  });

  it('off (the default): shape makes exactly the calls it made before, and the state has no adversarial record', async () => {
    const { w, n, shape } = await shaped({ shape: shaper }, '');
    expect(shape.exitCode, shape.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'discover', 'shape']);
    expect(stateOf(w, n).adversarial).toBeUndefined();
  });
});
