/**
 * One grooming run, measured (`pnpm bench`): triage (not measured) routes a complex issue to grooming; the dispatched
 * groom phase runs through the built dist/ against the GitHub emulator and the scripted Anthropic server, with the
 * recorded sessions of tests/lifecycle/grooming.ts (imported, not copied) and a scripted latency per model answer.
 * Labels already exist (steady state, like triage_github_requests).
 */
import {
  costOf,
  decodeStateBlock,
  GROOMED_LABEL,
  ledgerTotals,
  PIPELINE_STAGES,
  type LedgerEntry,
} from '@hydraflow/core';
import { createWorld, type ModelCall } from '@hydraflow/testkit';
import { groomReady, STATS_ISSUE, STATS_PHASES, triageComplex } from '../../tests/lifecycle/grooming';

export const GROOM_MODEL = 'claude-sonnet-4-6';

/**
 * Model latency as a Sonnet-class API shows it: ~0.8 s to the first token of a prompt this size, then ~70 output
 * tokens a second. Every answer waits by its own size: a tool call about a second, a verdict seconds.
 */
export const GROOM_LATENCY = { firstTokenMs: 800, tokensPerSecond: 70 };

/** The agents' own GitHub requests (search_issues): exploration the model chooses, apart from HydraFlow's. */
const AGENT_OPERATION = 'graphql/query search';

export interface GroomSample {
  wallMs: number;
  /** HydraFlow's GitHub requests during the groom run, `METHOD path` (GraphQL as `POST /graphql <operation>`). */
  requests: string[];
  /** The agents' read-only tool requests (search_issues), not counted in `requests`. */
  agentRequests: string[];
  subIssues: number;
  calls: { role: string; latencyMs: number; usage: Record<string, unknown> }[];
  ledger: LedgerEntry[];
  violations: number;
}

export interface GroomRunOptions {
  phases: boolean;
  /** false: the model server caches nothing (every prompt below its minimum cacheable length) — the baseline. */
  caching: boolean;
}

export async function groomOnce(options: GroomRunOptions): Promise<GroomSample> {
  const world = await createWorld({
    provider: 'anthropic',
    script: {
      triage: triageComplex,
      ...groomReady(options.phases ? { phases: STATS_PHASES } : {}),
    },
    models: { latency: GROOM_LATENCY, ...(options.caching ? {} : { anthropicMinCacheTokens: 1e9 }) },
  });
  try {
    world.gh.addUser({ login: 'alice', permission: 'write' });
    for (const s of PIPELINE_STAGES) world.gh.world.label(s.label, s.color, s.description);
    world.gh.world.label(GROOMED_LABEL.name, GROOMED_LABEL.color, GROOMED_LABEL.description);
    // The emulator builds GitHub's GraphQL schema on its first query (~0.3 s, once per process): not HydraFlow's time.
    await fetch(`${world.gh.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `token ${world.gh.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query { repository(owner: "acme", name: "widgets") { id } }' }),
    });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const triaged = await world.run('issues', 'opened', { issue: issue.number });
    if (triaged.exitCode !== 0) throw new Error(`triage failed: ${triaged.stderr}`);
    const requestsBefore = world.gh.requests.length;
    const callsBefore = world.models.calls.length;
    const run = await world.runDispatch();
    if (run.exitCode !== 0 || !run.summary.includes('groomed'))
      throw new Error(`grooming failed: ${run.stdout}${run.stderr}`);
    const made = world.gh.requests.slice(requestsBefore);
    const show = (r: (typeof made)[number]) =>
      `${r.method} ${r.path}${r.path === '/graphql' && r.operationId ? ` ${r.operationId.replace(/^graphql\//, '')}` : ''}`;
    const requests = made.filter((r) => r.operationId !== AGENT_OPERATION).map(show);
    const agentRequests = made.filter((r) => r.operationId === AGENT_OPERATION).map(show);
    const calls = world.models.calls.slice(callsBefore).map((c: ModelCall) => ({
      role: c.role ?? '?',
      latencyMs: c.latencyMs,
      usage: c.usage ?? {},
    }));
    const progress = world.gh.world
      .commentsOn(issue.number)
      .find((c) => c.user === 'github-actions[bot]' && c.body.includes('hydraflow:progress'));
    const decoded = decodeStateBlock(progress?.body ?? '', { key: world.stateKey, issue: issue.number });
    if (decoded.status !== 'valid') throw new Error(`grooming: state block ${decoded.status}`);
    return {
      wallMs: run.durationMs,
      requests,
      agentRequests,
      subIssues: world.gh.world.subIssuesOf(issue.number).length,
      calls,
      ledger: decoded.state.ledger.filter((e) => e.role.startsWith('groom_')),
      violations: world.gh.violations.length,
    };
  } finally {
    await world.close();
  }
}

/**
 * The critical path the scripted latencies allow: the slowest agent (the sum of its turns) + the summary. Holding the
 * other agents back until the engineer's first turn has written the prompt cache is HydraFlow's own choice, so any
 * delay it causes counts as overhead, not as model latency.
 */
export function criticalPathMs(sample: GroomSample): number {
  const byRole = new Map<string, number>();
  for (const c of sample.calls) byRole.set(c.role, (byRole.get(c.role) ?? 0) + c.latencyMs);
  const agents = [...byRole].filter(([role]) => role !== 'groom_summary');
  return Math.max(...agents.map(([, ms]) => ms)) + (byRole.get('groom_summary') ?? 0);
}

/** Input tokens as billed, in base-price token equivalents: cache writes at 1.25×, cache reads at 0.1× (Anthropic). */
export function billableInputTokens(sample: GroomSample): {
  billable: number;
  input: number;
  written: number;
  read: number;
} {
  let input = 0;
  let written = 0;
  let read = 0;
  for (const c of sample.calls) {
    input += Number(c.usage.input_tokens ?? 0);
    written += Number(c.usage.cache_creation_input_tokens ?? 0);
    read += Number(c.usage.cache_read_input_tokens ?? 0);
  }
  return { billable: input + 1.25 * written + 0.1 * read, input, written, read };
}

export function groomCost(sample: GroomSample) {
  const totals = ledgerTotals(sample.ledger);
  const byRole: Record<string, number> = {};
  for (const e of sample.ledger) byRole[e.role] = (byRole[e.role] ?? 0) + e.costUsd;
  return { usd: costOf(totals, GROOM_MODEL).usd, byRole, totals };
}
