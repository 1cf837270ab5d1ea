/**
 * The adversarial discover stages (issue #19; docs/adr/0018-adversarial-layer.md, src/phases/adversarial/
 * discovery-council.ts) between the research agent's brief and its posting, with `adversarial.enabled`, through the
 * built dist on real webhook payloads: a vague issue is triaged and researched. Asserts the world's end state: the
 * model server's recorded calls, the brief comment, the labels, the dispatch of shape and the signed state's record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { completeBrief, vague } from './support/briefs';
import { BRIEF_MARKER, readBriefData, type DiscoverBrief } from '@hydraflow/core';
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
const REDONE: DiscoverBrief = {
  ...completeBrief,
  existing_solutions: [
    ...completeBrief.existing_solutions,
    { name: '`cli --help`', what: 'Lists every command.', gap: 'Shown only when asked for.' },
  ],
};
const SOLVED = 'The CLI already prints every command with --help: the brief never says why that is not enough.';

/** The research agent: the brief; redone (with the council's concern in its task) it names the existing solution. */
function researcher(request: ParsedRequest): ScriptEntry {
  const redo = request.messages.some((m) => m.content.includes('Blocking concerns from the adversarial review'));
  return { toolCalls: [{ name: 'submit_brief', input: redo ? REDONE : completeBrief }] };
}
const none = { json: { concerns: [] } };
const solved = { json: { concerns: [{ severity: 'high', blocking: true, text: SOLVED, evidence: ['cli --help'] }] } };
const COUNCIL = ['adv_cheapest-test-advocate', 'adv_existing-solution-hunter', 'adv_problem-sharpener'];

const ours = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const roles = (w: World) => w.models.calls.map((c) => c.role);

async function discovered(script: Script, config = ON) {
  world = await createWorld({ script: { triage: { json: vague }, discover: researcher, ...script }, config });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({ title: 'Make onboarding better', body: 'New users get lost.', author: 'lee' });
  const run = await w.run('issues', 'opened', { issue: issue.number }); // triage, then discovery in the same run
  return { w, n: issue.number, run };
}

describe('the adversarial discover stages', () => {
  it('the surfacer, then the Existing-Solution-Hunter blocks once, the research is redone with its concern, and the redone brief is posted', async () => {
    const { w, n, run } = await discovered({
      'adv_assumption-surfacer': { json: { assumptions: [] } },
      'adv_problem-sharpener': none,
      'adv_cheapest-test-advocate': none,
      'adv_existing-solution-hunter': [solved, none],
    });
    expect(run.exitCode, run.stdout).toBe(0);
    const calls = roles(w).slice(roles(w).indexOf('discover'));
    expect(calls.slice(0, 2)).toEqual(['discover', 'adv_assumption-surfacer']);
    expect([...calls.slice(2, 5)].sort()).toEqual(COUNCIL); // in parallel
    expect(calls.slice(5)).toEqual(['discover', 'adv_existing-solution-hunter']); // the redo, round 2: the blocker
    const redo = w.models.calls.filter((c) => c.role === 'discover')[1]!.request!;
    expect(redo.messages.map((m) => m.content).join('\n')).toContain(SOLVED);

    const state = stateOf(w, n);
    const posted = ours(w, n).filter((c) => c.body.startsWith(BRIEF_MARKER));
    expect(posted).toHaveLength(1);
    expect(readBriefData(posted[0]!.body, state.discover!.hash)).toEqual(REDONE);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-shape']); // the transient label is off
    expect(w.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ phase: 'shape', issue: String(n) });
    const adv = state.adversarial!;
    expect(adv.gate).toMatchObject({ decision: 'load_bearing' });
    expect(adv.stages['assumptions-discover']).toMatchObject({ status: 'converged', calls: 1 });
    expect(adv.stages['discovery-council']).toMatchObject({ status: 'converged', retries: 1, agentRuns: 1 });
    expect(adv.pending).toEqual([]);
    expect(run.summary).toContain('| discovery-council | converged |'); // the job summary shows the stages too
  });

  it('off (the default): discovery makes exactly the calls it made before', async () => {
    const { w, n, run } = await discovered({}, '');
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'discover']);
    expect(stateOf(w, n).adversarial).toBeUndefined();
  });
});
