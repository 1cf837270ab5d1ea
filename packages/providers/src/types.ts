import type { z } from 'zod';

/** The agent roles a model can be configured for. Later phases add theirs here. */
export type AgentRole = string;

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One model call, provider-neutral. `system` and the leading messages are laid out so the stable part comes first:
 * `cacheBreakpoints` marks how many leading segments of `system` are stable across calls, so adapters can place
 * Anthropic `cache_control` breakpoints there (OpenAI caches prefixes automatically).
 */
export interface CompletionRequest {
  /** Agent role, for model selection, the ledger and scripted test servers. */
  role: AgentRole;
  /** Issue number the call is about (ledger attribution). */
  issue?: number;
  /** System prompt as ordered segments; segments marked `cache: true` end a cacheable prefix. */
  system: { text: string; cache?: boolean }[];
  messages: ChatMessage[];
  maxOutputTokens?: number;
  temperature?: number;
}

export interface Usage {
  /** All input tokens billed at the normal rate (excludes cache reads and cache writes). */
  inputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written to the prompt cache (Anthropic bills these at a premium). */
  cacheWriteTokens: number;
  outputTokens: number;
}

export interface CompletionResult {
  text: string;
  usage: Usage;
  model: string;
  provider: ProviderName;
  /** Wall time of the successful attempt plus retries, in ms. */
  durationMs: number;
  /** True when the model stopped at the output-token limit (OpenAI finish_reason 'length', Anthropic 'max_tokens'). */
  truncated?: boolean;
  /** HTTP attempts this result took (1 = no retry). */
  attempts?: number;
}

export type ProviderName = 'openai' | 'anthropic' | 'openai-compatible';

/** The one small interface every model adapter implements. */
export interface ModelProvider {
  readonly name: ProviderName;
  readonly model: string;
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /** Structured output: the adapter uses the API's native JSON-schema or forced-tool mode and returns raw JSON text. */
  completeJson(
    request: CompletionRequest,
    schema: { name: string; jsonSchema: Record<string, unknown> },
  ): Promise<CompletionResult>;
}

export interface StructuredRequest<T> extends CompletionRequest {
  schema: z.ZodType<T>;
  schemaName: string;
}
