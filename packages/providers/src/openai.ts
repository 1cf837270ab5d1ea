/**
 * OpenAI Chat Completions adapter (official `openai` SDK, v6). Also serves OpenAI-compatible endpoints by base URL
 * (name 'openai-compatible'). Those do structured output their own way, so in 'auto' mode the adapter steps down when
 * the server refuses (ADR 0006):
 *
 * - `response_format: json_schema` refused as such (the server has no such mode) → `json_object` with the schema
 *   written into the system prompt, for the adapter's lifetime;
 * - a schema the server could not compile into its grammar (llama.cpp "failed to parse grammar", vLLM "not supported
 *   by xgrammar", …) → `json_object` for that schema only: others may compile;
 * - `json_object` refused as well → the schema in the prompt alone, no response_format, for the adapter's lifetime.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { nodeFetch } from '@hydraflow/http';
import { withRetries, type RetryOptions } from './retry';
import { schemaName } from './schema-name';
import { openaiUsage } from './usage';
import { openaiStopReason, toolCallFromArguments } from './tool-calls';
import type {
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ToolTurnRequest,
  ToolTurnResult,
  TurnMessage,
} from './types';

export type JsonMode = 'json_schema' | 'json_object' | 'auto';

export interface OpenAIProviderOptions extends RetryOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** The HTTP client (default: HydraFlow's fetch over node:http); the agent's first turn is captured with one. */
  fetch?: typeof fetch;
  /** 'openai' (default) or 'openai-compatible'. */
  name?: 'openai' | 'openai-compatible';
  /** Structured-output mode. Default 'json_schema' for 'openai', 'auto' for 'openai-compatible'. */
  jsonMode?: JsonMode;
}

function isConnectionError(e: unknown): boolean {
  return e instanceof OpenAI.APIConnectionError; // includes APIConnectionTimeoutError
}

/**
 * How servers say that they could not turn a JSON Schema into a grammar: llama.cpp ("Failed to initialize samplers:
 * failed to parse grammar", "JSON schema conversion failed", "Unrecognized schema"), vLLM ("The provided JSON schema
 * contains features not supported by xgrammar", "Grammar error: …"), Hugging Face TGI ("grammar is not valid") and
 * Anthropic ("compiled grammar is too large").
 */
const GRAMMAR_REFUSED =
  /failed to parse grammar|json schema conversion failed|unrecognized schema|not supported by xgrammar|grammar error|grammar is not valid|grammar is too large/i;

/** Why the server refused a structured-output request, if it did: no such mode, or a schema it cannot compile. */
function structuredRefusal(err: unknown): 'mode' | 'grammar' | undefined {
  const e = ((err as { cause?: unknown })?.cause ?? err) as { status?: unknown; message?: unknown; param?: unknown };
  if (e?.status !== 400 && e?.status !== 422) return undefined;
  const message = String(e.message ?? '');
  if (GRAMMAR_REFUSED.test(message)) return 'grammar';
  if (e.param === 'response_format' || /json_schema|json_object|response_format/i.test(message)) return 'mode';
  return undefined;
}

export class OpenAIProvider implements ModelProvider {
  readonly name: 'openai' | 'openai-compatible';
  readonly model: string;
  private readonly client: OpenAI;
  private jsonMode: JsonMode;
  /** In 'auto' mode: what the server has shown it takes (see the file comment). */
  private structured: 'json_schema' | 'json_object' | 'prompt' = 'json_schema';
  /** In 'auto' mode: schemas (by name) the server could not compile; they go as json_object. */
  private readonly uncompiled = new Set<string>();

  constructor(private readonly options: OpenAIProviderOptions) {
    this.name = options.name ?? 'openai';
    this.model = options.model;
    this.jsonMode = options.jsonMode ?? (this.name === 'openai' ? 'json_schema' : 'auto');
    this.client = new OpenAI({
      apiKey: options.apiKey,
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
      timeout: options.timeoutMs ?? 120_000,
      maxRetries: 0,
      fetch: options.fetch ?? nodeFetch,
    });
  }

  private messages(request: CompletionRequest, extraSystem?: string): ChatCompletionMessageParam[] {
    const system = [...request.system.map((s) => s.text), ...(extraSystem ? [extraSystem] : [])].join('\n\n');
    return [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...request.messages.map((m) => ({ role: m.role, content: m.content })),
    ];
  }

  private params(request: CompletionRequest, extraSystem?: string): ChatCompletionCreateParamsNonStreaming {
    return {
      model: this.model,
      messages: this.messages(request, extraSystem),
      // Official OpenAI wants max_completion_tokens (max_tokens is deprecated and rejected by reasoning models);
      // compatible servers mostly only know max_tokens.
      ...(request.maxOutputTokens !== undefined
        ? this.name === 'openai'
          ? { max_completion_tokens: request.maxOutputTokens }
          : { max_tokens: request.maxOutputTokens }
        : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
  }

  private async create(signal: AbortSignal | undefined, params: ChatCompletionCreateParamsNonStreaming) {
    const started = Date.now();
    const { value, attempts } = await withRetries(
      { provider: this.name, model: this.model, isConnectionError, signal },
      this.options,
      () => this.client.chat.completions.create(params, { signal }),
    );
    return { value, attempts, started };
  }

  private async run(
    signal: AbortSignal | undefined,
    params: ChatCompletionCreateParamsNonStreaming,
  ): Promise<CompletionResult> {
    const { value, attempts, started } = await this.create(signal, params);
    const choice = value.choices[0];
    const message = choice?.message;
    const toolArgs = message?.tool_calls?.map((c) => (c.type === 'function' ? c.function.arguments : '')).join('');
    return {
      text: message?.content ?? (toolArgs || message?.refusal || ''),
      usage: openaiUsage(value.usage),
      model: value.model || this.model,
      provider: this.name,
      durationMs: Date.now() - started,
      truncated: choice?.finish_reason === 'length',
      attempts,
    };
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return this.run(request.signal, this.params(request));
  }

  /**
   * A tool-using turn on Chat Completions: function tools (non-strict, so any JSON Schema the tools use is accepted),
   * assistant `tool_calls` and `role: 'tool'` results. OpenAI has no error flag on a tool result, so an error result is
   * sent as `Error: <content>`. Tools are sent first and never change within a loop, so OpenAI's automatic prefix cache
   * covers tools → system → earlier turns.
   */
  async turn(request: ToolTurnRequest): Promise<ToolTurnResult> {
    const system = request.system.map((s) => s.text).join('\n\n');
    const messages: ChatCompletionMessageParam[] = [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...request.messages.map(openaiMessage),
    ];
    const params: ChatCompletionCreateParamsNonStreaming = {
      ...this.params({ ...request, messages: [] }),
      messages,
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((t) => ({
              type: 'function' as const,
              function: { name: t.name, description: t.description, parameters: t.inputSchema },
            })),
          }
        : {}),
    };
    const { value, attempts, started } = await this.create(request.signal, params);
    const choice = value.choices[0];
    const message = choice?.message;
    const toolCalls = (message?.tool_calls ?? []).flatMap((c) =>
      c.type === 'function' ? [toolCallFromArguments(c.id, c.function.name, c.function.arguments)] : [],
    );
    return {
      text: message?.content ?? message?.refusal ?? '',
      toolCalls,
      stopReason: openaiStopReason(choice?.finish_reason),
      rawStopReason: choice?.finish_reason ?? null,
      usage: openaiUsage(value.usage),
      model: value.model || this.model,
      provider: this.name,
      durationMs: Date.now() - started,
      truncated: choice?.finish_reason === 'length',
      attempts,
    };
  }

  async completeJson(
    request: CompletionRequest,
    schema: { name: string; jsonSchema: Record<string, unknown> },
  ): Promise<CompletionResult> {
    const auto = this.jsonMode === 'auto';
    if (
      this.jsonMode === 'json_schema' ||
      (auto && this.structured === 'json_schema' && !this.uncompiled.has(schema.name))
    ) {
      try {
        return await this.run(request.signal, {
          ...this.params(request),
          response_format: {
            type: 'json_schema',
            json_schema: { name: schemaName(schema.name), schema: schema.jsonSchema, strict: true },
          },
        });
      } catch (err) {
        const refusal = auto ? structuredRefusal(err) : undefined;
        if (!refusal) throw err;
        if (refusal === 'grammar') this.uncompiled.add(schema.name);
        else this.structured = 'json_object'; // remember: this endpoint does not do json_schema
      }
    }
    const instruction = `Respond with a single JSON object and nothing else (no prose, no code fences). It must match this JSON Schema, named ${schema.name}:\n${JSON.stringify(schema.jsonSchema)}`;
    if (this.structured !== 'prompt') {
      try {
        return await this.run(request.signal, {
          ...this.params(request, instruction),
          response_format: { type: 'json_object' },
        });
      } catch (err) {
        if (!auto || !structuredRefusal(err)) throw err;
        this.structured = 'prompt'; // nor json_object: the prompt alone asks for the JSON
      }
    }
    return this.run(request.signal, this.params(request, instruction));
  }
}

function openaiMessage(m: TurnMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant':
      return m.toolCalls && m.toolCalls.length > 0
        ? {
            role: 'assistant',
            content: m.content === '' ? null : m.content,
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.invalidInput ?? JSON.stringify(c.input) },
            })),
          }
        : { role: 'assistant', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.isError ? `Error: ${m.content}` : m.content };
  }
}
