/**
 * Scripted model server: one plain node:http server on 127.0.0.1 that speaks the OpenAI Chat Completions wire
 * (`POST /v1/chat/completions`) and the Anthropic Messages wire (`POST /v1/messages`), non-streaming, closely enough
 * that the official SDKs (`openai` 6, `@anthropic-ai/sdk` 1.x) cannot tell the difference for what HydraFlow uses.
 * Answers come from a script keyed by agent role and issue (see script.ts); usage, including prompt caching, follows
 * the providers' documented rules (see caching.ts); faults are sent the way the real services send them.
 *
 * Known differences from the real services are listed in README-style comments next to each behaviour; the main ones:
 * token counts are estimated (ceil(chars/4)); no streaming; OpenAI has no 529, so the '529' fault is sent on the
 * OpenAI wire as the 503 "overloaded" error it actually returns; a truncated forced-tool answer on the Anthropic wire
 * carries an empty `input` object (the API cannot return half a JSON object in `input`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AnthropicPromptCache,
  FIVE_MINUTES_MS,
  ONE_HOUR_MS,
  OpenAIPromptCache,
  anthropicMinCacheableTokens,
  type CachePart,
} from './caching';
import { parseRoleAndIssue, ScriptRunner, type Fault, type ParsedRequest, type Script, type Wire } from './script';
import { estimateTokens } from './tokens';
import {
  grammarRefused,
  LLAMA_FORMAT_ERROR,
  LLAMA_GRAMMAR_ERROR,
  LLAMA_GRAMMAR_LIMIT,
  LLAMA_MODEL_FILE,
  llamaError,
  llamaJsonText,
} from './llama-cpp';

export type Clock = (() => number) | { now(): number };

export interface ModelServerOptions {
  script: Script;
  /** Time source (ms since epoch) for cache TTLs and `created` timestamps. Default Date.now. */
  clock?: Clock;
  /** How long the 'timeout' fault holds a connection before closing it (unless the entry sets latencyMs). */
  timeoutHoldMs?: number;
  /** Override the Anthropic minimum cacheable prompt length (tokens), for every model. */
  anthropicMinCacheTokens?: number;
  /** If set, only these API keys are accepted (401 otherwise); by default any non-empty key is. */
  apiKeys?: string[];
  /** Behave like an OpenAI-compatible endpoint that rejects `response_format: json_schema` with a 400. */
  rejectJsonSchema?: boolean;
  /** Likewise for `response_format: json_object` (a server that takes neither: the prompt alone asks for JSON). */
  rejectJsonObject?: boolean;
  /**
   * Behave like llama.cpp's server on the OpenAI wire (see llama-cpp.ts): a schema (response format or tool) with a
   * bounded repetition of `grammarLimit` (default 2,000) or more is refused with llama.cpp's 400, a bounded `number`
   * comes back unbounded, errors have llama.cpp's shape, and answers name the model file, not the model asked for.
   */
  llamaCpp?: { grammarLimit?: number };
  /**
   * Latency of answers whose script entry sets none, modelled like a real API: time to the first token, then the
   * output at a steady speed (a one-token answer costs about `firstTokenMs`; a long verdict seconds).
   */
  latency?: { firstTokenMs: number; tokensPerSecond: number };
}

export interface ModelCall {
  seq: number;
  /** Clock time the request arrived. */
  at: number;
  wire: Wire;
  path: string;
  model: string | undefined;
  role: string | undefined;
  issue: number | undefined;
  /** The API key the caller presented (tests that give each caller its own key attribute calls by it). */
  apiKey: string | undefined;
  /** Script key that answered ('triage#12', 'triage', '*'). */
  scriptKey: string | undefined;
  /** HTTP status sent; 0 when the connection was dropped without a response (timeout fault). */
  status: number;
  fault: Fault | undefined;
  /** The usage object returned on the wire (absent for errors). */
  usage: Record<string, unknown> | undefined;
  /** Error type/code sent, for error responses; 'aborted' when the client closed the connection before the answer. */
  error: string | undefined;
  request: ParsedRequest | undefined;
  /** The scripted or modelled latency this answer waited, ms (0 when none). */
  latencyMs: number;
}

export interface ModelServer {
  url: string;
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  calls: ModelCall[];
  setScript(script: Script): void;
  close(): Promise<void>;
}

const JUNK_PROSE =
  'Sure! I looked at this carefully. Overall it seems mostly fine, although a couple of points might deserve a second look before anyone proceeds.';

function randomId(prefix: string, length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return prefix + out;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: unknown) => {
        if (!block || typeof block !== 'object') return '';
        const b = block as Record<string, unknown>;
        if (typeof b.text === 'string') return b.text;
        if (b.type === 'tool_use') return `${String(b.name)} ${JSON.stringify(b.input)}`;
        if (b.type === 'tool_result') return textOf(b.content);
        return JSON.stringify(b);
      })
      .join('\n');
  }
  return content == null ? '' : JSON.stringify(content);
}

function stripCacheControl(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(stripCacheControl);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (k !== 'cache_control') out[k] = stripCacheControl(v);
  return out;
}

function ttlOf(cacheControl: unknown): number | undefined {
  if (!cacheControl || typeof cacheControl !== 'object') return undefined;
  const cc = cacheControl as { type?: unknown; ttl?: unknown };
  if (cc.type !== 'ephemeral') return undefined;
  return cc.ttl === '1h' ? ONE_HOUR_MS : FIVE_MINUTES_MS;
}

/** Anthropic render order tools → system → messages; each tool / system block / content block is one part. */
export function anthropicCacheParts(body: Record<string, unknown>): CachePart[] {
  const parts: CachePart[] = [];
  const push = (block: unknown, text: string) => {
    const ttl = ttlOf((block as { cache_control?: unknown } | null)?.cache_control);
    parts.push(ttl === undefined ? { text } : { text, breakpointTtlMs: ttl });
  };
  for (const tool of Array.isArray(body.tools) ? body.tools : []) push(tool, JSON.stringify(stripCacheControl(tool)));
  if (typeof body.system === 'string') parts.push({ text: body.system });
  else if (Array.isArray(body.system)) for (const block of body.system) push(block, textOf([block]));
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const m = message as { role?: unknown; content?: unknown };
    if (typeof m.content === 'string') parts.push({ text: `${String(m.role)}: ${m.content}` });
    else if (Array.isArray(m.content))
      m.content.forEach((block: unknown, i: number) =>
        push(block, `${i === 0 ? `${String(m.role)}: ` : ''}${textOf([stripCacheControl(block)])}`),
      );
  }
  // Automatic caching: a top-level cache_control puts the breakpoint on the last block.
  const auto = ttlOf(body.cache_control);
  const last = parts[parts.length - 1];
  if (auto !== undefined && last && last.breakpointTtlMs === undefined) last.breakpointTtlMs = auto;
  return parts;
}

/** OpenAI rendering: tools, response_format, then each message as `role: content`. */
export function openaiPrompt(body: Record<string, unknown>): string {
  const parts: string[] = [];
  if (Array.isArray(body.tools) && body.tools.length > 0) parts.push(JSON.stringify(body.tools));
  if (body.response_format && typeof body.response_format === 'object')
    parts.push(JSON.stringify(body.response_format));
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const m = message as { role?: unknown; content?: unknown; tool_calls?: unknown };
    parts.push(`${String(m.role)}: ${textOf(m.content)}${m.tool_calls ? JSON.stringify(m.tool_calls) : ''}`);
  }
  return parts.join('\n');
}

function parseOpenAI(body: Record<string, unknown>): ParsedRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []).map(
    (m: { role?: unknown; content?: unknown }) => ({
      role: String(m.role),
      content: textOf(m.content),
    }),
  );
  const systemMessages = messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const firstUser = messages.find((m) => m.role === 'user')?.content ?? '';
  const rf = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  const tc = body.tool_choice as { type?: string; function?: { name?: string } } | string | undefined;
  const tools = (Array.isArray(body.tools) ? body.tools : []).map(
    (t: { function?: { name?: string; parameters?: unknown } }) => t.function?.name ?? '',
  );
  const forcedTool = typeof tc === 'object' && tc?.type === 'function' ? tc.function?.name : undefined;
  const toolSchema = (body.tools as { function?: { name?: string; parameters?: unknown } }[] | undefined)?.find(
    (t) => t.function?.name === forcedTool,
  )?.function?.parameters;
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const { role, issue } = parseRoleAndIssue(systemMessages[0]?.content ?? '', firstUser);
  const toolCalls: ParsedRequest['toolCalls'] = [];
  const toolResults: ParsedRequest['toolResults'] = [];
  for (const m of (Array.isArray(body.messages) ? body.messages : []) as Record<string, unknown>[]) {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls))
      for (const c of m.tool_calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) {
        let input: unknown = c.function?.arguments;
        try {
          input = JSON.parse(String(c.function?.arguments ?? ''));
        } catch {
          // keep the raw string
        }
        toolCalls.push({ id: String(c.id), name: String(c.function?.name ?? ''), input });
      }
    if (m.role === 'tool') {
      const id = String(m.tool_call_id);
      toolResults.push({
        toolCallId: id,
        name: toolCalls.find((c) => c.id === id)?.name,
        content: textOf(m.content),
        isError: false,
      });
    }
  }
  return {
    wire: 'openai',
    toolCalls,
    toolResults,
    model: String(body.model),
    role,
    issue,
    system: systemMessages.map((m) => m.content).join('\n\n'),
    messages,
    tools,
    serverTools: [],
    forcedTool,
    responseFormat: rf?.type === 'json_schema' || rf?.type === 'json_object' ? rf.type : 'text',
    schema: rf?.json_schema?.schema ?? toolSchema,
    maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
    body,
  };
}

function parseAnthropic(body: Record<string, unknown>): ParsedRequest {
  const systemBlocks: string[] =
    typeof body.system === 'string'
      ? [body.system]
      : Array.isArray(body.system)
        ? body.system.map((b: { text?: unknown }) => String(b.text ?? ''))
        : [];
  const messages = (Array.isArray(body.messages) ? body.messages : []).map(
    (m: { role?: unknown; content?: unknown }) => ({
      role: String(m.role),
      content: textOf(m.content),
    }),
  );
  const firstUser = messages.find((m) => m.role === 'user')?.content ?? '';
  const tc = body.tool_choice as { type?: string; name?: string } | undefined;
  const toolList = (Array.isArray(body.tools) ? body.tools : []) as { name?: string; input_schema?: unknown }[];
  const forcedTool =
    tc?.type === 'tool' ? tc.name : tc?.type === 'any' && toolList.length === 1 ? toolList[0]?.name : undefined;
  const format = (body.output_config as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
  const { role, issue } = parseRoleAndIssue(systemBlocks[0] ?? '', firstUser);
  const toolCalls: ParsedRequest['toolCalls'] = [];
  const toolResults: ParsedRequest['toolResults'] = [];
  for (const m of (Array.isArray(body.messages) ? body.messages : []) as { content?: unknown }[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Record<string, unknown>[]) {
      if (b?.type === 'tool_use') toolCalls.push({ id: String(b.id), name: String(b.name), input: b.input });
      if (b?.type === 'tool_result') {
        const id = String(b.tool_use_id);
        toolResults.push({
          toolCallId: id,
          name: toolCalls.find((c) => c.id === id)?.name,
          content: textOf(b.content),
          isError: b.is_error === true,
        });
      }
    }
  }
  return {
    wire: 'anthropic',
    toolCalls,
    toolResults,
    model: String(body.model),
    role,
    issue,
    system: systemBlocks.join('\n\n'),
    messages,
    tools: toolList.map((t) => t.name ?? ''),
    serverTools: (toolList as { type?: string }[]).flatMap((t) =>
      typeof t.type === 'string' && t.type !== 'custom' ? [t.type] : [],
    ),
    forcedTool,
    responseFormat: format?.type === 'json_schema' ? 'json_schema' : 'text',
    schema: format?.schema ?? toolList.find((t) => t.name === forcedTool)?.input_schema,
    maxTokens: typeof body.max_tokens === 'number' ? body.max_tokens : undefined,
    body,
  };
}

/**
 * The real Chat Completions API rejects a conversation where an assistant message's `tool_calls` are not all answered
 * by the `role: 'tool'` messages right after it, or a tool message that answers no preceding call (same wording).
 */
function openaiToolPairingError(body: Record<string, unknown>): string | undefined {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Record<string, unknown>[];
  let open: string[] = [];
  let openIndex = -1;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const id = String(m.tool_call_id);
      if (!open.includes(id))
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      open = open.filter((x) => x !== id);
      continue;
    }
    if (open.length > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')} (messages.[${openIndex}])`;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      open = (m.tool_calls as { id?: unknown }[]).map((c) => String(c.id));
      openIndex = i;
    }
  }
  return undefined;
}

/**
 * The real Messages API requires every `tool_use` of an assistant turn to be answered by a `tool_result` in the next
 * (user) turn, and every `tool_result` to answer a `tool_use` of the previous turn (same wording as the API).
 */
function anthropicToolPairingError(body: Record<string, unknown>): string | undefined {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as { role?: unknown; content?: unknown }[];
  const blocks = (m: { content?: unknown } | undefined) =>
    (Array.isArray(m?.content) ? m.content : []) as Record<string, unknown>[];
  for (const [i, m] of messages.entries()) {
    const uses = blocks(m)
      .filter((b) => b.type === 'tool_use')
      .map((b) => String(b.id));
    if (m.role === 'assistant' && uses.length > 0) {
      const answered = new Set(
        blocks(messages[i + 1])
          .filter((b) => b.type === 'tool_result')
          .map((b) => String(b.tool_use_id)),
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0 && i + 1 < messages.length)
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    if (m.role === 'user') {
      const previous = new Set(
        blocks(messages[i - 1])
          .filter((b) => b.type === 'tool_use')
          .map((b) => String(b.id)),
      );
      for (const [j, b] of blocks(m).entries())
        if (b.type === 'tool_result' && !previous.has(String(b.tool_use_id)))
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}

function truncate(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const clock = options.clock;
  const now = (): number => (clock === undefined ? Date.now() : typeof clock === 'function' ? clock() : clock.now());
  const runner = new ScriptRunner(options.script);
  const anthropicCache = new AnthropicPromptCache(
    now,
    (model) => options.anthropicMinCacheTokens ?? anthropicMinCacheableTokens(model),
  );
  const openaiCache = new OpenAIPromptCache(now);
  const calls: ModelCall[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const orgId = randomUUID();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  function send(res: ServerResponse, wire: Wire, status: number, body: unknown, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
    if (wire === 'openai') {
      Object.assign(headers, {
        'x-request-id': `req_${randomBytes(16).toString('hex')}`,
        'openai-version': '2020-10-01',
        'openai-organization': 'hydraflow-test',
        'openai-processing-ms': '12',
        'x-ratelimit-limit-requests': '10000',
        'x-ratelimit-remaining-requests': '9999',
        'x-ratelimit-reset-requests': '6ms',
        'x-ratelimit-limit-tokens': '2000000',
        'x-ratelimit-remaining-tokens': '1999000',
        'x-ratelimit-reset-tokens': '30ms',
      });
    } else {
      Object.assign(headers, {
        'request-id': randomId('req_011C', 22),
        'anthropic-organization-id': orgId,
        'anthropic-ratelimit-requests-limit': '4000',
        'anthropic-ratelimit-requests-remaining': '3999',
      });
    }
    Object.assign(headers, extra);
    res.writeHead(status, headers);
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  }

  const openaiError = (message: string, type: string, code: string | null, param: string | null = null) => ({
    error: { message, type, param, code },
  });
  const anthropicError = (type: string, message: string) => ({
    type: 'error',
    error: { type, message },
    request_id: randomId('req_011C', 22),
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const wire: Wire = path.startsWith('/v1/chat') ? 'openai' : 'anthropic';
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');

    const call: ModelCall = {
      seq: calls.length + 1,
      at,
      wire,
      path,
      model: undefined,
      role: undefined,
      issue: undefined,
      apiKey: undefined,
      scriptKey: undefined,
      status: 0,
      fault: undefined,
      usage: undefined,
      error: undefined,
      request: undefined,
      latencyMs: 0,
    };
    calls.push(call);
    const reply = (status: number, body: unknown, extra: Record<string, string> = {}, error?: string) => {
      call.status = status;
      if (error) call.error = error;
      send(res, wire, status, body, extra);
    };

    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/messages')) {
      return wire === 'openai'
        ? reply(404, openaiError(`Invalid URL (${req.method} ${path})`, 'invalid_request_error', null), {}, 'not_found')
        : reply(404, anthropicError('not_found_error', 'Not Found'), {}, 'not_found_error');
    }

    // Authentication, as the real services check it.
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    call.apiKey = bearer;
    if (wire === 'openai') {
      if (!bearer) {
        return reply(
          401,
          openaiError(
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
            'invalid_request_error',
            null,
          ),
          {},
          'missing_api_key',
        );
      }
      if (options.apiKeys && !options.apiKeys.includes(bearer)) {
        return reply(
          401,
          openaiError(
            `Incorrect API key provided: ${bearer.slice(0, 3)}***${bearer.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            'invalid_request_error',
            'invalid_api_key',
          ),
          {},
          'invalid_api_key',
        );
      }
    } else {
      const headerKey = req.headers['x-api-key'];
      const key = (typeof headerKey === 'string' ? headerKey : undefined) ?? bearer;
      call.apiKey = key;
      if (!key)
        return reply(
          401,
          anthropicError('authentication_error', 'x-api-key header is required'),
          {},
          'authentication_error',
        );
      if (options.apiKeys && !options.apiKeys.includes(key))
        return reply(401, anthropicError('authentication_error', 'invalid x-api-key'), {}, 'authentication_error');
      if (!req.headers['anthropic-version'])
        return reply(
          400,
          anthropicError('invalid_request_error', 'anthropic-version: header is required'),
          {},
          'invalid_request_error',
        );
    }

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return wire === 'openai'
        ? reply(
            400,
            openaiError(
              "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
              'invalid_request_error',
              null,
            ),
            {},
            'invalid_json',
          )
        : reply(
            400,
            anthropicError('invalid_request_error', 'There was an issue with the request body: invalid JSON'),
            {},
            'invalid_request_error',
          );
    }

    // Minimal request validation, with the real services' wording where it matters.
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
      return wire === 'openai'
        ? reply(
            400,
            openaiError(
              "Missing required parameter: 'model' or 'messages'.",
              'invalid_request_error',
              'missing_required_parameter',
            ),
            {},
            'invalid_request_error',
          )
        : reply(
            400,
            anthropicError('invalid_request_error', 'model and messages: Field required'),
            {},
            'invalid_request_error',
          );
    }
    if (wire === 'anthropic' && typeof body.max_tokens !== 'number') {
      return reply(
        400,
        anthropicError('invalid_request_error', 'max_tokens: Field required'),
        {},
        'invalid_request_error',
      );
    }
    const pairing = wire === 'openai' ? openaiToolPairingError(body) : anthropicToolPairingError(body);
    if (pairing) {
      return wire === 'openai'
        ? reply(400, openaiError(pairing, 'invalid_request_error', null, 'messages'), {}, 'invalid_request_error')
        : reply(400, anthropicError('invalid_request_error', pairing), {}, 'invalid_request_error');
    }
    const request = wire === 'openai' ? parseOpenAI(body) : parseAnthropic(body);
    call.request = request;
    call.model = request.model;
    call.role = request.role;
    call.issue = request.issue;
    if (
      wire === 'openai' &&
      options.llamaCpp &&
      grammarRefused(body, options.llamaCpp.grammarLimit ?? LLAMA_GRAMMAR_LIMIT)
    ) {
      return reply(400, llamaError(400, LLAMA_GRAMMAR_ERROR, 'invalid_request_error'), {}, 'grammar');
    }
    const format = (body.response_format as { type?: string } | undefined)?.type;
    if (
      wire === 'openai' &&
      ((format === 'json_schema' && options.rejectJsonSchema) || (format === 'json_object' && options.rejectJsonObject))
    ) {
      return reply(
        400,
        openaiError(
          `Invalid parameter: 'response_format' of type '${format}' is not supported with this model.`,
          'invalid_request_error',
          null,
          'response_format',
        ),
        {},
        'invalid_request_error',
      );
    }
    const cacheParts = wire === 'anthropic' ? anthropicCacheParts(body) : [];
    if (wire === 'anthropic') {
      const breakpoints = cacheParts.filter((p) => p.breakpointTtlMs !== undefined).length;
      if (breakpoints > 4)
        return reply(
          400,
          anthropicError(
            'invalid_request_error',
            `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`,
          ),
          {},
          'invalid_request_error',
        );
    }

    const resolved = runner.next(request);
    if (!resolved) {
      const message = `HydraFlow model server: the script has no entry for role '${request.role ?? '(none)'}'${request.issue !== undefined ? ` issue #${request.issue}` : ''} (add '${request.role ?? '*'}' or '*' to the script)`;
      return wire === 'openai'
        ? reply(400, openaiError(message, 'invalid_request_error', 'no_script_entry'), {}, 'no_script_entry')
        : reply(400, anthropicError('invalid_request_error', message), {}, 'no_script_entry');
    }
    const { key, entry } = resolved;
    call.scriptKey = key;
    call.fault = entry.fault;
    // The cache is read as the request arrives; its writes take effect when the 200 is sent (see caching.ts).
    const cache =
      wire === 'openai'
        ? {
            wire,
            ...openaiCache.lookup(request.model, openaiPrompt(body), body.prompt_cache_retention as string | undefined),
          }
        : { wire, ...anthropicCache.lookup(request.model, cacheParts) };

    if (entry.fault === 'timeout') {
      // Hold the connection past the client's timeout, then drop it without a response.
      await new Promise<void>((resolve) => {
        const t = setTimeout(
          () => {
            timers.delete(t);
            resolve();
          },
          entry.latencyMs ?? options.timeoutHoldMs ?? 10_000,
        );
        timers.add(t);
        res.on('close', () => {
          clearTimeout(t);
          timers.delete(t);
          resolve();
        });
      });
      call.status = 0;
      call.error = 'timeout';
      res.destroy();
      return;
    }
    if (entry.latencyMs) {
      call.latencyMs = entry.latencyMs;
      // A client that gives up (a cancelled call, a process that exited) ends the wait: its call is over now.
      await Promise.race([sleep(entry.latencyMs), new Promise((resolve) => res.once('close', resolve))]);
    }
    if (res.destroyed) {
      call.error = 'aborted'; // the client gave up before the answer (status stays 0)
      return;
    }

    const fault = entry.fault;
    if (fault === '429') {
      const retryAfter = String(entry.retryAfterSeconds ?? 1);
      return wire === 'openai'
        ? reply(
            429,
            openaiError(
              `Rate limit reached for ${request.model} in organization org-hydraflowtest on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in ${retryAfter}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
              'requests',
              'rate_limit_exceeded',
            ),
            {
              'retry-after': retryAfter,
              'x-ratelimit-remaining-requests': '0',
              'x-ratelimit-reset-requests': `${retryAfter}s`,
            },
            'rate_limit_exceeded',
          )
        : reply(
            429,
            anthropicError(
              'rate_limit_error',
              'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.',
            ),
            { 'retry-after': retryAfter, 'anthropic-ratelimit-requests-remaining': '0' },
            'rate_limit_error',
          );
    }
    if (fault === '529') {
      return wire === 'openai'
        ? reply(
            503,
            openaiError('The engine is currently overloaded, please try again later.', 'server_error', null),
            {},
            'overloaded',
          )
        : reply(529, anthropicError('overloaded_error', 'Overloaded'), {}, 'overloaded_error');
    }
    if (fault === 'format') {
      // llama.cpp's chat parser could not read the reply; other servers would say it their way.
      return wire === 'openai'
        ? reply(500, llamaError(500, LLAMA_FORMAT_ERROR, 'server_error'), {}, 'format')
        : reply(500, anthropicError('api_error', 'Internal server error'), {}, 'api_error');
    }
    if (fault === '500') {
      return wire === 'openai'
        ? reply(
            500,
            openaiError(
              'The server had an error while processing your request. Sorry about that!',
              'server_error',
              null,
            ),
            {},
            'server_error',
          )
        : reply(500, anthropicError('api_error', 'Internal server error'), {}, 'api_error');
    }
    if (fault === 'credit') {
      return wire === 'openai'
        ? reply(
            429,
            openaiError(
              'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
              'insufficient_quota',
              'insufficient_quota',
            ),
            {},
            'insufficient_quota',
          )
        : reply(
            400,
            anthropicError(
              'invalid_request_error',
              'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
            ),
            {},
            'credit_balance_too_low',
          );
    }

    // The model cannot search the web unless the request offers the server tool (the real API's wording).
    const searches = entry.webSearches ?? [];
    if (searches.length > 0 && !request.serverTools.some((t) => t.startsWith('web_search_'))) {
      const message = `the script searches the web, but the request offers no web search tool (${wire} wire)`;
      return wire === 'openai'
        ? reply(400, openaiError(message, 'invalid_request_error', null), {}, 'invalid_request_error')
        : reply(400, anthropicError('invalid_request_error', message), {}, 'invalid_request_error');
    }

    // A 200 answer: content first, then usage from the caching model.
    const structured = entry.json !== undefined;
    let text = !structured
      ? (entry.text ?? '')
      : options.llamaCpp && wire === 'openai'
        ? llamaJsonText(entry.json, request.schema)
        : JSON.stringify(entry.json);
    const toolCalls = entry.toolCalls ?? [];
    let useForcedTool = structured && request.forcedTool !== undefined && toolCalls.length === 0;
    let toolInput: unknown = entry.json;
    if (fault === 'junk') {
      text = JUNK_PROSE;
      toolInput = { answer: JUNK_PROSE }; // a forced tool always yields an object; junk = one that fits no schema
      useForcedTool = request.forcedTool !== undefined;
    }
    const truncated = fault === 'truncated';
    if (truncated) {
      text = truncate(text);
      toolInput = {};
    }
    const outputText = useForcedTool
      ? JSON.stringify(toolInput)
      : text + toolCalls.map((c) => JSON.stringify(c.input)).join('');
    const outputTokens =
      truncated && request.maxTokens !== undefined
        ? request.maxTokens
        : (entry.outputTokens ?? Math.max(1, estimateTokens(outputText)));
    if (entry.latencyMs === undefined && options.latency) {
      call.latencyMs = options.latency.firstTokenMs + (outputTokens / options.latency.tokensPerSecond) * 1000;
      await sleep(call.latencyMs);
      if (res.destroyed) return;
    }

    if (cache.wire === 'openai') {
      const usage = {
        prompt_tokens: cache.usage.promptTokens,
        completion_tokens: outputTokens,
        total_tokens: cache.usage.promptTokens + outputTokens,
        prompt_tokens_details: { cached_tokens: cache.usage.cachedTokens, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      };
      const calledTools = useForcedTool ? [{ name: request.forcedTool ?? '', input: toolInput }] : toolCalls;
      const argsOf = (input: unknown) =>
        truncated && useForcedTool ? truncate(JSON.stringify(entry.json)) : JSON.stringify(input);
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: calledTools.length > 0 ? (text && !useForcedTool ? text : null) : text,
        refusal: null,
        annotations: [],
      };
      if (calledTools.length > 0)
        message.tool_calls = calledTools.map((c) => ({
          id: ('id' in c && typeof c.id === 'string' ? c.id : undefined) ?? randomId('call_', 24),
          type: 'function',
          function: { name: c.name, arguments: argsOf(c.input) },
        }));
      // A forced tool_choice reports finish_reason 'stop' on the real API; free tool calls report 'tool_calls'.
      const finish = truncated ? 'length' : calledTools.length > 0 && !useForcedTool ? 'tool_calls' : 'stop';
      call.usage = usage;
      cache.commit();
      return reply(200, {
        id: randomId('chatcmpl-', 29),
        object: 'chat.completion',
        created: Math.floor(now() / 1000),
        model: options.llamaCpp ? LLAMA_MODEL_FILE : request.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage,
        service_tier: 'default',
        system_fingerprint: 'fp_hydraflow',
      });
    }

    const usage = {
      input_tokens: cache.usage.inputTokens,
      cache_creation_input_tokens: cache.usage.cacheCreationInputTokens,
      cache_read_input_tokens: cache.usage.cacheReadInputTokens,
      cache_creation: {
        ephemeral_5m_input_tokens: cache.usage.ephemeral5mInputTokens,
        ephemeral_1h_input_tokens: cache.usage.ephemeral1hInputTokens,
      },
      output_tokens: outputTokens,
      service_tier: 'standard',
      ...(searches.length > 0 ? { server_tool_use: { web_search_requests: searches.length } } : {}),
    };
    const content: Record<string, unknown>[] = [];
    for (const search of searches) {
      const id = randomId('srvtoolu_01', 22);
      content.push({ type: 'server_tool_use', id, name: 'web_search', input: { query: search.query } });
      content.push({
        type: 'web_search_tool_result',
        tool_use_id: id,
        content: search.results.map((r) => ({
          type: 'web_search_result',
          title: r.title,
          url: r.url,
          encrypted_content: randomId('EqoB', 40),
          page_age: null,
        })),
      });
    }
    if (useForcedTool) {
      content.push({ type: 'tool_use', id: randomId('toolu_01', 22), name: request.forcedTool, input: toolInput });
    } else {
      if (text) content.push({ type: 'text', text });
      for (const c of toolCalls)
        content.push({ type: 'tool_use', id: c.id ?? randomId('toolu_01', 22), name: c.name, input: c.input });
    }
    const stopReason = truncated ? 'max_tokens' : useForcedTool || toolCalls.length > 0 ? 'tool_use' : 'end_turn';
    call.usage = usage;
    cache.commit();
    return reply(200, {
      id: randomId('msg_01', 22),
      type: 'message',
      role: 'assistant',
      model: request.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage,
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'api_error', message: `model server bug: ${String(error)}` },
          }),
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    calls,
    setScript: (script) => runner.set(script),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
