/** Scripts for the scripted model server: what each HydraFlow agent role answers, per issue if needed. */

export type Wire = 'openai' | 'anthropic';

/** `format`: the server could not parse the model's reply (llama.cpp's HTTP 500; a generic 500 on the Anthropic wire). */
export type Fault = '429' | '529' | '500' | 'timeout' | 'truncated' | 'junk' | 'credit' | 'format';

export interface ScriptEntry {
  /** Structured answer; delivered the way the API would for the request's structured-output mode. */
  json?: unknown;
  /** Plain text answer (used when `json` is absent). */
  text?: string;
  /**
   * Tool calls the model makes (Anthropic tool_use blocks / OpenAI tool_calls, finish 'tool_calls' / stop 'tool_use').
   * `id` defaults to a fresh provider-style id (`toolu_01…` / `call_…`). Script a multi-turn agent as an array: one
   * entry per turn, consumed in order per key.
   */
  toolCalls?: { name: string; input: unknown; id?: string }[];
  /**
   * Server-side web searches the model runs in this turn (Anthropic's web search tool): each becomes a
   * `server_tool_use` block and a `web_search_tool_result` block before the answer, and counts in
   * `usage.server_tool_use.web_search_requests` (billed per search). A request that offers no web search tool (or
   * one on the OpenAI wire, which HydraFlow sends none) is refused, as the real API cannot search without it.
   */
  webSearches?: { query: string; results: { title: string; url: string }[] }[];
  /** Wait this long (real time) before answering; for `timeout`, how long to hold the connection. */
  latencyMs?: number;
  /** Reported output tokens (default: estimated from the output). */
  outputTokens?: number;
  fault?: Fault;
  /** `retry-after` header value for the '429' fault (default 1). */
  retryAfterSeconds?: number;
}

/** What the server understood from a request; scripts written as functions receive it. */
export interface ParsedRequest {
  wire: Wire;
  model: string;
  /** From the first system segment, which begins `HydraFlow <role> agent`. */
  role: string | undefined;
  /** From the first user message, which contains `Issue #<n>`. */
  issue: number | undefined;
  /** All system text, segments joined with '\n\n'. */
  system: string;
  messages: { role: string; content: string }[];
  /** Names of the tools offered. */
  tools: string[];
  /** Types of the server tools offered (Anthropic `web_search_20250305`); empty on the OpenAI wire. */
  serverTools: string[];
  /** Tool calls the assistant made earlier in the conversation, in order. */
  toolCalls: { id: string; name: string; input: unknown }[];
  /**
   * Tool results the request carries (what the agent's tools answered), in conversation order, with the called tool's
   * name resolved from the matching call. OpenAI has no error flag: `isError` is false there.
   */
  toolResults: { toolCallId: string; name: string | undefined; content: string; isError: boolean }[];
  /** Tool the request forces (Anthropic `tool_choice: {type:'tool'}`, OpenAI `tool_choice: {type:'function'}`). */
  forcedTool: string | undefined;
  /** OpenAI `response_format.type`, Anthropic `output_config.format.type` ('json_schema') or 'text'. */
  responseFormat: 'text' | 'json_object' | 'json_schema';
  /** JSON schema of the structured output (response_format or forced tool input_schema). */
  schema: unknown;
  maxTokens: number | undefined;
  body: Record<string, unknown>;
}

export type ScriptValue = ScriptEntry | ScriptEntry[] | ((request: ParsedRequest) => ScriptEntry);

/**
 * `{ [role]: ScriptValue }`, with per-issue overrides keyed `'<role>#<issue>'` (looked up first) and an optional
 * catch-all `'*'`. Arrays are consumed in order; the last entry repeats.
 */
export type Script = Record<string, ScriptValue>;

/**
 * The role comes from the system prompt (`HydraFlow <role> agent`), or — for agents that share one system prompt so
 * they share its prompt cache, like grooming's — from the first user message, which then begins the same way.
 */
export function parseRoleAndIssue(systemFirst: string, firstUser: string): { role?: string; issue?: number } {
  const pattern = /^\s*HydraFlow\s+([\w.-]+)\s+agent\b/;
  const role = pattern.exec(systemFirst)?.[1] ?? pattern.exec(firstUser)?.[1];
  const issueText = /Issue #(\d+)/.exec(firstUser)?.[1];
  return { ...(role ? { role } : {}), ...(issueText ? { issue: Number(issueText) } : {}) };
}

export class ScriptRunner {
  private cursors = new Map<string, number>();
  constructor(private script: Script) {}

  set(script: Script): void {
    this.script = script;
    this.cursors = new Map();
  }

  /** The entry for this request and the script key it came from, or undefined when the script has none. */
  next(request: ParsedRequest): { key: string; entry: ScriptEntry } | undefined {
    const keys = [
      ...(request.role !== undefined && request.issue !== undefined ? [`${request.role}#${request.issue}`] : []),
      ...(request.role !== undefined ? [request.role] : []),
      '*',
    ];
    for (const key of keys) {
      const value = this.script[key];
      if (value === undefined) continue;
      if (typeof value === 'function') return { key, entry: value(request) };
      if (Array.isArray(value)) {
        if (value.length === 0) continue;
        const index = this.cursors.get(key) ?? 0;
        this.cursors.set(key, index + 1);
        const entry = value[Math.min(index, value.length - 1)];
        if (entry) return { key, entry };
        continue;
      }
      return { key, entry: value };
    }
    return undefined;
  }
}
