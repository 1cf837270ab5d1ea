/**
 * budgets.per_day across the three jobs of an implement run (issue #17 item 10): the coding agent's job cannot read
 * the spend ledger (it holds no GitHub token), so the routing job reserves what the day has left for it before it
 * starts and the publish job settles the reservation with what the agent spent. Through the template and dist/.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeDayLedger, ledgerTotals, type DayLedger } from '@hydraflow/core';
import { formatTimeline } from '@hydraflow/testkit';
import { issueState, openIssue, progressOf } from './agent-world';
import { clearIssueScript, lifecycleWorld, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** Every ledger the branch hydraflow/spend held, oldest first, each checked as HydraFlow checks it. */
function ledgerHistory(w: LifecycleWorld): DayLedger[] {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: w.sample.bareRepo }).toString().trim();
  const commits = git('rev-list', '--reverse', '--parents', 'refs/heads/hydraflow/spend').split('\n');
  return commits.map((line) => {
    const [sha, parent] = line.split(' ');
    const decoded = decodeDayLedger(git('show', `${sha}:spend.json`), {
      key: w.stateKey,
      repository: 'acme/widgets',
      parent: parent ?? null,
    });
    if (decoded.status !== 'valid') throw new Error(decoded.detail);
    return decoded.ledger;
  });
}

describe('budgets.per_day and the coding agent', () => {
  it('the agent’s session is reserved before the agent job starts and settled by the publish job with what it spent', async () => {
    world = await lifecycleWorld(clearIssueScript(), { HYDRAFLOW_BUDGET_DAY_USD: '5' });
    openIssue(world);
    const jobs = await world.lc.runUntilQuiet();
    expect(world.gh.world.pulls.size, formatTimeline(jobs, { steps: true })).toBe(1);
    const history = ledgerHistory(world);
    // the routing job (triage, plan, implement's preparation) wrote once, the publish job (agent, review) once
    expect(history).toHaveLength(2);
    const [routing, publish] = history as [DayLedger, DayLedger];
    const state = issueState(world);
    const runId = state.ledger[0]!.runId;
    const beforeAgent = ledgerTotals(state.ledger.filter((e) => e.phase === 'triage' || e.phase === 'plan')).usd;
    // what the run budget (budgets.per_run.usd, $2) left the agent, the day having more
    expect(routing.reserved).toEqual([
      { issue: 1, run: runId, usd: Math.round((2 - beforeAgent) * 1e6) / 1e6, until: expect.any(String) },
    ]);
    // held for the agent's time (implement.max_minutes, 20) and an hour for its job's queue and the publish job; a run
    // that never settles it (cancelled) stops holding the day's budget then
    const held = Date.parse(routing.reserved[0]!.until!) - Date.parse(state.ledger[0]!.at);
    expect(held).toBeGreaterThan(79 * 60_000);
    expect(held).toBeLessThan(81 * 60_000);
    expect(routing.spent.map((s) => s.phase).sort()).toEqual(['plan', 'triage']);
    expect(publish.reserved).toEqual([]);
    expect(publish.spent.map((s) => s.phase).sort()).toEqual(['implement', 'plan', 'review', 'triage']);
    // the day's ledger and the issue's own agree on every phase
    for (const phase of ['triage', 'plan', 'implement', 'review']) {
      const day = publish.spent.find((s) => s.phase === phase)!.usd;
      expect(day).toBeCloseTo(ledgerTotals(state.ledger.filter((e) => e.phase === phase)).usd, 6);
    }
  }, 180_000);

  it('a day with too little left for one of the agent’s turns: the agent stops before changing anything and the issue pauses at implement', async () => {
    // triage and plan cost ~$0.02; an agent turn is estimated at ~$0.13 before the call (8,000 output tokens)
    world = await lifecycleWorld(clearIssueScript(), { HYDRAFLOW_BUDGET_DAY_USD: '0.1' });
    openIssue(world);
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(
      world.models.calls.filter((c) => c.role === 'implement'),
      timeline,
    ).toEqual([]);
    expect(world.gh.world.pulls.size).toBe(0);
    expect(world.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-ready']);
    expect(progressOf(world)).toContain('Paused: the repository’s daily budget is spent');
    expect(progressOf(world)).toContain('left for this coding agent when it started');
    expect(jobs.filter((j) => j.workflow === 'hydraflow.yml' && j.status === 'failure')).toEqual([]);
    const last = ledgerHistory(world).at(-1)!;
    expect(last.reserved).toEqual([]);
    expect(last.paused).toEqual([{ issue: 1, phase: 'implement', day: last.day, reason: 'day' }]);
  }, 180_000);
});
