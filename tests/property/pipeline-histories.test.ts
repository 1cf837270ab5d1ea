/**
 * Property: whatever people of every permission level, re-runs, redeliveries, concurrency and crashes do to an issue,
 * once the dust settles the issue is in a sane state (ADR-0002's label state machine, one progress comment, valid
 * signed state, no leaked lock), strangers' commands cost nothing, and an outsider's issue reaches nothing after
 * triage — no plan, no coding agent — without a go from someone who may steer (issue #17).
 *
 * A history is a short random sequence of steps on one issue (sometimes two): issues opened by anyone (with the labels
 * an issue form applies), label edits, slash commands, a writer who puts an older block back into HydraFlow's progress
 * comment, breaks its block or deletes it (ADR 0007), re-runs and redeliveries, concurrency and crashes
 * (./world.ts says how they are played), and the template's hourly schedule (the sweep). A clear triage on the routing
 * step goes on into planning in the same run (phases/next-phase.ts); a vague one hands the issue to discover by
 * dispatch, and the product track's dispatched runs are delivered like any event (a step may deliver, crash or re-run
 * one while humans move labels; the rest are delivered at the end), with a research agent whose brief is complete,
 * short of a section (redone once) or junk. Other dispatched phases are recorded, not run, but a `/retry` at
 * `hydraflow-ready` runs the implement phase, the coding agent and the publish job for real (a pull request;
 * tests/property/pull-histories plays what happens to one). Beyond the label state machine, the product track posts
 * nothing twice: one brief per issue whatever re-runs.
 *
 * Failures replay: `fc.assert` prints the seed and path; the model's answers come from a generator seeded by the
 * history (only the interleaving inside a `concurrent` step depends on the event loop).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { PIPELINE_LABELS } from '@hydraflow/core';
import { startGitHubEmulator, startModelServer, type ModelServer } from '@hydraflow/testkit';
import { type Level } from './people';
import { buildTemplate, copyTemplate, removeHistoryDir } from './repository';
import { historyScript } from './scripts';
import { addPeople, Ctx, playSteps, type Action, type Gap, type History, type IssueRef, type Op } from './world';
import { checkPlayed, holds, inBothOrders } from './holds';

const NUM_RUNS = Number(process.env.HYDRAFLOW_PROPERTY_RUNS ?? 1000);
/** OpenAPI validation of every emulated request/response (measured: see the report at the end of the run). */
const VALIDATE = process.env.HYDRAFLOW_PROPERTY_VALIDATE !== '0';
/**
 * The test's time limit grows with the run count (1 s a history, several times the median on a loaded machine, with
 * room for shrinking a counterexample), never below 30 minutes: a fixed limit cut long runs short
 * (HYDRAFLOW_PROPERTY_RUNS=5000 outran 600 s on two shared cores).
 */
const TIMEOUT_MS = Math.max(1_800_000, NUM_RUNS * 1_000);
const HUMAN_LABELS = ['bug', 'priority:high'] as const;
/**
 * The dispatched phases a history runs: the product track's (triage hands a vague issue to discover by dispatch; the
 * hourly sweep resumes a hand-off whose claim expired). Plan's hand-off to the coding agent is recorded, not run: the
 * pull request histories play it.
 */
const PRODUCT_DISPATCHES = ['discover', 'shape'] as const;

// ---------------------------------------------------------------------------------------------------------------
// The history model

/** Who acts: anyone, most often someone who may steer or set labels. */
const levelArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Level>('write') },
  { weight: 1, arbitrary: fc.constantFrom<Level>('admin', 'maintain') },
  { weight: 2, arbitrary: fc.constant<Level>('triage') },
  { weight: 2, arbitrary: fc.constantFrom<Level>('read', 'member', 'outsider') },
);
/** Who edits labels: GitHub lets the triage role and above; the others get a 403 (and HydraFlow hears nothing). */
const labelerArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<Level>('write', 'admin', 'maintain') },
  { weight: 3, arbitrary: fc.constant<Level>('triage') },
  { weight: 1, arbitrary: fc.constantFrom<Level>('read', 'outsider') },
);
const issueArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant<IssueRef>(0) },
  { weight: 1, arbitrary: fc.constant<IssueRef>(1) },
);
const labelArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PIPELINE_LABELS) },
  { weight: 1, arbitrary: fc.constantFrom(...HUMAN_LABELS) },
);
/** Opened by anyone, with the labels an issue form may apply (whoever opens it). */
const openArb = (issue: fc.Arbitrary<IssueRef>) =>
  fc.record({
    kind: fc.constant('open' as const),
    issue,
    labels: fc.oneof(
      { weight: 3, arbitrary: fc.subarray(['bug', 'hydraflow-find']) },
      { weight: 1, arbitrary: fc.subarray(['hydraflow-find', 'hydraflow-plan', 'hydraflow-ready', 'hydraflow-hitl']) },
      // straight into the product track: research, or directions to choose from (replies then reach shape)
      {
        weight: 2,
        arbitrary: fc.constantFrom<string[]>(['hydraflow-discover'], ['hydraflow-shape'], ['bug', 'hydraflow-shape']),
      },
    ),
    by: levelArb,
  });
const commentArb = fc.record({
  kind: fc.constant('comment' as const),
  issue: issueArb,
  body: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('/triage', '/retry') },
    { weight: 1, arbitrary: fc.constantFrom('/groom', '/help', '/ship-it', '/frobnicate') },
    { weight: 1, arbitrary: fc.constant('Thanks, I can reproduce this.') },
    // replies to shape's directions: a choice (by letter, by name), a question that chooses nothing (a turn)
    { weight: 2, arbitrary: fc.constantFrom('B', 'Direction B', 'go with Quick & Focused') },
    { weight: 1, arbitrary: fc.constant('What would a cheaper option look like?') },
  ),
  by: levelArb,
});
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 1, arbitrary: openArb(fc.constant<IssueRef>(1)) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('label' as const),
      issue: issueArb,
      op: fc.constantFrom('add' as const, 'remove' as const),
      label: labelArb,
      deliver: fc.oneof(
        { weight: 3, arbitrary: fc.constant('now' as const) },
        { weight: 1, arbitrary: fc.constant('later' as const) },
      ),
      by: labelerArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(7) }) },
  // the product track's dispatched runs (discover), while humans act around them
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(3), dispatch: fc.constant(true) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rerun' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom('attempt' as const, 'redelivery' as const),
    }),
  },
  { weight: 3, arbitrary: commentArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), issue: issueArb }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
  // a dead run's transient adversarial label (issue #19): HydraFlow's own, never a pipeline label
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('leftover' as const),
      issue: issueArb,
      phase: fc.constantFrom('discover' as const, 'shape' as const, 'plan' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('tamper' as const),
      issue: issueArb,
      how: fc.constantFrom('older' as const, 'break' as const, 'delete' as const),
      deliver: fc.constantFrom('now' as const, 'later' as const),
    }),
  },
);
const opArb = (action: fc.Arbitrary<Action>): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 6, arbitrary: action },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('concurrent' as const), a: action, b: actionArb, after: fc.nat(6) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('crash' as const), inner: action, k: fc.integer({ min: 1, max: 8 }) }),
    },
  );
const gapArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Gap>('short') },
  { weight: 2, arbitrary: fc.constant<Gap>('long') },
  { weight: 1, arbitrary: fc.constant<Gap>('hour') },
);
const historyArb: fc.Arbitrary<History> = fc.record({
  seed: fc.integer(),
  provider: fc.constantFrom('anthropic' as const, 'openai' as const),
  steps: fc
    .tuple(
      fc.record({ gap: fc.constant('short' as const), op: opArb(openArb(fc.constant<IssueRef>(0))) }),
      fc.array(fc.record({ gap: gapArb, op: opArb(actionArb) }), { maxLength: 7 }),
    )
    .map(([first, rest]) => [first, ...rest]),
  quiesce: fc.record({ gap: gapArb, order: fc.constantFrom('crashed-first' as const, 'pending-first' as const) }),
});

/**
 * Product-track histories (issue #18): a vague issue (triage always routes it to discover), then mostly the product
 * track's own moves — its dispatched runs delivered (discover, then shape's directions), replies that choose a direction
 * (by letter, by name, /ship-it) or ask a question (a turn), by people of every level, with label moves, re-runs,
 * crashes, concurrency and the hourly sweep (after an hour: shape's timeout) around them.
 */
const replyArb = fc.record({
  kind: fc.constant('comment' as const),
  issue: fc.constant<IssueRef>(0),
  body: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('B', 'Direction B', 'go with Quick & Focused') },
    { weight: 2, arbitrary: fc.constant('What would a cheaper option look like?') },
    { weight: 1, arbitrary: fc.constantFrom('/ship-it', '/ship-it B', '/retry') },
  ),
  by: levelArb,
});
const productActionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(3), dispatch: fc.constant(true) }),
  },
  { weight: 5, arbitrary: replyArb },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('label' as const),
      issue: fc.constant<IssueRef>(0),
      op: fc.constantFrom('add' as const, 'remove' as const),
      label: labelArb,
      deliver: fc.constantFrom('now' as const, 'later' as const),
      by: labelerArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rerun' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom('attempt' as const, 'redelivery' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(7) }) },
);
const productHistoryArb: fc.Arbitrary<History> = fc.record({
  seed: fc.integer(),
  provider: fc.constantFrom('anthropic' as const, 'openai' as const),
  track: fc.constant('product' as const),
  steps: fc
    .tuple(
      fc.record({
        gap: fc.constant('short' as const),
        op: fc.record({
          kind: fc.constant('open' as const),
          issue: fc.constant<IssueRef>(0),
          labels: fc.constant<string[]>([]),
          by: fc.oneof({ weight: 4, arbitrary: fc.constant<Level>('write') }, { weight: 1, arbitrary: levelArb }),
        }),
      }),
      fc.array(fc.record({ gap: gapArb, op: opArb(productActionArb) }), { minLength: 2, maxLength: 9 }),
    )
    .map(([first, rest]) => [first, ...rest]),
  quiesce: fc.record({ gap: gapArb, order: fc.constantFrom('crashed-first' as const, 'pending-first' as const) }),
});

// ---------------------------------------------------------------------------------------------------------------

let models: ModelServer;
let root: string;
let template: string;

beforeAll(async () => {
  models = await startModelServer({ script: {} });
  root = mkdtempSync(join(tmpdir(), 'hydraflow-property-'));
  template = buildTemplate(root);
});
afterAll(async () => {
  await models?.close();
  rmSync(root, { recursive: true, force: true });
});

async function playHistory(history: History): Promise<Ctx> {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  const dir = mkdtempSync(join(root, 'h-'));
  const repo = copyTemplate(template, dir);
  const gh = await startGitHubEmulator({
    owner: 'acme',
    repo: 'widgets',
    validate: VALIDATE,
    clock: () => Date.now(),
    git: { bareRepo: repo.bare },
  });
  try {
    const tokens = addPeople(gh);
    models.calls.length = 0;
    models.setScript(historyScript(history.seed, { vague: history.track === 'product' }));
    const ctx = new Ctx(gh, models, history, tokens, dir, repo, { runsDispatches: PRODUCT_DISPATCHES });
    await playSteps(ctx);
    return ctx;
  } finally {
    await gh.close();
    removeHistoryDir(dir);
    vi.useRealTimers();
  }
}

/** Product-track histories that once failed (shrunk counterexamples of the second property below). */
const PRODUCT_REGRESSIONS: History[] = [
  // Found at 2500 product-track runs on 57d6b1c (fast-check seed -1109540740): a discover run died between adding
  // hydraflow-shape and taking off hydraflow-discover; the hourly sweep listed the issue, a writer took off
  // hydraflow-shape (no move: hydraflow-discover stood beside it), and the sweep, resuming shape, took off the leftover
  // as an unpublished move on the labels it had listed, leaving the issue with none. The sweep now puts the stage's
  // label back first (handlers/own-labels.ts, dropUnpublishedMoves).
  {
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 8 } },
      {
        gap: 'hour',
        op: {
          kind: 'concurrent',
          a: { kind: 'sweep' },
          b: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-shape', deliver: 'later', by: 'write' },
          after: 2,
        },
      },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 1 } },
      { gap: 'long', op: { kind: 'comment', issue: 0, body: '/ship-it', by: 'triage' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 2500 product-track runs on ca5f9bb (fast-check seed 385888652): a writer's reply at hydraflow-shape
  // crashed after taking the lock; a triage-role user set hydraflow-find and took hydraflow-shape off; the reply's re-run
  // found the issue not waiting for a direction and left its dead attempt's 👀 with no claim. Shape's "nothing to do"
  // now frees it, as triage's does (IssueSession.freeDeadAttemptsLock).
  {
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: 'B', by: 'write' }, k: 2 } },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
          k: 1,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0, dispatch: true },
          b: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-shape', deliver: 'now', by: 'triage' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 2500 runs on 72b2533 (fast-check seed 397133805): a writer set hydraflow-discover again on an issue
    // discover had left for shape, while the hourly sweep looked at it; the sweep took her label off as the leftover of
    // discover's move (finishCutMove), and her event's run found nothing to do. A stale label that someone other than
    // HydraFlow set again is now theirs to steer (handlers/phase.ts, setAgainByHuman).
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'long', op: { kind: 'deliver', pick: 0, dispatch: true } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'sweep' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-discover', deliver: 'now', by: 'write' },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'comment', issue: 0, body: 'What would a cheaper option look like?', by: 'triage' },
          k: 1,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 2500 runs with the oracle's check 4b (fast-check seed -479336580): a writer set hydraflow-ready and
    // hydraflow-groom at once while discover's dispatch waited; the dispatched run escalated the conflict, and the
    // escalation's own move gave way to the first of her labels (the rule for labels set before a run began, as first
    // written) and took the other off. An escalation now gives way to no label from before the run, and of several
    // such labels the one set last wins.
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-ready', deliver: 'later', by: 'write' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-groom', deliver: 'later', by: 'write' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: 'B', by: 'read' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 7 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found by a probe written for the oracle's check 4b (tests/property/end-state.ts): a writer set hydraflow-plan
    // while triage's discover dispatch waited; its run, queued ahead of her label event's, discovered anyway and its
    // move took her label off, so her event's run found nothing to do. A dispatched run now honours a stage label a
    // permitted human set beside its own (handlers/phase.ts, runDispatched; tests/queued-label.e2e.test.ts).
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-plan', deliver: 'later', by: 'write' },
      },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
    ],
    quiesce: { gap: 'short', order: 'pending-first' },
  },
  {
    // The same label refused instead: the discover run died holding the lock, her label event's run gave up waiting
    // for it, and the sweep resumed discover an hour later, which discovered and took her label off.
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 4 } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-plan', deliver: 'now', by: 'write' },
      },
      { gap: 'hour', op: { kind: 'sweep' } },
    ],
    quiesce: { gap: 'short', order: 'pending-first' },
  },
  {
    // Found at 5000 runs on h-sweeprace (fast-check seed -1453069572): the hourly sweep took the 👀 to time a shape
    // conversation out and died before publishing a claim; an admin's "B" was refused by that lock, and made the issue
    // look active, so the sweep's re-run skipped it as not quiet and its dead attempt's 👀 stayed, with no claim. A
    // re-run of the sweep now looks at an issue with a 👀 whatever its quiet (the swept look frees a 👀 no claim names:
    // handlers/phase.ts), and the timeout itself waits for the quiet (src/phases/shape/index.ts).
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0, dispatch: true },
          b: { kind: 'comment', issue: 0, body: 'B', by: 'read' },
          after: 0,
        },
      },
      { gap: 'long', op: { kind: 'deliver', pick: 0, dispatch: true } },
      {
        gap: 'hour',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-find', deliver: 'now', by: 'write' },
          k: 1,
        },
      },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 3 } },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: 'B', by: 'admin' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed -1907998338), and again in CI (this very history): the hourly sweep resumed
    // a discover hand-off whose claim had expired while its dispatched run started late; that run had taken the lock
    // (a fresh 👀, its claim not yet published) when the sweep looked at the 👀, and the sweep removed it and put its
    // own; the late run did the discovery (and escalated), the sweep's dispatch found its work taken and did nothing:
    // the sweep's 👀 stayed, with no claim. The race depends on timing (replays pass);
    // tests/sweep-handoff.e2e.test.ts forces it. The sweep now leaves a 👀 that the expired claim does not name,
    // younger than a claim lives, to the run that put it on (handlers/sweep.ts), and a second send of a dispatch that
    // waits for its run is the same dispatch (core state/ops.ts recordDispatch).
    seed: -392832811,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/ship-it', by: 'read' }, k: 1 } },
      {
        gap: 'short',
        op: { kind: 'concurrent', a: { kind: 'deliver', pick: 0, dispatch: true }, b: { kind: 'sweep' }, after: 0 },
      },
      { gap: 'hour', op: { kind: 'comment', issue: 0, body: '/ship-it', by: 'triage' } },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: 'B', by: 'triage' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on c5296ec (product seed 1325686242), kept open while it passed on replay: the same race as
    // -392832811 above (the sweep and the late dispatched run of a discover hand-off), beside a writer's "B" and a
    // triage-role user's hydraflow-find; tests/sweep-handoff.e2e.test.ts forces it.
    seed: -1584819397,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: 'B', by: 'write' }, k: 1 } },
      { gap: 'short', op: { kind: 'concurrent', a: { kind: 'sweep' }, b: { kind: 'deliver', pick: 0 }, after: 0 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0, dispatch: true },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'sweep' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed -1931580413): the hourly sweep timed a shape conversation out and died after
    // moving the label to hydraflow-hitl, before it wrote the state; its re-run no longer found the issue among those
    // waiting in shape: the state said shape on an issue at hitl. An escalation now adds hydraflow-hitl first and takes
    // the old label off once the state is published; a re-run finishes a move its dead attempt published.
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'hour', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 6 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found on seed -100551279 (with shape from h-shape at c3a308c): a writer's "B" chose a direction and its run died
  // after its 6th write (the label already moved to hydraflow-plan, the state not yet published, plan not dispatched);
  // its re-run found the issue at plan, "does not wait for a direction", and changed nothing: the state says shape, the
  // label plan, and no plan run ever comes. The re-run now redoes the choice (src/phases/shape/index.ts).
  {
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0 } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: 'B', by: 'write' }, k: 6 } },
      { gap: 'long', op: { kind: 'deliver', pick: 0, dispatch: true } },
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/ship-it', by: 'triage' }, k: 1 },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed -1306409349): the hourly sweep's shape timeout died after adding hydraflow-hitl,
  // before publishing; a writer's reply was answered by shape from the state, which kept hitl beside shape for good. A
  // phase that takes the lock first takes off HydraFlow's own unpublished label (src/handlers/own-labels.ts).
  {
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'hour', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 5 } },
      {
        gap: 'long',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0 }, k: 1 } },
      {
        gap: 'short',
        op: { kind: 'comment', issue: 0, body: 'What would a cheaper option look like?', by: 'write' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on f043933 (product seed 78838780): a sweep took over the expired hand-off lock of a discover
    // dispatch (deleting the claimed 👀, putting its own on) and died before publishing. Every later run's
    // compare-and-swap on the 👀 the claim names found it gone: the discover run and two writers' label overrides gave
    // up, and the sweep's re-run skipped the issue (a writer's hydraflow-epic beside its stage) and would have taken the
    // young unnamed 👀 for a live run's. Three stage labels stayed. A sweep now skips an epic only when it is the issue's
    // one stage label (or its state says epic), and a re-run of the sweep presumes such a 👀 its dead attempt's
    // (handlers/sweep.ts), as IssueSession.tryAcquire does for a phase's re-run.
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'hour', op: { kind: 'comment', issue: 0, body: 'What would a cheaper option look like?', by: 'read' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 4 } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-epic', deliver: 'now', by: 'write' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-review', deliver: 'now', by: 'write' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on da36cc0 (product seed -1137976996; it fails on 63f8907 too): a discover run died between
    // adding hydraflow-shape and taking off hydraflow-discover, and a triage-role user took off hydraflow-shape (no move:
    // hydraflow-discover stood beside it). The discover run's re-run found its work done and, shape's label gone, left
    // the cut move unfinished; the shape run the sweep resumed put its label back beside the stale one. The re-run now
    // puts the label back and takes the stale one off when the issue's events show no human moved it (handlers/phase.ts).
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 8 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-shape', deliver: 'later', by: 'triage' },
          b: { kind: 'label', issue: 1, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
          after: 0,
        },
      },
      {
        gap: 'long',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0, dispatch: true },
          b: { kind: 'deliver', pick: 0 },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0, dispatch: true },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-hitl', deliver: 'later', by: 'triage' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 1 } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on abc5c00 (product seed -1768124150; it fails on 63f8907 too): the hourly sweep timed a shape
    // conversation out, published the escalation (its claim released) and died before taking its 👀 off. The 👀 was
    // young and no claim named it, so the sweep's re-run took it for a live run's and left it. The state now records the
    // 👀 the releasing run still holds (`released`): found later, any run may take it at once.
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: 'B', by: 'read' }, k: 2 } },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'comment', issue: 0, body: 'What would a cheaper option look like?', by: 'admin' },
          k: 3,
        },
      },
      { gap: 'hour', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 1 } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'sweep' }, k: 6 } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 1 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-hitl', deliver: 'now', by: 'write' },
          b: { kind: 'deliver', pick: 0, dispatch: true },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 2500 product-track runs on 972ed9a (fast-check seed -1703224964): the sweep's shape timeout moved the issue
  // to hydraflow-hitl; a writer's /retry moved it back to hydraflow-shape and died before publishing; its re-run took
  // the sweep's finished move for a cut one, put hydraflow-hitl back, and the shape phase it resumed left it under a
  // shape state. A label set again since the move is no leftover of it (handlers/phase.ts stillOwnCut).
  {
    seed: 0,
    provider: 'anthropic',
    track: 'product',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'short', op: { kind: 'deliver', pick: 0, dispatch: true } },
      { gap: 'hour', op: { kind: 'label', issue: 0, op: 'remove', label: 'bug', deliver: 'now', by: 'triage' } },
      { gap: 'short', op: { kind: 'sweep' } },
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/retry', by: 'write' }, k: 8 },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
];

/**
 * Histories that once failed (fast-check's shrunk counterexamples), played before the random ones on every run: humans
 * setting stage labels while a crashed triage held the lock (their events refused), then the crashed run's re-run; a
 * redelivered `labeled` event (its payload: the issue still open) triaging an issue closed since; a phase reached by
 * going on in the same run that found its work done and kept the 👀; stage labels set while a run that had gone on into
 * another phase held the lock, then that run's re-run; a close after a human took out the label triage had just set,
 * the lock handed to a dispatched phase.
 */
const REGRESSIONS: History[] = [
  {
    // Found at 5000 runs on 75872a0 (fast-check seed 1042266366): a reader's issue form opened the issue with
    // hydraflow-find and hydraflow-hitl and both labeled runs died; a triage-role user took hydraflow-find off; the
    // re-run of its labeled run undid hydraflow-hitl and left the opened issue untriaged with no label. A refused label's
    // run whose label is gone now triages the unseen issue while another refused stage label is on (label-steering.ts).
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'open', issue: 0, labels: ['hydraflow-find', 'hydraflow-hitl'], by: 'read' },
          k: 1,
        },
      },
      {
        gap: 'long',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on 57d6b1c (fast-check seed -1820932531): the opened run died at once; a triage-role user's
    // hydraflow-find on the issue HydraFlow had not seen started a triage, which handed the issue to discover and died
    // before sending the dispatch; the re-run of that labeled run, now finding the issue triaged, undid her label and
    // never sent it. The lock stayed handed to a discover run nobody started. Label steering's re-runs now send the
    // dispatches their dead attempts recorded, as a phase's re-run does.
    seed: 18,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'write' }, k: 1 } },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
          k: 8,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs on bc941d7 (fast-check seed -2025006957): a triage-role user's issue form opened the issue with
    // hydraflow-plan and hydraflow-hitl; both labeled runs died before writing anything, a writer took hydraflow-plan
    // off, and the re-run of its labeled run undid hydraflow-hitl as a label set while its dead attempt held the
    // issue, leaving the opened issue untriaged with no label. That re-run now triages it (handlers/override.ts).
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'open', issue: 0, labels: ['hydraflow-plan', 'hydraflow-hitl'], by: 'triage' },
          k: 1,
        },
      },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-plan', deliver: 'now', by: 'write' },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs with the oracle's check 4b (fast-check seed -493415005): an admin's /groom died, a writer's
    // hydraflow-epic was refused by its lock, and the command's re-run groomed and wrote the whole label set (one
    // PATCH with the body), taking her label off. IssueSession.moveWithEdit now gives way to it as moveTo does.
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'read' }, k: 7 } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/groom', by: 'admin' }, k: 3 } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-epic', deliver: 'now', by: 'write' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found when the oracle's check 4b (tests/property/end-state.ts) was added (fast-check seed -688321111): a writer
    // set hydraflow-groom while the re-run of a hydraflow-find label event waited to start; the re-run triaged again
    // and its move took her label off, so her event's run found nothing to do. IssueSession.moveTo now honours a
    // permitted human's label that was beside the stage before the run started, as one that arrives during it.
    seed: -688321111,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: ['hydraflow-find'], by: 'write' } },
      {
        gap: 'hour',
        op: {
          kind: 'concurrent',
          a: { kind: 'sweep' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-groom', deliver: 'later', by: 'write' },
          after: 0,
        },
      },
      { gap: 'long', op: { kind: 'rerun', pick: 1, mode: 'attempt' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found on seed 4242: a triage-role user opened an issue with hydraflow-discover, a writer set hydraflow-epic, then
  // took it out; that run died after its first write, and the triage-role user set hydraflow-find meanwhile (event
  // delivered later). The re-run honoured hydraflow-find as a refused human move, and her own event's undo restored the
  // state's stage, now find: the issue kept a label from someone who may not steer. The re-run now asks the issue's
  // events who set the label (src/phases/refused-moves.ts).
  // And with the triage-role user's event delivered first (pending-first): the undo of her label put back the stage
  // label the writer had taken out (label-steering.ts now asks who removed it).
  ...inBothOrders({
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: ['hydraflow-discover'], by: 'triage' } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-epic', deliver: 'now', by: 'write' },
      },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-epic', deliver: 'now', by: 'write' },
          k: 1,
        },
      },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  }),
  // Found on seed -1932684471 by a first fix of the one below: a re-run of a /triage that escalated again (a move from
  // hydraflow-hitl to hydraflow-hitl) took its one label for a half-finished move's old label and removed it.
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'read' } },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: '/triage', by: 'write' } },
      { gap: 'short', op: { kind: 'rerun', pick: 3, mode: 'attempt' } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  // Found on seed -71234849: a write user's /triage crashed after its 6th write, then a triage-role user (below
  // commands.min_permission) added hydraflow-find, its event delivered later; the issue ended with two pipeline labels.
  {
    seed: 6,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'triage' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/triage', by: 'write' }, k: 6 } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found on a new seed (-1179095784): triage crashed twice holding the lock, a human set hydraflow-ready, then
    // hydraflow-find and hydraflow-shape at the same moment; the issue kept three pipeline labels.
    seed: -7895749,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [] }, k: 5 } },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-discover', deliver: 'now' },
          k: 3,
        },
      },
      { gap: 'short', op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-ready', deliver: 'now' } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-shape', deliver: 'now' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // A human took out the label triage had just set (discover), the lock went to the dispatched discover run, and the
    // issue was closed: the close event's payload carries the 👀 count, so the close cleans the lock up.
    seed: 370991337,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: ['hydraflow-find'] },
          b: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-discover', deliver: 'now' },
          after: 4,
        },
      },
      { gap: 'short', op: { kind: 'close', issue: 0 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    seed: -462570870,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: ['hydraflow-find'] } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now' },
          b: { kind: 'close', issue: 0 },
          after: 0,
        },
      },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'rerun', pick: 5, mode: 'redelivery' }, k: 2 } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    seed: -47891148,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [] }, k: 5 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-shape', deliver: 'later' },
          b: { kind: 'deliver', pick: 0 },
          after: 1,
        },
      },
      { gap: 'short', op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    seed: -18828335,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [] }, k: 5 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 1, labels: [] },
          b: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-discover', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-ready', deliver: 'later' } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // A re-run /triage that went on into planning found the plan accepted already: the 👀 it held was left behind.
    seed: 2109394165,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: [] },
          b: { kind: 'deliver', pick: 0 },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/triage' }, k: 1 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Humans set two stage labels while a crashed run that had gone on from triage into plan held the lock; its re-run
    // resumed plan and left three pipeline labels.
    seed: -343656753,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [] }, k: 6 } },
      { gap: 'short', op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-groom', deliver: 'now' } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later' },
          b: { kind: 'deliver', pick: 0 },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'pending-first' },
  },
  {
    // Found on a new seed (677662621) once a command was done once per comment: a /triage run went on into planning and
    // died mid-way through its label swap after the state marking the comment done was published; its re-run skipped
    // as "done already" and the issue kept hydraflow-plan and hydraflow-ready. A re-run now redoes its own command.
    seed: 2142355449,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: [] },
          b: { kind: 'label', issue: 0, op: 'add', label: 'bug', deliver: 'now' },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'rerun', pick: 0, mode: 'attempt' },
          b: { kind: 'comment', issue: 0, body: '/triage' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/triage' }, k: 8 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found once people of every level joined the histories (fast-check seed 1752732854): a triage-role user opened an
    // issue with hydraflow-hitl; the label was undone and the issue never triaged (no pipeline label at all).
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-hitl'], by: 'triage' }, k: 1 },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // Found once people of every level joined the histories (fast-check seed 1415648203): a writer labelled an issue
    // hydraflow-epic and said /retry; the epic phase found "all 0 phases done", moved it to hydraflow-fixed and died
    // before its state was written; the re-run read the label, found nothing to retry, and the state kept `epic`.
    seed: 243044588,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'read' } },
      {
        gap: 'long',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-epic', deliver: 'now', by: 'write' },
      },
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/retry', by: 'write' }, k: 5 },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found once people of every level joined the histories (fast-check seed -269465346): a triage-role user
    // opened an issue with hydraflow-find and hydraflow-plan; the run for hydraflow-find triaged it as opened and died
    // after its last publish; its re-run found the issue triaged, undid the label and left the dead attempt's 👀.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'open', issue: 0, labels: ['hydraflow-find', 'hydraflow-plan'], by: 'triage' },
          k: 6,
        },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // Found with people of every level (fast-check seed -227815040): an outsider's issue waited after triage; a writer's
    // /retry planned it and died half-way through moving it to hydraflow-ready, before recording the plan; the re-run
    // read the label and answered "/retry starts the ready phase, which this version does not include". /retry at
    // ready starts implement, or plans when no plan is accepted yet.
    seed: 1338569598,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'read' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/retry', by: 'write' }, k: 5 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found once writers could change HydraFlow's progress comment (ADR 0007): a pending hydraflow-find ran before the
    // edit's own event and held the issue with the spend of the older block put back; the edit's event, run after it,
    // found the state HydraFlow's own again and wrote nothing, so the newer spend its text showed was never counted.
    seed: -898488980,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [] } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later' },
          b: { kind: 'tamper', issue: 0, how: 'older', deliver: 'later' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // Found then too: the edit's event and a redelivered `opened` ran side by side; both found the state changed, the
    // redelivery held the issue first (with the older block's spend), and the edit's run lost the lock's
    // compare-and-swap and gave up, its text unread. It now waits for the lock and counts what its text shows.
    seed: -1103490803,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [] } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          b: { kind: 'rerun', pick: 0, mode: 'attempt' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'long', order: 'pending-first' },
  },
  {
    // Found by the ported tamper moves (fast-check seed 4242): the run for a second older block put back died holding
    // the lock after it wrote its note; hydraflow-find, a /triage and hydraflow-ready were refused by that lock, and the
    // state-check's re-run freed it and did nothing more: hitl, find and ready were left. It now honours the moves
    // the lock refused (refused-moves.ts), as a re-run of any other run does.
    seed: -153924470,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' }, k: 4 } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'bug', deliver: 'later', by: 'write' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'write' },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'comment', issue: 0, body: '/triage', by: 'admin' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-ready', deliver: 'now', by: 'write' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found by the ported tamper moves (fast-check seed 777): the progress comment was deleted (its event delivered
    // late); a re-run of a crashed triage found no comment, triaged afresh and handed the lock to discover; the
    // deletion's run then found the state held (the deleted text's spend is to be kept) but the held state had dropped
    // the comment's own claim, so it could not see the lock was only handed off, waited and gave up: the deleted
    // comment's spend was never counted. A held state keeps the claim of a block HydraFlow wrote last.
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'write' }, k: 1 } },
      { gap: 'short', op: { kind: 'rerun', pick: 0, mode: 'redelivery' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'delete', deliver: 'later' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 20261127): an older block was put back (its event delivered late); the run
    // for hydraflow-find found the change, took the lock and died before it wrote; the edit's own run then waited two
    // minutes for that lock, gave up, and the spend its text showed was never counted. It now waits until a lock nobody
    // claimed may be taken over.
    seed: -795801712,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'older', deliver: 'later' } },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'write' },
          k: 4,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0 },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 20261127): a reader's issue form set hydraflow-find and the issue was closed
    // while its triage ran; the close run, which takes no lock, wrote over triage's progress comment from the state it
    // had read before, and triage's spend was gone (invariant 6). A known residual of a close beside a run
    // (IssueModel.closeRaced), kept to replay it.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: ['hydraflow-find'], by: 'read' },
          b: { kind: 'close', issue: 0 },
          after: 4,
        },
      },
      { gap: 'long', op: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 20261127, after 3202 histories): an outsider's issue a writer had moved to
    // hydraflow-hitl; an admin's /retry triaged it to hydraflow-discover and died before it wrote the state; the re-run
    // took the phase from the label and found nothing to run (discover was not a phase yet): the state said hitl on an
    // issue at discover. Passes since discover is a phase (issue #18, item 2).
    seed: -168167010,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'triage' } },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-hitl', deliver: 'now', by: 'write' },
          k: 7,
        },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/retry', by: 'admin' }, k: 7 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found on fast-check seed -1055792285: a writer broke the block of HydraFlow's progress comment (its event
    // delivered late), then deleted the comment; the deletion's text did not verify, so its run took the issue for a
    // new one, and the spend HydraFlow had counted was lost (invariant 6) without any close. A deleted state comment
    // now holds the issue whatever its text, and the edit's late event counts the spend its text shows.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'triage' }, k: 7 },
      },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'break', deliver: 'later' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'delete', deliver: 'now' } },
      {
        gap: 'long',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-discover', deliver: 'now', by: 'write' },
          b: { kind: 'label', issue: 1, op: 'add', label: 'bug', deliver: 'now', by: 'read' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // The same seed once the deletion held the issue: both events late. The override run found no comment and wrote
    // one afresh; the edit's event found that one's sequence number no lower than its text's and trusted it, and the
    // spend its text showed was lost. A text GitHub sent of a comment that is no longer the one read holds the issue.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'triage' }, k: 7 },
      },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'break', deliver: 'later' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'delete', deliver: 'later' } },
      {
        gap: 'long',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-discover', deliver: 'now', by: 'write' },
          b: { kind: 'label', issue: 1, op: 'add', label: 'bug', deliver: 'now', by: 'read' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed -532885924): an outsider's vague issue waited at hydraflow-discover for a
    // maintainer; a writer's /retry ran discover, which moved the label on to hydraflow-shape and died before it wrote
    // the state; the re-run found a pipeline label ahead of its state and did nothing: the state said discover.
    seed: -213980258,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'write' }, k: 1 } },
      { gap: 'short', op: { kind: 'open', issue: 1, labels: [], by: 'read' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'comment', issue: 1, body: '/retry', by: 'write' }, k: 8 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed -798869921): a writer opened an issue with hydraflow-shape (an issue form);
    // its labeled run died before writing anything, and a read-role user took the label off. The undo put back the
    // state's stage, but the state knew no stage yet: the issue left the pipeline by the hand of someone who may not
    // steer. An undo on an issue HydraFlow has not written yet puts back the pipeline label the person took off.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-shape'], by: 'write' }, k: 1 },
      },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-shape', deliver: 'now', by: 'triage' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found by CI's 1000 runs (fast-check seed -1844924908): an escalation (triage went on into planning, which could
  // not plan) was cut after it published hitl and before it took hydraflow-plan off; the re-run took it off, then, its
  // labels read before that, honoured hydraflow-plan as a move HydraFlow's own identity made and left no label
  // (src/handlers/phase.ts finishCutMove now tells the rest of the run).
  {
    seed: 1447229419,
    provider: 'anthropic',
    steps: [{ gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'write' }, k: 7 } }],
    quiesce: { gap: 'hour', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed -1941130860): a triage-role user's issue form set hydraflow-discover; its
  // labeled run (treated as opened) triaged it to plan and died before hydraflow-discover came off; a writer removed
  // hydraflow-plan beside it (the router skips that: another pipeline label remains); the re-run undid hydraflow-discover
  // and, the writer having removed plan, left no label. A removal that left another pipeline label moved nothing: the
  // undo puts the state's label back (src/handlers/label-steering.ts removedByPermittedHuman).
  {
    seed: -1445022426,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-discover'], by: 'triage' }, k: 6 },
      },
      {
        gap: 'long',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-plan', deliver: 'now', by: 'write' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed -660527775): an admin's issue was triaged and planned in one run, which died
  // after adding hydraflow-ready and before publishing the move; the hourly sweep resumed plan from the state with both
  // labels on (src/handlers/own-labels.ts: HydraFlow's own unpublished label comes off first). Both orders of the
  // re-run and the sweep.
  ...inBothOrders({
    seed: -735867848,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'admin' }, k: 7 } },
      { gap: 'long', op: { kind: 'sweep' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  }),
  // Found at 5000 runs (fast-check seed -2101725468): a writer opened an issue with hydraflow-shape and took it out of
  // the pipeline; an hour later a triage-role user's hydraflow-find was taken for an issue form's label on an issue
  // HydraFlow never saw, and triaged it back in. An issue with a history is not unseen (label-steering.ts).
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: ['hydraflow-shape'], by: 'write' } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-shape', deliver: 'now', by: 'write' },
      },
      {
        gap: 'hour',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed 1630553918): an outsider's issue waited after triage; two writers' /retry ran
  // discover, then shape; discover's dispatch of shape then started a run that died after its 👀, and its re-run, finding
  // the directions posted, left that 👀 with no claim (IssueSession.releaseUnusedLock frees a dead attempt's lock).
  {
    seed: -242520590,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'read' } },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'comment', issue: 0, body: '/retry', by: 'write' },
          b: { kind: 'deliver', pick: 0, dispatch: true },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: '/retry', by: 'write' } },
      { gap: 'long', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0, dispatch: true }, k: 1 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed -764385732): an outsider's opened run died; a triage-role user set
  // hydraflow-find while the re-run's triage worked, and triage's move honoured it as a human's; her label event's run
  // then undid it and left no label (IssueSession.moveTo honours only a label its setter may steer with).
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: [], by: 'read' }, k: 1 } },
      {
        gap: 'long',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'later', by: 'triage' },
      },
      {
        gap: 'long',
        op: {
          kind: 'concurrent',
          a: { kind: 'rerun', pick: 0, mode: 'attempt' },
          b: { kind: 'rerun', pick: 0, mode: 'attempt' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed 620103312): a triage-role user opened an issue with hydraflow-find and set
  // hydraflow-epic; each label's run triaged the issue as opened, the first died after adding hydraflow-groom, the
  // second published plan and died before taking the other labels off; the re-runs undid her labels and left groom
  // beside plan (label-steering.ts takes off HydraFlow's own unpublished move, under the lock).
  {
    seed: -173357073,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-find'], by: 'triage' }, k: 5 },
      },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-epic', deliver: 'now', by: 'triage' },
          k: 8,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs (fast-check seed 636023180) by the transient-label invariant: a dead run's
  // hydraflow-adv-discover-running stayed on an issue a writer took out of the pipeline and closed (the router skipped
  // a close with no stage label; route.ts now cleans up a transient label too).
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: ['hydraflow-plan'], by: 'write' } },
      { gap: 'short', op: { kind: 'leftover', issue: 0, phase: 'discover' } },
      {
        gap: 'short',
        op: { kind: 'label', issue: 0, op: 'remove', label: 'hydraflow-plan', deliver: 'now', by: 'write' },
      },
      { gap: 'short', op: { kind: 'close', issue: 0 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs on fb14ce9 (fast-check seed -1846220037): an admin opened an issue with hydraflow-discover, a
  // writer's /triage escalated it and died after adding hydraflow-hitl, before taking hydraflow-discover off; its re-run
  // took the admin's label (set before the move) for one a human had set again since, and left both. A human's label now
  // counts as set again only when it was set after the move's own (handlers/phase.ts, setAgainByHuman).
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-discover'], by: 'admin' }, k: 6 },
      },
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/triage', by: 'write' }, k: 6 },
      },
    ],
    quiesce: { gap: 'hour', order: 'crashed-first' },
  },
  // Found at 5000 runs on 72b2533 (fast-check seed -489489584): a reader's refused /triage was charged with the model
  // calls of a crashed /retry's grooming agents, which went on in the simulator's process after its GitHub side died.
  // The oracle's bug, not HydraFlow's: each run now calls the model with a key of its own (world.ts).
  {
    seed: 1230461050,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'outsider' } },
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'comment', issue: 0, body: '/retry', by: 'write' }, k: 7 },
      },
      { gap: 'short', op: { kind: 'comment', issue: 0, body: '/triage', by: 'read' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  // Found at 5000 runs on 79de832 (fast-check seed 1803425905): a reader's issue form applied hydraflow-find,
  // hydraflow-ready and hydraflow-hitl; the triage of the first died twice, the events of the other two found the issue
  // locked, and the re-run that undid her hydraflow-find left the other two beside the stage. A re-run's undo now settles
  // the labels its dead attempt's lock refused (handlers/label-steering.ts).
  {
    seed: 181762367,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: {
            kind: 'open',
            issue: 0,
            labels: ['hydraflow-find', 'hydraflow-ready', 'hydraflow-hitl'],
            by: 'read',
          },
          k: 4,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 1, labels: [], by: 'admin' },
          b: { kind: 'comment', issue: 1, body: '/triage', by: 'read' },
          after: 0,
        },
      },
      { gap: 'hour', op: { kind: 'crash', inner: { kind: 'rerun', pick: 1, mode: 'attempt' }, k: 8 } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  // Found at 5000 runs on f27aa6a (fast-check seed 2129331872): a reader's form opened an issue with hydraflow-shape,
  // its labeled run crashed, the sweep escalated the shape conversation to hydraflow-hitl and a writer set
  // hydraflow-shape again (her run crashed); the re-run undoing the reader's label took off the writer's. The undo now
  // leaves a label someone else set since (handlers/label-steering.ts).
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'crash', inner: { kind: 'open', issue: 0, labels: ['hydraflow-shape'], by: 'read' }, k: 6 },
      },
      { gap: 'short', op: { kind: 'sweep' } },
      {
        gap: 'short',
        op: {
          kind: 'crash',
          inner: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-shape', deliver: 'now', by: 'write' },
          k: 1,
        },
      },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  // Found at 5000 runs on 1f18e7d (fast-check seed -863455051): alice's hydraflow-find was honoured (a triage that
  // escalated), then a writer put the progress comment's first block back on the closed issue; the state HydraFlow
  // rebuilt from it lacks that transition. The oracle's bug: check 4b now reads every state HydraFlow wrote.
  {
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'admin' } },
      {
        gap: 'hour',
        op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'write' },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-find', deliver: 'now', by: 'triage' },
          b: { kind: 'close', issue: 0 },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'tamper', issue: 0, how: 'break', deliver: 'later' },
          b: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          after: 0,
        },
      },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
];

/** The product track's histories: half as many as the others (each plays more runs). */
const PRODUCT_RUNS = Math.ceil(NUM_RUNS / 2);

/**
 * Counterexamples found and not fixed yet (5000-run property runs at the end of a session). They run with
 * HYDRAFLOW_PROPERTY_OPEN=1 (a race may pass on replay: force its interleaving in a test of its own, as
 * tests/sweep-handoff.e2e.test.ts does); once one is fixed, it moves to REGRESSIONS or PRODUCT_REGRESSIONS.
 */
const OPEN_COUNTEREXAMPLES: { found: string; history: History }[] = [
  // Found at 2500 product-track runs on 72b2533 (fast-check seed -1072911133); passes on replay (a race): a writer's
  // hydraflow-discover, set while the sweeps and a crashed re-run of the opening resumed discover, was taken off by
  // HydraFlow with no transition honouring it after it (check 4b). Force the interleaving in an e2e test to study it.
  // Passed 30 of 30 replays on d9afe62 (2026-12-08), where the opening run triages and discovers in one run (ADR 0025);
  // no 5000-run property run since 72b2533 has found it or its like.
  {
    found: 'a writer’s hydraflow-discover beside two sweeps and a crashed re-run (seed -1072911133)',
    history: {
      seed: 0,
      provider: 'anthropic',
      track: 'product',
      steps: [
        { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
        {
          gap: 'hour',
          op: { kind: 'concurrent', a: { kind: 'sweep' }, b: { kind: 'deliver', pick: 0, dispatch: true }, after: 0 },
        },
        {
          gap: 'long',
          op: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-discover', deliver: 'later', by: 'write' },
        },
        { gap: 'short', op: { kind: 'sweep' } },
        { gap: 'short', op: { kind: 'crash', inner: { kind: 'rerun', pick: 0, mode: 'attempt' }, k: 1 } },
      ],
      quiesce: { gap: 'short', order: 'crashed-first' },
    } as History,
  },
];

// none open: the suite is skipped (an empty one is an error)
describe.skipIf(!process.env.HYDRAFLOW_PROPERTY_OPEN || OPEN_COUNTEREXAMPLES.length === 0)(
  'open counterexamples (HYDRAFLOW_PROPERTY_OPEN=1)',
  () => {
    it.each(OPEN_COUNTEREXAMPLES.map((c) => [c.found, c.history] as const))('%s', async (_found, history) =>
      checkPlayed(await playHistory(history)),
    );
  },
);

describe('pipeline histories (property)', () => {
  it(
    `${NUM_RUNS} random histories of people of every permission level, re-runs, concurrency and crashes end in a sane state`,
    () => holds('pipeline histories', historyArb, NUM_RUNS, REGRESSIONS, playHistory),
    TIMEOUT_MS,
  );
  it(
    `${PRODUCT_RUNS} product-track histories (discover, shape's directions, choices, turns, the timeout) end in a sane state`,
    () => holds('product-track histories', productHistoryArb, PRODUCT_RUNS, PRODUCT_REGRESSIONS, playHistory),
    TIMEOUT_MS,
  );
});
