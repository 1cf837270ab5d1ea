/**
 * HydraFlow against a real llama.cpp server (issue #17 item 11, "must hold"): every structured call of triage,
 * grooming (each agent and the summary), plan, plan review and review, made by the built dist/ through HydraFlow's own
 * provider code, gets a 200 and an answer HydraFlow parsed — or a clean typed failure.
 *
 * Opt-in, not in CI: `HYDRAFLOW_LLAMA_CPP=1 npx vitest run tests/llama-cpp.interop.test.ts`. The first run builds
 * `llama-server` from the llama.cpp source that the npm package node-llama-cpp ships (npm registry, cmake and a C++
 * compiler; about 8 minutes on two cores) into ~/.cache/hydraflow/llama.cpp (HYDRAFLOW_LLAMA_CPP_CACHE moves it);
 * later runs take under a minute. No model hub is needed: the model is written by the test (llama-cpp/model.ts), a
 * tiny bigram model whose answers under a grammar are short and the same on every run. It picks the first submit tool
 * it prefers, so two servers run, one model each: the summary agent's calls go to the one that prefers
 * submit_summary, every other call to the one that prefers submit_verdict.
 *
 * The server's log and a table of every call (role, status, time, answer) are written to the test's temp directory
 * and printed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import { z } from 'zod';
import { emptyState, encodeStateBlock, OutputFormatError, PROGRESS_MARKER, type IssueState } from '@hydraflow/core';
import {
  createProvider,
  generateStructured,
  StructuredOutputError,
  type CompletionRequest,
} from '@hydraflow/providers';
import {
  BOT_LOGIN,
  createWorld,
  ensureLlamaServer,
  fakeSha,
  qwenTemplate,
  startLlamaServer,
  startRoutingProxy,
  tinyModel,
  type LlamaServer,
  type RoutingProxy,
  type World,
} from '@hydraflow/testkit';

const ENABLED = process.env.HYDRAFLOW_LLAMA_CPP === '1';
/** A run of the action against the server: the grooming agents' long prompts take 10-40 s on a shared machine. */
const RUN_TIMEOUT = 10 * 60_000;
const MODEL = 'hydraflow-interop-tiny';

let servers: LlamaServer[] = [];
let proxy: RoutingProxy;
let dir: string;
const worlds: World[] = [];

beforeAll(async () => {
  if (!ENABLED) return;
  dir = mkdtempSync(join(tmpdir(), 'hf-llama-'));
  const build = ensureLlamaServer();
  console.log(`llama.cpp ${build.release}: ${build.binary} (built in ${build.buildSeconds} s; 0 = cached)`);
  const template = qwenTemplate(build.source);
  for (const preferTool of ['verdict', 'summary'] as const) {
    const model = join(dir, `tiny-${preferTool}.gguf`);
    writeFileSync(model, tinyModel({ chatTemplate: template, preferTool }));
    servers.push(
      await startLlamaServer({ binary: build.binary, model, logFile: join(dir, `llama-server-${preferTool}.log`) }),
    );
  }
  const [verdict, summary] = servers;
  proxy = await startRoutingProxy((role) => (role === 'groom_summary' ? summary!.url : verdict!.url));
}, 45 * 60_000);

afterAll(async () => {
  if (!ENABLED) return;
  const table = proxy.calls.map(
    (c) => `${c.role ?? '?'}\t${c.status}\t${c.ms} ms\t${c.mode}\t${c.answer.replace(/\s+/g, ' ').slice(0, 160)}`,
  );
  writeFileSync(join(dir, 'calls.tsv'), `${table.join('\n')}\n`);
  console.log(`Calls to llama.cpp (also in ${dir}/calls.tsv):\n${table.join('\n')}`);
  await Promise.all([...worlds.map((w) => w.close()), proxy.close(), ...servers.map((s) => s.close())]);
  servers = [];
});

async function llamaWorld(config = ''): Promise<World> {
  const w = await createWorld({ provider: 'openai-compatible', config: `models:\n  default: ${MODEL}\n${config}` });
  worlds.push(w);
  w.gh.addUser({ login: 'alice', permission: 'write' });
  return w;
}

/** HydraFlow's inputs for a run against the proxy in front of llama.cpp. */
const viaLlama = () => ({ inputs: { 'base-url': proxy.baseUrl }, timeoutMs: RUN_TIMEOUT });

/** The calls of `roles` since `from`: every one a 200. */
function callsOf(roles: (role: string) => boolean, from: number) {
  const calls = proxy.calls.slice(from).filter((c) => c.role !== undefined && roles(c.role));
  expect(calls.length).toBeGreaterThan(0);
  for (const c of calls) expect(c.status, `${c.role}: ${c.answer}`).toBe(200);
  return calls;
}

describe.skipIf(!ENABLED)(
  'HydraFlow against a real llama.cpp server (HYDRAFLOW_LLAMA_CPP=1)',
  { timeout: RUN_TIMEOUT },
  () => {
    it('triage, then grooming: each agent and the summary answer through their submit tools', async () => {
      const w = await llamaWorld();
      const from = proxy.calls.length;
      const issue = w.gh.world.issue({
        title: 'Add average, median and describe to src/numbers.js',
        body: 'Add three helpers next to sum(): average, median and describe, 0 for an empty list, with tests.',
        author: 'alice',
      });
      const triaged = await w.run('issues', 'opened', { issue: issue.number }, viaLlama());
      expect(triaged.exitCode, triaged.stdout + triaged.stderr).toBe(0);
      callsOf((r) => r === 'triage', from);
      const triage = stateOf(w, issue.number).triage;
      // The model's scores are 7 and 7: a clear, complex issue, groomed first.
      expect(triage).toMatchObject({ clarity_score: 7, complexity_score: 7, route: 'groom' });

      const groomed = await w.runDispatch(undefined, viaLlama());
      expect(groomed.exitCode, groomed.stdout + groomed.stderr).toBe(0);
      const calls = callsOf((r) => r.startsWith('groom_'), from);
      expect(new Set(calls.map((c) => c.role))).toEqual(
        new Set(['groom_pm', 'groom_engineer', 'groom_qa', 'groom_research', 'groom_summary']),
      );
      const groom = stateOf(w, issue.number).groom!;
      // Every agent's verdict parsed (none is the failure verdict), and the summary's decision is the model's own.
      for (const agent of ['pm', 'engineer', 'qa', 'research'])
        expect(groom.agents[agent], agent).toMatchObject({ failed: false });
      expect(groom.decision).toBe('blocked');
    });

    it('plan and plan review: the plan and its scores parse, and the plan gate decides on them', async () => {
      const w = await llamaWorld('grooming:\n  route: never\n');
      const from = proxy.calls.length;
      const issue = w.gh.world.issue({
        title: 'Paginate GET /users',
        body: 'GET /users returns every user at once. Return 50 per page with a Link header; add tests.',
        author: 'alice',
      });
      const run = await w.run('issues', 'opened', { issue: issue.number }, viaLlama());
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      callsOf((r) => r === 'plan', from);
      callsOf((r) => r === 'plan_review', from);
      const plan = stateOf(w, issue.number).plan;
      // Parsed every time: the plan gate decided on the reviewer's scores (7 of 10 on every dimension).
      expect(plan?.scores.correctness).toBe(7);
      expect(['accepted', 'rejected']).toContain(plan?.status);
    });

    it("review: the reviewer's verdict parses and the round is recorded", async () => {
      const w = await llamaWorld();
      const from = proxy.calls.length;
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
      const run = await w.run(
        'workflow_dispatch',
        undefined,
        { inputs: { issue: String(issue.number), phase: 'review', actor: 'alice' } },
        viaLlama(),
      );
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      callsOf((r) => r === 'review', from);
      expect(stateOf(w, issue.number).review?.rounds).toHaveLength(1);
    });

    describe("the server's refusals, met as HydraFlow's provider code meets them", () => {
      const provider = () =>
        createProvider({ provider: 'openai-compatible', model: MODEL, apiKey: 'none', baseUrl: proxy.baseUrl });
      const request: CompletionRequest = {
        role: 'interop',
        system: [{ text: 'HydraFlow interop agent. Answer with the JSON asked for.' }],
        messages: [{ role: 'user', content: 'Issue #1: say hello.' }],
        maxOutputTokens: 200,
      };

      it('a schema it cannot compile (400 "failed to parse grammar") is asked again in JSON mode, and answered', async () => {
        const from = proxy.calls.length;
        // A bound the portable rules never send (a minimum length over llama.cpp's 2,000 repetitions).
        const schema = {
          type: 'object',
          properties: { greeting: { type: 'string', minLength: 2500 } },
          required: ['greeting'],
          additionalProperties: false,
        };
        const result = await (await provider()).completeJson(request, { name: 'greeting', jsonSchema: schema });
        expect(JSON.parse(result.text)).toEqual(expect.any(Object));
        expect(proxy.calls.slice(from).map((c) => [c.status, c.mode])).toEqual([
          [400, 'json_schema'],
          [200, 'json_object'],
        ]);
        expect(proxy.calls[from]!.answer).toContain('failed to parse grammar');
      });

      it('a reply it cannot read (500 "does not match the expected … format") is repaired once, then fails typed', async () => {
        const from = proxy.calls.length;
        // A pattern (a or b, then a backslash and `!`) whose grammar lets the model write what llama.cpp's own chat
        // parser then refuses.
        const schema = z.strictObject({ greeting: z.string().regex(/^(a|b)\\!$/) });
        const error = await generateStructured({ provider: await provider(), request, schema, schemaName: 'greeting' })
          .then(() => undefined)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StructuredOutputError);
        expect((error as StructuredOutputError).reason).toMatch(/does not match the expected [\w-]+ format/);
        // One call and one repair, no retry of either: each 500 became an OutputFormatError at once.
        expect(proxy.calls.slice(from).map((c) => c.status)).toEqual([500, 500]);
        await expect(
          (await provider()).completeJson(request, { name: 'greeting', jsonSchema: z.toJSONSchema(schema) }),
        ).rejects.toBeInstanceOf(OutputFormatError);
      });
    });
  },
);
