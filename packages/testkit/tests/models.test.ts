import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, textOfTokens, type ModelServer, type Script } from '../src/models/index';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clock(start = Date.UTC(2026, 10, 20)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

async function openai(
  s: ModelServer,
  body: Record<string, unknown>,
  headers: Record<string, string> = { authorization: 'Bearer sk-test' },
) {
  const res = await fetch(`${s.openaiBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function anthropic(
  s: ModelServer,
  body: Record<string, unknown>,
  headers: Record<string, string> = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
) {
  const res = await fetch(`${s.anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const SONNET = 'claude-sonnet-4-6';
const user = (text: string) => [{ role: 'user', content: text }];
const aBody = (system: unknown, extra: Record<string, unknown> = {}) => ({
  model: SONNET,
  max_tokens: 512,
  system,
  messages: user('Issue #7: please triage'),
  ...extra,
});

describe('scripted model server: wires and scripts', () => {
  it('answers OpenAI chat completions in the real shape, json_schema mode, role/issue parsed', async () => {
    server = await startModelServer({ script: { triage: { json: { verdict: 'ready' } } } });
    const r = await openai(server, {
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: 'HydraFlow triage agent. Decide.' },
        { role: 'user', content: 'Issue #12: crash on start' },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'Verdict', schema: { type: 'object' }, strict: true },
      },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expect(r.body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-5-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '{"verdict":"ready"}', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(r.body.id).toMatch(/^chatcmpl-/);
    expect(r.body.usage.total_tokens).toBe(r.body.usage.prompt_tokens + r.body.usage.completion_tokens);
    expect(server.calls[0]).toMatchObject({
      wire: 'openai',
      role: 'triage',
      issue: 12,
      status: 200,
      scriptKey: 'triage',
    });
  });

  it('answers Anthropic messages; a forced tool gets a tool_use block; per-issue overrides and arrays', async () => {
    const script: Script = {
      triage: { json: { verdict: 'ready' } },
      'triage#7': [{ json: { verdict: 'hitl' } }, { text: 'second' }],
    };
    server = await startModelServer({ script });
    const tools = [{ name: 'Verdict', input_schema: { type: 'object' } }];
    const first = await anthropic(
      server,
      aBody('HydraFlow triage agent', { tools, tool_choice: { type: 'tool', name: 'Verdict' } }),
    );
    expect(first.status).toBe(200);
    expect(first.headers.get('request-id')).toMatch(/^req_/);
    expect(first.body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: SONNET,
      stop_reason: 'tool_use',
      stop_sequence: null,
      content: [{ type: 'tool_use', name: 'Verdict', input: { verdict: 'hitl' } }],
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(first.body.id).toMatch(/^msg_/);
    const second = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(second.body.content).toEqual([{ type: 'text', text: 'second' }]);
    const third = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(third.body.content).toEqual([{ type: 'text', text: 'second' }]); // the last entry repeats
    const other = await anthropic(server, { ...aBody('HydraFlow triage agent'), messages: user('Issue #8') });
    expect(other.body.content[0].text).toBe('{"verdict":"ready"}'); // plain text JSON without a forced tool
    expect(server.calls.map((c) => c.scriptKey)).toEqual(['triage#7', 'triage#7', 'triage#7', 'triage']);
  });

  it('supports function scripts, tool calls and a clear 400 when the script has no entry', async () => {
    server = await startModelServer({
      script: {
        implement: (req) => ({ toolCalls: [{ name: 'write_file', input: { path: `issue-${req.issue}.txt` } }] }),
      },
    });
    const r = await anthropic(server, {
      ...aBody('HydraFlow implement agent'),
      tools: [{ name: 'write_file', input_schema: { type: 'object' } }],
    });
    expect(r.body.stop_reason).toBe('tool_use');
    expect(r.body.content[0]).toMatchObject({ type: 'tool_use', name: 'write_file', input: { path: 'issue-7.txt' } });
    const o = await openai(server, {
      model: 'gpt-5',
      messages: [{ role: 'system', content: 'HydraFlow implement agent' }, ...user('Issue #3')],
    });
    expect(o.body.choices[0].finish_reason).toBe('tool_calls');
    expect(o.body.choices[0].message.tool_calls[0]).toMatchObject({
      type: 'function',
      function: { name: 'write_file', arguments: '{"path":"issue-3.txt"}' },
    });
    const missing = await anthropic(server, aBody('HydraFlow review agent'));
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/no entry for role 'review'/);
  });

  it('answers 401 without credentials and 400 without anthropic-version, like the real APIs', async () => {
    server = await startModelServer({ script: { '*': { text: 'hi' } } });
    const o = await openai(server, { model: 'gpt-5', messages: user('x') }, {});
    expect(o.status).toBe(401);
    expect(o.body.error).toMatchObject({ type: 'invalid_request_error', code: null });
    expect(o.body.error.message).toMatch(/You didn't provide an API key/);
    const a = await anthropic(server, aBody('x'), { 'anthropic-version': '2023-06-01' });
    expect(a.status).toBe(401);
    expect(a.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const v = await anthropic(server, aBody('x'), { 'x-api-key': 'k' });
    expect(v.status).toBe(400);
    expect(v.body.error.message).toMatch(/anthropic-version/);
    const bearer = await anthropic(server, aBody('x'), {
      authorization: 'Bearer k',
      'anthropic-version': '2023-06-01',
    });
    expect(bearer.status).toBe(200);
  });
});

describe('scripted model server: faults on the wire', () => {
  const sys = [{ role: 'system', content: 'HydraFlow triage agent' }];
  it('429 with retry-after on both wires', async () => {
    server = await startModelServer({ script: { triage: { fault: '429', retryAfterSeconds: 7 } } });
    const o = await openai(server, { model: 'gpt-5', messages: [...sys, ...user('Issue #1')] });
    expect(o.status).toBe(429);
    expect(o.headers.get('retry-after')).toBe('7');
    expect(o.body.error).toMatchObject({ code: 'rate_limit_exceeded' });
    const a = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('7');
    expect(a.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('529 overloaded (503 on OpenAI), 500 api_error', async () => {
    server = await startModelServer({ script: { triage: { fault: '529' }, review: { fault: '500' } } });
    const a = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(a.status).toBe(529);
    expect(a.body.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
    const o = await openai(server, { model: 'gpt-5', messages: [...sys, ...user('Issue #1')] });
    expect(o.status).toBe(503);
    const a5 = await anthropic(server, aBody('HydraFlow review agent'));
    expect(a5.status).toBe(500);
    expect(a5.body.error.type).toBe('api_error');
    const o5 = await openai(server, {
      model: 'gpt-5',
      messages: [{ role: 'system', content: 'HydraFlow review agent' }, ...user('x')],
    });
    expect(o5.status).toBe(500);
    expect(o5.body.error.type).toBe('server_error');
  });

  it('credit: OpenAI 429 insufficient_quota, Anthropic 400 credit balance too low', async () => {
    server = await startModelServer({ script: { triage: { fault: 'credit' } } });
    const o = await openai(server, { model: 'gpt-5', messages: [...sys, ...user('Issue #1')] });
    expect(o.status).toBe(429);
    expect(o.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(o.body.error.message).toMatch(
      /^You exceeded your current quota, please check your plan and billing details/,
    );
    const a = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(a.status).toBe(400);
    expect(a.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(a.body.error.message).toMatch(/^Your credit balance is too low to access the Anthropic API/);
  });

  it('truncated: 200 with cut JSON and finish_reason length / stop_reason max_tokens; junk: prose', async () => {
    server = await startModelServer({
      script: {
        triage: { fault: 'truncated', json: { verdict: 'ready', reasons: ['a', 'b'] } },
        review: { fault: 'junk', json: {} },
      },
    });
    const o = await openai(server, {
      model: 'gpt-5',
      max_completion_tokens: 50,
      messages: [...sys, ...user('Issue #1')],
    });
    expect(o.status).toBe(200);
    expect(o.body.choices[0].finish_reason).toBe('length');
    expect(() => JSON.parse(o.body.choices[0].message.content)).toThrow();
    expect(o.body.usage.completion_tokens).toBe(50);
    const a = await anthropic(server, aBody('HydraFlow triage agent'));
    expect(a.body.stop_reason).toBe('max_tokens');
    expect(() => JSON.parse(a.body.content[0].text)).toThrow();
    const j = await openai(server, {
      model: 'gpt-5',
      messages: [{ role: 'system', content: 'HydraFlow review agent' }, ...user('x')],
    });
    expect(j.status).toBe(200);
    expect(() => JSON.parse(j.body.choices[0].message.content)).toThrow();
  });

  it('timeout: holds the connection, then drops it without a response', async () => {
    server = await startModelServer({ script: { triage: { fault: 'timeout', latencyMs: 300 } } });
    const started = Date.now();
    await expect(openai(server, { model: 'gpt-5', messages: [...sys, ...user('Issue #1')] })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(server.calls[0]).toMatchObject({ status: 0, fault: 'timeout' });
  });
});

describe("scripted model server: llama.cpp's behaviour (llamaCpp)", () => {
  const schema = (props: Record<string, unknown>) => ({
    type: 'json_schema',
    json_schema: { name: 't', schema: { type: 'object', properties: props, required: Object.keys(props) } },
  });
  const messages = [
    { role: 'system', content: 'HydraFlow triage agent.' },
    { role: 'user', content: 'Issue #1' },
  ];

  it("refuses a bounded repetition of 2,000 or more in a schema or a tool, with llama.cpp's 400", async () => {
    server = await startModelServer({ script: { triage: { json: { a: 'x' } } }, llamaCpp: {} });
    const refused = await openai(server, {
      model: 'm',
      messages,
      response_format: schema({ a: { type: 'string', maxLength: 2000 } }),
    });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'Failed to initialize samplers: failed to parse grammar',
          type: 'invalid_request_error',
        },
      },
    });
    const tool = {
      type: 'function',
      function: { name: 't', parameters: { type: 'object', properties: { l: { type: 'array', maxItems: 5000 } } } },
    };
    expect((await openai(server, { model: 'm', messages, tools: [tool] })).status).toBe(400);
    const ok = await openai(server, {
      model: 'm',
      messages,
      response_format: schema({ a: { type: 'string', maxLength: 1999 } }),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.model).toBe('/models/ggml-model-q4_k_m.gguf'); // the file it serves, not the model asked for
  });

  it('lets a bounded number through unbounded; an integer enum, a string and nested values come as scripted', async () => {
    const answer = { score: 7, level: 7, items: [{ n: 3, s: 'ok' }], maybe: null };
    server = await startModelServer({ script: { triage: { json: answer } }, llamaCpp: {} });
    const res = await openai(server, {
      model: 'm',
      messages,
      response_format: schema({
        score: { type: 'number', minimum: 0, maximum: 10 },
        level: { type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
        items: {
          type: 'array',
          items: { type: 'object', properties: { n: { type: 'number', maximum: 5 }, s: { type: 'string' } } },
        },
        maybe: { anyOf: [{ type: 'number', minimum: 1 }, { type: 'null' }] },
      }),
    });
    expect(res.body.choices[0].message.content).toBe(
      '{"score":27e1950,"level":7,"items":[{"n":27e1950,"s":"ok"}],"maybe":null}',
    );
  });

  it("the format fault: llama.cpp's 500 for a reply its parser could not read", async () => {
    server = await startModelServer({ script: { triage: { fault: 'format' } } });
    expect(await openai(server, { model: 'm', messages })).toMatchObject({
      status: 500,
      body: {
        error: {
          code: 500,
          message: 'The model produced output that does not match the expected peg-native format',
          type: 'server_error',
        },
      },
    });
  });
});

describe('scripted model server: Anthropic prompt caching', () => {
  const big = textOfTokens(2000);
  const system = [
    { type: 'text', text: `HydraFlow triage agent\n${big}`, cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Today is Tuesday.' },
  ];

  it('writes on the first call, reads on the second; input_tokens counts only what follows the breakpoint', async () => {
    const c = clock();
    server = await startModelServer({ script: { '*': { text: 'ok' } }, clock: c.now });
    const first = (await anthropic(server, aBody(system))).body.usage;
    expect(first.cache_creation_input_tokens).toBeGreaterThanOrEqual(2000);
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation).toEqual({
      ephemeral_5m_input_tokens: first.cache_creation_input_tokens,
      ephemeral_1h_input_tokens: 0,
    });
    c.advance(60_000);
    const second = (await anthropic(server, aBody(system))).body.usage;
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBe(0);
    expect(second.input_tokens).toBe(first.input_tokens);
    expect(second.input_tokens).toBeLessThan(50); // only the tail after the breakpoint
  });

  it('misses on a different prefix (one byte) and on a different model', async () => {
    server = await startModelServer({ script: { '*': { text: 'ok' } } });
    await anthropic(server, aBody(system));
    const changed = [{ ...system[0], text: `${system[0]!.text}!` }, system[1]];
    const u = (await anthropic(server, aBody(changed))).body.usage;
    expect(u.cache_read_input_tokens).toBe(0);
    expect(u.cache_creation_input_tokens).toBeGreaterThan(2000);
    const m = (await anthropic(server, { ...aBody(system), model: 'claude-opus-4-1' })).body.usage;
    expect(m.cache_read_input_tokens).toBe(0);
  });

  it('does not cache a prefix below the minimum (1,024 Sonnet; 2,048 Haiku 3.5)', async () => {
    server = await startModelServer({ script: { '*': { text: 'ok' } } });
    const small = [
      { type: 'text', text: `HydraFlow triage agent\n${textOfTokens(900)}`, cache_control: { type: 'ephemeral' } },
    ];
    for (let i = 0; i < 2; i++) {
      const u = (await anthropic(server, aBody(small))).body.usage;
      expect(u).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
      expect(u.input_tokens).toBeGreaterThan(900);
    }
    const haiku = { ...aBody(system), model: 'claude-3-5-haiku-latest' };
    expect((await anthropic(server, haiku)).body.usage.cache_creation_input_tokens).toBe(0); // 2,000 < 2,048
  });

  it('expires after 5 minutes without use; a hit refreshes the TTL', async () => {
    const c = clock();
    server = await startModelServer({ script: { '*': { text: 'ok' } }, clock: c.now });
    await anthropic(server, aBody(system));
    c.advance(4 * 60_000);
    expect((await anthropic(server, aBody(system))).body.usage.cache_read_input_tokens).toBeGreaterThan(0);
    c.advance(4 * 60_000); // 8 min after the write, 4 after the refresh
    expect((await anthropic(server, aBody(system))).body.usage.cache_read_input_tokens).toBeGreaterThan(0);
    c.advance(5 * 60_000 + 1);
    const u = (await anthropic(server, aBody(system))).body.usage;
    expect(u.cache_read_input_tokens).toBe(0);
    expect(u.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('caches tools → system → messages in order; 1h TTL; reads the earlier breakpoint when a later one is new', async () => {
    const c = clock();
    server = await startModelServer({ script: { '*': { text: 'ok' } }, clock: c.now });
    const tools = [
      { name: 'Verdict', input_schema: { type: 'object', properties: { x: { type: 'string', description: big } } } },
    ];
    const sys1h = [{ type: 'text', text: 'HydraFlow triage agent', cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const body = (question: string) => ({
      ...aBody(sys1h, { tools }),
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: `Issue #7 ${big} ${question}`, cache_control: { type: 'ephemeral' } }],
        },
      ],
    });
    const first = (await anthropic(server, body('A'))).body.usage;
    expect(first.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(2000); // tools + system
    expect(first.cache_creation.ephemeral_5m_input_tokens).toBeGreaterThan(2000); // the user block
    c.advance(30 * 60_000);
    const second = (await anthropic(server, body('B'))).body.usage;
    expect(second.cache_read_input_tokens).toBe(first.cache_creation.ephemeral_1h_input_tokens);
    expect(second.cache_creation_input_tokens).toBe(first.cache_creation.ephemeral_5m_input_tokens);
  });

  it('rejects more than 4 breakpoints like the API', async () => {
    server = await startModelServer({ script: { '*': { text: 'ok' } } });
    const five = Array.from({ length: 5 }, (_, i) => ({
      type: 'text',
      text: `s${i}`,
      cache_control: { type: 'ephemeral' },
    }));
    const r = await anthropic(server, aBody(five));
    expect(r.status).toBe(400);
  });
});

describe('scripted model server: OpenAI automatic prompt caching', () => {
  const messages = (tail: string, tokens = 2000) => [
    { role: 'system', content: `HydraFlow triage agent\n${textOfTokens(tokens)}` },
    { role: 'user', content: `Issue #5 ${tail}` },
  ];

  it('reports the longest previously seen prefix in 128-token steps from 1,024; prompt_tokens includes it', async () => {
    const c = clock();
    server = await startModelServer({ script: { '*': { text: 'ok' } }, clock: c.now });
    const first = (await openai(server, { model: 'gpt-5', messages: messages('first') })).body.usage;
    expect(first.prompt_tokens_details.cached_tokens).toBe(0);
    const second = (await openai(server, { model: 'gpt-5', messages: messages('second') })).body.usage;
    const cached = second.prompt_tokens_details.cached_tokens;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect((cached - 1024) % 128).toBe(0);
    expect(cached).toBeLessThanOrEqual(second.prompt_tokens);
    expect(second.prompt_tokens - cached).toBeLessThan(128 + 10);
    expect(second.prompt_tokens).toBe(first.prompt_tokens + 1); // 'second' is one char longer; cached tokens are included
  });

  it('never caches prompts under 1,024 tokens; expires after 5 minutes idle', async () => {
    const c = clock();
    server = await startModelServer({ script: { '*': { text: 'ok' } }, clock: c.now });
    for (let i = 0; i < 2; i++) {
      const u = (await openai(server, { model: 'gpt-5', messages: messages('x', 900) })).body.usage;
      expect(u.prompt_tokens_details.cached_tokens).toBe(0);
    }
    await openai(server, { model: 'gpt-5', messages: messages('x') });
    c.advance(5 * 60_000 + 1);
    const u = (await openai(server, { model: 'gpt-5', messages: messages('x') })).body.usage;
    expect(u.prompt_tokens_details.cached_tokens).toBe(0);
  });
});

describe('scripted model server: cache timing', () => {
  const big = textOfTokens(2000);
  const system = [{ type: 'text', text: `HydraFlow triage agent\n${big}`, cache_control: { type: 'ephemeral' } }];
  const messages = [
    { role: 'system', content: `HydraFlow triage agent\n${big}` },
    { role: 'user', content: 'Issue #5 x' },
  ];

  it('Anthropic: concurrent requests with the same new prefix both write; a request after the first answer reads', async () => {
    server = await startModelServer({ script: { '*': { text: 'ok', latencyMs: 150 } } });
    const s = server;
    const [a, b] = await Promise.all([anthropic(s, aBody(system)), anthropic(s, aBody(system))]);
    for (const r of [a, b]) {
      expect(r.body.usage.cache_read_input_tokens).toBe(0);
      expect(r.body.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(2000);
    }
    // one in flight while another arrives: the second still misses, even though the first answers before it
    const first = anthropic(s, { ...aBody(system), model: 'claude-opus-4-1' });
    await new Promise((r) => setTimeout(r, 50));
    const second = anthropic(s, { ...aBody(system), model: 'claude-opus-4-1' });
    expect((await first).body.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect((await second).body.usage.cache_read_input_tokens).toBe(0);
    const later = (await anthropic(s, aBody(system))).body.usage;
    expect(later.cache_read_input_tokens).toBe(a.body.usage.cache_creation_input_tokens);
    expect(later.cache_creation_input_tokens).toBe(0);
  });

  it('Anthropic: an error answer writes nothing', async () => {
    server = await startModelServer({ script: { '*': [{ fault: '500' }, { text: 'ok' }, { text: 'ok' }] } });
    expect((await anthropic(server, aBody(system))).status).toBe(500);
    expect((await anthropic(server, aBody(system))).body.usage.cache_read_input_tokens).toBe(0);
    expect((await anthropic(server, aBody(system))).body.usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('OpenAI: concurrent requests with the same new prefix both miss; a later one hits', async () => {
    server = await startModelServer({ script: { '*': { text: 'ok', latencyMs: 150 } } });
    const s = server;
    const both = await Promise.all([openai(s, { model: 'gpt-5', messages }), openai(s, { model: 'gpt-5', messages })]);
    for (const r of both) expect(r.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const later = (await openai(s, { model: 'gpt-5', messages })).body.usage;
    expect(later.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
  });
});

describe('modelled latency', () => {
  it('waits time-to-first-token plus the output at a steady speed, unless the entry sets its own latency', async () => {
    server = await startModelServer({
      script: {
        triage: { text: 'word '.repeat(40), outputTokens: 40 },
        plan: { text: 'ok', outputTokens: 1, latencyMs: 5 },
      },
      latency: { firstTokenMs: 20, tokensPerSecond: 1000 },
    });
    const triage = await anthropic(server, aBody('HydraFlow triage agent.'));
    expect(triage.status).toBe(200);
    expect(triage.body.usage.output_tokens).toBe(40);
    expect(server.calls[0]!.latencyMs).toBe(20 + 40);
    await anthropic(server, aBody('HydraFlow plan agent.'));
    expect(server.calls[1]!.latencyMs).toBe(5);
  });
});
