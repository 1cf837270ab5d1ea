/**
 * `pnpm bench`, lifecycle part: the clear-issue scenario (opened → merged, with the human approval) through the real
 * template, the built dist/ and a real git remote, with every scripted model answer taking LATENCY_MS. Merges its
 * metrics into bench/results.json. Wall time excludes nothing: node start per step, git and the simulator itself
 * are all in it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { decodeStateBlock, ledgerTotals } from '@hydraflow/core';
import { TEST_STATE_KEY, type JobRecord, type ScriptEntry } from '@hydraflow/testkit';
import {
  AVERAGE_GOOD,
  AVERAGE_ISSUE,
  averagePlan,
  implementAverage,
  lifecycleWorld,
  planAccepted,
  reviewClean,
  triageClear,
} from '../tests/lifecycle/scenario';

const LATENCY_MS = 1_500;
const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));
const slow = (entries: ScriptEntry | ScriptEntry[]): ScriptEntry[] =>
  (Array.isArray(entries) ? entries : [entries]).map((e) => ({ ...e, latencyMs: LATENCY_MS }));

/** The phase a step ran: the routing step's decision, or the agent / publish step. */
function phaseOf(step: JobRecord['steps'][number]): string | undefined {
  if (step.name.includes('actions/agent')) return 'implement';
  if (step.outputs.decision === 'publish') return 'implement';
  const d = step.outputs.decision;
  return d && d !== 'skip' ? d : undefined;
}

it('lifecycle of a clear issue: requests, model calls and overhead', async () => {
  const world = await lifecycleWorld({
    triage: slow(triageClear),
    plan: slow(averagePlan),
    plan_review: slow(planAccepted),
    implement: slow(implementAverage(AVERAGE_GOOD) as ScriptEntry[]),
    review: slow(reviewClean),
  });
  try {
    const started = performance.now();
    const issue = world.gh.world.issue({ ...AVERAGE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    const pull = [...world.gh.world.pulls.values()][0]!;
    const approvalAt = world.gh.requests.length;
    await world.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, {
      event: 'APPROVE',
      body: 'Ship it.',
    });
    jobs.push(...(await world.lc.runUntilQuiet()));
    const wallMs = performance.now() - started;
    expect(world.gh.world.pulls.get(pull.number)!.merged).toBe(true);

    // HydraFlow's requests: the bot's, not alice's approval and not the simulator's own bookkeeping.
    const hydraflowRequests = world.gh.requests.filter((r, i) => r.actor === 'github-actions[bot]' && i !== approvalAt);
    const perPhase: Record<string, number> = {};
    for (const job of jobs) {
      for (const step of job.steps) {
        const phase = phaseOf(step);
        if (!phase || step.startedAt === undefined) continue;
        const n = hydraflowRequests.filter((r) => r.at >= step.startedAt! && r.at <= step.endedAt!).length;
        perPhase[phase] = (perPhase[phase] ?? 0) + n;
      }
    }
    const modelCalls = world.models.calls.filter((c) => c.status === 200).length;
    const progress = [...world.gh.world.comments.values()].find((c) => c.body.includes('hydraflow:progress'))!;
    const decoded = decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue: issue.number });
    const ledger = decoded.status === 'valid' ? decoded.state.ledger : [];
    const byPhase: Record<string, { calls: number; input: number; cached: number; output: number; usd: number }> = {};
    for (const e of ledger) {
      const p = (byPhase[e.phase] ??= { calls: 0, input: 0, cached: 0, output: 0, usd: 0 });
      p.calls += e.calls ?? 1;
      p.input += e.inputTokens + e.cacheWriteTokens;
      p.cached += e.cachedInputTokens;
      p.output += e.outputTokens;
      p.usd += e.costUsd;
    }
    const totals = ledgerTotals(ledger);

    const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as {
      metrics: Record<string, unknown>;
      meta?: Record<string, unknown>;
    };
    const metric = (value: number, unit: string) => ({ value: Math.round(value * 1000) / 1000, unit });
    results.metrics.lifecycle_model_calls = metric(modelCalls, 'calls');
    results.metrics.lifecycle_github_requests = metric(hydraflowRequests.length, 'requests');
    for (const [phase, n] of Object.entries(perPhase))
      results.metrics[`github_requests_${phase}`] = metric(n, 'requests');
    results.metrics.lifecycle_wall_s = metric(wallMs / 1000, 's');
    results.metrics.lifecycle_model_latency_s = metric((modelCalls * LATENCY_MS) / 1000, 's');
    results.metrics.lifecycle_overhead_ratio = metric(wallMs / (modelCalls * LATENCY_MS), 'ratio');
    results.metrics.lifecycle_cost_usd = metric(totals.usd, 'USD');
    results.meta = {
      ...results.meta,
      lifecycle: {
        scenario: 'clear issue opened → triage → plan → implement (agent + publish) → review → human approval → merge',
        scripted_latency_ms_per_model_call: LATENCY_MS,
        critical_path: 'every model call (they are sequential)',
        requests_method:
          "GitHub requests by HydraFlow's identity, attributed to a phase by the wall-clock span of the step that made them",
        per_phase_model_usage: byPhase,
        jobs: jobs.filter((j) => j.status !== 'skipped').length,
      },
    };
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
    expect(wallMs / (modelCalls * LATENCY_MS)).toBeLessThanOrEqual(1.1);
  } finally {
    await world.close();
  }
});
