import { afterEach, describe, expect, it } from 'vitest';
import { CreditExhaustedError, HydraflowError } from '../../core/src/errors';
import { startModelServer, textOfTokens, type ModelServer, type Script } from '../../testkit/src/models/index';
import { createProvider, type ModelProvider, type ToolTurnRequest, type TurnMessage } from '../src/index';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MODELS = { openai: 'gpt-5-mini', anthropic: 'claude-sonnet-4-6' } as const;

const TOOLS: ToolTurnRequest['tools'] = [
  {
    name: 'read_file',
    description: 'Read a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'run_command',
    description: 'Run a configured command',
    inputSchema: { type: 'object', properties: { name: { type: 'string', enum: ['test'] } }, required: ['name'] },
  },
];

function turnRequest(messages: TurnMessage[], systemExtra = ''): ToolTurnRequest {
  return {
    role: 'coder',
    issue: 7,
    system: [
      { text: `HydraFlow coder agent. Fix the bug.${systemExtra}`, cache: true },
      { text: 'Repo: acme/widgets' },
    ],
    tools: TOOLS,
    messages,
    maxOutputTokens: 1000,
  };
}

async function setup(
  kind: 'openai' | 'anthropic',
  script: Script,
): Promise<{ provider: ModelProvider; server: ModelServer }> {
  server = await startModelServer({ script });
  const provider = await createProvider({
    provider: kind,
    model: MODELS[kind],
    apiKey: 'test-key',
    baseUrl: kind === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl,
    sleep: async () => {},
    random: () => 0.5,
  });
  return { provider, server };
}

describe.each(['openai', 'anthropic'] as const)('%s tool turns against the scripted server', (kind) => {
  it('a scripted multi-turn conversation: tool calls out, tool results (and errors) back, final text', async () => {
    const { provider, server } = await setup(kind, {
      'coder#7': [
        { text: 'Let me look.', toolCalls: [{ name: 'read_file', input: { path: 'src/a.ts' } }] },
        {
          toolCalls: [
            { name: 'read_file', input: { path: '../etc/passwd' } },
            { name: 'run_command', input: { name: 'test' } },
          ],
        },
        { text: 'Fixed the off-by-one.' },
      ],
    });
    const messages: TurnMessage[] = [{ role: 'user', content: 'Issue #7: off by one in a.ts' }];

    const t1 = await provider.turn(turnRequest(messages));
    expect(t1).toMatchObject({ stopReason: 'tool_use', provider: kind, model: MODELS[kind], attempts: 1 });
    expect(t1.text).toBe('Let me look.');
    expect(t1.toolCalls).toHaveLength(1);
    expect(t1.toolCalls[0]).toMatchObject({ name: 'read_file', input: { path: 'src/a.ts' } });
    expect(t1.toolCalls[0]!.id).toMatch(kind === 'openai' ? /^call_/ : /^toolu_/);
    expect(t1.usage.outputTokens).toBeGreaterThan(0);

    messages.push(
      { role: 'assistant', content: t1.text, toolCalls: t1.toolCalls },
      { role: 'tool', toolCallId: t1.toolCalls[0]!.id, content: 'export const a = 1;' },
    );
    const t2 = await provider.turn(turnRequest(messages));
    expect(t2.toolCalls.map((c) => c.name)).toEqual(['read_file', 'run_command']);
    expect(t2.text).toBe('');
    const seen2 = server.calls[1]!.request!;
    expect(seen2.toolResults).toEqual([
      { toolCallId: t1.toolCalls[0]!.id, name: 'read_file', content: 'export const a = 1;', isError: false },
    ]);

    messages.push(
      { role: 'assistant', content: t2.text, toolCalls: t2.toolCalls },
      { role: 'tool', toolCallId: t2.toolCalls[0]!.id, content: 'path escapes the workspace', isError: true },
      { role: 'tool', toolCallId: t2.toolCalls[1]!.id, content: 'exit 0' },
      { role: 'user', content: 'Budget note: 2 turns left.' },
    );
    const t3 = await provider.turn(turnRequest(messages));
    expect(t3).toMatchObject({ text: 'Fixed the off-by-one.', toolCalls: [], stopReason: 'end' });
    const seen3 = server.calls[2]!.request!;
    expect(seen3.toolResults.slice(1)).toEqual([
      {
        toolCallId: t2.toolCalls[0]!.id,
        name: 'read_file',
        content: kind === 'openai' ? 'Error: path escapes the workspace' : 'path escapes the workspace',
        isError: kind === 'anthropic',
      },
      { toolCallId: t2.toolCalls[1]!.id, name: 'run_command', content: 'exit 0', isError: false },
    ]);
    expect(seen3.toolCalls.map((c) => c.name)).toEqual(['read_file', 'read_file', 'run_command']);
    expect(server.calls.map((c) => c.scriptKey)).toEqual(['coder#7', 'coder#7', 'coder#7']);
    expect(seen3.messages.at(-1)!.content).toContain('Budget note');

    if (kind === 'openai') {
      const body = seen3.body as any;
      expect(body.tools[0]).toEqual({
        type: 'function',
        function: { name: 'read_file', description: 'Read a file', parameters: TOOLS[0]!.inputSchema },
      });
      expect(body.messages.map((m: any) => m.role)).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
        'assistant',
        'tool',
        'tool',
        'user',
      ]);
      expect(body.messages[4].content).toBeNull();
    } else {
      const body = seen3.body as any;
      // user, assistant, user(tool_result), assistant, user(tool_result, tool_result, text): alternation kept.
      expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(body.messages[4].content.map((b: any) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
      expect(body.messages[4].content[0].is_error).toBe(true);
    }
  });

  it('arguments that are not a JSON object come back raw as invalidInput, and are echoed unchanged', async () => {
    const { provider, server } = await setup(kind, {
      coder: [{ toolCalls: [{ name: 'read_file', input: 'src/a.ts' }] }, { text: 'ok' }],
    });
    const messages: TurnMessage[] = [{ role: 'user', content: 'Issue #7: x' }];
    const t1 = await provider.turn(turnRequest(messages));
    expect(t1.toolCalls[0]).toMatchObject({ name: 'read_file', input: {}, invalidInput: '"src/a.ts"' });
    messages.push(
      { role: 'assistant', content: '', toolCalls: t1.toolCalls },
      { role: 'tool', toolCallId: t1.toolCalls[0]!.id, content: 'input must be an object', isError: true },
    );
    await provider.turn(turnRequest(messages));
    if (kind === 'openai') expect(server.calls[1]!.request!.toolCalls[0]!.input).toBe('src/a.ts');
  });

  it('an unanswered tool call is rejected like the real API (400, not retried)', async () => {
    const { provider, server } = await setup(kind, { coder: { text: 'ok' } });
    const error = await provider
      .turn(
        turnRequest([
          { role: 'user', content: 'Issue #7: x' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'a' } }] },
          { role: 'user', content: 'go on' },
        ]),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HydraflowError);
    expect((error as Error).message).toMatch(/tool_result|tool_call_id/);
    expect(server.calls).toHaveLength(1);
  });

  it('credit exhaustion on a turn is a CreditExhaustedError at once; a 429 is retried', async () => {
    const { provider, server } = await setup(kind, {
      coder: [{ fault: '429', retryAfterSeconds: 1 }, { text: 'hi' }, { fault: 'credit' }],
    });
    const ok = await provider.turn(turnRequest([{ role: 'user', content: 'Issue #7: x' }]));
    expect(ok).toMatchObject({ text: 'hi', attempts: 2, stopReason: 'end' });
    await expect(provider.turn(turnRequest([{ role: 'user', content: 'Issue #7: x' }]))).rejects.toBeInstanceOf(
      CreditExhaustedError,
    );
    expect(server.calls).toHaveLength(3);
  });

  it('a turn cut off at the output limit says so', async () => {
    const { provider } = await setup(kind, { coder: { fault: 'truncated', text: 'a long explanation that goes on' } });
    const t = await provider.turn(turnRequest([{ role: 'user', content: 'Issue #7: x' }]));
    expect(t).toMatchObject({ stopReason: 'max_tokens', truncated: true });
  });
});

describe('anthropic tool turn caching', () => {
  it('breakpoints on the last tool, cached system segments and the last message; the next turn reads the cache', async () => {
    const { provider, server } = await setup('anthropic', {
      coder: [{ toolCalls: [{ name: 'read_file', input: { path: 'a' } }] }, { text: 'done' }],
    });
    const big = ` ${textOfTokens(1200)}`;
    const messages: TurnMessage[] = [{ role: 'user', content: 'Issue #7: x' }];
    const t1 = await provider.turn(turnRequest(messages, big));
    const body1 = server.calls[0]!.request!.body as any;
    expect(body1.tools.map((t: any) => t.cache_control)).toEqual([undefined, { type: 'ephemeral' }]);
    expect(body1.system[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(body1.system[1].cache_control).toBeUndefined();
    expect(body1.messages[0].content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(t1.usage.cacheWriteTokens).toBeGreaterThan(1200);
    expect(t1.usage.cachedInputTokens).toBe(0);

    messages.push(
      { role: 'assistant', content: '', toolCalls: t1.toolCalls },
      { role: 'tool', toolCallId: t1.toolCalls[0]!.id, content: textOfTokens(50) },
    );
    const t2 = await provider.turn(turnRequest(messages, big));
    // Everything up to the previous turn's last block is read; only the new tail is written.
    expect(t2.usage.cachedInputTokens).toBe(t1.usage.cacheWriteTokens);
    expect(t2.usage.cacheWriteTokens).toBeGreaterThan(0);
    const body2 = server.calls[1]!.request!.body as any;
    expect(body2.messages.at(-1).content.at(-1)).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    expect(body2.messages[0].content.at(-1).cache_control).toBeUndefined();
  });

  it('never more than 4 breakpoints: the conversation breakpoint yields first, then the tool one', async () => {
    const { provider, server } = await setup('anthropic', { coder: { text: 'ok' } });
    const system = [1, 2, 3].map((n) => ({ text: `${n === 1 ? 'HydraFlow coder agent.' : 'part'} ${n}`, cache: true }));
    await provider.turn({ ...turnRequest([{ role: 'user', content: 'Issue #7: x' }]), system });
    const body = server.calls[0]!.request!.body as any;
    expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[0].content.at(-1).cache_control).toBeUndefined();
    expect(server.calls[0]!.status).toBe(200);
  });
});
