/**
 * OpenAI-compatible endpoints that are not OpenAI (issue #17 item 11), through the built dist/: HydraFlow configured
 * with `provider: openai-compatible` against the scripted model server in its llama.cpp mode, which behaves as
 * llama.cpp's server did for HydraFlow (see packages/testkit/src/models/llama-cpp.ts):
 *
 * - a schema with a bounded repetition of 2,000 or more (triage's `enrichment`, the plan's `approach`, the review's
 *   `summary`, grooming's submit tools) is refused with "Failed to initialize samplers: failed to parse grammar";
 * - a bounded `number` comes back unbounded (`27e1950`);
 * - a reply its parser could not read is an HTTP 500 "The model produced output that does not match the expected
 *   peg-native format".
 *
 * On the dist before the fix, every structured call failed (triage, plan and review ended in hydraflow-hitl, grooming
 * failed closed) and the format 500 was retried four times. The real server is exercised by
 * llama-cpp.interop.test.ts (opt-in).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { emptyState, encodeStateBlock, PROGRESS_MARKER, type IssueState } from '@hydraflow/core';
import {
  BOT_LOGIN,
  createWorld,
  fakeSha,
  LLAMA_FORMAT_ERROR,
  LLAMA_MODEL_FILE,
  type ModelServerOptions,
  type Script,
  type World,
} from '@hydraflow/testkit';
import { planScript } from './support/plans';
import { groomReady, STATS_ISSUE, triageComplex } from './lifecycle/grooming';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A local model no price table knows, as people run behind llama.cpp. */
const LOCAL_MODEL = 'qwen2.5-coder-7b-instruct-q4_k_m';

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Touches the pagination helper of the users endpoint.',
  reasons: ['Precise expected behaviour.', 'One endpoint.'],
};

async function llamaWorld(script: Script, models: Omit<ModelServerOptions, 'script'> = { llamaCpp: {} }) {
  world = await createWorld({
    provider: 'openai-compatible',
    script,
    models,
    config: `models:\n  default: ${LOCAL_MODEL}\n`,
  });
  world.gh.addUser({ login: 'alice', permission: 'write' });
  return world;
}

const labelsOf = (w: World, issue: number) => [...w.gh.world.issues.get(issue)!.labels].sort();

function openIssue(w: World) {
  return w.gh.world.issue({
    title: 'Paginate GET /users',
    body: 'GET /users returns every user at once. Return 50 per page with a Link header; add tests.',
    author: 'alice',
  });
}

describe('against a llama.cpp server (scripted)', () => {
  it('triage, plan and plan review compile, parse and move the issue on: every call a 200', async () => {
    const w = await llamaWorld({ triage: { json: clearVerdict }, ...planScript });
    const issue = openIssue(w);

    const run = await w.run('issues', 'opened', { issue: issue.number });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.models.calls.map((c) => [c.role, c.status])).toEqual([
      ['triage', 200],
      ['plan', 200],
      ['plan_review', 200],
    ]);
    // The scores were sent as an enum of whole numbers, which a grammar enforces, not as a bounded number.
    const triageSchema = w.models.calls[0]!.request!.schema as { properties: Record<string, unknown> };
    expect(triageSchema.properties.clarity_score).toEqual({
      type: 'integer',
      enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      description: expect.any(String),
    });
    const state = stateOf(w, issue.number);
    expect(state.triage?.route).toBe('plan');
    expect(state.plan?.status).toBe('accepted');
    expect(labelsOf(w, issue.number)).not.toContain('hydraflow-hitl');
  });

  it('grooming agents and the summary: their submit tools compile and the issue is groomed', async () => {
    const w = await llamaWorld({ triage: triageComplex, ...groomReady() });
    const issue = w.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });

    const triaged = await w.run('issues', 'opened', { issue: issue.number });
    expect(triaged.exitCode, triaged.stderr).toBe(0);
    const groomed = await w.runDispatch();
    expect(groomed.exitCode, groomed.stdout + groomed.stderr).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    const grooming = w.models.calls.filter((c) => c.role?.startsWith('groom_'));
    expect(grooming.length).toBeGreaterThanOrEqual(5);
    for (const call of grooming) expect(call.status, `${call.role}: ${call.error ?? ''}`).toBe(200);
  });

  it('the review compiles and parses: the pull request is reviewed, not handed to a human', async () => {
    const w = await llamaWorld({ review: { json: { summary: 'Looks right.', findings: [] } } });
    const issue = w.gh.world.issue({
      title: 'Add the parser',
      body: 'Parse it.',
      author: 'alice',
      labels: ['hydraflow-review'],
    });
    const branch = `hydraflow/issue-${issue.number}`;
    const { pull } = w.gh.world.pull({
      title: 'Add the parser',
      body: `Fixes #${issue.number}`,
      author: BOT_LOGIN,
      head: branch,
      headSha: fakeSha('v1'),
      files: [
        {
          filename: 'src/parse.js',
          status: 'added',
          additions: 1,
          deletions: 0,
          patch: '@@ -0,0 +1,1 @@\n+export const parse = (s) => JSON.parse(s);',
        },
      ],
    });
    const state: IssueState = {
      ...emptyState(issue.number, w.gh.world.repoId),
      stage: 'review',
      implement: {
        branch,
        pull: pull.number,
        headSha: fakeSha('v1'),
        attempts: 1,
        mode: 'build',
        fixAttempts: 0,
        at: '2026-01-01T00:00:00.000Z',
      },
    };
    w.gh.world.comment(issue.number, {
      author: BOT_LOGIN,
      body: `${PROGRESS_MARKER}\nimplemented\n${encodeStateBlock(state, { key: w.stateKey })}`,
    });
    const run = await w.run('workflow_dispatch', undefined, {
      inputs: { issue: String(issue.number), phase: 'review', actor: 'alice' },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.models.calls.map((c) => [c.role, c.status])).toEqual([['review', 200]]);
    expect(stateOf(w, issue.number).review?.rounds).toHaveLength(1);
    expect(labelsOf(w, issue.number)).not.toContain('hydraflow-hitl');
  });

  it('a schema the server cannot compile falls back to JSON mode for that schema, and the answer parses', async () => {
    // A server whose grammar limit is lower than the bounds HydraFlow keeps (triage's reasons: 500 characters).
    const w = await llamaWorld({ triage: { json: clearVerdict }, ...planScript }, { llamaCpp: { grammarLimit: 300 } });
    const issue = openIssue(w);

    const run = await w.run('issues', 'opened', { issue: issue.number });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const triage = w.models.calls.filter((c) => c.role === 'triage');
    expect(triage.map((c) => [c.status, c.request?.responseFormat])).toEqual([
      [400, 'json_schema'],
      [200, 'json_object'],
    ]);
    // The schema went into the prompt instead.
    expect(triage[1]!.request!.system).toContain('It must match this JSON Schema, named triage_verdict');
    expect(stateOf(w, issue.number).triage?.route).toBe('plan');
  });

  it('a local model no price table knows costs $0, and the report says so; a configured price counts', async () => {
    // Any OpenAI-compatible endpoint (here one that compiles every schema): the price is the question.
    const w = await llamaWorld({ triage: { json: clearVerdict } }, {});
    const issue = openIssue(w);
    const run = await w.run('issues', 'opened', { issue: issue.number }, { inputs: { phase: 'triage' } });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const state = stateOf(w, issue.number);
    expect(state.ledger).toHaveLength(1);
    expect(state.ledger[0]).toMatchObject({ model: LOCAL_MODEL, costUsd: 0, priced: false });
    expect(state.ledger[0]!.inputTokens).toBeGreaterThan(100);
    const progress = w.gh.world.commentsOn(issue.number).find((c) => c.body.includes(PROGRESS_MARKER))!.body;
    expect(progress).toMatch(
      /\| Cost so far \| \$0\.00 · [\d,]+ tokens \([^)]*\) — unpriced: `qwen2\.5-coder-7b-instruct-q4_k_m` counted as \$0 \(USD budgets do not limit it, token budgets do; give it a price under `pricing` to count it\) \|/,
    );

    await w.close();
    // Priced in the config by the model id asked for, though llama.cpp's answers name its model file.
    const priced = await createWorld({
      provider: 'openai-compatible',
      script: { triage: { json: clearVerdict } },
      models: { llamaCpp: {} },
      config: `models:\n  default: ${LOCAL_MODEL}\npricing:\n  ${LOCAL_MODEL}: { input: 1, output: 2 }\n`,
    });
    world = priced;
    priced.gh.addUser({ login: 'alice', permission: 'write' });
    const second = openIssue(priced);
    await priced.run('issues', 'opened', { issue: second.number }, { inputs: { phase: 'triage' } });
    const entry = stateOf(priced, second.number).ledger[0]!;
    expect(entry).toMatchObject({ model: LLAMA_MODEL_FILE });
    expect(entry.priced).toBeUndefined();
    expect(entry.costUsd).toBeCloseTo((entry.inputTokens * 1 + entry.outputTokens * 2) / 1e6, 6);
  });

  it('a reply the server could not read is repaired once, never retried blindly', async () => {
    // A build that compiles every schema: what is tested is the 500 alone.
    const w = await llamaWorld({ triage: { fault: 'format' } }, { llamaCpp: { grammarLimit: Infinity } });
    const issue = openIssue(w);

    const run = await w.run('issues', 'opened', { issue: issue.number });
    // Two calls, not four: the first, then one repair that says what went wrong.
    const triage = w.models.calls.filter((c) => c.role === 'triage');
    expect(triage.map((c) => c.status)).toEqual([500, 500]);
    const repair = triage[1]!.request!.messages.map((m) => m.content).join('\n');
    expect(repair).toContain('Your previous reply could not be used');
    expect(repair).toContain(LLAMA_FORMAT_ERROR);
    // A clean typed failure: the model's answer, not the provider, failed, and a human takes over.
    expect(labelsOf(w, issue.number)).toContain('hydraflow-hitl');
    expect(run.stdout + run.stderr).toContain('returned no valid triage_verdict after one repair attempt');
  });
});
