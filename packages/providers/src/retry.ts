/**
 * Uniform retry policy for every adapter. The SDKs' own retries are disabled (maxRetries: 0) so that OpenAI, Anthropic
 * and OpenAI-compatible endpoints behave the same: exponential backoff with jitter on 429 (rate limits, not quota),
 * 408/409, 5xx (Anthropic 529 included), timeouts and connection errors; `retry-after-ms` / `retry-after` honoured;
 * bounded attempts; an injectable sleep so tests never wait. Credit/billing exhaustion is never retried: it becomes a
 * CreditExhaustedError at once. Auth failures become ProviderAuthErrors (UserErrors); any other 4xx is a request bug
 * (ProviderRequestError) and is not retried. A 5xx that says the server could not parse the model's own reply is not
 * an outage but a bad answer: an OutputFormatError at once, for the caller's one repair (a retry would pay for the
 * same generation again).
 */
import {
  CreditExhaustedError,
  HydraflowError,
  OutputFormatError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderUnavailableError,
} from '@hydraflow/core';
import type { ProviderName } from './types';

export interface RetryOptions {
  /** Total HTTP attempts including the first (default 4). */
  maxAttempts?: number;
  /** First backoff step in ms (default 1000); doubles each retry. */
  baseDelayMs?: number;
  /** Cap on one computed backoff step (default 30 s). */
  maxDelayMs?: number;
  /** Cap on an honoured retry-after (default 120 s). */
  maxRetryAfterMs?: number;
  /** Injectable sleep (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable randomness in [0, 1) for jitter (default Math.random). */
  random?: () => number;
}

export type ErrorClass =
  | { kind: 'credit'; message: string }
  | { kind: 'retryable'; status: number | undefined; detail: string; retryAfterMs: number | undefined }
  | { kind: 'auth'; status: number; detail: string }
  | { kind: 'output'; status: number; detail: string }
  | { kind: 'fatal'; status: number | undefined; detail: string };

interface ApiErrorLike {
  status?: unknown;
  headers?: unknown;
  error?: unknown;
  message?: unknown;
  code?: unknown;
  type?: unknown;
  errorCode?: unknown;
  name?: unknown;
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** `retry-after-ms` (ms) first, then `retry-after` as seconds or an HTTP date. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && Number.isFinite(Number(ms)) && ms.trim() !== '') return Math.max(0, Number(ms));
  const ra = header(headers, 'retry-after');
  if (ra === undefined || ra.trim() === '') return undefined;
  const seconds = Number(ra);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Pull `{type, code, message}` out of either SDK's error body. */
function errorBody(err: ApiErrorLike): { type?: string; code?: string; message?: string } {
  const body = (err.error ?? {}) as Record<string, unknown>;
  const inner = (body.error && typeof body.error === 'object' ? body.error : body) as Record<string, unknown>;
  const details = inner.details as { error_code?: unknown } | undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    type: str(inner.type) ?? str(err.type),
    code: str(details?.error_code) ?? str(inner.code) ?? str(err.code) ?? str(err.errorCode),
    message: str(inner.message) ?? str(err.message),
  };
}

/**
 * How servers say that the model's reply broke the format they parse it with: llama.cpp's chat parser ("The model
 * produced output that does not match the expected peg-native format", also for JSON mode), its tool-call parser
 * ("Failed to parse tool call arguments as JSON") and its grammar, when a reply went past what a tool call allows
 * ("Unexpected empty grammar stack after accepting piece", met in the interop test).
 */
const OUTPUT_FORMAT =
  /does not match the expected [\w .-]{0,40}format|failed to parse tool call|unexpected empty grammar stack/i;

const ANTHROPIC_BILLING_CODES = new Set([
  'contract_spend_limit_reached',
  'enforced_spend_limit_reached',
  'linked_organization_spend_limit_reached',
  'linked_organization_billing_unavailable',
]);

/**
 * Classify an error thrown by either SDK. `isConnectionError` tells the SDK's connection/timeout errors apart
 * (they carry no status).
 */
export function classifyError(err: unknown, isConnectionError: (e: unknown) => boolean): ErrorClass {
  const e = (err ?? {}) as ApiErrorLike;
  const status = typeof e.status === 'number' ? e.status : undefined;
  const { type, code, message } = errorBody(e);
  const detail = [status !== undefined ? `HTTP ${status}` : undefined, type ?? code, message].filter(Boolean).join(' ');

  // Credit / billing exhaustion: OpenAI 429 insufficient_quota (and the older billing_hard_limit_reached);
  // Anthropic 400 "Your credit balance is too low…", 402 / billing_error, and spend-limit error codes.
  if (
    code === 'insufficient_quota' ||
    type === 'insufficient_quota' ||
    code === 'billing_hard_limit_reached' ||
    type === 'billing_error' ||
    status === 402 ||
    (code !== undefined && ANTHROPIC_BILLING_CODES.has(code)) ||
    /credit balance is too low|exceeded your current quota/i.test(message ?? '')
  ) {
    return { kind: 'credit', message: message ?? detail };
  }
  if (status === undefined) {
    if (isConnectionError(err))
      return {
        kind: 'retryable',
        status,
        detail: detail || String(e.name ?? 'connection error'),
        retryAfterMs: undefined,
      };
    return { kind: 'fatal', status, detail: detail || String(err) };
  }
  if (status === 401 || status === 403) return { kind: 'auth', status, detail };
  if (status >= 500 && OUTPUT_FORMAT.test(message ?? '')) return { kind: 'output', status, detail };
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    return { kind: 'retryable', status, detail, retryAfterMs: retryAfterMs(e.headers) };
  }
  return { kind: 'fatal', status, detail };
}

/** setTimeout, cut short by `signal`: a cancelled call must not keep the process alive through its backoff. */
function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface RetryContext {
  provider: ProviderName;
  model: string;
  isConnectionError: (e: unknown) => boolean;
  /** Once aborted, no further attempt is made: the last error is thrown as it is. */
  signal?: AbortSignal;
}

/** Run `attempt` under the policy; returns its value and how many attempts it took. */
export async function withRetries<T>(
  ctx: RetryContext,
  options: RetryOptions,
  attempt: (n: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const base = options.baseDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 120_000;
  const sleep = options.sleep ?? ((ms: number) => defaultSleep(ms, ctx.signal));
  const random = options.random ?? Math.random;
  let last: Extract<ErrorClass, { kind: 'retryable' }> | undefined;
  let lastError: unknown;
  for (let n = 1; n <= maxAttempts; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (err) {
      if (ctx.signal?.aborted) throw err;
      const c = classifyError(err, ctx.isConnectionError);
      if (c.kind === 'credit') {
        throw new CreditExhaustedError(
          `${ctx.provider} (${ctx.model}): out of credit or billing disabled: ${c.message}`,
          ctx.provider,
        );
      }
      if (c.kind === 'auth') {
        throw new ProviderAuthError(
          `${ctx.provider} rejected the credentials for model ${ctx.model} (${c.detail}); check the API key secret`,
          { cause: err },
        );
      }
      if (c.kind === 'output') {
        throw new OutputFormatError(`${ctx.provider} (${ctx.model}) could not parse the model's reply: ${c.detail}`);
      }
      if (c.kind === 'fatal') {
        if (err instanceof HydraflowError) throw err;
        throw new ProviderRequestError(`${ctx.provider} (${ctx.model}) rejected the request: ${c.detail}`, {
          cause: err,
        });
      }
      last = c;
      lastError = err;
      if (n === maxAttempts) break;
      const backoff = Math.min(maxDelay, base * 2 ** (n - 1)) * (0.5 + random() * 0.5);
      const delay = c.retryAfterMs !== undefined ? Math.min(c.retryAfterMs, maxRetryAfter) : backoff;
      await sleep(Math.round(delay));
      if (ctx.signal?.aborted) throw lastError;
    }
  }
  throw new ProviderUnavailableError(
    `${ctx.provider} model ${ctx.model} unavailable after ${maxAttempts} attempts; last error: ${last?.status !== undefined ? `status ${last.status}` : 'no response'} (${last?.detail ?? 'unknown'})`,
    { cause: lastError },
  );
}
