/**
 * The product track up to plan for `pnpm bench` (issue #18): a vague issue opened by alice goes through triage (route
 * discover) and, in the same run (docs/adr/0025-discovery-goes-on-in-the-triage-run.md), discovery (a research agent: a
 * server-side web search and an issue search, a look at the README, then the brief), and on to `hydraflow-shape`,
 * under the lifecycle simulator — the real workflow template, the built dist/, the scripted model server with a latency
 * per answer — the machinery of the clear-issue lifecycle (bench/lib/lifecycle.ts: phase attribution by the steps'
 * phase spans, HydraFlow's requests by its bot identity, the signed ledger).
 *
 * The discover phase's wall time runs from the start of its span in the routing step (triage has handed it the issue)
 * to the end of that job's last step: HydraFlow's fresh read of the issue, the discovery and everything it waits on,
 * and the step's exit. Its critical path is the discover model calls, one after another (one agent).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeStateBlock, ledgerTotals, type LedgerEntry } from '@hydraflow/core';
import {
  BOT_LOGIN,
  TEST_STATE_KEY,
  type JobRecord,
  type ParsedRequest,
  type Script,
  type ScriptEntry,
} from '@hydraflow/testkit';
import { completeBrief, direction, shapedDirections } from '../../tests/support/briefs';
import { triageVague } from '../../tests/lifecycle/backlog';
import { lifecycleWorld, type LifecycleWorld } from '../../tests/lifecycle/scenario';
import { readPhaseSpans } from '../../src/phases/phase-context';
import { isHydraflowStep, phaseAt, phasesOf } from './lifecycle';

/** Whether the shape phase is built in this checkout (it landed on its own branch; until then its metrics are absent). */
export const shapeBuilt = () =>
  existsSync(join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'actions/shape/action.yml'));

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

const FIRST = shapedDirections;
const REVISED = [
  direction('A', 'First-Run Hint', 'S'),
  direction('B', 'Hint Plus Docs', 'M'),
  direction('C', 'Not Now', 'XS', true),
];

/**
 * The shape agent (one structured call a turn): three directions on the first turn; on a turn that answers a human's
 * reply (its prompt carries the conversation), an answer and revised directions.
 */
export function shapeTurns(latencyMs: number): (request: ParsedRequest) => ScriptEntry {
  return (request) =>
    request.messages[0]!.content.includes('# Conversation so far')
      ? {
          json: { reply: 'A tour costs a lot; here is a cheaper mix of a hint and docs.', directions: REVISED },
          latencyMs,
        }
      : { json: { reply: '', directions: FIRST }, latencyMs };
}

/** A human's reply that names no direction: shape answers it with one agent turn. */
export const UNMATCHED_REPLY = 'What would a cheaper option look like? The tour sounds like a lot of work.';

export function productTrackScript(latencyMs: number): Script {
  return { triage: { ...triageVague, latencyMs }, discover: discoverTurns(latencyMs), shape: shapeTurns(latencyMs) };
}

export interface ProductTrackRun {
  world: LifecycleWorld;
  issue: number;
  /** opened → quiet (triage, discover and, when built, shape's first turn), then the shape turn's jobs */
  jobs: JobRecord[];
  turnJobs: JobRecord[];
  /** issues.opened dispatched → quiet in shape, ms */
  wallMs: number;
  /** the discover phase's span starting in the routing step → that job's last step's end, ms */
  discoverWallMs: number;
  /** the human's reply dispatched → quiet after shape's turn, ms (undefined while shape is not built) */
  turnWallMs?: number;
  /** epoch ms at which the reply was dispatched (the turn's requests and calls come after it) */
  turnAt?: number;
}

const stepEnd = (job: JobRecord) => Math.max(...job.steps.map((s) => s.endedAt ?? 0));
/** When the discover phase began in `job`'s HydraFlow step (its phase spans), epoch ms. */
const discoverStart = (job: JobRecord) =>
  job.steps.flatMap((s) => (isHydraflowStep(s) ? readPhaseSpans(s.summary) : [])).find((p) => p.phase === 'discover')
    ?.startedAt;
/** The job that ran `phase` (its HydraFlow step's phase spans name it). */
const jobOf = (jobs: JobRecord[], phase: string) =>
  jobs.find((j) => j.steps.some((s) => isHydraflowStep(s) && (phasesOf(s) ?? '').split('+').includes(phase)));

/**
 * Opened → shape, then (when shape is built) alice's reply that names no direction and shape's turn answering it; the
 * caller closes `world`. Throws (after closing) unless the issue waits in shape with one brief (and a turn taken).
 */
export async function runProductTrack(latencyMs: number): Promise<ProductTrackRun> {
  const world = await lifecycleWorld(productTrackScript(latencyMs));
  try {
    const t0 = performance.now();
    const issue = world.gh.world.issue({ ...VAGUE_ISSUE, author: 'alice' });
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    const jobs = await world.lc.runUntilQuiet();
    const wallMs = performance.now() - t0;
    const labels = () => world.gh.world.issues.get(issue.number)!.labels.filter((l) => l.startsWith('hydraflow-'));
    if (labels().join() !== 'hydraflow-shape')
      throw new Error(`the vague issue ended at ${labels().join() || 'no label'}`);
    const discoverJob = jobOf(jobs, 'discover');
    const startedAt = discoverJob && discoverStart(discoverJob);
    if (!discoverJob || startedAt === undefined) throw new Error('no run discovered after triage');
    const run: ProductTrackRun = {
      world,
      issue: issue.number,
      jobs,
      turnJobs: [],
      wallMs,
      discoverWallMs: stepEnd(discoverJob) - startedAt,
    };
    if (!shapeBuilt()) return run;
    if (!jobOf(jobs, 'shape')) throw new Error('discover handed nothing to shape');
    const reply = world.gh.world.comment(issue.number, { author: 'alice', body: UNMATCHED_REPLY });
    run.turnAt = Date.now();
    const t1 = performance.now();
    world.lc.dispatch('issue_comment', 'created', { issue: issue.number, comment: reply.id, sender: 'alice' });
    run.turnJobs = await world.lc.runUntilQuiet();
    run.turnWallMs = performance.now() - t1;
    const state = stateOf(world, issue.number) as { shape?: { turns: number } } | undefined;
    if (labels().join() !== 'hydraflow-shape' || state?.shape?.turns !== 1)
      throw new Error(
        `the unmatched reply took no shape turn (labels ${labels().join()}, turns ${state?.shape?.turns})`,
      );
    return run;
  } catch (error) {
    await world.close();
    throw error;
  }
}

export interface ProductTrackSample {
  wallMs: number;
  discoverWallMs: number;
  turnWallMs?: number;
  /** successful model calls by role (opened → shape), and the shape turn's */
  calls: Record<string, number>;
  turnCalls: number;
  /** HydraFlow's GitHub requests opened → shape, by the phase whose span they arrived in */
  perPhase: Record<string, number>;
  requests: number;
  /** the discover phase's requests, "METHOD path" */
  discoverRequests: string[];
  /** the shape turn's requests, "METHOD path" (every request of HydraFlow's after the reply) */
  turnRequests: string[];
  jobs: number;
  /** the steps of the run that triaged and discovered, and their spans, ms */
  discoverSteps: { step: string; span_ms: number }[];
  ledger: LedgerEntry[];
  violations: number;
}

function stateOf(world: LifecycleWorld, issue: number) {
  const progress = world.gh.world
    .commentsOn(issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!progress) return undefined;
  const decoded = decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue });
  return decoded.status === 'valid' ? decoded.state : undefined;
}

export async function productTrackOnce(latencyMs: number): Promise<ProductTrackSample> {
  const run = await runProductTrack(latencyMs);
  try {
    const { world } = run;
    const turnAt = run.turnAt ?? Infinity;
    const all = world.gh.requests.filter((r) => r.actor === BOT_LOGIN);
    const requests = all.filter((r) => r.at < turnAt);
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
    const calls: Record<string, number> = {};
    for (const c of ok.filter((c) => c.at < turnAt)) calls[c.role ?? '?'] = (calls[c.role ?? '?'] ?? 0) + 1;
    const discoverJob = jobOf(jobs, 'discover');
    const discoverSteps = (discoverJob?.steps ?? [])
      .filter((s) => s.startedAt !== undefined && s.endedAt !== undefined)
      .map((s) => ({ step: s.name || s.id, span_ms: Math.round((s.endedAt! - s.startedAt!) * 10) / 10 }));
    return {
      wallMs: run.wallMs,
      discoverWallMs: run.discoverWallMs,
      ...(run.turnWallMs !== undefined ? { turnWallMs: run.turnWallMs } : {}),
      calls,
      turnCalls: ok.filter((c) => c.at >= turnAt).length,
      perPhase,
      requests: requests.length,
      discoverRequests,
      turnRequests: all.filter((r) => r.at >= turnAt).map((r) => `${r.method} ${r.path}`),
      jobs: jobs.length,
      discoverSteps,
      ledger: stateOf(world, run.issue)?.ledger ?? [],
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
