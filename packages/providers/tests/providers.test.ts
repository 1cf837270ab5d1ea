import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CreditExhaustedError,
  isProviderError,
  ModelOutputError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderUnavailableError,
  UserError,
} from '../../core/src/errors';
import {
  startModelServer,
  textOfTokens,
  type ModelCall,
  type ModelServer,
  type ModelServerOptions,
  type Script,
} from '../../testkit/src/models/index';
import {
  classifyError,
  createProvider,
  generateStructured,
  StructuredOutputError,
  toStrictJsonSchema,
  type CompletionRequest,
  type ModelProvider,
  type ProviderName,
} from '../src/index';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const Verdict = z.object({
  verdict: z.enum(['ready', 'needs-info', 'hitl']),
  reasons: z.array(z.string()),
  labels: z.array(z.string()).optional(),
});
const GOOD = { verdict: 'ready', reasons: ['clear repro'] };

const MODELS: Record<'openai' | 'anthropic', string> = { openai: 'gpt-5-mini', anthropic: 'claude-sonnet-4-6' };

function request(issue = 12, extraSystem = ''): CompletionRequest {
  return {
    role: 'triage',
    issue,
    system: [
      { text: `HydraFlow triage agent. Decide whether the issue is ready.${extraSystem}`, cache: true },
      { text: 'Repository: acme/widgets' },
    ],
    messages: [{ role: 'user', content: `Issue #${issue}: the app crashes on start` }],
    maxOutputTokens: 400,
  };
}

async function setup(
  kind: ProviderName,
  script: Script,
  extra: { timeoutMs?: number } & Omit<ModelServerOptions, 'script'> = {},
) {
  const { timeoutMs, ...serverOptions } = extra;
  server = await startModelServer({ script, ...serverOptions });
  const sleeps: number[] = [];
  const provider = await createProvider({
    provider: kind,
    model: kind === 'anthropic' ? MODELS.anthropic : MODELS.openai,
    apiKey: 'test-key',
    baseUrl: kind === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl,
    ...(timeoutMs ? { timeoutMs } : {}),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
  });
  return { provider, sleeps, server };
}

const structured = (provider: ModelProvider, issue = 12) =>
  generateStructured({ provider, request: request(issue), schema: Verdict, schemaName: 'TriageVerdict' });

describe.each(['openai', 'anthropic'] as const)('%s provider against the scripted server', (kind) => {
  it('structured output happy path, in the native structured mode', async () => {
    const { provider, server } = await setup(kind, { triage: { json: GOOD } });
    const { value, calls } = await structured(provider);
    expect(value).toEqual(GOOD);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ provider: kind, model: MODELS[kind], attempts: 1, truncated: false });
    expect(calls[0]!.usage.outputTokens).toBeGreaterThan(0);
    const sent = server.calls[0]!.request!;
    expect(sent).toMatchObject({ role: 'triage', issue: 12 });
    if (kind === 'openai') {
      expect(sent.body.response_format).toMatchObject({
        type: 'json_schema',
        json_schema: { name: 'TriageVerdict', strict: true },
      });
      expect(sent.body.max_completion_tokens).toBe(400);
    } else {
      expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'TriageVerdict' });
      expect((sent.body.system as any[])[0].cache_control).toEqual({ type: 'ephemeral' });
      expect((sent.body.system as any[])[1].cache_control).toBeUndefined();
    }
  });

  it('junk → one repair carrying the bad output and the errors → success', async () => {
    const { provider, server } = await setup(kind, { triage: [{ fault: 'junk' }, { json: GOOD }] });
    const { value, calls } = await structured(provider);
    expect(value).toEqual(GOOD);
    expect(calls).toHaveLength(2);
    const repair = server.calls[1]!.request!;
    const last = repair.messages[repair.messages.length - 1]!.content;
    expect(repair.messages[repair.messages.length - 2]).toMatchObject({ role: 'assistant' });
    expect(repair.messages[repair.messages.length - 2]!.content).toContain('Sure! I looked at this carefully');
    expect(last).toMatch(/corrected, complete JSON/);
    expect(repair.issue).toBe(12);
  });

  it('junk twice → ModelOutputError with the raw output, both calls kept for the ledger', async () => {
    const { provider, server } = await setup(kind, { triage: { fault: 'junk' } });
    const error = await structured(provider).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelOutputError);
    expect((error as ModelOutputError).raw).toContain('Sure! I looked at this carefully');
    expect((error as StructuredOutputError).calls).toHaveLength(2);
    expect((error as Error).message).toMatch(/after one repair attempt/);
    expect(server.calls).toHaveLength(2);
  });

  it('truncated JSON → repair path', async () => {
    const { provider, server } = await setup(kind, { triage: [{ fault: 'truncated', json: GOOD }, { json: GOOD }] });
    const { value, calls } = await structured(provider);
    expect(value).toEqual(GOOD);
    expect(calls[0]!.truncated).toBe(true);
    expect(calls[0]!.usage.outputTokens).toBe(400);
    const repairPrompt = server.calls[1]!.request!.messages.at(-1)!.content;
    expect(repairPrompt).toMatch(/cut off at the output-token limit/);
  });

  it('429 with retry-after: the requested sleep is the retry-after, then success', async () => {
    const { provider, sleeps } = await setup(kind, {
      triage: [{ fault: '429', retryAfterSeconds: 7 }, { json: GOOD }],
    });
    const { calls } = await structured(provider);
    expect(sleeps).toEqual([7000]);
    expect(calls[0]!.attempts).toBe(2);
  });

  it.each(['529', '500'] as const)(
    '%s is retried with exponential backoff, then ProviderUnavailableError',
    async (fault) => {
      const { provider, sleeps, server } = await setup(kind, { triage: { fault } });
      const error = await structured(provider).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderUnavailableError);
      expect(isProviderError(error)).toBe(true);
      const status = kind === 'openai' && fault === '529' ? '503' : fault;
      expect((error as Error).message).toContain(kind);
      expect((error as Error).message).toContain(MODELS[kind]);
      expect((error as Error).message).toContain(`status ${status}`);
      expect((error as Error).message).toContain('4 attempts');
      expect(server.calls).toHaveLength(4);
      expect(sleeps).toEqual([750, 1500, 3000]); // 1 s · 2^n, jitter factor 0.75 with random() = 0.5
    },
  );

  it('credit exhaustion → CreditExhaustedError at once, never retried', async () => {
    const { provider, sleeps, server } = await setup(kind, { triage: { fault: 'credit' } });
    const error = await structured(provider).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CreditExhaustedError);
    expect((error as CreditExhaustedError).provider).toBe(kind);
    expect(server.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('timeout → retried after the client gives up', async () => {
    const { provider, sleeps, server } = await setup(
      kind,
      { triage: [{ fault: 'timeout', latencyMs: 3000 }, { json: GOOD }] },
      { timeoutMs: 200 },
    );
    const started = Date.now();
    const { value, calls } = await structured(provider);
    expect(value).toEqual(GOOD);
    expect(calls[0]!.attempts).toBe(2);
    expect(sleeps).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(server.calls.map((c) => c.status)).toEqual([0, 200]);
  });

  it("a rejected API key is a UserError (the provider's: grooming escalates it), not retried", async () => {
    server = await startModelServer({ script: { triage: { json: GOOD } }, apiKeys: ['right'] });
    const provider = await createProvider({
      provider: kind,
      model: MODELS[kind],
      apiKey: 'wrong',
      baseUrl: kind === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl,
      sleep: async () => {},
    });
    const error = await structured(provider).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect(isProviderError(error)).toBe(true);
    expect(server.calls).toHaveLength(1);
  });
});

describe('usage normalisation with prompt caching', () => {
  const big = textOfTokens(2000);
  it('Anthropic: write, then read; input is what follows the breakpoint', async () => {
    const { provider } = await setup('anthropic', { triage: { json: GOOD } });
    const req = request(12, `\n${big}`);
    const first = (await structured(provider)).calls[0]!; // short prefix: below 1,024 tokens, nothing cached
    expect(first.usage).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: 0 });
    const a = await provider.completeJson(req, { name: 'TriageVerdict', jsonSchema: toStrictJsonSchema(Verdict) });
    const b = await provider.completeJson(req, { name: 'TriageVerdict', jsonSchema: toStrictJsonSchema(Verdict) });
    expect(a.usage.cacheWriteTokens).toBeGreaterThan(2000);
    expect(a.usage.cachedInputTokens).toBe(0);
    expect(b.usage.cachedInputTokens).toBe(a.usage.cacheWriteTokens);
    expect(b.usage.cacheWriteTokens).toBe(0);
    expect(b.usage.inputTokens).toBe(a.usage.inputTokens);
  });

  it('OpenAI: inputTokens = prompt_tokens − cached_tokens', async () => {
    const { provider, server } = await setup('openai', { triage: { text: 'ok' } });
    await provider.complete(request(12, `\n${big}`));
    const second = await provider.complete(request(12, `\n${big}`));
    const wire = server.calls[1]!.usage as any;
    expect(second.usage.cachedInputTokens).toBe(wire.prompt_tokens_details.cached_tokens);
    expect(second.usage.cachedInputTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.inputTokens).toBe(wire.prompt_tokens - wire.prompt_tokens_details.cached_tokens);
    expect(second.usage.cacheWriteTokens).toBe(0);
  });
});

describe('OpenAI-compatible endpoints', () => {
  it('falls back to json_object + schema in the prompt when json_schema is rejected, and remembers', async () => {
    const { provider, server } = await setup(
      'openai-compatible',
      { triage: { json: GOOD } },
      { rejectJsonSchema: true },
    );
    expect(provider.name).toBe('openai-compatible');
    expect((await structured(provider)).value).toEqual(GOOD);
    expect((await structured(provider)).value).toEqual(GOOD);
    expect(server.calls.map((c) => [c.status, (c.request?.body.response_format as any)?.type])).toEqual([
      [400, 'json_schema'],
      [200, 'json_object'],
      [200, 'json_object'],
    ]);
    expect(server.calls[1]!.request!.system).toMatch(/JSON Schema, named TriageVerdict/);
    expect(server.calls[1]!.request!.body.max_tokens).toBe(400);
  });

  const formatOf = (c: ModelCall) => (c.request?.body.response_format as { type?: string } | undefined)?.type ?? 'none';
  const Long = z.object({ text: z.string().max(100) });
  const long = (provider: ModelProvider) =>
    generateStructured({ provider, request: request(12), schema: Long, schemaName: 'Long' });

  it('a schema the server cannot compile into a grammar goes as json_object, for that schema only', async () => {
    const { provider, server } = await setup(
      'openai-compatible',
      { triage: [{ json: { text: 'hi' } }, { json: { text: 'hi' } }, { json: GOOD }] },
      { llamaCpp: { grammarLimit: 50 } },
    );
    expect((await long(provider)).value).toEqual({ text: 'hi' });
    expect((await long(provider)).value).toEqual({ text: 'hi' });
    expect((await structured(provider)).value).toEqual(GOOD); // no bound: it compiles, json_schema it is
    expect(server.calls.map((c) => [c.status, formatOf(c)])).toEqual([
      [400, 'json_schema'],
      [200, 'json_object'],
      [200, 'json_object'],
      [200, 'json_schema'],
    ]);
    expect(server.calls[0]!.error).toBe('grammar');
  });

  it('neither json_schema nor json_object: the prompt alone asks for the JSON, and that is remembered', async () => {
    const { provider, server } = await setup(
      'openai-compatible',
      { triage: { json: GOOD } },
      { rejectJsonSchema: true, rejectJsonObject: true },
    );
    expect((await structured(provider)).value).toEqual(GOOD);
    expect((await structured(provider)).value).toEqual(GOOD);
    expect(server.calls.map((c) => [c.status, formatOf(c)])).toEqual([
      [400, 'json_schema'],
      [400, 'json_object'],
      [200, 'none'],
      [200, 'none'],
    ]);
    expect(server.calls[2]!.request!.system).toMatch(/JSON Schema, named TriageVerdict/);
  });

  it('OpenAI itself (json_schema mode) never steps down: a refused schema is a request error', async () => {
    const { provider, server } = await setup(
      'openai',
      { triage: { json: { text: 'hi' } } },
      { llamaCpp: { grammarLimit: 50 } },
    );
    await expect(long(provider)).rejects.toThrow(ProviderRequestError);
    expect(server.calls).toHaveLength(1);
  });

  it("a reply the server could not read (llama.cpp's format 500) is repaired at once, without a retry", async () => {
    const { provider, server, sleeps } = await setup('openai-compatible', {
      triage: [{ fault: 'format' }, { json: GOOD }],
    });
    const { value, calls } = await structured(provider);
    expect(value).toEqual(GOOD);
    expect(server.calls.map((c) => c.status)).toEqual([500, 200]);
    expect(sleeps).toEqual([]);
    // The unread call is kept for the ledger, with no usage (the server reported none).
    expect(calls).toHaveLength(2);
    expect(calls[0]!.usage).toEqual({ inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 });
    expect(server.calls[1]!.request!.messages.at(-1)!.content).toMatch(
      /^Your previous reply could not be used: the server could not read the reply \(openai-compatible \(gpt-5-mini\) could not parse the model's reply: HTTP 500 server_error The model produced output that does not match the expected peg-native format\)/,
    );
  });

  it('needs a base URL', async () => {
    await expect(createProvider({ provider: 'openai-compatible', model: 'llama', apiKey: 'x' })).rejects.toThrow(
      UserError,
    );
  });
});

describe('JSON Schema for strict mode', () => {
  it('requires every property, forbids extras, makes optional ones nullable, and strips the nulls again', async () => {
    const schema = toStrictJsonSchema(Verdict) as any;
    expect(schema.$schema).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['verdict', 'reasons', 'labels']);
    expect(schema.properties.labels.anyOf[1]).toEqual({ type: 'null' });
    const { provider } = await setup('openai', { triage: { json: { ...GOOD, labels: null } } });
    expect((await structured(provider)).value).toEqual(GOOD);
  });

  it('nested objects and arrays of objects are strict too', () => {
    const s = toStrictJsonSchema(
      z.object({ items: z.array(z.object({ a: z.string(), b: z.number().optional() })) }),
    ) as any;
    expect(s.properties.items.items).toMatchObject({ additionalProperties: false, required: ['a', 'b'] });
  });
});

describe('error classification', () => {
  const never = () => false;
  it("knows a server's refusal of its own model's reply as a bad answer, not an outage", () => {
    const llama = (status: number, message: string) => ({
      status,
      error: { error: { code: status, message, type: 'server_error' } },
    });
    for (const message of [
      'The model produced output that does not match the expected peg-native format',
      'Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]',
      'got exception: Unexpected empty grammar stack after accepting piece: <tool_call> (258)',
    ])
      expect(classifyError(llama(500, message), never).kind).toBe('output');
    expect(classifyError(llama(500, 'The server had an error while processing your request.'), never).kind).toBe(
      'retryable',
    );
    expect(
      classifyError(llama(400, 'The model produced output that does not match the expected format'), never).kind,
    ).toBe('fatal');
  });
  it('knows Anthropic billing errors and spend limits as credit exhaustion', () => {
    expect(
      classifyError({ status: 402, error: { type: 'error', error: { type: 'billing_error', message: 'x' } } }, never)
        .kind,
    ).toBe('credit');
    expect(
      classifyError(
        {
          status: 429,
          error: {
            type: 'error',
            error: { type: 'rate_limit_error', message: 'x', details: { error_code: 'enforced_spend_limit_reached' } },
          },
        },
        never,
      ).kind,
    ).toBe('credit');
    expect(
      classifyError(
        { status: 429, error: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } },
        never,
      ).kind,
    ).toBe('retryable');
    expect(classifyError({ status: 400, error: { message: 'bad', type: 'invalid_request_error' } }, never).kind).toBe(
      'fatal',
    );
  });

  it('honours retry-after-ms over retry-after', () => {
    const c = classifyError(
      { status: 429, headers: new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), error: {} },
      never,
    );
    expect(c).toMatchObject({ kind: 'retryable', retryAfterMs: 250 });
  });
});

describe('the official SDKs accept the server as the real thing', () => {
  it('openai SDK: response parses, request id header exposed', async () => {
    server = await startModelServer({ script: { triage: { json: GOOD } } });
    const client = new OpenAI({ apiKey: 'k', baseURL: server.openaiBaseUrl, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({
        model: 'gpt-5-mini',
        messages: [
          { role: 'system', content: 'HydraFlow triage agent' },
          { role: 'user', content: 'Issue #1' },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(JSON.parse(data.choices[0]!.message.content!)).toEqual(GOOD);
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it('anthropic SDK: message parses; errors map to the SDK classes', async () => {
    server = await startModelServer({ script: { triage: [{ text: 'hello' }, { fault: '529' }] } });
    const client = new Anthropic({ apiKey: 'k', baseURL: server.anthropicBaseUrl, maxRetries: 0 });
    const params = {
      model: 'claude-sonnet-4-6',
      max_tokens: 10,
      system: 'HydraFlow triage agent',
      messages: [{ role: 'user' as const, content: 'Issue #1' }],
    };
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: 'text', text: 'hello' }]);
    const error = await client.messages.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');
  });
});

describe('ledger on failure', () => {
  it('credit exhaustion during the repair propagates, carrying the first billed call', async () => {
    const { provider, server } = await setup('anthropic', { triage: [{ fault: 'junk' }, { fault: 'credit' }] });
    const error = await structured(provider).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CreditExhaustedError);
    expect((error as { calls?: unknown[] }).calls).toHaveLength(1);
    expect(server.calls.map((c) => c.status)).toEqual([200, 400]);
  });
});
