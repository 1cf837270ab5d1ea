/**
 * The product track up to plan for `pnpm bench` (issue #18): a vague issue opened by alice goes through triage (route
 * discover), the dispatched discover run (a research agent: a server-side web search and an issue search, a look at
 * the README, then the brief) and on to `hydraflow-shape`, under the lifecycle simulator — the real workflow template,
 * the built dist/, the scripted model server with a latency per answer — the machinery of the clear-issue lifecycle
 * (bench/lib/lifecycle.ts: phase attribution by the steps' phase spans, HydraFlow's requests by its bot identity, the
 * signed ledger).
 *
 * The discover phase's wall time runs from the triage run's workflow_dispatch request (the hand-off) to the simulator
 * going quiet after the discover run: the simulator routing the dispatch, the job's setup and checkout, HydraFlow's
 * step and everything it waits on. Its critical path is the discover model calls, one after another (one agent).
 */
import { decodeStateBlock, ledgerTotals, type LedgerEntry } from '@hydraflow/core';
import { BOT_LOGIN, TEST_STATE_KEY, type JobRecord, type Script, type ScriptEntry } from '@hydraflow/testkit';
import { completeBrief } from '../../tests/support/briefs';
import { triageVague } from '../../tests/lifecycle/backlog';
import { lifecycleWorld, type LifecycleWorld } from '../../tests/lifecycle/scenario';
import { isHydraflowStep, phaseAt } from './lifecycle';

export const VAGUE_ISSUE = {
  title: 'Make onboarding better',
  body: 'New users of the CLI get lost after installing it. Should we add an interactive tour?',
};

const found = { title: 'CLI onboarding patterns', url: 'https://example.com/cli-onboarding' };

/**
 * The research agent's recorded turns: a web search on the provider's side with an issue search, a look at the
 * README, then the complete brief citing what it found (tests/support/briefs.ts).
 */
export function discoverTurns(latencyMs: number): ScriptEntry[] {
  return [
    {
      webSearches: [{ query: 'CLI onboarding first run', results: [found] }],
      toolCalls: [{ name: 'search_issues', input: { query: 'onboarding' } }],
      latencyMs,
    },
    { toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }], latencyMs },
    {
      toolCalls: [
        {
          name: 'submit_brief',
          input: { ...completeBrief, sources: [...completeBrief.sources, { title: found.title, where: found.url }] },
        },
      ],
      latencyMs,
    },
  ];
}

export function productTrackScript(latencyMs: number): Script {
  return { triage: { ...triageVague, latencyMs }, discover: discoverTurns(latencyMs) };
}

export interface DiscoverRun {
  world: LifecycleWorld;
  issue: number;
  jobs: JobRecord[];
  /** issues.opened dispatched → quiet in shape (triage and discover), ms */
  wallMs: number;
  /** the triage run's workflow_dispatch request → quiet (the discover phase), ms */
  discoverWallMs: number;
  startedAt: number;
  endedAt: number;
}

/** Opened → shape; the caller closes `world`. Throws (after closing) unless the issue waits in shape with one brief. */
export async function runDiscoverTrack(latencyMs: number): Promise<DiscoverRun> {
  const world = await lifecycleWorld(productTrackScript(latencyMs));
  try {
    const startedAt = Date.now();
    const t0 = performance.now();
    const issue = world.gh.world.issue({ ...VAGUE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    const wallMs = performance.now() - t0;
    const endedAt = Date.now();
    const labels = world.gh.world.issues.get(issue.number)!.labels.filter((l) => l.startsWith('hydraflow-'));
    if (labels.join() !== 'hydraflow-shape') throw new Error(`the vague issue ended at ${labels.join() || 'no label'}`);
    const handOff = world.gh.requests.find(
      (r) => r.actor === BOT_LOGIN && r.method === 'POST' && /\/actions\/workflows\/[^/]+\/dispatches$/.test(r.path),
    );
    if (!handOff) throw new Error('triage dispatched no discover run');
    return { world, issue: issue.number, jobs, wallMs, discoverWallMs: endedAt - handOff.at, startedAt, endedAt };
  } catch (error) {
    await world.close();
    throw error;
  }
}

export interface DiscoverSample {
  wallMs: number;
  discoverWallMs: number;
  /** model calls on the critical path, by role */
  calls: { triage: number; discover: number };
  /** HydraFlow's GitHub requests, by the phase whose span they arrived in */
  perPhase: Record<string, number>;
  requests: number;
  /** the discover phase's requests, "METHOD path" */
  discoverRequests: string[];
  jobs: number;
  /** the discover run's steps and their spans, ms (the rest of discoverWallMs is the simulator's routing and setup) */
  discoverSteps: { step: string; span_ms: number }[];
  ledger: LedgerEntry[];
  violations: number;
}

function ledgerOf(world: LifecycleWorld, issue: number): LedgerEntry[] {
  const progress = world.gh.world
    .commentsOn(issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!progress) return [];
  const decoded = decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue });
  return decoded.status === 'valid' ? decoded.state.ledger : [];
}

export async function discoverOnce(latencyMs: number): Promise<DiscoverSample> {
  const run = await runDiscoverTrack(latencyMs);
  try {
    const { world } = run;
    const requests = world.gh.requests.filter((r) => r.actor === BOT_LOGIN);
    const jobs = run.jobs.filter((j) => j.status !== 'skipped' && j.status !== 'cancelled');
    const perPhase: Record<string, number> = {};
    const discoverRequests: string[] = [];
    for (const r of requests) {
      const step = jobs
        .flatMap((j) => j.steps)
        .find(
          (s) =>
            isHydraflowStep(s) &&
            s.startedAt !== undefined &&
            s.endedAt !== undefined &&
            r.at >= s.startedAt &&
            r.at <= s.endedAt,
        );
      const phase = (step && phaseAt(step, r.at)) ?? 'unattributed';
      perPhase[phase] = (perPhase[phase] ?? 0) + 1;
      if (phase === 'discover') discoverRequests.push(`${r.method} ${r.path}`);
    }
    const ok = world.models.calls.filter((c) => c.status === 200);
    const discoverJob = jobs.find((j) => j.event === 'workflow_dispatch');
    const discoverSteps = (discoverJob?.steps ?? [])
      .filter((s) => s.startedAt !== undefined && s.endedAt !== undefined)
      .map((s) => ({ step: s.name || s.id, span_ms: Math.round((s.endedAt! - s.startedAt!) * 10) / 10 }));
    return {
      wallMs: run.wallMs,
      discoverWallMs: run.discoverWallMs,
      calls: {
        triage: ok.filter((c) => c.role === 'triage').length,
        discover: ok.filter((c) => c.role === 'discover').length,
      },
      perPhase,
      requests: requests.length,
      discoverRequests,
      jobs: jobs.length,
      discoverSteps,
      ledger: ledgerOf(world, run.issue),
      violations: world.gh.violations.length,
    };
  } finally {
    await run.world.close();
  }
}

/** Tokens and USD of a ledger's entries, by phase (the project's price table, as the ledger recorded them). */
export function costByPhase(ledger: LedgerEntry[]) {
  const phases = [...new Set(ledger.map((e) => e.phase))];
  return Object.fromEntries(
    phases.map((p) => {
      return [p, ledgerTotals(ledger.filter((e) => e.phase === p))];
    }),
  );
}
