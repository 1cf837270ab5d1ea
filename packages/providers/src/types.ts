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
  /** Cancels the call (and any retry it would make): a call started ahead of its phase that the phase did not use. */
  signal?: AbortSignal;
}

export interface Usage {
  /** All input tokens billed at the normal rate (excludes cache reads and cache writes). */
  inputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written to the prompt cache (Anthropic bills these at a premium). */
  cacheWriteTokens: number;
  outputTokens: number;
  /** Server-side web searches the provider ran in the call (billed per search): Anthropic's web search tool. */
  webSearches?: number;
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
  /**
   * One tool-using turn: the model sees the tools and the conversation so far (including its earlier tool calls and
   * their results) and answers with text, tool calls, or both. Same retry, credit and usage rules as `complete`.
   */
  turn(request: ToolTurnRequest): Promise<ToolTurnResult>;
}

/** A tool the model may call. `inputSchema` is a JSON Schema whose root is an object. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call the model made. `id` is the provider's id, echoed back with the result. */
export interface ToolCall {
  id: string;
  name: string;
  /** The parsed arguments; `{}` when they were not a JSON object (see `invalidInput`). */
  input: Record<string, unknown>;
  /** The raw arguments when they were not a JSON object (OpenAI sends a string; a truncated turn cuts it). */
  invalidInput?: string;
}

/** A conversation of a tool-using agent: user text, assistant text + tool calls, and tool results. */
export type TurnMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string; isError?: boolean };

export interface ToolTurnRequest extends Omit<CompletionRequest, 'messages'> {
  tools: ToolDefinition[];
  messages: TurnMessage[];
  /**
   * Anthropic only: also put a cache breakpoint on the last message, so each turn of an agent loop reads the previous
   * turn's prefix from the cache (default true; skipped when it would exceed the API's 4 breakpoints).
   */
  cacheConversation?: boolean;
  /**
   * The provider's own server-side web search, at most `maxUses` searches in the turn (Anthropic's web search tool,
   * which runs on Anthropic's side: its results come back in the answer, never through HydraFlow's tools). Providers
   * without one ignore it; the caller asks only where it exists (webSearchAvailable).
   */
  webSearch?: { maxUses: number };
}

/**
 * Why the model stopped: `end` (finished its answer), `tool_use` (wants tool results), `max_tokens` (cut off at the
 * output limit), `refusal` (safety refusal / content filter), `other` (anything else, e.g. Anthropic `pause_turn`).
 */
export type StopReason = 'end' | 'tool_use' | 'max_tokens' | 'refusal' | 'other';

export interface ToolTurnResult extends CompletionResult {
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /** The provider's own value (OpenAI finish_reason, Anthropic stop_reason). */
  rawStopReason: string | null;
}

export interface StructuredRequest<T> extends CompletionRequest {
  schema: z.ZodType<T>;
  schemaName: string;
}
