/**
 * The hourly sweep and a hand-off's late run (ADR 0010, ADR 0014). Triage hands a vague issue to discover by
 * workflow_dispatch, and GitHub starts that run late: past the 30 minutes a claim lives. The hourly sweep finds the
 * claim expired and resumes the hand-off (a fresh 👀, discover dispatched again), and the late run takes the lock
 * handed to it. Whichever comes first, discovery runs once, nothing HydraFlow says is untrue, and no 👀 stays behind.
 * Through the built dist on real webhook payloads, on a simulated clock; the interleavings are forced with the
 * emulator's `beforeNext` (found by the property test tests/property/pipeline-histories, product seeds -392832811 and
 * 1325686242, where they happened by timing).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BRIEF_MARKER, DIRECTIONS_MARKER, decodeStateBlock, type IssueState } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, runAction, SimulatedClock, type ActionRun, type World } from '@hydraflow/testkit';
import { discoverScript, vague } from './support/briefs';

let world: World | undefined;
let clock: SimulatedClock | undefined;
afterEach(async () => {
  await world?.close();
  await clock?.close();
  world = undefined;
  clock = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const ours = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const eyes = (w: World, n: number) =>
  w.gh.world.reactionsFor({ type: 'issue', number: n }).filter((r) => r.content === 'eyes');
const progressOf = (w: World, n: number) => ours(w, n).find((c) => c.body.includes('hydraflow:progress'))!.body;
const stateOf = (w: World, n: number): IssueState => {
  const decoded = decodeStateBlock(progressOf(w, n), { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};
const ok = (run: ActionRun) => expect(run.exitCode, run.stdout + run.stderr).toBe(0);

/**
 * A writer's vague issue, triaged by its `opened` run: discover is dispatched, and the 👀 handed to it. The run is a
 * step that runs triage alone (`actions/triage`), which dispatches discovery; the template's routing step goes on with
 * it in the same run, and hands shape on the same way (the claim and the sweep do not depend on the phase).
 */
async function handedToDiscover() {
  clock = await new SimulatedClock().listen();
  const sim = clock;
  world = await createWorld({ script: { triage: { json: vague }, ...discoverScript }, clock: () => sim.now() });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({ title: 'Make onboarding better', body: 'New users get lost.', author: 'lee' });
  const n = issue.number;
  ok(await w.run('issues', 'opened', { issue: n }, { env: sim.stepEnv(), inputs: { phase: 'triage' } }));
  expect(labelsOf(w, n)).toEqual(['hydraflow-discover']);
  expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['discover']);
  const [handed] = eyes(w, n);
  expect(handed).toBeDefined();
  // GitHub starts the dispatched run late: the claim that handed it the lock has expired
  sim.advance(31 * 60_000);
  const sweep = () =>
    runAction({
      gh: w.gh,
      event: 'schedule',
      payload: { schedule: '17 * * * *', repository: { full_name: 'acme/widgets' } },
      inputs: w.inputs(),
      env: sim.stepEnv(),
    });
  const dispatched = (index: number) => w.runDispatch(index, { env: sim.stepEnv() });
  return { w, n, handed: handed!.id, sweep, dispatched };
}

/** Runs every dispatch from `from` on, in order, as GitHub would start them (the ones those runs send too). */
async function runDispatchesFrom(w: World, from: number, dispatched: (index: number) => Promise<ActionRun>) {
  for (let i = from; i < w.gh.world.dispatches.length; i++) ok(await dispatched(i));
}

/** Discovery once, shape's directions once, the issue waiting at hydraflow-shape for a human, no 👀 left. */
function expectDiscoveredOnce(w: World, n: number) {
  const progress = progressOf(w, n);
  expect(labelsOf(w, n), progress).toEqual(['hydraflow-shape']);
  expect(eyes(w, n), progress).toEqual([]);
  expect(ours(w, n).filter((c) => c.body.startsWith(BRIEF_MARKER))).toHaveLength(1);
  expect(ours(w, n).filter((c) => c.body.startsWith(DIRECTIONS_MARKER))).toHaveLength(1);
  expect(w.models.calls.filter((c) => c.role === 'discover' && c.status === 200)).toHaveLength(1);
  const state = stateOf(w, n);
  expect(state.claim).toBeUndefined();
  // nobody moved the issue, and no run said a human did (a discover run that found the issue at shape, say)
  expect(state.history.filter((h) => h.by === 'human')).toEqual([]);
  const progressId = ours(w, n).find((c) => c.body.includes('hydraflow:progress'))!.id;
  const said = w.gh.world.comments.get(progressId)!.revisions.map((r) => r.body.split('\n')[3]);
  expect(
    said.filter((headline) => /did not start|moved/.test(headline ?? '')),
    said.join('\n'),
  ).toEqual([]);
}

describe('the hourly sweep and a hand-off whose run starts late', () => {
  it('the late run takes the lock just before the sweep looks at the 👀: the sweep leaves it to that run', async () => {
    const { w, n, handed, sweep, dispatched } = await handedToDiscover();
    // The sweep has read the state (the claim expired) and is about to look at the 👀 when the late run starts and
    // takes the lock handed to it (a fresh 👀); that run's brief waits until the sweep has ended.
    let late: Promise<ActionRun> | undefined;
    w.gh.faults.beforeNext({ methods: ['POST'], pathIncludes: `/issues/${n}/reactions` }, async () => {
      w.gh.faults.beforeNext(
        { methods: ['POST'], pathIncludes: `/issues/${n}/comments`, bodyIncludes: BRIEF_MARKER },
        () => sweepEnded.catch(() => undefined),
      );
      late = dispatched(0);
      for (let waited = 0; !eyes(w, n).some((r) => r.id !== handed); waited += 10) {
        if (waited > 30_000) throw new Error('the late run did not take the lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const sweepEnded = sweep();
    ok(await sweepEnded);
    ok(await late!);
    await runDispatchesFrom(w, 1, dispatched);
    expectDiscoveredOnce(w, n);
  });

  it('the sweep resumes first, then the late run and the sweep’s own run start: one of them discovers', async () => {
    const { w, n, sweep, dispatched } = await handedToDiscover();
    const resumed = await sweep();
    ok(resumed);
    expect(resumed.summary).toContain(`resumed 1 phase(s) whose run stopped holding the lock: #${n} (discover)`);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['discover', 'discover']);
    // the late run of the first dispatch, then the sweep's (and the shape run the discovery dispatches)
    await runDispatchesFrom(w, 0, dispatched);
    expectDiscoveredOnce(w, n);
  });

  it('the sweep resumes first, then its own run starts before the late one: one of them discovers', async () => {
    const { w, n, sweep, dispatched } = await handedToDiscover();
    ok(await sweep());
    ok(await dispatched(1));
    ok(await dispatched(0));
    await runDispatchesFrom(w, 2, dispatched);
    expectDiscoveredOnce(w, n);
  });
});
