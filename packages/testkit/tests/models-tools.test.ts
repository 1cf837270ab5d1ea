import { afterEach, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../src/models/index';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (url: string, body: unknown, headers: Record<string, string>) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

it('scripted tool calls keep a scripted id on both wires, and the tool results sent back are exposed', async () => {
  server = await startModelServer({
    script: { 'coder#3': [{ toolCalls: [{ id: 'call_fixed', name: 'list_files', input: {} }] }, { text: 'done' }] },
  });
  const system = 'HydraFlow coder agent.';
  const r1 = await post(
    `${server.openaiBaseUrl}/chat/completions`,
    {
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'Issue #3: x' },
      ],
      tools: [{ type: 'function', function: { name: 'list_files', parameters: { type: 'object' } } }],
    },
    { authorization: 'Bearer k' },
  );
  const j1 = (await r1.json()) as any;
  expect(j1.choices[0].finish_reason).toBe('tool_calls');
  expect(j1.choices[0].message.tool_calls[0]).toMatchObject({
    id: 'call_fixed',
    function: { name: 'list_files', arguments: '{}' },
  });

  const r2 = await post(
    `${server.anthropicBaseUrl}/v1/messages`,
    {
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      system,
      messages: [
        { role: 'user', content: 'Issue #3: x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_fixed', name: 'list_files', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'call_fixed', content: 'a.ts\nb.ts', is_error: false }],
        },
      ],
    },
    { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
  );
  const j2 = (await r2.json()) as any;
  expect(j2).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'done' }] });
  expect(server.calls[1]!.request!.toolResults).toEqual([
    { toolCallId: 'call_fixed', name: 'list_files', content: 'a.ts\nb.ts', isError: false },
  ]);
});

it('tool results that answer no call, or calls left unanswered, are 400s with the real wording', async () => {
  server = await startModelServer({ script: { '*': { text: 'x' } } });
  const r1 = await post(
    `${server.anthropicBaseUrl}/v1/messages`,
    {
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'a' }] }],
    },
    { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
  );
  expect(r1.status).toBe(400);
  expect(((await r1.json()) as any).error.message).toMatch(
    /unexpected `tool_use_id` found in `tool_result` blocks: toolu_x/,
  );
  const r2 = await post(
    `${server.openaiBaseUrl}/chat/completions`,
    {
      model: 'gpt-5-mini',
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'user', content: 'hi' },
      ],
    },
    { authorization: 'Bearer k' },
  );
  expect(r2.status).toBe(400);
  expect(((await r2.json()) as any).error.message).toMatch(/did not have response messages: call_a/);
});
