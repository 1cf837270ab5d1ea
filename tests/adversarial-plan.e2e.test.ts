/**
 * The adversarial plan council in the plan phase (issue #19; docs/adr/0018-adversarial-layer.md), through the built
 * dist on real webhook payloads: an opened issue is triaged and planned in one run (tests/support/plans.ts), with
 * `adversarial.enabled` or without. Asserts the world's end state: the model server's recorded calls (roles, order,
 * requests), the issue's labels and comments, and the signed state's adversarial record and event log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { fingerprint, PLAN_MARKER, readPlanComment, type Concern } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, type Script, type World } from '@hydraflow/testkit';
import { createRestClient, MemoryBranch } from '@hydraflow/github';
import { Memory } from '../src/memory/memory';
import { planCreatingFiles } from './support/plans';
import { planAccepted } from './lifecycle/scenario';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const ON = 'adversarial:\n  enabled: true\n';
const RUNNING = 'hydraflow-adv-plan-running';

/** Clear and simple: the gate earns "trivial" with the two-file plan. */
const simple = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Clear.',
  reasons: ['One endpoint.'],
};
/** Clear, but complexity 5: planned directly (grooming starts higher), load-bearing for the gate. */
const complex = { ...simple, complexity_score: 5 };

const revisedPlan = {
  json: { ...planCreatingFiles.json, summary: 'Add the change in a new module, behind a backup step, with its tests.' },
};
const none = { json: { concerns: [] } };
const RISK = 'The change rewrites stored user records with no backup or way back.';
const risk = {
  json: {
    concerns: [{ severity: 'high', blocking: true, text: RISK, evidence: ['src/change.js rewrites records in place'] }],
  },
};
const COUNCIL = ['adv_builder', 'adv_risk-skeptic', 'adv_tester'];
/** The spec stage after the plan reviewer (src/phases/adversarial/spec-judge.ts): criteria written, then judged. */
const SPEC_CALLS = ['adv_spec-ac-generator', 'adv_spec-judge'];
const CRITERIA = ['GET /users.csv answers 200 with one row per user.', 'A user with a comma in the name is quoted.'];
/** The assumption surfacer before the council (src/phases/adversarial/assumptions.ts): one call, no retry. */
const SURFACER = 'adv_assumption-surfacer';
const ASSUMPTIONS_LOG = ['AdversarialStageStarted', 'AdversarialRoundVoted', 'AdversarialStageCompleted'];
const SPEC_OK: Script = {
  [SURFACER]: { json: { assumptions: [] } },
  'adv_spec-ac-generator': { json: { acceptance_criteria: CRITERIA } },
  'adv_spec-judge': { json: { consistent: true, concerns: [] } },
};
const SPEC_LOG = [
  'AdversarialStageStarted',
  'AdversarialAgentRan',
  'AdversarialRoundVoted',
  'AdversarialStageCompleted',
];

const progress = (w: World, n: number) =>
  w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))!;
const roles = (w: World) => w.models.calls.map((c) => c.role);
const councilCalls = (w: World) => roles(w).filter((r) => COUNCIL.includes(r ?? ''));
const councilComment = (w: World, n: number) =>
  w.gh.world
    .commentsOn(n)
    .filter((c) => c.user === BOT_LOGIN && c.body.startsWith('<!-- hydraflow:adversarial-stage plan-council -->'));

async function open(script: Script, config?: string, labels: string[] = []) {
  world = await createWorld({ script: { ...SPEC_OK, ...script }, ...(config ? { config } : {}) });
  world.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = world.gh.world.issue({
    title: 'Export users',
    body: 'Add a CSV export of the users.',
    author: 'lee',
    labels,
  });
  return { w: world, n: issue.number };
}

describe('the adversarial plan council', () => {
  it('off (the default): the plan phase makes exactly the calls it made before, and the state has no adversarial record', async () => {
    const { w, n } = await open({ triage: { json: complex }, plan: planCreatingFiles, plan_review: planAccepted });
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'plan', 'plan_review']);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const state = stateOf(w, n);
    expect(state.adversarial).toBeUndefined();
    expect(state.plan?.status).toBe('accepted');
    expect(progress(w, n).body).not.toMatch(/adversarial|complexity gate/i);
    expect(councilComment(w, n)).toHaveLength(0);
    // the reviewer's request is the one without the layer: no forwarded concerns section
    expect(w.models.calls[2]!.request!.messages[0]!.content).not.toContain('Concerns forwarded');
  });

  it('on, a trivial issue: the gate says so with its reasons, and no voter is asked', async () => {
    const { w, n } = await open({ triage: { json: simple }, plan: planCreatingFiles, plan_review: planAccepted }, ON);
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'plan', 'plan_review']);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.gate).toMatchObject({
      decision: 'trivial',
      source: 'signals',
      reasons: ['simple', 'clear', 'small-change'],
    });
    expect(adv.stages).toEqual({});
    expect(adv.counters.calls).toBe(0);
    expect(adv.log.map((e) => e.type)).toEqual(['ComplexityGateRouted']);
    const body = progress(w, n).body;
    expect(body).toContain('**Complexity gate:** trivial: no adversarial stage runs.');
    expect(body).toContain('complexity 3/10');
    expect(councilComment(w, n)).toHaveLength(0);
  });

  it('on, a human’s hydraflow-adv-skip wins over a load-bearing issue: no voter is asked', async () => {
    const { w, n } = await open({ triage: { json: complex }, plan: planCreatingFiles, plan_review: planAccepted }, ON);
    w.gh.world.setLabelsAs(n, 'lee', { add: ['hydraflow-adv-skip'] }); // a writer's label: its event names lee
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'plan', 'plan_review']);
    expect(stateOf(w, n).adversarial!.gate).toMatchObject({
      decision: 'trivial',
      source: 'label',
      reasons: ['label-skip'],
    });
    expect(progress(w, n).body).toContain('(a human’s label)');
  });

  it('on, hydraflow-adv-skip set by someone who may not steer (triage role) is not obeyed: the council still votes', async () => {
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': none,
        plan_review: planAccepted,
      },
      ON,
    );
    w.gh.addUser({ login: 'tina', permission: 'triage' });
    w.gh.world.setLabelsAs(n, 'tina', { add: ['hydraflow-adv-skip'] });
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect([...roles(w).slice(3, 6)].sort()).toEqual(COUNCIL);
    expect(stateOf(w, n).adversarial!.gate).toMatchObject({ decision: 'load_bearing' });
    expect(progress(w, n).body).toContain('`hydraflow-adv-skip` set by tina');
  });

  it('on, a human’s hydraflow-adv-force makes a trivial issue load-bearing: the council votes once, all sign off', async () => {
    const { w, n } = await open(
      {
        triage: { json: simple },
        plan: planCreatingFiles,
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': none,
        plan_review: planAccepted,
      },
      ON,
    );
    w.gh.world.setLabelsAs(n, 'lee', { add: ['hydraflow-adv-force'] });
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    const calls = roles(w);
    expect(calls.slice(0, 3)).toEqual(['triage', 'plan', SURFACER]);
    expect([...calls.slice(3, 6)].sort()).toEqual(COUNCIL);
    expect(calls.slice(6)).toEqual(['plan_review', ...SPEC_CALLS]);
    expect([...w.gh.world.issues.get(n)!.labels].sort()).toEqual(['hydraflow-adv-force', 'hydraflow-ready']);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.gate).toMatchObject({ decision: 'load_bearing', source: 'label', reasons: ['label-force'] });
    expect(adv.stages['plan-council']).toMatchObject({ status: 'converged', retries: 0, calls: 3 });
    expect(councilComment(w, n)[0]!.body).toContain('No concerns raised so far.');
  });

  it('on, load-bearing: the Risk-Skeptic blocks once, the planner revises with its concern, the concern resolves, the reviewer gets the revision', async () => {
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: [planCreatingFiles, revisedPlan],
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': [risk, none],
        plan_review: planAccepted,
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);

    const calls = roles(w);
    expect(calls.slice(0, 3)).toEqual(['triage', 'plan', SURFACER]); // the assumptions first, then the council
    expect([...calls.slice(3, 6)].sort()).toEqual(COUNCIL); // round 1: every voter, in parallel
    // the revision, round 2: only the blocker; after the plan reviewer, the spec stage
    expect(calls.slice(6)).toEqual(['plan', 'adv_risk-skeptic', 'plan_review', ...SPEC_CALLS]);
    // the planner's revision carried the blocking concern; the voters saw the plan, round 2 its own earlier concern
    const revision = w.models.calls[6]!.request!.messages[0]!.content;
    expect(revision).toContain('Blocking concerns from the adversarial review');
    expect(revision).toContain(RISK);
    const round2 = w.models.calls[7]!.request!;
    expect(round2.system).toContain('behind a backup step');
    expect(round2.messages[0]!.content).toContain(RISK);
    expect(w.models.calls[8]!.request!.messages[0]!.content).toContain('behind a backup step');
    expect(w.models.calls[8]!.request!.messages[0]!.content).not.toContain('Concerns forwarded');

    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const state = stateOf(w, n);
    const adv = state.adversarial!;
    expect(adv.gate).toMatchObject({ decision: 'load_bearing', reasons: ['complex'] });
    expect(adv.stages['plan-council']).toMatchObject({ status: 'converged', retries: 1, agentRuns: 1, calls: 5 });
    expect(adv.stages['plan-council']!.rounds.map((r) => [r.round, r.voters.length, r.blockers])).toEqual([
      [1, 3, ['risk-skeptic']],
      [2, 1, []],
    ]);
    expect(adv.log.map((e) => e.type)).toEqual([
      'ComplexityGateRouted',
      ...ASSUMPTIONS_LOG,
      'AdversarialStageStarted',
      'AdversarialRoundVoted',
      'AdversarialAgentRan',
      'AdversarialRoundVoted',
      'AdversarialStageCompleted',
      ...SPEC_LOG,
    ]);
    expect(adv.pending).toEqual([]);
    expect(adv.counters).toMatchObject({ calls: 8, resolved: 1, forwarded: 0, oscillations: 0 });
    // the ledger has the voters (and the other stages' calls) under their roles
    expect(state.ledger.map((e) => e.role).filter((r) => r.startsWith('adv_'))).toHaveLength(7);
    // the concern's text is in the council's comment, hash-checked, and never in the signed state
    const comments = councilComment(w, n);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(RISK);
    expect(JSON.stringify(state)).not.toContain('backup');
    const body = progress(w, n).body;
    expect(body).toContain('**Complexity gate:** load-bearing: the plan council runs.');
    expect(body).toContain('| plan-council | converged | 2 | 1 | 5 |');
  });

  it('on, oscillation: the same blocking concern on round 2 ends the stage without a round 3, and the plan reviewer must answer it', async () => {
    const concern: Concern = {
      voter: 'risk-skeptic',
      stage: 'plan-council',
      severity: 'high',
      blocking: true,
      text: RISK,
      evidence: ['src/change.js rewrites records in place'],
      must_address_by: null,
    };
    const id = fingerprint(concern);
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: [planCreatingFiles, revisedPlan],
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': risk,
        plan_review: {
          json: {
            ...planAccepted.json,
            concerns: [
              { id, verdict: 'carried', why: 'A backup is for the implementer to add; code review checks it.' },
            ],
          },
        },
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    const calls = roles(w);
    expect(calls.slice(6)).toEqual(['plan', 'adv_risk-skeptic', 'plan_review', ...SPEC_CALLS]); // no third round
    const review = w.models.calls[8]!.request!;
    expect(review.messages[0]!.content).toContain('Concerns forwarded by the adversarial review');
    expect(review.messages[0]!.content).toContain(`id ${id}`);
    expect(review.messages[0]!.content).toContain(RISK);

    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['plan-council']).toMatchObject({ status: 'oscillated', retries: 1, calls: 5 });
    expect(adv.log.map((e) => e.type)).toEqual([
      'ComplexityGateRouted',
      ...ASSUMPTIONS_LOG,
      'AdversarialStageStarted',
      'AdversarialRoundVoted',
      'AdversarialAgentRan',
      'AdversarialRoundVoted',
      'OscillationDetected',
      'AdversarialStageCompleted',
      'ConcernsAnswered',
      ...SPEC_LOG,
    ]);
    // carried by the plan reviewer: it now waits for code review
    expect(adv.pending).toEqual([
      expect.objectContaining({ fingerprint: id, voter: 'risk-skeptic', must_address_by: 'code-review' }),
    ]);
    expect(adv.counters).toMatchObject({ oscillations: 1, forwarded: 1, carried: 1 });
  });

  it('a run that dies mid-stage leaves hydraflow-adv-plan-running; the next run takes it off and resumes at the recorded round', async () => {
    const note = {
      json: {
        concerns: [{ severity: 'medium', blocking: false, text: 'Name the export file after the date.', evidence: [] }],
      },
    };
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': note,
        plan_review: planAccepted,
      },
      ON,
    );
    // Round 1's concerns cannot be written (GitHub fails the comment's update), and the label cannot come off either:
    // the run dies as one killed between the two would.
    w.gh.faults.beforeNext({ methods: ['PATCH'], bodyIncludes: 'hydraflow:adversarial-stage plan-council' }, () =>
      w.gh.faults.failNext(4, 500, { methods: ['PATCH'], pathIncludes: '/issues/comments/' }),
    );
    w.gh.faults.failNext(4, 500, { methods: ['DELETE'], pathIncludes: RUNNING });
    const first = await w.run('issues', 'opened', { issue: n });
    expect(first.exitCode).not.toBe(0);
    expect(w.gh.world.issues.get(n)!.labels).toContain(RUNNING);
    const cut = stateOf(w, n).adversarial!;
    expect(cut.stages['plan-council']).toMatchObject({ status: 'running', next: 'vote', rounds: [] });
    expect(councilCalls(w)).toHaveLength(3);

    // the phase's failure was escalated with the real error; a human's /retry plans again
    expect(w.gh.world.issues.get(n)!.labels).toContain('hydraflow-hitl');
    const retry = w.gh.world.comment(n, { author: 'lee', body: '/retry' });
    const again = await w.run('issue_comment', 'created', { issue: n, comment: retry.id });
    expect(again.exitCode, again.stdout).toBe(0);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    // round 1 was not recorded, so it is asked again; nothing before it is
    expect(councilCalls(w)).toHaveLength(6);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['plan-council']).toMatchObject({ status: 'converged', calls: 3 });
    expect(adv.counters.stagesStarted).toBe(3); // the assumptions, the council, then the spec stage
    expect(adv.pending).toEqual([]);
    expect(councilComment(w, n)[0]!.body).toContain('Name the export file after the date.');
  });

  it('concerns whose comment a human edited are never guessed: the stage is dropped with the escalation, and /retry starts the council over', async () => {
    const junk = { fault: 'junk' as const };
    const { w, n } = await open(
      {
        triage: { json: complex },
        // run 1: the draft, then a revision that does not parse (nor its repair); runs 2 and 3: a draft each
        plan: [planCreatingFiles, junk, junk, planCreatingFiles, planCreatingFiles],
        adv_builder: none,
        adv_tester: none,
        'adv_risk-skeptic': [risk, none],
        plan_review: planAccepted,
      },
      ON,
    );
    await w.run('issues', 'opened', { issue: n });
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-hitl']); // the label came off with the failure
    expect(stateOf(w, n).adversarial!.stages['plan-council']).toMatchObject({ status: 'running', next: 'agent' });
    const stage = councilComment(w, n)[0]!;
    w.gh.world.editComment(stage.id, stage.body.replaceAll('no backup', 'a backup'), 'lee');

    const retry = async () => {
      const c = w.gh.world.comment(n, { author: 'lee', body: '/retry' });
      const run = await w.run('issue_comment', 'created', { issue: n, comment: c.id });
      expect(run.exitCode, run.stdout).toBe(0);
    };
    await retry();
    expect(councilCalls(w)).toHaveLength(3); // no voter asked on guessed concerns
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-hitl']);
    expect(progress(w, n).body).toContain('recorded concerns are gone');
    expect(stateOf(w, n).adversarial!.stages['plan-council']).toBeUndefined();

    await retry();
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    expect(councilCalls(w)).toHaveLength(6);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['plan-council']).toMatchObject({ status: 'converged', calls: 3 });
    expect(adv.counters.stagesStarted).toBe(4); // the assumptions (their outcome stands), the council twice, the spec stage
  });
});

describe('the adversarial spec stage (SpecACGenerator + SpecJudge), after the plan reviewer accepts', () => {
  const signOff = { adv_builder: none, adv_tester: none, 'adv_risk-skeptic': none };
  const planOf = (w: World, n: number) =>
    readPlanComment(w.gh.world.commentsOn(n).find((c) => c.user === BOT_LOGIN && c.body.startsWith(PLAN_MARKER))?.body);

  it('the judge blocks once, the generator revises with its concern, and the accepted plan carries the revised criteria', async () => {
    const CONTRADICTION = 'Criterion 2 quotes commas but the plan writes names unquoted: one of them is wrong.';
    const REVISED = [...CRITERIA.slice(0, 1), 'A user with a comma in the name is written quoted, as the plan says.'];
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        ...signOff,
        plan_review: planAccepted,
        'adv_spec-ac-generator': [
          { json: { acceptance_criteria: CRITERIA } },
          { json: { acceptance_criteria: REVISED } },
        ],
        'adv_spec-judge': [
          {
            json: {
              consistent: false,
              concerns: [{ severity: 'high', blocking: true, text: CONTRADICTION, evidence: ['criterion 2'] }],
            },
          },
          { json: { consistent: true, concerns: [] } },
        ],
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w).slice(6)).toEqual(['plan_review', ...SPEC_CALLS, ...SPEC_CALLS]);
    const generator = w.models.calls.filter((c) => c.role === 'adv_spec-ac-generator');
    expect(generator[0]!.request!.messages[0]!.content).toContain('Export users'); // the spec: the issue and the plan
    expect(generator[1]!.request!.messages[0]!.content).toContain(CONTRADICTION); // the revision answers the judge
    const judge = w.models.calls.filter((c) => c.role === 'adv_spec-judge');
    expect(judge[1]!.request!.system).toContain(REVISED[1]);

    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']); // the transient label is off
    expect(planOf(w, n)?.acceptance_criteria).toEqual(REVISED); // what implement and code review read
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['spec-judge']).toMatchObject({ status: 'converged', retries: 1, agentRuns: 2, calls: 4 });
    expect(adv.pending).toEqual([]);
    expect(adv.counters).toMatchObject({ resolved: 1, forwarded: 0 });
    expect(progress(w, n).body).toContain('| spec-judge | converged |');
  });

  it('a judge answer that does not parse fails closed: a high blocking concern, and what the loop cannot settle waits for code review', async () => {
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        ...signOff,
        plan_review: planAccepted,
        'adv_spec-judge': { fault: 'junk' },
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const adv = stateOf(w, n).adversarial!;
    // round 2's synthetic concern is round 1's: the loop stops as oscillating instead of spending round 3
    expect(adv.stages['spec-judge']).toMatchObject({ status: 'oscillated', retries: 1, agentRuns: 2 });
    expect(roles(w).filter((r) => r === 'adv_spec-ac-generator')).toHaveLength(2);
    expect(adv.pending).toEqual([
      expect.objectContaining({ voter: 'spec-judge', severity: 'high', must_address_by: 'code-review' }),
    ]);
    expect(adv.log.map((e) => e.type)).toContain('OscillationDetected');
    const comment = w.gh.world
      .commentsOn(n)
      .find((c) => c.body.startsWith('<!-- hydraflow:adversarial-stage spec-judge -->'))!;
    expect(comment.body).toContain('could not be read, so the acceptance criteria were not judged');
  });

  it('a judge that blocks anew every round: two rewrites, then the retries are exhausted and its concerns wait for code review', async () => {
    const judge = [1, 2, 3].map((round) => ({
      json: {
        consistent: false,
        concerns: [
          { severity: 'high', blocking: true, text: `Round ${round}: criterion 1 is unmeasurable.`, evidence: [] },
        ],
      },
    }));
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        ...signOff,
        plan_review: planAccepted,
        'adv_spec-judge': judge,
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w).slice(6)).toEqual(['plan_review', ...SPEC_CALLS, ...SPEC_CALLS, ...SPEC_CALLS]);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['spec-judge']).toMatchObject({ status: 'exhausted', retries: 2, agentRuns: 3, calls: 6 });
    expect(adv.log.map((e) => e.type)).toContain('AdversarialRetryExhausted');
    expect(adv.pending).toEqual([
      expect.objectContaining({ voter: 'spec-judge', must_address_by: 'code-review', severity: 'high' }),
    ]);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
  });

  it('a trivial issue: no criteria are written and no judge is asked', async () => {
    const { w, n } = await open({ triage: { json: simple }, plan: planCreatingFiles, plan_review: planAccepted }, ON);
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'plan', 'plan_review']);
    expect(stateOf(w, n).adversarial!.stages['spec-judge']).toBeUndefined();
  });
});

describe('the assumption surfacer at plan, before the council', () => {
  const signOff = { adv_builder: none, adv_tester: none, 'adv_risk-skeptic': none };
  const ASSUMPTION = 'Every user row fits in memory at once.';
  const GAP = 'Shipped with a known gap in #7 (high, Risk-Skeptic at plan-council): exports ignore deleted users.';

  it('a load-bearing assumption the plan does not check goes straight to the plan reviewer (no planner re-run), and it reads what earlier merges left in memory', async () => {
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: planCreatingFiles,
        [SURFACER]: {
          json: {
            assumptions: [
              { assumption: ASSUMPTION, how_to_check: 'Count the users table.', load_bearing: true, checked: false },
              { assumption: 'The CSV needs no header.', how_to_check: 'Ask.', load_bearing: false, checked: false },
            ],
          },
        },
        ...signOff,
        plan_review: (request) => {
          const ids = [...request.messages[0]!.content.matchAll(/^- id ([0-9a-f]{16}) /gm)].map((m) => m[1]!);
          const concerns = ids.map((id) => ({ id, verdict: 'carried', why: 'Code review checks the streaming.' }));
          return { json: { ...planAccepted.json, concerns } };
        },
      },
      ON,
    );
    // an earlier merge's carryover (src/phases/adversarial/carryover.ts), written as HydraFlow writes it
    const memory = new Memory(
      new MemoryBranch(createRestClient({ token: w.gh.botToken, baseUrl: w.gh.url }), {
        owner: 'acme',
        repo: 'widgets',
      }),
      {
        config: { memory: { enabled: true, max_entries: 200, max_age_days: 90 } },
        now: () => new Date(),
        warn: () => {},
      },
    );
    const kept = await memory.retain(
      [{ kind: 'knowledge', text: GAP, tags: ['known-gap', 'export', 'users'], source: 7, confidence: 0.3 }],
      'memory: a known gap',
    );
    expect(kept.ok).toBe(true);

    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    const calls = roles(w);
    expect(calls.slice(0, 3)).toEqual(['triage', 'plan', SURFACER]);
    expect(calls.filter((r) => r === 'plan')).toHaveLength(1); // no revision for the surfacer: its retries are 0
    const surfacer = w.models.calls.find((c) => c.role === SURFACER)!.request!;
    expect(surfacer.system).toContain('exports ignore deleted users'); // the recalled knowledge, as a note
    const review = w.models.calls.find((c) => c.role === 'plan_review')!.request!.messages[0]!.content;
    expect(review).toContain(ASSUMPTION);
    expect(review).not.toContain('The CSV needs no header.'); // not load-bearing: not blocking

    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
    const adv = stateOf(w, n).adversarial!;
    expect(adv.stages['assumptions-plan']).toMatchObject({ retries: 0, agentRuns: 0, calls: 1 });
    expect(adv.stages['assumptions-plan']!.status).not.toBe('running');
    // carried by the plan reviewer: it now waits for code review
    expect(adv.pending).toEqual([
      expect.objectContaining({ voter: 'assumption-surfacer', must_address_by: 'code-review' }),
    ]);
  });
});

describe('the plan council out of calls', () => {
  it('every round blocks anew: after one revision its budget of 7 calls ends the stage, visibly, and its open concerns wait for the plan reviewer, who sees them', async () => {
    const blocks = (voter: string) =>
      [1, 2, 3].map((round) => ({
        json: {
          concerns: [
            { severity: 'high', blocking: true, text: `${voter}, round ${round}: a case is missing.`, evidence: [] },
          ],
        },
      }));
    const { w, n } = await open(
      {
        triage: { json: complex },
        plan: [planCreatingFiles, revisedPlan, revisedPlan],
        adv_builder: blocks('builder'),
        adv_tester: blocks('tester'),
        'adv_risk-skeptic': blocks('risk-skeptic'),
        plan_review: (request) => {
          const ids = [...request.messages[0]!.content.matchAll(/^- id ([0-9a-f]{16}) /gm)].map((m) => m[1]!);
          return {
            json: { ...planAccepted.json, concerns: ids.map((id) => ({ id, verdict: 'carried', why: 'Later.' })) },
          };
        },
      },
      ON,
    );
    const run = await w.run('issues', 'opened', { issue: n });
    expect(run.exitCode, run.stdout).toBe(0);
    const adv = stateOf(w, n).adversarial!;
    const council = adv.stages['plan-council']!;
    // the budget of 7 calls: 3 voters, a revision, 3 voters; a third round would pass it
    expect(council).toMatchObject({ calls: 7, agentRuns: 1 });
    expect(council.status).toBe('budget'); // ended visibly by its budget, before its retry cap of 2
    expect(progress(w, n).body).toContain('| plan-council | budget |');
    const review = w.models.calls.find((c) => c.role === 'plan_review')!.request!.messages[0]!.content;
    expect(review).toContain('Concerns forwarded by the adversarial review');
    for (const voter of ['builder', 'tester', 'risk-skeptic']) expect(review).toContain(`${voter}, round 2`);
    expect(adv.pending.filter((p) => p.must_address_by === 'code-review')).toHaveLength(3);
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-ready']);
  });
});
