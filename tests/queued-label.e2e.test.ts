/**
 * A stage label a permitted human sets while HydraFlow's next run for the issue is already on its way: the issue's
 * concurrency group queues the label event's run behind that run, so the run starts with the human's label beside the
 * state's stage. It must not do its phase and take the label off with its move (the label event's run would then find
 * it gone and do nothing): the human's move stands. Found by a probe of the product track's histories
 * (tests/property/pipeline-histories.test.ts): a writer's hydraflow-plan, set while triage's discover dispatch waited,
 * was removed by the discovery it meant to skip. Through the built dist, on real webhook payloads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BOT_LOGIN, createWorld, type ActionRun, type World } from '@hydraflow/testkit';
import { discoverScript, vague } from './support/briefs';
import { planScript } from './support/plans';
import { stateOf } from './support/state';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const ok = (run: ActionRun) => expect(run.exitCode, run.stdout + run.stderr).toBe(0);

/**
 * A vague issue by lee (write), triaged by its `opened` run, and the run that comes next dispatched, not started yet:
 * discover's, when a step runs triage alone (`actions/triage` in a workflow of the user's own dispatches the next
 * phase), or shape's, when the template's routing step went on with discovery in the same run (docs/adr/0025).
 */
async function queued(next: 'discover' | 'shape') {
  world = await createWorld({ script: { triage: { json: vague }, ...discoverScript, ...planScript } });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  w.gh.addUser({ login: 'tina', permission: 'triage' });
  const n = w.gh.world.issue({ title: 'Make onboarding better', body: 'New users get lost.', author: 'lee' }).number;
  ok(await w.run('issues', 'opened', { issue: n }, next === 'discover' ? { inputs: { phase: 'triage' } } : {}));
  expect(labelsOf(w, n)).toEqual([`hydraflow-${next}`]);
  expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual([next]);
  return { w, n };
}

/** Lee's hydraflow-plan stands: the queued run's phase asked no model, and the state records her move from `from`. */
function expectWritersMove(w: World, n: number, from: 'discover' | 'shape') {
  expect(w.models.calls.filter((c) => c.role === from)).toEqual([]);
  expect(labelsOf(w, n)).toEqual(['hydraflow-plan']);
  const { history, stage } = stateOf(w, n)!;
  expect(stage).toBe('plan');
  expect(history.filter((h) => h.by === 'human')[0]).toMatchObject({ from, to: 'plan', actor: 'lee' });
}

/** `who` sets hydraflow-plan before the discover run starts; that run, then the label event's, then what they send. */
async function planLabelWhileQueued(w: World, n: number, who: string) {
  w.gh.world.setLabelsAs(n, who, { add: ['hydraflow-plan'] });
  ok(await w.runDispatch(0));
  ok(await w.run('issues', 'labeled', { issue: n, label: 'hydraflow-plan', sender: who }));
  for (let i = 1; i < w.gh.world.dispatches.length; i++) ok(await w.runDispatch(i));
}

describe('a stage label set while the next run is queued', () => {
  it('a writer’s hydraflow-plan: the queued discover run does not discover, and the issue is at plan', async () => {
    const { w, n } = await queued('discover');
    await planLabelWhileQueued(w, n, 'lee');
    // the dispatched run honoured lee's move; her own event's run, which comes after, finds it done (and, as for a
    // redelivered label event, says so again)
    expectWritersMove(w, n, 'discover');
  });

  it('a triage-role user’s hydraflow-plan steers nothing: discovery goes on, and its move takes the label off', async () => {
    const { w, n } = await queued('discover');
    await planLabelWhileQueued(w, n, 'tina');
    expect(w.models.calls.filter((c) => c.role === 'discover' && c.status === 200).length).toBeGreaterThan(0);
    expect(labelsOf(w, n)).toEqual(['hydraflow-shape']);
    expect(stateOf(w, n)!.history.filter((h) => h.by === 'human')).toEqual([]);
  });

  it('the template’s routing step: discovery in the opened run, then a writer’s hydraflow-plan while shape is queued', async () => {
    const { w, n } = await queued('shape');
    await planLabelWhileQueued(w, n, 'lee');
    expectWritersMove(w, n, 'shape');
  });

  it('a label HydraFlow’s own identity set (a dead run’s unpublished move) is no human’s: discovery goes on', async () => {
    const { w, n } = await queued('discover');
    w.gh.world.setLabelsAs(n, BOT_LOGIN, { add: ['hydraflow-plan'] });
    for (let i = 0; i < w.gh.world.dispatches.length; i++) ok(await w.runDispatch(i));
    expect(w.models.calls.filter((c) => c.role === 'discover' && c.status === 200).length).toBeGreaterThan(0);
    expect(labelsOf(w, n)).toEqual(['hydraflow-shape']);
    expect(stateOf(w, n)!.history.filter((h) => h.by === 'human')).toEqual([]);
  });
});
