/**
 * Spec-match in review (issue #18 item 6; docs/adr/0017-product-track-plan-and-spec-match.md), through the built
 * dist/: a dispatched review phase against the GitHub emulator and the scripted model server.
 *
 * - A product-track issue's pull request: the reviewer is given the chosen direction and may return spec mismatches;
 *   a high one blocks approval (changes requested, the refiner next), its key is in the round's record.
 * - A phase sub-issue of a product-track epic: the direction comes from the parent's signed state (GitHub's parent).
 * - An engineering-track pull request: no direction, the ordinary schema, and not one GitHub request more than before
 *   (ENGINEERING_REQUESTS was measured on the dist before spec-match).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeStateBlock,
  emptyState,
  encodeStateBlock,
  PROGRESS_MARKER,
  renderShapeData,
  type IssueState,
} from '@hydraflow/core';
import { BOT_LOGIN, createWorld, fakeSha, type Script, type World } from '@hydraflow/testkit';
import { DIRECTION_B } from './support/directions';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const PUSHER = 'hydraflow-pusher[bot]';
/**
 * GitHub requests of a plain review run (dispatched, one file, approved and merged): 20 on the dist before spec-match
 * (main at 017e4c5) and 20 after, the same list request for request.
 */
const ENGINEERING_REQUESTS = 20;

const file = {
  filename: 'src/onboarding/checklist.js',
  status: 'added' as const,
  additions: 2,
  deletions: 0,
  patch:
    '@@ -0,0 +1,2 @@\n+export const steps = ["profile", "invite", "first project"];\n+export const videoTour = true;',
};

const approve = { json: { summary: 'Looks right.', findings: [] } };
const approveSpec = { json: { summary: 'Looks right.', findings: [], spec_mismatches: [] } };
const videoTour = {
  json: {
    summary: 'Adds the checklist, and a video tour the direction excludes.',
    findings: [],
    spec_mismatches: [
      {
        severity: 'high',
        title: 'Builds a video tour the chosen direction leaves out',
        recommendation: 'Remove videoTour: direction B has no video tours.',
        needs_human_decision: false,
      },
    ],
  },
};

function shapeState(commentId: number, hash: string): NonNullable<IssueState['shape']> {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    commentId,
    hash,
    letters: ['A', 'B', 'C'],
    turns: 0,
    replies: [],
    waitingSince: at,
    selected: { letter: 'B', commentId, hash, by: 'lee', at, via: 'comment' },
    decomposition: true,
  };
}

function post(w: World, issue: number, state: IssueState) {
  w.gh.world.comment(issue, {
    author: BOT_LOGIN,
    body: `${PROGRESS_MARKER}\nstate\n${encodeStateBlock(state, { key: w.stateKey })}`,
  });
}

/** The finalization comment shape writes, with the chosen direction's block; its id and hash for the state. */
function finalization(w: World, issue: number) {
  const data = renderShapeData([DIRECTION_B]);
  const c = w.gh.world.comment(issue, { author: BOT_LOGIN, body: `**Direction B chosen.**\n\n${data.block}` });
  return shapeState(c.id, data.hash);
}

/**
 * An issue in hydraflow-review with HydraFlow's pull request and one review round dispatched. `track`: `product` (the
 * issue's own state holds the choice), `phase` (a sub-issue of an epic whose state holds it), `engineering` (neither).
 */
async function reviewOf(
  track: 'product' | 'phase' | 'engineering' | 'groomed-phase',
  script: Script,
  forge = false,
  edit = false,
) {
  world = await createWorld({
    script,
    config: `merge:\n  policy: auto\nbot_logins: ['github-actions[bot]', '${PUSHER}']\n`,
  });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const pusher = w.gh.addApp({ login: PUSHER });
  let parent: number | undefined;
  if (track === 'phase' || track === 'groomed-phase') {
    const epic = w.gh.world.issue({
      title: 'Make onboarding better',
      body: 'Vague.',
      author: 'lee',
      labels: ['hydraflow-epic'],
    });
    parent = epic.number;
    post(w, epic.number, {
      ...emptyState(epic.number, w.gh.world.repoId),
      stage: 'epic',
      ...(track === 'phase' ? { shape: finalization(w, epic.number) } : {}),
    });
  }
  const issue = w.gh.world.issue({
    title: track === 'phase' ? '[Phase 1]: Checklist' : 'Onboarding checklist',
    body: 'Build the checklist.',
    author: 'lee',
    labels: ['hydraflow-review'],
  });
  if (parent !== undefined) w.gh.world.linkSubIssue(parent, issue.number);
  const branch = `hydraflow/issue-${issue.number}`;
  const { pull } = w.gh.world.pull({
    title: 'Onboarding checklist',
    body: `Fixes #${issue.number}`,
    author: PUSHER,
    head: branch,
    headSha: fakeSha('v1'),
    draft: true,
    files: [file],
  });
  const state: IssueState = {
    ...emptyState(issue.number, w.gh.world.repoId),
    stage: 'review',
    ...(track === 'product' ? { shape: finalization(w, issue.number) } : {}),
    implement: {
      branch,
      pull: pull.number,
      headSha: fakeSha('v1'),
      attempts: 1,
      mode: 'build',
      fixAttempts: 0,
      at: '2026-01-01T00:00:00.000Z',
    },
  };
  post(w, issue.number, state);
  if (edit && state.shape) {
    // a human edits shape's finalization comment: its block no longer matches the hash in the state
    const other = renderShapeData([{ ...DIRECTION_B, scope: 'Everything, video tours included.' }]);
    w.gh.world.editComment(state.shape.commentId, `Direction B chosen.\n\n${other.block}`, 'lee');
  }
  if (forge) {
    // what anyone can post: the marker's words and a copy of shape's data block, in a human's comments
    const forged = renderShapeData([DIRECTION_B]);
    w.gh.world.comment(issue.number, { author: 'lee', body: 'DECOMPOSITION REQUIRED' });
    w.gh.world.comment(issue.number, { author: 'lee', body: `Direction B chosen.\n\n${forged.block}` });
  }
  const before = w.gh.requests.length;
  const run = await w.run(
    'workflow_dispatch',
    undefined,
    { inputs: { issue: String(issue.number), phase: 'review', actor: 'lee' } },
    { inputs: { 'push-token': pusher.token } },
  );
  expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  const reviews = [...w.gh.world.reviews.values()].filter((r) => r.pull_number === pull.number);
  const progress = w.gh.world
    .commentsOn(issue.number)
    .filter((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))
    .at(-1)!.body;
  const decoded = decodeStateBlock(progress, { key: w.stateKey, issue: issue.number });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  const calls = w.models.calls.filter((c) => c.role === 'review');
  return {
    w,
    run,
    issue: issue.number,
    parent,
    /** The GitHub requests of the run (the review round and what follows it). */
    requests: w.gh.requests.slice(before).map((r) => `${r.method} ${r.operationId ?? r.path}`),
    shown: calls.map((c) => c.request!.messages[0]!.content),
    schemas: calls.map((c) => JSON.stringify(c.request!.schema)),
    reviews,
    state: decoded.state,
    merged: w.gh.world.pulls.get(pull.number)!.merged,
    labels: [...w.gh.world.issues.get(issue.number)!.labels],
    progress,
  };
}

describe('spec-match: a product-track pull request is checked against the chosen direction', () => {
  it('a high spec-mismatch finding blocks approval, goes to the refiner, and its key is recorded', async () => {
    const r = await reviewOf('product', { review: [videoTour] });
    expect(r.shown).toHaveLength(1);
    expect(r.shown[0]).toContain('Chosen direction B: Guided First Run');
    expect(r.shown[0]).toContain('no email campaign, no video tours');
    expect(r.schemas[0]).toContain('spec_mismatches');
    expect(r.reviews).toHaveLength(1);
    expect(r.reviews[0]!.state).toBe('CHANGES_REQUESTED');
    expect(r.reviews[0]!.body).toMatch(/high spec-mismatch: Builds a video tour the chosen direction leaves out/);
    expect(r.merged).toBe(false);
    const round = r.state.review!.rounds.at(-1)!;
    expect(round.specMismatchKeys).toHaveLength(1);
    expect(round.criticalHighKeys).toEqual(round.specMismatchKeys);
    expect(r.state.review!.outcome).toBe('refine');
    expect(r.state.review!.spec).toEqual({ issue: r.issue, hash: r.state.shape!.selected!.hash });
    // the refiner is dispatched with the findings, as for any other finding
    expect(r.w.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(r.issue), phase: 'implement' });
    expect(r.progress).toMatch(/^\| Track \| product — /m);
  });

  it('a phase sub-issue is checked against its epic parent’s direction (GitHub’s parent, the parent’s signed state)', async () => {
    const r = await reviewOf('phase', { review: [approveSpec] });
    expect(r.shown[0]).toContain('Chosen direction B: Guided First Run');
    expect(r.shown[0]).toContain(`for the parent issue #${r.parent}`);
    expect(r.reviews[0]!.state).toBe('APPROVED');
    expect(r.state.review!.spec?.issue).toBe(r.parent);
  });

  it('an engineering-track pull request: no direction, the ordinary schema, no extra GitHub request', async () => {
    const r = await reviewOf('engineering', { review: [approve] }, true);
    expect(r.shown[0]).not.toContain('Chosen direction');
    expect(r.schemas[0]).not.toContain('spec_mismatches');
    expect(r.reviews[0]!.state).toBe('APPROVED');
    expect(r.state.review!.spec).toBeUndefined();
    expect(r.requests, r.requests.join('\n')).toHaveLength(ENGINEERING_REQUESTS);
  });

  it('a phase of an epic grooming made (no chosen direction on the parent): no spec-match, one request more', async () => {
    const r = await reviewOf('groomed-phase', { review: [approve] });
    expect(r.shown[0]).not.toContain('Chosen direction');
    expect(r.schemas[0]).not.toContain('spec_mismatches');
    expect(r.reviews[0]!.state).toBe('APPROVED');
    expect(r.state.review!.spec).toBeUndefined();
    // the parent's comments, read to learn that its signed state holds no chosen direction
    expect(r.requests, r.requests.join('\n')).toHaveLength(ENGINEERING_REQUESTS + 1);
  });

  it('a chosen direction edited since shape wrote it: reviewed without it, and the review says so', async () => {
    const r = await reviewOf('product', { review: [approve] }, false, true);
    expect(r.shown[0]).not.toContain('Chosen direction');
    expect(r.shown[0]).not.toContain('video tours included');
    expect(r.schemas[0]).not.toContain('spec_mismatches');
    expect(r.state.review!.spec).toBeUndefined();
    expect(r.reviews[0]!.body).toMatch(/direction chosen on #\d+ could not be read back/);
  });
});
