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
async function ready(handle: ProxyHandle): Promise<ProxyHandle> {
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

async function call(handle: ProxyHandle, wire: 'anthropic' | 'openai', token = handle.token, path?: string) {
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
        `${file}: expected the first turn the routing job hands on in its task artifact`,
      );
      writeFileSync(file, '{ not json');
      expect(await startProxyStep(env, DIST_ENTRY)).toMatch(/expected the first turn/);
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
