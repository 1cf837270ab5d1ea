/**
 * The coding agent's first model call, built by the routing job for the agent job's model proxy to send before the
 * checkout and the setup steps (docs/adr/0021-first-turn-begun-by-the-model-proxy.md). The agent step's first request
 * follows from the task alone (the system prompt, the task text, the tool definitions, the model), so the routing job
 * runs that very request through the provider's SDK with a fetch that keeps it instead of sending it: what the proxy
 * sends is byte for byte what the agent step's SDK will, and the proxy answers only an identical request with it.
 */
import { join } from 'node:path';
import { modelFor } from '@hydraflow/core';
import { createProvider } from '@hydraflow/providers';
import { firstTurnRequest } from './tool-loop';
import { createWorkspaceTools } from './tools/index';
import { FIRST_TURN_FILE, type FirstTurn } from './model-proxy';
import { agentGateway, agentToolOptions, agentTurns, StepLedger } from '../phases/agent';
import type { ImplementTask } from '../phases/implement-handoff';
import type { PhaseContext } from '../phases/phase-context';

export const firstTurnFile = (dir: string) => join(dir, FIRST_TURN_FILE);

/**
 * The agent step's base URL is its proxy's, `http://127.0.0.1:<port>` (src/run.ts agentModels): any such origin gives
 * the SDK's request the same path.
 */
const PROXY_ORIGIN = 'http://127.0.0.1:9';

/** Not replayed: the key or token (the proxy puts the key in), and what the HTTP layer sets per connection. */
const LEFT_OUT = new Set(['authorization', 'x-api-key', 'host', 'content-length', 'connection', 'transfer-encoding']);

/**
 * The request of the agent's first turn for `task`, as its SDK sends it through the model proxy; undefined when the
 * turn would not fit the task's budgets (the agent step then stops before calling, as it would have) or the request
 * could not be built.
 */
export async function captureFirstTurn(
  ctx: Pick<PhaseContext, 'config' | 'models' | 'tempDir'>,
  task: ImplementTask,
): Promise<FirstTurn | undefined> {
  let captured: FirstTurn | undefined;
  const keep = (async (input: string | URL | { url: string }, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    captured = { path: `${url.pathname}${url.search}`, headers: headerRecord(init?.headers), body: String(init?.body) };
    throw new Error('kept, not sent');
  }) as typeof fetch;
  const provider = createProvider({
    provider: ctx.config.provider,
    model: modelFor(ctx.config, 'implement'),
    apiKey: 'hydraflow-model-proxy',
    baseUrl: PROXY_ORIGIN,
    fetch: keep,
    maxRetries: 0,
  });
  // the tools' definitions; the directory they would work in makes no difference to them
  const toolset = await createWorkspaceTools(agentToolOptions(task, ctx.config, ctx.tempDir));
  try {
    const gateway = agentGateway(ctx.models.with({ providerFor: () => provider }), task, new StepLedger(task.ledger));
    const turns = agentTurns(task, toolset.tools);
    await gateway.turn({ role: turns.role, request: firstTurnRequest(turns) }).catch(() => undefined);
  } finally {
    await toolset.dispose();
  }
  return captured;
}

/** The request's headers as the SDK gave them to fetch (a Headers-like object, pairs or a record), lower-cased. */
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, value: string) => {
    if (!LEFT_OUT.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  };
  if (!headers) return out;
  if (typeof (headers as { forEach?: unknown }).forEach === 'function' && !Array.isArray(headers))
    (headers as { forEach(f: (value: string, name: string) => void): void }).forEach((v, k) => put(k, v));
  else if (Array.isArray(headers)) for (const [k, v] of headers) put(k!, v!);
  else for (const [k, v] of Object.entries(headers)) put(k, String(v));
  return out;
}
