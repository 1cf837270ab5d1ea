/**
 * Property: whatever people of every permission level do to HydraFlow's pull request — approve it (its head, or a head
 * a later push superseded), request changes, comment /ship-it or /fix, push to its branch — while HydraFlow's own
 * refine rounds push new heads, and whatever re-runs, redeliveries, concurrency and crashes do, HydraFlow merges under
 * `merge.policy: human` only a head that its review approved and that someone with write access gave their go on, on
 * that very head (issue #17); and the issue ends in a sane state (tests/property/pipeline-histories' invariants).
 *
 * Each history starts the way a clear issue does — a writer opens it, triage and the plan go on in the issue's own run,
 * and the dispatched implement phase, the coding agent and the publish job open the pull request and review it — then
 * plays random steps (./world.ts says how), a writer changing HydraFlow's progress comment among them. Every phase
 * runs for real: the routing, agent and publish jobs, the review and the merge gate, on a real git repository behind
 * the GitHub emulator; dispatched phases are delivered like any other event. The reviewer approves most heads and asks for changes on some (a refine round: a new head).
 *
 * Slower than pipeline-histories (git, three jobs per implement round): HYDRAFLOW_PROPERTY_PULL_RUNS sets the run count
 * (default: a twentieth of HYDRAFLOW_PROPERTY_RUNS, at least 50).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { startGitHubEmulator, startModelServer, type ModelServer } from '@hydraflow/testkit';
import { type Level } from './people';
import { buildTemplate, copyTemplate, removeHistoryDir } from './repository';
import { historyScript } from './scripts';
import { addPeople, Ctx, playSteps, type Action, type History, type Op } from './world';
import { holds } from './holds';

const NUM_RUNS = Number(
  process.env.HYDRAFLOW_PROPERTY_PULL_RUNS ??
    Math.max(50, Math.round(Number(process.env.HYDRAFLOW_PROPERTY_RUNS ?? 1000) / 20)),
);
const VALIDATE = process.env.HYDRAFLOW_PROPERTY_VALIDATE !== '0';
/**
 * The test's time limit grows with the run count (15 s a history, several times the median on a loaded machine, with
 * room for shrinking a counterexample), never below 30 minutes: a fixed limit cut long runs short
 * (HYDRAFLOW_PROPERTY_RUNS=5000 outran 600 s on two shared cores).
 */
const TIMEOUT_MS = Math.max(1_800_000, NUM_RUNS * 15_000);

// ---------------------------------------------------------------------------------------------------------------
// The history model

const anyoneArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Level>('write') },
  { weight: 2, arbitrary: fc.constantFrom<Level>('admin', 'maintain') },
  { weight: 2, arbitrary: fc.constant<Level>('triage') },
  { weight: 2, arbitrary: fc.constantFrom<Level>('read', 'member', 'outsider') },
);
/** Pushing needs write access. */
const pusherArb = fc.constantFrom<Level>('write', 'admin', 'maintain');
const labelerArb = fc.constantFrom<Level>('write', 'maintain', 'triage');
const deliveryArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('now' as const) },
  { weight: 1, arbitrary: fc.constant('later' as const) },
);

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('review' as const),
      by: anyoneArb,
      event: fc.oneof(
        { weight: 4, arbitrary: fc.constant('APPROVE' as const) },
        { weight: 1, arbitrary: fc.constantFrom('REQUEST_CHANGES' as const, 'COMMENT' as const) },
      ),
      on: fc.oneof(
        { weight: 3, arbitrary: fc.constant('head' as const) },
        { weight: 2, arbitrary: fc.constant('previous' as const) },
      ),
      deliver: deliveryArb,
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('comment' as const),
      issue: fc.constant(0 as const),
      on: fc.constant('pull' as const),
      body: fc.oneof(
        { weight: 5, arbitrary: fc.constant('/ship-it') },
        { weight: 1, arbitrary: fc.constantFrom('/fix Name the change after the plan.', '/help', 'LGTM') },
      ),
      by: anyoneArb,
      deliver: deliveryArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('comment' as const),
      issue: fc.constant(0 as const),
      on: fc.constant('issue' as const),
      body: fc.constantFrom('/retry', '/ship-it', '/triage'),
      by: anyoneArb,
    }),
  },
  {
    // a writer puts an older block back into HydraFlow's progress comment, breaks it or deletes it (ADR 0007): an old
    // block's approved review round must never merge the head there is now
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('tamper' as const),
      issue: fc.constant(0 as const),
      how: fc.constantFrom('older' as const, 'break' as const, 'delete' as const),
      deliver: deliveryArb,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('push' as const), by: pusherArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ci' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('label' as const),
      issue: fc.constant(0 as const),
      op: fc.constantFrom('add' as const, 'remove' as const),
      label: fc.constantFrom('hydraflow-review', 'hydraflow-ready', 'hydraflow-hitl'),
      deliver: deliveryArb,
      by: labelerArb,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(7) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rerun' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom('attempt' as const, 'redelivery' as const),
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
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('crash' as const), inner: action, k: fc.integer({ min: 1, max: 12 }) }),
    },
  );
const gapArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('short' as const) },
  { weight: 3, arbitrary: fc.constant('seconds' as const) },
  { weight: 1, arbitrary: fc.constant('long' as const) },
);
/** A writer (or an admin, a maintainer) opens a clear issue; the implement dispatch is delivered: a pull request. */
const openedArb = fc.record({
  kind: fc.constant('open' as const),
  issue: fc.constant(0 as const),
  labels: fc.constant<string[]>([]),
  by: fc.constantFrom<Level>('write', 'admin', 'maintain'),
});
const historyArb: fc.Arbitrary<History> = fc.record({
  seed: fc.integer(),
  provider: fc.constantFrom('anthropic' as const, 'openai' as const),
  steps: fc
    .tuple(
      fc.record({ gap: fc.constant('short' as const), op: opArb(openedArb) }),
      fc.record({ gap: gapArb, op: opArb(fc.constant({ kind: 'deliver' as const, pick: 0 })) }),
      fc.array(fc.record({ gap: gapArb, op: opArb(actionArb) }), { minLength: 1, maxLength: 8 }),
    )
    .map(([opened, pulled, rest]) => [opened, pulled, ...rest]),
  quiesce: fc.record({ gap: gapArb, order: fc.constantFrom('crashed-first' as const, 'pending-first' as const) }),
});

// ---------------------------------------------------------------------------------------------------------------

let models: ModelServer;
let root: string;
let template: string;

beforeAll(async () => {
  models = await startModelServer({ script: {} });
  root = mkdtempSync(join(tmpdir(), 'hydraflow-property-pulls-'));
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
    models.setScript(historyScript(history.seed, { clear: true }));
    const ctx = new Ctx(gh, models, history, tokens, dir, repo, { runsDispatches: true });
    await playSteps(ctx);
    return ctx;
  } finally {
    await gh.close();
    removeHistoryDir(dir);
    vi.useRealTimers();
  }
}

/** Histories that once failed (fast-check's shrunk counterexamples), played before the random ones on every run. */
const REGRESSIONS: History[] = [
  {
    // fast-check seed -55670328: a writer pasted back an older block (the issue held at hydraflow-hitl); a CI event's
    // merge gate died after its first write, the 👀 it puts on first; its re-run stopped for the held issue and left
    // that 👀 with no claim (untrusted-state.ts heldForHuman now frees it on a re-run).
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'seconds', op: { kind: 'deliver', pick: 0 } },
      {
        gap: 'seconds',
        op: {
          kind: 'concurrent',
          a: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          b: { kind: 'deliver', pick: 0 },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'ci' }, k: 1 } },
    ],
    quiesce: { gap: 'long', order: 'crashed-first' },
  },
  {
    // fast-check seed -1668207962: the publish job died after its push; its re-run ("Re-run failed jobs") committed the
    // same change anew and its push was refused (the run failed, no pull request).
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0 }, k: 6 } },
      { gap: 'seconds', op: { kind: 'comment', issue: 0, on: 'issue', body: '/retry', by: 'write' } },
    ],
    quiesce: { gap: 'seconds', order: 'crashed-first' },
  },
  {
    // fast-check seed -672040788: the publish job died after its push (and after opening the pull request); a writer
    // pushed on top; the publish job's re-run found its change under the human's commit and failed on the refused push.
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'deliver', pick: 0 }, k: 6 } },
      { gap: 'seconds', op: { kind: 'push', by: 'write' } },
      { gap: 'short', op: { kind: 'crash', inner: { kind: 'rerun', pick: 0, mode: 'attempt' }, k: 1 } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // fast-check seed -585929900: a writer approved while she set hydraflow-hitl; the merge gate merged, took the label
    // for a human's move and withdrew hydraflow-fixed, and closed the issue: closed, merged, labelled hydraflow-hitl.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: [], by: 'write' },
          b: { kind: 'comment', issue: 0, on: 'pull', body: '/ship-it', by: 'read', deliver: 'now' },
          after: 0,
        },
      },
      {
        gap: 'seconds',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0 },
          b: { kind: 'comment', issue: 0, on: 'pull', body: '/ship-it', by: 'triage', deliver: 'now' },
          after: 0,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'review', by: 'write', event: 'APPROVE', on: 'previous', deliver: 'now' },
          b: { kind: 'label', issue: 0, op: 'add', label: 'hydraflow-hitl', deliver: 'later', by: 'write' },
          after: 1,
        },
      },
      { gap: 'seconds', op: { kind: 'push', by: 'write' } },
    ],
    quiesce: { gap: 'seconds', order: 'crashed-first' },
  },
  {
    // Found once writers could change HydraFlow's progress comment here (fast-check seed 4711): an older block put back
    // after the merge held the issue, and the held state keeps no review rounds; the oracle now looks for HydraFlow's
    // approving round in every version of its comment it wrote (the merge itself was right).
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: { kind: 'concurrent', a: { kind: 'open', issue: 0, labels: [], by: 'write' }, b: { kind: 'ci' }, after: 0 },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'deliver', pick: 0 },
          b: { kind: 'comment', issue: 0, on: 'pull', body: '/ship-it', by: 'read', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'short', op: { kind: 'review', by: 'write', event: 'APPROVE', on: 'head', deliver: 'now' } },
      { gap: 'short', op: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' } },
      { gap: 'seconds', op: { kind: 'review', by: 'admin', event: 'APPROVE', on: 'head', deliver: 'now' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 1127): a reader's approval ran the merge gate while an older block was put
    // back; the gate held the issue at hydraflow-hitl, and the edit's own run, which had read the labels (review) before
    // it waited for the gate's lock, wrote the spend its text showed with the stage of those labels: the state said
    // review on an issue at hitl. A late spend now writes the recorded stage.
    seed: 0,
    provider: 'anthropic',
    steps: [
      { gap: 'short', op: { kind: 'open', issue: 0, labels: [], by: 'write' } },
      { gap: 'seconds', op: { kind: 'deliver', pick: 0 } },
      {
        gap: 'seconds',
        op: {
          kind: 'concurrent',
          a: { kind: 'review', by: 'read', event: 'APPROVE', on: 'head', deliver: 'now' },
          b: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'seconds', op: { kind: 'review', by: 'write', event: 'REQUEST_CHANGES', on: 'head', deliver: 'now' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 1127): the merge run died with its close of the issue in flight; a redelivered
    // `opened` (its payload: open) ran while GitHub closed the issue and left its pipeline label. The known residual
    // of a close beside a run (IssueModel.closeRaced), which the test now also sees when the close lands during the run.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: [], by: 'write' },
          b: { kind: 'review', by: 'admin', event: 'APPROVE', on: 'previous', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'seconds', op: { kind: 'deliver', pick: 0 } },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'comment', issue: 0, on: 'pull', body: '/ship-it', by: 'write', deliver: 'now' },
          k: 5,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'rerun', pick: 0, mode: 'attempt' },
          b: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'seconds', op: { kind: 'ci' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
  {
    // Found at 5000 runs (fast-check seed 1127): the merge run died after it merged, labelled hydraflow-fixed and closed
    // the issue, before it removed hydraflow-review; an older block put back then held the issue, and the merge run's
    // re-run found it held and did nothing: the closed issue kept hydraflow-review. A run that holds a closed issue now
    // strips its pipeline labels (hydraflow-fixed stays), as a close does.
    seed: 0,
    provider: 'anthropic',
    steps: [
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'open', issue: 0, labels: [], by: 'write' },
          b: { kind: 'review', by: 'admin', event: 'APPROVE', on: 'previous', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'seconds', op: { kind: 'deliver', pick: 0 } },
      {
        gap: 'long',
        op: {
          kind: 'crash',
          inner: { kind: 'comment', issue: 0, on: 'pull', body: '/ship-it', by: 'write', deliver: 'now' },
          k: 5,
        },
      },
      {
        gap: 'short',
        op: {
          kind: 'concurrent',
          a: { kind: 'rerun', pick: 1, mode: 'attempt' },
          b: { kind: 'tamper', issue: 0, how: 'older', deliver: 'now' },
          after: 0,
        },
      },
      { gap: 'seconds', op: { kind: 'ci' } },
    ],
    quiesce: { gap: 'short', order: 'crashed-first' },
  },
];

describe('pull request histories (property)', () => {
  it(
    `${NUM_RUNS} random histories of approvals, pushes and refine rounds merge only a head a permitted human approved`,
    () => holds('pull request histories', historyArb, NUM_RUNS, REGRESSIONS, playHistory),
    TIMEOUT_MS,
  );
});
