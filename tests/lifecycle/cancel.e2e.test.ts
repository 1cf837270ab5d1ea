/**
 * A cancelled agent job (someone pressed "Cancel workflow", or the job ran past its timeout-minutes) still hands on
 * what it spent. GitHub's runner signals the step's entry process (SIGINT, SIGTERM 7.5 s later, then the kill) and
 * runs the job's `if: always()` steps; the agent step is that entry process (actions/agent/action.yml `exec`s node), so
 * it leaves its loop, stops the model proxy and writes a failed result with the proxy's signed count, which the
 * composite's upload and the publish job carry to the issue's ledger. Through the template and the built dist/; on a
 * runner whose user has sudo too, where the agent runs confined (docs/adr/0023-the-agent-job-gives-up-root.md) and the
 * step passes the signal on to it.
 */
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, SAMPLE_CONFIG, type ScriptEntry } from '@hydraflow/testkit';
import { createSudoUser, sudoUserUnavailable, type SudoUser } from '../support/sudo-user';
import { cancelOnceWritten, issueState, openIssue, progressOf } from './agent-world';
import { averagePlan, lifecycleWorld, planAccepted, triageClear, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
let user: SudoUser | undefined;
afterEach(async () => {
  await world?.close();
  await user?.remove();
  world = undefined;
  user = undefined;
});

/** The agent reads a file; while its second call is with the model, the run is cancelled. */
async function cancelledWhileThinking(runAs?: string) {
  let calls = 0;
  const session = (): ScriptEntry => {
    calls += 1;
    if (calls === 2) {
      const running = world!.gh.world.workflowRuns.find((r) => r.status === 'in_progress')!;
      expect(world!.lc.cancel(running.id)).toBe(true);
      return { toolCalls: [{ name: 'read_file', input: { path: 'package.json' } }], latencyMs: 300 };
    }
    if (calls === 1) return { toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] };
    return { text: 'Done.' };
  };
  world = await lifecycleWorld(
    { triage: triageClear, plan: averagePlan, plan_review: planAccepted, implement: session },
    {},
    { ownSecrets: true, ...(runAs ? { runAs: { jobs: ['agent'], user: runAs } } : {}) },
  );
  openIssue(world);
  const jobs = await world.lc.runUntilQuiet();
  const timeline = formatTimeline(jobs, { steps: true });
  const agent = jobs.find((j) => j.job === 'agent')!;
  expect(agent.status, timeline).toBe('cancelled');
  // the result was uploaded by the composite's always() step after the agent step ended on the signal
  expect(agent.steps.find((s) => s.id === 'agent')!.outputs['artifact-id'], timeline).toMatch(/^\d+$/);
  // as GitHub reports it: the step the cancellation interrupted is cancelled, not failed
  expect(agent.steps.find((s) => s.id === 'agent')!.outcome, timeline).toBe('cancelled');
  expect(calls, timeline).toBe(2); // no call after the cancellation
  expect(jobs.find((j) => j.job === 'publish')?.status, timeline).toBe('success');
  expect(world.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-hitl']);
  expect(world.gh.world.pulls.size).toBe(0);
  const progress = progressOf(world);
  expect(progress).toContain('The coding agent failed');
  expect(progress).toContain('the agent job was cancelled (SIGINT');
  // both calls the proxy let through, as its signed count says, and what they cost
  const implement = issueState(world).ledger.filter((e) => e.phase === 'implement');
  expect(world.models.calls.filter((c) => c.role === 'implement')).toHaveLength(2);
  expect(implement).toHaveLength(2);
  expect(implement.every((e) => e.costUsd > 0 && e.outputTokens > 0)).toBe(true);
  return { jobs, agent };
}

describe('a cancelled agent job', () => {
  it('leaves its loop at the runner’s SIGINT, and the calls it made reach the issue’s ledger through its signed count', async () => {
    await cancelledWhileThinking();
  }, 240_000);

  it('whose call in flight outlasts the runner’s grace hands on a result without the count: the most the proxy could have let through is ledgered, and a human told', async () => {
    let calls = 0;
    const session = (): ScriptEntry => {
      calls += 1;
      if (calls === 1) return { toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] };
      const running = world!.gh.world.workflowRuns.find((r) => r.status === 'in_progress')!;
      world!.lc.cancel(running.id);
      return { text: 'Done.', latencyMs: 9_000 }; // past the agent's 5 s wait for its proxy
    };
    world = await lifecycleWorld(
      { triage: triageClear, plan: averagePlan, plan_review: planAccepted, implement: session },
      {},
      { ownSecrets: true },
    );
    openIssue(world);
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(jobs.find((j) => j.job === 'agent')!.status, timeline).toBe('cancelled');
    expect(world.gh.world.issues.get(1)!.labels, timeline).toEqual(['hydraflow-hitl']);
    expect(progressOf(world)).toContain('HydraFlow cannot tell what the coding agent spent');
    const implement = issueState(world).ledger.filter((e) => e.phase === 'implement');
    expect(implement).toHaveLength(1); // one entry: the bound, what the budgets had left the agent
    expect(implement[0]!.costUsd).toBeGreaterThan(0);
  }, 240_000);

  it('cancelled during its final test run: the test is killed and the session’s calls are ledgered all the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-cancel-'));
    chmodSync(dir, 0o777);
    const started = join(dir, 'final-test-started');
    // a test that says it started and then hangs; run only by the agent step's final test (test_ahead off)
    const hang = `require('fs').writeFileSync(${JSON.stringify(started)}, 'x');\nsetTimeout(() => {}, 600_000);\n`;
    world = await lifecycleWorld(
      {
        triage: triageClear,
        plan: averagePlan,
        plan_review: planAccepted,
        implement: [
          { toolCalls: [{ name: 'write_file', input: { path: 'hang.test.cjs', content: hang } }] },
          { text: 'Done.' },
        ],
      },
      {},
      {
        ownSecrets: true,
        sample: { extraFiles: { '.github/hydraflow.yml': `${SAMPLE_CONFIG}  test_ahead: false\n` } },
      },
    );
    openIssue(world);
    const quiet = world.lc.runUntilQuiet();
    await cancelOnceWritten(world, started);
    const jobs = await quiet;
    const timeline = formatTimeline(jobs, { steps: true });
    expect(jobs.find((j) => j.job === 'agent')!.status, timeline).toBe('cancelled');
    expect(progressOf(world)).toContain('the agent job was cancelled (SIGINT');
    expect(issueState(world).ledger.filter((e) => e.phase === 'implement')).toHaveLength(2);
    expect(world.gh.world.pulls.size).toBe(0);
  }, 240_000);

  it.skipIf(sudoUserUnavailable())(
    'on a runner whose user has sudo, the confined agent gets the signal from its step and does the same',
    async () => {
      user = await createSudoUser();
      const { agent } = await cancelledWhileThinking(user.name);
      const log = agent.steps.map((s) => s.stdout).join('\n');
      expect(log).toContain('the agent gave up root');
    },
    240_000,
  );
});
