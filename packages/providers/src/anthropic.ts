/**
 * Anthropic Messages adapter (official `@anthropic-ai/sdk`). Structured output uses a forced tool
 * (`tool_choice: {type: 'tool', name}`) whose input_schema is the JSON Schema; system segments marked `cache: true`
 * carry `cache_control: {type: 'ephemeral'}` so the stable prefix (tools → system) is cached.
 */
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { APIConnectionError } from '@anthropic-ai/sdk/core/error';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import { nodeFetch } from '@hydraflow/http';
import { schemaName } from './schema-name';
import { anthropicUsage } from './usage';
import { withRetries, type RetryOptions } from './retry';
import { anthropicStopReason, toolCallFromInput } from './tool-calls';
import type {
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ToolTurnRequest,
  ToolTurnResult,
  TurnMessage,
} from './types';

/**
 * The official client with only the Messages resource. \`new Anthropic()\` builds every resource the SDK has (beta,
 * organization, skills…): 400 KB that each run would parse before its first model call, for one endpoint.
 */
class MessagesClient extends BaseAnthropic {
  messages = new Messages(this);
}

/** The Messages API accepts at most 4 blocks with cache_control per request. */
const MAX_CACHE_BREAKPOINTS = 4;

export interface AnthropicProviderOptions extends RetryOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** The HTTP client (default: HydraFlow's fetch over node:http); the agent's first turn is captured with one. */
  fetch?: typeof fetch;
  /** max_tokens when the request sets none (the API requires one). Default 4096. */
  defaultMaxTokens?: number;
}

/** Anthropic's server-side web search tool (it runs on Anthropic's side; results come back in the answer). */
export const ANTHROPIC_WEB_SEARCH = 'web_search_20250305';

function isConnectionError(e: unknown): boolean {
  return e instanceof APIConnectionError; // includes APIConnectionTimeoutError
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic' as const;
  readonly model: string;
  private readonly client: MessagesClient;

  constructor(private readonly options: AnthropicProviderOptions) {
    this.model = options.model;
    this.client = new MessagesClient({
      apiKey: options.apiKey,
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
      timeout: options.timeoutMs ?? 120_000,
      maxRetries: 0,
      fetch: options.fetch ?? nodeFetch,
    });
  }

  private params(request: CompletionRequest): MessageCreateParamsNonStreaming {
    const system: TextBlockParam[] = request.system.map((s) => ({
      type: 'text',
      text: s.text,
      ...(s.cache ? { cache_control: { type: 'ephemeral' as const } } : {}),
    }));
    return {
      model: this.model,
      max_tokens: request.maxOutputTokens ?? this.options.defaultMaxTokens ?? 4096,
      ...(system.length > 0 ? { system } : {}),
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
  }

  private async create(signal: AbortSignal | undefined, params: MessageCreateParamsNonStreaming) {
    const started = Date.now();
    const { value, attempts } = await withRetries(
      { provider: this.name, model: this.model, isConnectionError, signal },
      this.options,
      () => this.client.messages.create(params, { signal }),
    );
    return { value, attempts, started };
  }

  private async run(
    signal: AbortSignal | undefined,
    params: MessageCreateParamsNonStreaming,
  ): Promise<CompletionResult> {
    const { value, attempts, started } = await this.create(signal, params);
    const toolUse = value.content.find((b) => b.type === 'tool_use');
    const text =
      toolUse && toolUse.type === 'tool_use'
        ? JSON.stringify(toolUse.input)
        : value.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return {
      text,
      usage: anthropicUsage(value.usage),
      model: value.model || this.model,
      provider: this.name,
      durationMs: Date.now() - started,
      truncated: value.stop_reason === 'max_tokens',
      attempts,
    };
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return this.run(request.signal, this.params(request));
  }

  /**
   * A tool-using turn on the Messages API: `tools`, assistant `tool_use` blocks, and `tool_result` blocks (with
   * `is_error`) gathered into the user message that follows. Cache breakpoints: the last tool definition (so the stable
   * prefix tools → system is cached even without a cached system segment), every system segment marked `cache: true`,
   * and — unless `cacheConversation: false` — the last block of the conversation, so the next turn of the loop reads
   * everything before it from the cache. Never more than the API's 4.
   */
  async turn(request: ToolTurnRequest): Promise<ToolTurnResult> {
    const base = this.params({ ...request, messages: [] });
    const systemBreakpoints = request.system.filter((s) => s.cache).length;
    let budget = MAX_CACHE_BREAKPOINTS - systemBreakpoints;
    const tools: Tool[] = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: 'object', ...t.inputSchema } as Tool.InputSchema,
    }));
    const lastTool = tools[tools.length - 1];
    if (lastTool && budget > 0) {
      lastTool.cache_control = { type: 'ephemeral' };
      budget--;
    }
    const messages = anthropicMessages(request.messages);
    if (request.cacheConversation !== false && budget > 0) {
      const lastContent = messages[messages.length - 1]?.content;
      const lastBlock = Array.isArray(lastContent) ? lastContent[lastContent.length - 1] : undefined;
      if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking')
        lastBlock.cache_control = { type: 'ephemeral' };
    }
    // The server tool goes first: the cache breakpoint stays on the last of HydraFlow's own tools.
    const search = request.webSearch
      ? [{ type: ANTHROPIC_WEB_SEARCH, name: 'web_search', max_uses: request.webSearch.maxUses } as unknown as Tool]
      : [];
    const { value, attempts, started } = await this.create(request.signal, {
      ...base,
      messages,
      ...(tools.length + search.length > 0 ? { tools: [...search, ...tools] } : {}),
    });
    return {
      text: value.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
      toolCalls: value.content.flatMap((b) =>
        b.type === 'tool_use' ? [toolCallFromInput(b.id, b.name, b.input)] : [],
      ),
      stopReason: anthropicStopReason(value.stop_reason),
      rawStopReason: value.stop_reason ?? null,
      usage: anthropicUsage(value.usage),
      model: value.model || this.model,
      provider: this.name,
      durationMs: Date.now() - started,
      truncated: value.stop_reason === 'max_tokens',
      attempts,
    };
  }

  completeJson(
    request: CompletionRequest,
    schema: { name: string; jsonSchema: Record<string, unknown> },
  ): Promise<CompletionResult> {
    const name = schemaName(schema.name);
    return this.run(request.signal, {
      ...this.params(request),
      tools: [
        {
          name,
          description: `Record your answer. The input must be the complete ${schema.name} object.`,
          input_schema: { type: 'object', ...schema.jsonSchema } as Tool.InputSchema,
        },
      ],
      tool_choice: { type: 'tool', name },
    });
  }
}

/**
 * TurnMessage[] → Messages API turns. Tool results become `tool_result` blocks of a user turn; adjacent turns of the
 * same role are merged (the API wants user/assistant alternation, and tool results first in their user turn, which
 * the order of the conversation already gives). Empty text blocks are dropped (the API rejects them).
 */
export function anthropicMessages(conversation: readonly TurnMessage[]): MessageParam[] {
  const out: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of conversation) {
    if (m.role === 'user') push('user', m.content === '' ? [] : [{ type: 'text', text: m.content }]);
    else if (m.role === 'tool')
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: m.toolCallId,
          content: m.content,
          ...(m.isError ? { is_error: true } : {}),
        },
      ]);
    else {
      const blocks: ContentBlockParam[] = m.content === '' ? [] : [{ type: 'text', text: m.content }];
      for (const c of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
      push('assistant', blocks.length > 0 ? blocks : [{ type: 'text', text: '(no output)' }]);
    }
  }
  for (const m of out) if (m.content.length === 0) m.content.push({ type: 'text', text: '(empty)' });
  return out;
}
