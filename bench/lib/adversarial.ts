/**
 * The adversarial layer for `pnpm bench` (issue #19; docs/adr/0018-adversarial-layer.md): an issue in a repository
 * whose .github/hydraflow.yml sets `adversarial.enabled: true`, opened by alice and run until quiet under the lifecycle
 * simulator — the real workflow template, the built dist/, the scripted model server with a latency per answer — the
 * machinery of the clear-issue lifecycle (bench/lib/lifecycle.ts). The issue is triaged and planned in one step
 * (triage → plan → implement's preparation); the recorded implement and review answers of tests/lifecycle/scenario.ts
 * carry it on to a pull request that waits for a human, so every run ends green and quiet.
 *
 * Only the plan council is wired today (src/phases/adversarial/plan-council.ts), so what is measured is the plan
 * stage; what the whole stage table would spend comes from packages/core/src/adversarial/cost.ts.
 *
 * Latency: triage, the planner, every voter and the plan reviewer answer after `latencyMs`; implement and review
 * answer at once (they are not measured). The plan phase's wall time is its span in the HydraFlow step's phase spans
 * (src/phases/phase-context.ts); its critical path is the scripted latency × (planner calls + voting rounds + plan
 * reviewer calls): the voters of a round are asked in parallel, so a round costs one latency.
 */
import { decodeStateBlock, SPEC_CRITERIA_ROLE, type AdversarialState, type IssueState } from '@hydraflow/core';
import {
  BOT_LOGIN,
  SAMPLE_CONFIG,
  TEST_STATE_KEY,
  type JobRecord,
  type ModelCall,
  type ParsedRequest,
  type ScriptEntry,
  type ScriptValue,
} from '@hydraflow/testkit';
import { readPhaseSpans } from '../../src/phases/phase-context';
import {
  AVERAGE_GOOD,
  AVERAGE_ISSUE,
  averagePlan,
  implementAverage,
  lifecycleWorld,
  planAccepted,
  reviewClean,
  triageClear,
} from '../../tests/lifecycle/scenario';
import { isHydraflowStep } from './lifecycle';

/** What the plan council's voters answer. */
export type VoterScript =
  /** every voter signs off on round 1 (also what a trivial issue would get, were a voter asked) */
  | 'sign-off'
  /** the Risk-Skeptic blocks round 1; the planner's revision resolves it (the stage converges after one revision) */
  | 'typical'
  /** every voter blocks every round, each time with a new concern (no oscillation ends it early) */
  | 'worst'
  /** the Risk-Skeptic blocks round 1 and again with the same concern after the revision: the stage oscillates */
  | 'oscillate';

export interface AdversarialRunOptions {
  /** `adversarial.enabled` in the repository's config */
  enabled: boolean;
  /** triage's complexity score: 2 keeps the clear issue trivial for the gate, 5 makes it load-bearing */
  complexity: number;
  voters: VoterScript;
  latencyMs: number;
  /** false: the model server caches nothing (every prompt below its minimum cacheable length), the baseline */
  caching: boolean;
  /**
   * A plan of a real change's size (an approach near the schema's 4,000 characters, 15 tests) instead of the sample's
   * few lines: with the sample's plan the voters' shared system blocks stay below the provider's minimum cacheable
   * length, so nothing of theirs is cached.
   */
  largePlan?: boolean;
}

const COUNCIL = ['builder', 'tester', 'risk-skeptic'] as const;

const concern = (text: string) => ({
  json: { concerns: [{ severity: 'high', blocking: true, text, evidence: ['src/numbers.js'] }] },
});
const none = { json: { concerns: [] } };

const step = (i: number) =>
  `Step ${i}: check how src/numbers.js and its callers handle input case ${i} (empty, one value, negatives, floats, very long lists), keep the exported names stable, and cover it in test/numbers.test.js.`;

const planned = (n: number, large: boolean) => ({
  json: {
    ...averagePlan.json,
    ...(n > 0
      ? {
          summary: `Add average(numbers) to src/numbers.js, export it, and test it (revision ${n}: answers the council).`,
        }
      : {}),
    ...(large
      ? {
          approach: [averagePlan.json.approach, ...Array.from({ length: 18 }, (_, i) => step(i + 1))].join('\n'),
          test_plan: Array.from(
            { length: 15 },
            (_, i) =>
              `average of input case ${i + 1} matches the sum divided by the count, ${'and stays finite for large values, '.repeat(3)}with a test named after the case.`,
          ),
        }
      : {}),
  },
});

function voterScript(voter: (typeof COUNCIL)[number], voters: VoterScript): ScriptEntry[] {
  if (voters === 'worst')
    // a new concern each round: the same blocking set twice would end the stage as oscillated (loop.ts)
    return [1, 2, 3, 4].map((round) => concern(`${voter}, round ${round}: the plan skips a case it must cover.`));
  if (voters === 'typical' && voter === 'risk-skeptic') return [concern(EMPTY_LIST), none];
  if (voters === 'oscillate' && voter === 'risk-skeptic') return [concern(EMPTY_LIST)];
  return [none];
}

/** The Risk-Skeptic's concern in the typical and oscillating runs. */
export const EMPTY_LIST = 'average([]) divides by zero: the plan must say what the empty list returns.';

/** The concern ids a consumer's prompt lists (plan-review-concerns.ts, code-review-concerns.ts). */
const concernIds = (request: ParsedRequest) =>
  [...request.messages[0]!.content.matchAll(/^- id ([0-9a-f]{16}) /gm)].map((m) => m[1]!);

/**
 * The plan reviewer accepts; when the council forwarded concerns (the worst case), its schema asks for an answer per
 * concern id (src/phases/adversarial/plan-review-concerns.ts): it carries each on to code review.
 */
function planReview(latencyMs: number): (request: ParsedRequest) => ScriptEntry {
  return (request) => {
    const ids = concernIds(request);
    const concerns = ids.map((id) => ({ id, verdict: 'carried', why: 'Code review checks the case.' }));
    return { json: { ...planAccepted.json, ...(ids.length ? { concerns } : {}) }, latencyMs };
  };
}

/** Code review: clean; a concern forwarded to it is carried on (it ships as a known gap, carryover.ts). */
function codeReview(request: ParsedRequest): ScriptEntry {
  const ids = concernIds(request);
  const concerns = ids.map((id) => ({ id, verdict: 'carried', why: 'The change does not decide the empty list.' }));
  return { json: { ...reviewClean.json, ...(ids.length ? { concerns } : {}) } };
}

/**
 * The spec stage (src/phases/adversarial/spec-judge.ts): the generator writes the criteria, a revision each time the
 * judge blocks; the judge blocks round 1 in the typical run (the stage converges after one revision), every round with
 * a new concern in the worst, never otherwise.
 */
function specScript(voters: VoterScript): { generator: ScriptEntry[]; judge: ScriptEntry[] } {
  const criteria = (n: number) => ({
    json: {
      acceptance_criteria: [
        ...averagePlan.json.acceptance_criteria,
        ...(n > 0 ? [`average([]) returns NaN, as the plan says (revision ${n}).`] : []),
      ],
    },
  });
  const inconsistent = (round: number) => ({
    json: {
      consistent: false,
      concerns: [
        {
          severity: 'high',
          blocking: true,
          text: `Round ${round}: no criterion says what average([]) returns, which the plan decides.`,
          evidence: ['the criteria'],
        },
      ],
    },
  });
  const consistent = { json: { consistent: true, concerns: [] } };
  const judge =
    voters === 'worst'
      ? [1, 2, 3, 4].map(inconsistent)
      : voters === 'typical'
        ? [inconsistent(1), consistent]
        : [consistent];
  return { generator: [0, 1, 2, 3].map(criteria), judge };
}

/**
 * The assumption surfacer (src/phases/adversarial/assumptions.ts): in the worst run one load-bearing assumption the
 * plan does not check (forwarded at once to the plan reviewer, who carries it on); otherwise only a checked one.
 */
function assumptionsScript(voters: VoterScript): ScriptEntry {
  const assumption = (load: boolean) => ({
    assumption: 'Callers pass arrays of finite numbers only.',
    how_to_check: 'Read the callers of src/numbers.js.',
    load_bearing: load,
    checked: !load,
  });
  return { json: { assumptions: [assumption(voters === 'worst')] } };
}

/** The model script of one run; entries with latency where the plan phase's critical path is measured. */
export function adversarialScript(options: AdversarialRunOptions): Record<string, ScriptValue> {
  const slow = (e: ScriptEntry): ScriptEntry => ({ ...e, latencyMs: options.latencyMs });
  const spec = specScript(options.voters);
  return {
    triage: slow({ json: { ...triageClear.json, complexity_score: options.complexity } }),
    plan: [0, 1, 2, 3].map((n) => slow(planned(n, options.largePlan ?? false))),
    plan_review: planReview(options.latencyMs),
    ...Object.fromEntries(COUNCIL.map((v) => [`adv_${v}`, voterScript(v, options.voters).map(slow)])),
    'adv_assumption-surfacer': slow(assumptionsScript(options.voters)),
    [SPEC_CRITERIA_ROLE]: spec.generator.map(slow),
    'adv_spec-judge': spec.judge.map(slow),
    implement: implementAverage(AVERAGE_GOOD),
    review: codeReview,
  };
}

export interface AdversarialSample {
  options: AdversarialRunOptions;
  /** successful model calls by role, opened → quiet */
  calls: Record<string, number>;
  /** the plan phase's span in the HydraFlow step, ms */
  planWallMs: number;
  /**
   * scripted latency × (planner calls + council rounds + plan reviewer calls + criteria written + judge rounds + the
   * surfacer's round), ms
   */
  planCriticalMs: number;
  planCalls: number;
  reviewCalls: number;
  rounds: number;
  /** the plan council's record in the signed state (status, retries, calls), when it ran */
  stage?: StageSample;
  /** the spec stage's (src/phases/adversarial/spec-judge.ts), when it ran */
  spec?: StageSample;
  /** the assumption surfacer's (src/phases/adversarial/assumptions.ts), when it ran */
  assumptions?: StageSample;
  gate?: string;
  /** usage of the voters' calls (adv_*) and of every plan-phase call, as the server reported it */
  usage: { voters: Usage; planPhase: Usage };
  labels: string[];
  jobs: number;
  violations: number;
}

export interface StageSample {
  status: string;
  retries: number;
  calls: number;
  /** voters per round */
  rounds: number[];
}

export interface Usage {
  input: number;
  written: number;
  read: number;
  /** in base-price input-token equivalents: cache writes at 1.25×, cache reads at 0.1× (Anthropic) */
  billable: number;
}

function usageOf(calls: ModelCall[]): Usage {
  let input = 0;
  let written = 0;
  let read = 0;
  for (const c of calls) {
    input += Number(c.usage?.input_tokens ?? 0);
    written += Number(c.usage?.cache_creation_input_tokens ?? 0);
    read += Number(c.usage?.cache_read_input_tokens ?? 0);
  }
  return { input, written, read, billable: input + 1.25 * written + 0.1 * read };
}

const PLAN_ROLES = new Set([
  'plan',
  'plan_review',
  ...COUNCIL.map((v) => `adv_${v}`),
  SPEC_CRITERIA_ROLE,
  'adv_spec-judge',
  'adv_assumption-surfacer',
]);

/**
 * An issue opened by alice in a repository with the layer as `options` say, run until quiet: its pull request waits
 * for a human. Throws unless it got there; the caller closes the world.
 */
export async function adversarialWorld(
  options: AdversarialRunOptions,
): Promise<{ world: Awaited<ReturnType<typeof lifecycleWorld>>; issue: number; jobs: JobRecord[] }> {
  const config = options.enabled ? `${SAMPLE_CONFIG}adversarial:\n  enabled: true\n` : SAMPLE_CONFIG;
  const world = await lifecycleWorld(
    adversarialScript(options),
    {},
    {
      sample: { extraFiles: { '.github/hydraflow.yml': config } },
      ...(options.caching ? {} : { models: { anthropicMinCacheTokens: 1e9 } }),
    },
  );
  const issue = world.gh.world.issue({ ...AVERAGE_ISSUE, author: 'alice' });
  world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
  const jobs: JobRecord[] = await world.lc.runUntilQuiet();
  if (world.gh.world.pulls.size !== 1) {
    const progress = world.gh.world.commentsOn(issue.number).find((c) => c.body.includes('hydraflow:progress'));
    const warning = /\*\*\w+ failed:\*\*[\s\S]*?```\n([\s\S]*?)```/.exec(progress?.body ?? '')?.[1] ?? '';
    const labels = world.gh.world.issues.get(issue.number)!.labels.join(', ');
    await world.close();
    throw new Error(`expected one pull request, got none (jobs ${jobsSummary(jobs)}; labels ${labels}) ${warning}`);
  }
  return { world, issue: issue.number, jobs };
}

/** One run: opened → quiet (the pull request waits for a human), measured. */
export async function adversarialOnce(options: AdversarialRunOptions): Promise<AdversarialSample> {
  const { world, issue: n, jobs } = await adversarialWorld(options);
  const issue = { number: n };
  try {
    const spans = jobs
      .flatMap((j) => j.steps)
      .filter(isHydraflowStep)
      .flatMap((s) => readPhaseSpans(s.summary))
      .filter((s) => s.phase === 'plan');
    if (spans.length !== 1) throw new Error(`expected one plan phase, got ${spans.length}`);
    const plan = spans[0]!;
    const ok = world.models.calls.filter((c) => c.status === 200);
    const calls: Record<string, number> = {};
    for (const c of ok) calls[c.role ?? '?'] = (calls[c.role ?? '?'] ?? 0) + 1;
    const state = stateOf(world.gh.world.commentsOn(issue.number), issue.number);
    const rec = state?.adversarial?.stages['plan-council'];
    const specRec = state?.adversarial?.stages['spec-judge'];
    const assumptionsRec = state?.adversarial?.stages['assumptions-plan'];
    const rounds = rec?.rounds.length ?? 0;
    const planCalls = calls.plan ?? 0;
    const reviewCalls = calls.plan_review ?? 0;
    const specSequential =
      (calls[SPEC_CRITERIA_ROLE] ?? 0) + (specRec?.rounds.length ?? 0) + (assumptionsRec?.rounds.length ?? 0);
    const inPlan = ok.filter((c) => PLAN_ROLES.has(c.role ?? ''));
    return {
      options,
      calls,
      planWallMs: plan.endedAt - plan.startedAt,
      planCriticalMs: options.latencyMs * (planCalls + rounds + reviewCalls + specSequential),
      planCalls,
      reviewCalls,
      rounds,
      ...(rec ? { stage: stageSample(rec) } : {}),
      ...(specRec ? { spec: stageSample(specRec) } : {}),
      ...(assumptionsRec ? { assumptions: stageSample(assumptionsRec) } : {}),
      ...(state?.adversarial?.gate ? { gate: state.adversarial.gate.decision } : {}),
      usage: { voters: usageOf(inPlan.filter((c) => c.role?.startsWith('adv_'))), planPhase: usageOf(inPlan) },
      labels: world.gh.world.issues.get(issue.number)!.labels,
      jobs: jobs.filter((j) => j.status !== 'skipped' && j.status !== 'cancelled').length,
      violations: world.gh.violations.length,
    };
  } finally {
    await world.close();
  }
}

function stageSample(rec: NonNullable<AdversarialState['stages']['plan-council']>): StageSample {
  return { status: rec.status, retries: rec.retries, calls: rec.calls, rounds: rec.rounds.map((r) => r.voters.length) };
}

const jobsSummary = (jobs: JobRecord[]) => jobs.map((j) => `${j.job}:${j.status}`).join(', ');

export function stateOf(comments: { user: string; body: string }[], issue: number): IssueState | undefined {
  const progress = comments.find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!progress) return undefined;
  const decoded = decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue });
  return decoded.status === 'valid' ? decoded.state : undefined;
}

/** The plan council voters' calls of a run. */
export const voterCalls = (s: AdversarialSample) =>
  COUNCIL.map((v) => s.calls[`adv_${v}`] ?? 0).reduce((n, k) => n + k, 0);

/** The spec stage's calls of a run: the criteria written and the judge's votes. */
export const specCalls = (s: AdversarialSample) =>
  (s.calls[SPEC_CRITERIA_ROLE] ?? 0) + (s.calls['adv_spec-judge'] ?? 0);

export const totalCalls = (s: AdversarialSample) => Object.values(s.calls).reduce((n, k) => n + k, 0);
