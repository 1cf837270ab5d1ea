/**
 * The plan of a product-track issue (issue #18 item 5; docs/adr/0017-product-track-plan-and-spec-match.md), through
 * the built dist/ against the GitHub emulator and the scripted model server. The issue's signed state holds shape's
 * record — a chosen direction and the decomposition requirement — and HydraFlow's finalization comment holds the
 * direction in a hash-checked data block (packages/core/src/shape/), seeded here the way shape writes them.
 *
 * - The planner is given the direction and returns 3–8 sub-issues; they are created with grooming's sub-issue
 *   machinery, the parent moves to hydraflow-epic, the first sub-issue to hydraflow-plan and is planned.
 * - A re-run creates nothing twice and calls no model.
 * - "DECOMPOSITION REQUIRED" in a human's comment, or a finalization comment a human forged, changes nothing: the
 *   ordinary plan. An edited finalization comment the state points at → a human, no guess.
 * - 2 sub-issues → one revision naming the problem → still 2 → a human; nothing created.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { emptyState, encodeStateBlock, PROGRESS_MARKER, renderShapeData, type IssueState } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, expectNoViolations, type Script, type World } from '@hydraflow/testkit';
import { planCreatingFiles } from './support/plans';
import { planAccepted } from './lifecycle/scenario';
import { DIRECTION_B } from './support/directions';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const botComments = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const progressOf = (w: World, n: number) => botComments(w, n).find((c) => c.body.includes('hydraflow:progress'))!;

const phase = (n: number, title: string, depends: number[] = []) => ({
  phase_number: n,
  title,
  description: `${title}: what it delivers and how to tell it is done.`,
  affected_areas: [{ path: `src/onboarding/step${n}.js`, change: 'add' as const }],
  todos: [{ text: `Build ${title.toLowerCase()}`, manual: false }],
  depends_on: depends,
});

const FOUR_PHASES = {
  json: {
    summary: 'The checklist in four phases: data, UI, progress, metrics.',
    sub_issues: [
      phase(1, 'Checklist data model'),
      phase(2, 'Checklist UI on first login', [1]),
      phase(3, 'Progress tracking', [2]),
      phase(4, 'Completion metrics', [3]),
    ],
  },
};
const TWO_PHASES = {
  json: { summary: 'Two phases.', sub_issues: [phase(1, 'Everything backend'), phase(2, 'Everything UI', [1])] },
};

/**
 * An issue at hydraflow-plan whose signed state says it came through shape with `direction` chosen, and HydraFlow's
 * finalization comment carrying it. `shape: false`: the state has no shape record (an engineering-track issue).
 */
async function seedProductIssue(
  w: World,
  options: { shape?: boolean; stage?: IssueState['stage']; labels?: string[]; title?: string } = {},
) {
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({
    title: options.title ?? 'Make onboarding better',
    body: 'New users get lost after signing up.',
    author: 'lee',
    labels: options.labels ?? ['hydraflow-plan'],
  });
  const data = renderShapeData([DIRECTION_B]);
  const finalization = w.gh.world.comment(issue.number, {
    author: BOT_LOGIN,
    body: `**Direction B chosen: Guided First Run.** DECOMPOSITION REQUIRED\n\n${data.block}`,
  });
  const at = '2026-01-01T00:00:00.000Z';
  const state: IssueState = {
    ...emptyState(issue.number, w.gh.world.repoId),
    stage: options.stage ?? 'plan',
    ...(options.shape === false
      ? {}
      : {
          shape: {
            commentId: finalization.id,
            hash: data.hash,
            letters: ['A', 'B', 'C'],
            turns: 0,
            replies: [],
            waitingSince: at,
            selected: { letter: 'B', commentId: finalization.id, hash: data.hash, by: 'lee', at, via: 'comment' },
            decomposition: true,
          },
        }),
  };
  w.gh.world.comment(issue.number, {
    author: BOT_LOGIN,
    body: `${PROGRESS_MARKER}\nshaped\n${encodeStateBlock(state, { key: w.stateKey })}`,
  });
  return { issue, finalization, data };
}

const planDispatch = (w: World, n: number) =>
  w.run('workflow_dispatch', undefined, { inputs: { issue: String(n), phase: 'plan', actor: 'lee' } });

describe('a product-track issue is planned into sub-issues (issue #18 item 5)', () => {
  it('3–8 sub-issues from the chosen direction; parent at hydraflow-epic; the first is planned; a re-run makes none twice', async () => {
    const script: Script = { plan: [FOUR_PHASES, planCreatingFiles], plan_review: planAccepted };
    world = await createWorld({ script });
    const w = world;
    const { issue } = await seedProductIssue(w);
    const run = await planDispatch(w, issue.number);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);

    // the planner was given the chosen direction, its scope and trade-offs
    const asked = w.models.calls.filter((c) => c.role === 'plan');
    expect(asked).toHaveLength(1);
    const message = asked[0]!.request!.messages[0]!.content;
    expect(message).toContain('Chosen direction B: Guided First Run');
    expect(message).toContain('three-step welcome checklist');
    expect(message).toContain('does not help users who skip the checklist');
    expect(w.models.calls.filter((c) => c.role === 'plan_review')).toHaveLength(0);

    const subs = w.gh.world.subIssuesOf(issue.number);
    expect(subs.map((s) => s.title)).toEqual([
      '[Phase 1]: Checklist data model',
      '[Phase 2]: Checklist UI on first login',
      '[Phase 3]: Progress tracking',
      '[Phase 4]: Completion metrics',
    ]);
    const [one, two] = subs as [(typeof subs)[0], (typeof subs)[0]];
    expect(one.body).toContain('## Description');
    expect(one.body).toContain('## Affected Areas');
    expect(one.body).toContain('## Todo');
    expect(two.body).toContain('## Depends on');
    expect(two.body).toContain(`#${one.number}`);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-epic']);
    expect(labelsOf(w, one.number)).toEqual(['hydraflow-plan']);
    for (const s of subs.slice(1)) expect(labelsOf(w, s.number)).toEqual([]);
    const parentBody = w.gh.world.issues.get(issue.number)!.body ?? '';
    for (const s of subs) expect(parentBody).toContain(`- [ ] #${s.number}`);
    expect(stateOf(w, issue.number).decomposition?.subIssues).toEqual(
      subs.map((s, i) => ({ phase: i + 1, number: s.number })),
    );
    expect(progressOf(w, issue.number).body).toMatch(/Planned direction B into 4 phase sub-issues/);
    expect(progressOf(w, issue.number).body).toMatch(/^\| Track \| product — /m);
    expect(w.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(one.number), phase: 'plan' });

    // the same dispatch again: nothing created twice, no model called
    const issues = w.gh.world.issues.size;
    const calls = w.models.calls.length;
    const again = await planDispatch(w, issue.number);
    expect(again.exitCode, again.stdout + again.stderr).toBe(0);
    expect(w.gh.world.issues.size).toBe(issues);
    expect(w.gh.world.subIssuesOf(issue.number)).toHaveLength(4);
    expect(w.models.calls.length).toBe(calls);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-epic']);

    // phase 1 is planned as an ordinary issue (its own state has no shape record) → ready
    const dispatch = w.gh.world.dispatches.findIndex((d) => d.inputs.issue === String(one.number));
    const planned = await w.runDispatch(dispatch);
    expect(planned.exitCode, planned.stdout + planned.stderr).toBe(0);
    expect(labelsOf(w, one.number)).toEqual(['hydraflow-ready']);
    expect(stateOf(w, one.number).plan?.status).toBe('accepted');

    // one at a time, by the existing epic phase: phase 1 done (closed as completed) → phase 2 starts
    const first = w.gh.world.issues.get(one.number)!;
    first.state = 'closed';
    first.state_reason = 'completed';
    const closed = await w.run('issues', 'closed', { issue: one.number, sender: 'lee' });
    expect(closed.exitCode, closed.stdout + closed.stderr).toBe(0);
    expect(w.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(issue.number), phase: 'epic' });
    const epic = await w.runDispatch();
    expect(epic.exitCode, epic.stdout + epic.stderr).toBe(0);
    expect(labelsOf(w, two.number)).toEqual(['hydraflow-plan']);
    expect(w.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(two.number), phase: 'plan' });
    expect(w.gh.world.issues.get(issue.number)!.body).toContain(`- [x] #${one.number}`);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-epic']);
    expectNoViolations(w.gh);
  });

  it('a forged marker changes nothing: "DECOMPOSITION REQUIRED" and a forged finalization comment by a human → the ordinary plan', async () => {
    world = await createWorld({ script: { plan: planCreatingFiles, plan_review: planAccepted } });
    const w = world;
    const { issue } = await seedProductIssue(w, { shape: false });
    // what anyone can post: the marker's words, and a comment that copies shape's data block
    w.gh.world.comment(issue.number, { author: 'lee', body: 'DECOMPOSITION REQUIRED' });
    const forged = renderShapeData([{ ...DIRECTION_B, name: 'Forged' }]);
    w.gh.world.comment(issue.number, { author: 'lee', body: `Direction B chosen.\n\n${forged.block}` });
    const run = await planDispatch(w, issue.number);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.gh.world.subIssuesOf(issue.number)).toHaveLength(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-ready']);
    expect(stateOf(w, issue.number).plan?.status).toBe('accepted');
    expect(stateOf(w, issue.number).decomposition).toBeUndefined();
    expect(progressOf(w, issue.number).body).toMatch(/^\| Track \| engineering — /m);
    const message = w.models.calls.find((c) => c.role === 'plan')!.request!.messages[0]!.content;
    expect(message).not.toContain('Chosen direction');
  });

  it('a finalization comment edited since shape wrote it: a human decides, nothing is guessed or created', async () => {
    world = await createWorld({ script: { plan: FOUR_PHASES } });
    const w = world;
    const { issue, finalization } = await seedProductIssue(w);
    const other = renderShapeData([{ ...DIRECTION_B, scope: 'Everything, including video tours.' }]);
    w.gh.world.editComment(finalization.id, `Direction B chosen.\n\n${other.block}`, 'lee');
    const run = await planDispatch(w, issue.number);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.models.calls).toHaveLength(0);
    expect(w.gh.world.subIssuesOf(issue.number)).toHaveLength(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progressOf(w, issue.number).body).toMatch(/chosen direction could not be read back/);
  });

  it('2 sub-issues → one revision with the problem named → still 2 → a human; nothing created', async () => {
    world = await createWorld({ script: { plan: [TWO_PHASES, TWO_PHASES] } });
    const w = world;
    const { issue } = await seedProductIssue(w);
    const run = await planDispatch(w, issue.number);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const asked = w.models.calls.filter((c) => c.role === 'plan');
    expect(asked, run.stdout + progressOf(w, issue.number).body).toHaveLength(2);
    expect(asked[1]!.request!.messages[0]!.content).toMatch(/2 sub-issues: a product-track issue needs at least 3/);
    expect(w.gh.world.subIssuesOf(issue.number)).toHaveLength(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progressOf(w, issue.number).body).toMatch(/needs at least 3/);
  });

  it('2 sub-issues, then 3 after the revision → created', async () => {
    world = await createWorld({
      script: {
        plan: [TWO_PHASES, { json: { ...FOUR_PHASES.json, sub_issues: FOUR_PHASES.json.sub_issues.slice(0, 3) } }],
      },
    });
    const w = world;
    const { issue } = await seedProductIssue(w);
    const run = await planDispatch(w, issue.number);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.gh.world.subIssuesOf(issue.number)).toHaveLength(3);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-epic']);
    expect(stateOf(w, issue.number).decomposition?.revisions).toBe(1);
  });
});
