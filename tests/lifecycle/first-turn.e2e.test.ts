/**
 * The coding agent's first turn begun by the agent job's model proxy (docs/adr/0021-first-turn-begun-by-the-model-proxy.md):
 * the routing job hands on the first turn's request with the task, the proxy sends it before the checkout and the
 * setup steps, and the agent's identical request gets its answer — one call, ledgered once. Through the template a
 * user copies and the built dist/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline } from '@hydraflow/testkit';
import { issueState, openIssue } from './agent-world';
import { clearIssueScript, lifecycleWorld, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('the agent’s first turn, begun by the model proxy', () => {
  it('is sent by the proxy and taken by the agent; every agent call is made and ledgered once', async () => {
    world = await lifecycleWorld(clearIssueScript());
    const w = world;
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(w.gh.world.pulls.size, timeline).toBe(1);

    // the routing job's task artifact holds the first turn beside the task
    const task = w.lc.artifacts.all.find((a) => a.name.startsWith('hydraflow-task-'))!;
    expect(task.files).toEqual(['first-turn.json', 'proxy-limits.json', 'task.json']);
    const first = JSON.parse(readFileSync(join(task.dir, 'first-turn.json'), 'utf8')) as { path: string; body: string };
    expect(first.path).toBe('/v1/messages');
    expect(JSON.stringify(first)).not.toContain(w.modelKey);

    // sent by the proxy (no second request with the task alone) and taken by the agent, which says so in its log
    const agentStep = jobs.find((j) => j.job === 'agent')!.steps.find((s) => s.id === 'agent')!;
    expect(agentStep.stdout, timeline).toContain('the first turn the model proxy began was taken');
    const implement = w.models.calls.filter((c) => c.role === 'implement');
    expect(implement.filter((c) => c.request?.messages.length === 1)).toHaveLength(1);
    expect(implement.map((c) => c.status)).toEqual(implement.map(() => 200));
    // the recorded session played in order (a call made twice would have shifted it), each call ledgered once
    expect(implement).toHaveLength((clearIssueScript().implement as unknown[]).length);
    expect(issueState(w).ledger.filter((e) => e.phase === 'implement')).toHaveLength(implement.length);
  }, 180_000);
});
