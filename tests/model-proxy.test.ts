/**
 * The agent job's model proxy (src/agents/model-proxy.ts), started from the built dist/ as actions/model-proxy starts
 * it, in front of the test world's model server: the key never reaches an environment or a command line, only model
 * calls with the run's token are forwarded, and the proxy stops when asked.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_ENTRY, startModelServer, type ModelServer } from '@hydraflow/testkit';
import {
  FIRST_TURN_FILE,
  launchModelProxy,
  PROXY_TASK_DIR,
  startProxyStep,
  stopModelProxy,
  type ProxyHandle,
} from '../src/agents/model-proxy';
import { verifiedMeter, type ProxyLimits } from '../src/agents/proxy-meter';

const KEY = 'sk-ant-proxy-test-key-5b7e1c9d2f';
/**
 * The runner's process-tracking id, which the launcher passes on: it tells this file's proxies from those of tests
 * running beside it (the lifecycle tests start proxies too) or of other work on the machine.
 */
const TRACKING_ID = `hydraflow-model-proxy-test-${randomUUID()}`;
let models: ModelServer;
let trackingBefore: string | undefined;
beforeAll(async () => {
  trackingBefore = process.env.RUNNER_TRACKING_ID;
  process.env.RUNNER_TRACKING_ID = TRACKING_ID;
  models = await startModelServer({ script: { '*': { text: 'pong' } }, apiKeys: [KEY] });
});
afterAll(() => {
  if (trackingBefore === undefined) delete process.env.RUNNER_TRACKING_ID;
  else process.env.RUNNER_TRACKING_ID = trackingBefore;
  return models.close();
});

/** Every proxy process this file started (by its tracking id), with what /proc shows of it. */
function proxyProcesses(): { pid: number; environ: string; cmdline: string }[] {
  const out = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('serve-model-proxy')) continue;
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (environ.includes(TRACKING_ID)) out.push({ pid: Number(pid), cmdline, environ });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The launcher does not wait for the proxy to listen (the agent step comes much later): a test does. */
async function ready<H extends ProxyHandle>(handle: H): Promise<H> {
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${handle.url}/ping`).then(
      () => true,
      () => false,
    );
    if (up) return handle;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the proxy did not start');
}

async function call(
  handle: ProxyHandle,
  wire: 'anthropic' | 'openai',
  token = handle.token,
  path?: string,
  body: Record<string, unknown> = {},
) {
  const anthropic = wire === 'anthropic';
  return fetch(`${handle.url}${path ?? (anthropic ? '/v1/messages' : '/chat/completions')}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(anthropic ? { 'x-api-key': token, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      model: anthropic ? 'claude-sonnet-4-6' : 'gpt-4.1',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'ping' }],
      ...body,
    }),
  });
}

describe('the model proxy', () => {
  for (const wire of ['anthropic', 'openai'] as const) {
    it(`forwards ${wire} model calls with the key; the key is in no environment or command line; it stops when asked`, async () => {
      const upstream = wire === 'anthropic' ? models.anthropicBaseUrl : models.openaiBaseUrl;
      const handle = await ready(
        await launchModelProxy(DIST_ENTRY, { provider: wire, key: KEY, upstream, ttlMs: 60_000 }),
      );
      try {
        const answer = await call(handle, wire);
        expect(answer.status).toBe(200);
        expect(JSON.stringify(await answer.json())).toContain('pong');
        const seen = proxyProcesses();
        expect(seen).toHaveLength(1);
        expect(seen[0]!.environ).not.toContain(KEY);
        expect(seen[0]!.cmdline).not.toContain(KEY);
        expect(seen[0]!.environ).not.toContain(handle.token);

        expect((await call(handle, wire, 'not-the-token')).status).toBe(401);
        expect((await call(handle, wire, handle.token, '/v1/models')).status).toBe(403);
        const list = await fetch(`${handle.url}/v1/messages`, { headers: { 'x-api-key': handle.token } });
        expect(list.status).toBe(403); // GET: not a model call
      } finally {
        await stopModelProxy(handle);
      }
      for (let i = 0; i < 50 && proxyProcesses().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(proxyProcesses()).toEqual([]);
    });
  }

  it('actions/model-proxy’s step: reads the routing job’s run-config for the upstream, refuses bad input in one line', async () => {
    const runConfig = JSON.stringify({
      v: 1,
      config: { provider: 'anthropic', base_url: models.anthropicBaseUrl, implement: { max_minutes: 1 } },
    });
    const handle = await startProxyStep({ 'INPUT_ANTHROPIC-API-KEY': KEY, 'INPUT_RUN-CONFIG': runConfig }, DIST_ENTRY);
    expect(typeof handle).toBe('object');
    try {
      expect((await call(await ready(handle as ProxyHandle), 'anthropic')).status).toBe(200);
    } finally {
      await stopModelProxy(handle as ProxyHandle);
    }
    expect(await startProxyStep({ 'INPUT_RUN-CONFIG': runConfig }, DIST_ENTRY)).toBe(
      "No API key for provider 'anthropic': set the model API key secret",
    );
    expect(await startProxyStep({ 'INPUT_ANTHROPIC-API-KEY': KEY, 'INPUT_RUN-CONFIG': '{' }, DIST_ENTRY)).toMatch(
      /^input run-config:/,
    );
    expect(
      await startProxyStep({ 'INPUT_OPENAI-API-KEY': KEY, INPUT_PROVIDER: 'openai-compatible' }, DIST_ENTRY),
    ).toMatch(/needs a base URL/);
  });

  it('exits by itself when its time is up', async () => {
    const handle = await ready(
      await launchModelProxy(DIST_ENTRY, {
        provider: 'anthropic',
        key: KEY,
        upstream: models.anthropicBaseUrl,
        ttlMs: 300,
      }),
    );
    expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (let i = 0; i < 100 && proxyProcesses().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(proxyProcesses()).toEqual([]);
  });

  for (const wire of ['anthropic', 'openai'] as const) {
    it(`${wire}: sends the first turn as it starts, answers the agent's identical request with it (one call upstream), forwards any other, and hands back a first turn nobody took`, async () => {
      const upstream = wire === 'anthropic' ? models.anthropicBaseUrl : models.openaiBaseUrl;
      const path = wire === 'anthropic' ? '/v1/messages' : '/chat/completions';
      // what call() sends
      const body = JSON.stringify({
        model: wire === 'anthropic' ? 'claude-sonnet-4-6' : 'gpt-4.1',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'ping' }],
      });
      const headers: Record<string, string> =
        wire === 'anthropic'
          ? { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }
          : { 'content-type': 'application/json' };
      const before = models.calls.length;
      const handle = await ready(
        await launchModelProxy(DIST_ENTRY, {
          provider: wire,
          key: KEY,
          upstream,
          ttlMs: 60_000,
          firstTurn: { path, headers, body },
        }),
      );
      try {
        for (let i = 0; i < 100 && models.calls.length === before; i++) await new Promise((r) => setTimeout(r, 20));
        expect(models.calls.length - before).toBe(1); // sent before anyone asked
        expect(models.calls.at(-1)!.apiKey).toBe(KEY);
        const answer = await call(handle, wire); // the very same request
        expect(answer.status).toBe(200);
        expect(JSON.stringify(await answer.json())).toContain('pong');
        expect(models.calls.length - before).toBe(1);
        expect((await call(handle, wire)).status).toBe(200); // taken once; the next one goes upstream
        expect(models.calls.length - before).toBe(2);
      } finally {
        expect(await stopModelProxy(handle)).toEqual({ firstTurn: 'taken' });
      }

      const other = await ready(
        await launchModelProxy(DIST_ENTRY, {
          provider: wire,
          key: KEY,
          upstream,
          ttlMs: 60_000,
          firstTurn: { path, headers, body: body.replace('ping', 'a task the agent never asked') },
        }),
      );
      expect((await call(other, wire)).status).toBe(200);
      const left = await stopModelProxy(other);
      expect(left.firstTurn).toBe('not taken');
      expect(left.unclaimed?.status).toBe(200);
      expect(JSON.parse(left.unclaimed!.body)).toHaveProperty('usage');
      expect(models.calls.length - before).toBe(4);
    });
  }

  it('actions/model-proxy’s step takes the first turn from its task download, and refuses one that is not a model call', async () => {
    const temp = mkdtempSync(join(tmpdir(), 'hydraflow-proxy-step-'));
    const file = join(temp, PROXY_TASK_DIR, FIRST_TURN_FILE);
    mkdirSync(join(file, '..'), { recursive: true });
    const env = { 'INPUT_ANTHROPIC-API-KEY': KEY, 'INPUT_BASE-URL': models.anthropicBaseUrl, RUNNER_TEMP: temp };
    try {
      const body = JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      });
      writeFileSync(file, JSON.stringify({ path: '/v1/models', headers: {}, body }));
      expect(await startProxyStep(env, DIST_ENTRY)).toBe(
        `${file}: expected the first turn the routing job hands on in its task artifact (not a model call)`,
      );
      writeFileSync(file, '{ not json');
      expect(await startProxyStep(env, DIST_ENTRY)).toMatch(/expected the first turn .*\(not JSON\)$/);
      const before = models.calls.length;
      writeFileSync(
        file,
        JSON.stringify({ path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01' }, body }),
      );
      const handle = (await startProxyStep(env, DIST_ENTRY)) as ProxyHandle;
      await ready(handle);
      for (let i = 0; i < 100 && models.calls.length === before; i++) await new Promise((r) => setTimeout(r, 20));
      expect(models.calls.length - before).toBe(1);
      expect((await stopModelProxy(handle)).unclaimed?.status).toBe(200);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  });
});

describe('the model proxy’s meter (docs/adr/0022-the-model-proxy-meters-the-agent.md)', () => {
  const START = 'a'.repeat(40);
  const launch = (given?: ProxyLimits) =>
    launchModelProxy(DIST_ENTRY, {
      provider: 'anthropic',
      key: KEY,
      upstream: models.anthropicBaseUrl,
      ttlMs: 60_000,
      ...(given ? { limits: given } : {}),
    });
  const limits = (over: Partial<ProxyLimits> = {}): ProxyLimits => ({
    v: 1,
    issue: 7,
    startSha: START,
    runId: '42',
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    price: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
    priced: true,
    maxOutputTokens: 100,
    usd: 1,
    ...over,
  });

  it('forwards only the configured model, whole answers and the agent’s output per call; counts every answer; signs the count when it stops', async () => {
    const handle = await launch(limits());
    await ready(handle);
    const before = models.calls.length;
    const refusals = [
      { model: 'claude-opus-4-1' },
      { stream: true },
      { max_tokens: 101 },
      { max_tokens: undefined },
      { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 50 }] },
      { mcp_servers: [{ type: 'url', url: 'https://example.com/mcp', name: 'x' }] },
    ];
    for (const body of refusals) {
      const answer = await call(handle, 'anthropic', handle.token, undefined, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(
        /configured implement model|streamed answers|at most 100 output tokens|server-side tools are not forwarded/,
      );
    }
    const beta = await fetch(`${handle.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': handle.token,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'context-1m-2025-08-07',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(beta.status).toBe(400); // a long-context beta is billed at another rate
    expect(models.calls.length).toBe(before); // none reached the provider
    // three at once: the proxy sends them one after the other, and counts each
    const answers = await Promise.all([1, 2, 3].map(() => call(handle, 'anthropic')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const billed = models.calls.slice(before);
    expect(billed).toHaveLength(3);
    for (let i = 1; i < billed.length; i++) expect(billed[i]!.at).toBeGreaterThanOrEqual(billed[i - 1]!.at);

    const left = await stopModelProxy(handle);
    expect((await call(handle, 'anthropic').catch(() => undefined))?.status).not.toBe(200); // stopped
    const report = verifiedMeter(left.meter!, handle.meterKey)!;
    expect(report).toMatchObject({ v: 1, issue: 7, startSha: START, runId: '42', refused: 7 });
    expect(report.ledger).toHaveLength(3);
    for (const [i, entry] of report.ledger.entries()) {
      const usage = billed[i]!.usage as { input_tokens: number; output_tokens: number };
      expect(entry).toMatchObject({ phase: 'implement', role: 'implement', runId: '42', model: 'claude-sonnet-4-6' });
      expect(entry.inputTokens).toBe(usage.input_tokens);
      expect(entry.outputTokens).toBe(usage.output_tokens);
      expect(entry.costUsd).toBeCloseTo((usage.input_tokens * 3 + usage.output_tokens * 15) / 1e6, 6);
    }
    // a count changed by anyone but the proxy does not verify, nor does one checked with another proxy's key
    const forged = JSON.stringify({ ...report, ledger: [] });
    expect(verifiedMeter({ ...left.meter!, report: forged }, handle.meterKey)).toBeUndefined();
    const other = await launch();
    await stopModelProxy(await ready(other));
    expect(verifiedMeter(left.meter!, other.meterKey)).toBeUndefined();
  });

  it('refuses a call once what was billed leaves no room for its output: the allowance is never crossed by more than one call', async () => {
    // each call sends ~1,000 input tokens (~$0.003) and may ask for 100 output tokens ($0.0015): the allowance of $0.01
    // has room for three calls before what they billed leaves too little
    const handle = await ready(await launch(limits({ usd: 0.01, maxOutputTokens: 100 })));
    const statuses: number[] = [];
    let message = '';
    for (let i = 0; i < 6; i++) {
      const answer = await call(handle, 'anthropic', handle.token, undefined, {
        max_tokens: 100,
        messages: [{ role: 'user', content: 'x'.repeat(4_000) }],
      });
      statuses.push(answer.status);
      if (answer.status === 400) message = ((await answer.json()) as { error: { message: string } }).error.message;
    }
    const report = verifiedMeter((await stopModelProxy(handle)).meter!, handle.meterKey)!;
    const spent = report.ledger.reduce((sum, e) => sum + e.costUsd, 0);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.slice(statuses.indexOf(400))).toEqual(statuses.slice(statuses.indexOf(400)).map(() => 400));
    expect(message).toMatch(/model budget is spent: \$0\.0\d+ of the \$0\.0100 its budgets/);
    expect(report.ledger).toHaveLength(statuses.filter((s) => s === 200).length);
    expect(report.refused).toBe(statuses.filter((s) => s === 400).length);
    expect(spent + (100 * 15) / 1e6).toBeGreaterThan(0.01); // refused only when the next call's output did not fit
  });
});
