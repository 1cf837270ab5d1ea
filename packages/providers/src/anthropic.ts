/**
 * Anthropic Messages adapter (official `@anthropic-ai/sdk`). Structured output uses a forced tool
 * (`tool_choice: {type: 'tool', name}`) whose input_schema is the JSON Schema; system segments marked `cache: true`
 * carry `cache_control: {type: 'ephemeral'}` so the stable prefix (tools → system) is cached.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { schemaName } from './openai';
import { withRetries, type RetryOptions } from './retry';
import type { CompletionRequest, CompletionResult, ModelProvider, Usage } from './types';

export interface AnthropicProviderOptions extends RetryOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** max_tokens when the request sets none (the API requires one). Default 4096. */
  defaultMaxTokens?: number;
}

/** Anthropic usage → Usage: input_tokens already excludes cache reads and writes. */
export function anthropicUsage(usage: Partial<Anthropic.Usage> | undefined): Usage {
  return {
    inputTokens: usage?.input_tokens ?? 0,
    cachedInputTokens: usage?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage?.cache_creation_input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
  };
}

function isConnectionError(e: unknown): boolean {
  return e instanceof Anthropic.APIConnectionError; // includes APIConnectionTimeoutError
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic' as const;
  readonly model: string;
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicProviderOptions) {
    this.model = options.model;
    this.client = new Anthropic({
      apiKey: options.apiKey,
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
      timeout: options.timeoutMs ?? 120_000,
      maxRetries: 0,
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

  private async run(params: MessageCreateParamsNonStreaming): Promise<CompletionResult> {
    const started = Date.now();
    const { value, attempts } = await withRetries(
      { provider: this.name, model: this.model, isConnectionError },
      this.options,
      () => this.client.messages.create(params),
    );
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
    return this.run(this.params(request));
  }

  completeJson(
    request: CompletionRequest,
    schema: { name: string; jsonSchema: Record<string, unknown> },
  ): Promise<CompletionResult> {
    const name = schemaName(schema.name);
    return this.run({
      ...this.params(request),
      tools: [
        {
          name,
          description: `Record your answer. The input must be the complete ${schema.name} object.`,
          input_schema: { type: 'object', ...schema.jsonSchema } as Anthropic.Tool.InputSchema,
        },
      ],
      tool_choice: { type: 'tool', name },
    });
  }
}
