/**
 * The product track as a user meets it (issue #18, "Must hold": the first point), in the lifecycle world: the user's
 * workflow template run by the lifecycle simulator, the built dist/, a real git remote with the sample project.
 * A vague issue from opened to its first sub-issue merged, the human's selection by comment; the second vague issue's
 * recorded shape request carries the recalled preference. Assertions are on the world: labels, comments, the signed
 * state, pull requests, the remote's main, and the model server's record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  BRIEF_MARKER,
  briefHash,
  decodeStateBlock,
  DIRECTIONS_MARKER,
  FINAL_MARKER,
  readShapeData,
} from '@hydraflow/core';
import { BOT_LOGIN, formatTimeline, type JobRecord } from '@hydraflow/testkit';
import {
  PICK_B,
  productJourneyScript,
  STATS_DIRECTIONS,
  STATS_INTENT,
  STATS_SUB_ISSUES,
  statsBrief,
  STRINGS_INTENT,
} from './product';
import { lifecycleWorld, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labels = (w: LifecycleWorld, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const ours = (w: LifecycleWorld, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const withMarker = (w: LifecycleWorld, n: number, marker: string) =>
  ours(w, n).filter((c) => c.body.startsWith(marker));
const progress = (w: LifecycleWorld, n: number) => ours(w, n).find((c) => c.body.includes('hydraflow:progress'))!.body;
const stateOf = (w: LifecycleWorld, n: number) => {
  const decoded = decodeStateBlock(progress(w, n), { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};
/** The phases the jobs' steps ran, in order. */
const phasesRun = (jobs: JobRecord[]) =>
  jobs
    .flatMap((j) =>
      j.steps.flatMap((s) => s.outputs.phases?.split(',') ?? (s.outputs.decision ? [s.outputs.decision] : [])),
    )
    .filter((d) => d !== 'skip');

describe('the product track, as a user meets it', () => {
  it('a vague issue goes from opened to its first sub-issue merged, the human choosing by comment; the next vague issue’s shape request recalls the preference', async () => {
    world = await lifecycleWorld(productJourneyScript());
    const w = world;
    const issue = w.gh.world.issue({ ...STATS_INTENT, author: 'alice' });
    w.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const opened = await w.lc.runUntilQuiet();
    let timeline = formatTimeline(opened, { steps: true });
    // Triage said vague; discovery posted the brief; shape posted three directions and waits for a human.
    expect(phasesRun(opened), timeline).toEqual(['triage', 'discover', 'shape']);
    expect(labels(w, issue.number), timeline).toEqual(['hydraflow-shape']);
    const briefs = withMarker(w, issue.number, BRIEF_MARKER);
    expect(briefs).toHaveLength(1);
    expect(briefs[0]!.body).toContain('Do we need a whole stats module');
    expect(stateOf(w, issue.number).discover).toMatchObject({ commentId: briefs[0]!.id, hash: briefHash(statsBrief) });
    const [directions] = withMarker(w, issue.number, DIRECTIONS_MARKER);
    for (const d of STATS_DIRECTIONS) expect(directions!.body).toContain(`### ${d.letter} · ${d.name}`);
    // the shape agent was given the brief (read back through its hash)
    const firstShape = w.models.calls.find((c) => c.role === 'shape')!.request!.messages[0]!.content;
    expect(firstShape).toContain('average() and median() next to sum()');

    // alice picks B by comment and narrows it: "just the MVP".
    const pick = (await w.asAlice('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { body: PICK_B })) as {
      id: number;
    };
    const picked = await w.lc.runUntilQuiet();
    timeline = formatTimeline(picked, { steps: true });
    const shape = stateOf(w, issue.number).shape!;
    expect(shape.selected, timeline).toMatchObject({ letter: 'B', by: 'alice', via: 'comment' });
    expect(shape.decomposition).toBe(true);
    expect(shape.replies).toEqual([
      expect.objectContaining({
        commentId: pick.id,
        outcome: 'selected',
        signals: expect.arrayContaining(['scope_narrow']),
      }),
    ]);
    const [final] = withMarker(w, issue.number, FINAL_MARKER);
    expect(readShapeData(final!.body, shape.selected!.hash)).toEqual([STATS_DIRECTIONS[1]]);
    // Finalized, then planned: the planner was given direction B and split it into three sub-issues, run as an epic.
    const planner = w.models.calls.find((c) => c.role === 'plan')!.request!.messages[0]!.content;
    expect(planner).toContain('Chosen direction B: Quick & Focused');
    const subs = w.gh.world.subIssuesOf(issue.number);
    expect(
      subs.map((s) => s.title),
      timeline,
    ).toEqual(STATS_SUB_ISSUES.map((s) => `[Phase ${s.phase_number}]: ${s.title}`));
    expect(labels(w, issue.number)).toContain('hydraflow-epic');
    const [one, two, three] = subs.map((s) => s.number) as [number, number, number];
    // phase 1 was planned, implemented (real code, the sample's tests) and reviewed; it waits for alice's approval
    expect(labels(w, one), timeline).toContain('hydraflow-review');
    expect(labels(w, two)).not.toContain('hydraflow-plan');
    const pull = [...w.gh.world.pulls.values()].find((p) => p.head.ref === `hydraflow/issue-${one}`)!;
    expect(pull, timeline).toBeDefined();
    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, { event: 'APPROVE', body: 'Ship it.' });
    const merged = await w.lc.runUntilQuiet();
    timeline = formatTimeline(merged, { steps: true });
    expect(w.gh.world.pulls.get(pull.number)!.merged, timeline).toBe(true);
    // its review was checked against direction B, through the epic parent (spec-match)
    const reviewed = w.models.calls.find((c) => c.role === 'review')!.request!.messages[0]!.content;
    expect(reviewed).toContain('Chosen direction B: Quick & Focused');
    expect(w.gh.world.issues.get(one)!.state).toBe('closed');
    const main = execFileSync('git', ['show', 'main:src/numbers.js'], { cwd: w.sample.bareRepo }).toString();
    expect(main).toContain('export function average(numbers)');
    expect(w.gh.world.issues.get(issue.number)!.body).toContain(`- [x] #${one}`);
    // phase 2 starts on its own once phase 1 merged
    expect(
      labels(w, two).some((l) => l.startsWith('hydraflow-')),
      timeline,
    ).toBe(true);
    void three;

    // A second vague issue: its shape request carries what alice taught on the first (the model server's record).
    const second = w.gh.world.issue({ ...STRINGS_INTENT, author: 'alice' });
    w.lc.dispatch('issues', 'opened', { issue: second.number, sender: 'alice' });
    const later = await w.lc.runUntilQuiet();
    timeline = formatTimeline(later, { steps: true });
    expect(labels(w, second.number), timeline).toEqual(['hydraflow-shape']);
    const shaped = w.models.calls.filter((c) => c.role === 'shape' && c.request?.issue === second.number);
    expect(shaped, timeline).toHaveLength(1);
    const prompt = shaped[0]!.request!.messages[0]!.content;
    expect(prompt).toContain('# Preference memories');
    expect(prompt).toContain(`#${issue.number}`);
    expect(prompt).toMatch(/just the MVP/i);
  }, 300_000);
});
