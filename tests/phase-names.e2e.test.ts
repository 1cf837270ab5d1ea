/**
 * Phase names come from one table (packages/core/src/pipeline/phases.ts, docs/adr/0013-one-phase-table.md): a
 * workflow_dispatch or a `phase` input naming anything else is refused with the list, before any request to GitHub.
 * Through the built dist; the assertions are on the world: the issue's comments, labels and reactions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createWorld, type World } from '@hydraflow/testkit';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function waitingIssue(w: World) {
  w.gh.addUser({ login: 'lee', permission: 'write' });
  return w.gh.world.issue({
    title: 'Export users',
    body: 'Add a CSV export.',
    author: 'lee',
    labels: ['hydraflow-plan'],
  });
}

const untouched = (w: World, n: number) => ({
  comments: w.gh.world.commentsOn(n).length,
  labels: [...w.gh.world.issues.get(n)!.labels],
  reactions: w.gh.world.reactionsFor({ type: 'issue', number: n }).length,
});

describe('a phase name that is not in the phase table', () => {
  it('a workflow_dispatch naming one (an Object property, a step of the implement jobs) changes nothing', async () => {
    world = await createWorld();
    const issue = await waitingIssue(world);
    for (const phase of ['constructor', 'agent']) {
      const run = await world.run('workflow_dispatch', undefined, {
        inputs: { issue: String(issue.number), phase, actor: 'lee' },
        sender: 'lee',
      });
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.outputs.decision).toBe('skip');
      expect(run.stdout).toContain(`workflow_dispatch input phase "${phase}" is not one of triage, discover`);
    }
    expect(untouched(world, issue.number)).toEqual({ comments: 0, labels: ['hydraflow-plan'], reactions: 0 });
  });

  it('the phase input naming one fails the step with one line that lists the phases', async () => {
    world = await createWorld();
    const issue = await waitingIssue(world);
    const run = await world.run('issues', 'opened', { issue: issue.number }, { inputs: { phase: 'constructor' } });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('input phase: expected one of triage, discover, shape');
    expect(untouched(world, issue.number)).toEqual({ comments: 0, labels: ['hydraflow-plan'], reactions: 0 });
  });
});
