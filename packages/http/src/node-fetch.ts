/**
 * `fetch` over node:http and node:https, for the GitHub client (Octokit) and the model SDKs.
 *
 * Why not Node's own fetch: every HydraFlow step is a fresh process that makes 1 to 21 requests, and undici, behind
 * Node's fetch, costs ~20 ms to load and ~2.5 ms of CPU a request (the WHATWG machinery: webidl, streams, the wasm
 * parser). That was a tenth of the pipeline's own time (bench: lifecycle_overhead_ratio). Plain node:http with a
 * keep-alive agent does the same request for ~1 ms.
 *
 * What it keeps of fetch, because the clients rely on it:
 * - the Response surface they read: status, statusText, ok, url, redirected, headers (get, has, iteration sorted by
 *   name, getSetCookie), text (BOM stripped), json, arrayBuffer, bytes, blob, body (a ReadableStream), bodyUsed, clone;
 *   no body for HEAD and for 204/205/304;
 * - redirects followed as fetch follows them (at most 20; 303, and 301/302 after a POST, become a GET without body;
 *   `authorization` is dropped when the redirect leaves the origin); `redirect: 'manual' | 'error'` honoured;
 * - gzip, deflate and br bodies decoded (none is asked for: no accept-encoding is sent);
 * - an AbortSignal rejects with the signal's reason and closes the connection (a cancelled model call stops billing);
 * - network failures reject with `TypeError('fetch failed', { cause })`, as undici does, so the SDKs' and Octokit's
 *   error handling sees what it expects; a connection idle for 300 s fails like undici's body/headers timeout.
 *
 * What it does not do, and hands to the global fetch instead (so nothing regresses): a `Request` object as input, a
 * streamed or form body, and a process told to use the environment's proxy (`NODE_USE_ENV_PROXY`, Node ≥ 24), which
 * Node's fetch honours. Differences left on purpose: the promise settles once the whole body is read (the clients read
 * every body whole; nothing here streams), and a body read through `body` does not set `bodyUsed`.
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { FetchHeaders } from './headers';

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** undici's default headersTimeout and bodyTimeout. */
const IDLE_TIMEOUT_MS = 300_000;
/** Methods fetch normalizes to upper case (PATCH is not one of them: callers send it upper case). */
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];

type Protocol = 'http:' | 'https:';

/** node:https (and with it TLS) and node:zlib are loaded only when a run needs them: tests and most bodies do not. */
const agents = new Map<Protocol, HttpAgent>();
function transport(protocol: Protocol): {
  agent: HttpAgent;
  request: (url: URL, options: RequestOptions, callback: (res: IncomingMessage) => void) => ClientRequest;
} {
  const mod = protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
  let agent = agents.get(protocol);
  if (!agent) {
    agent = new mod.Agent({ keepAlive: true });
    agents.set(protocol, agent);
  }
  return { agent, request: mod.request };
}

/** Response headers as fetch exposes them: names lower-cased, repeated headers joined with ", ", immutable. */
export class ResponseHeaders extends FetchHeaders {
  constructor(rawHeaders: readonly string[]) {
    super();
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toLowerCase();
      const list = this.byName.get(name);
      if (list) list.push(rawHeaders[i + 1]!);
      else this.byName.set(name, [rawHeaders[i + 1]!]);
    }
  }

  override set(): never {
    throw new TypeError('immutable');
  }

  override append(): never {
    throw new TypeError('immutable');
  }

  override delete(): never {
    throw new TypeError('immutable');
  }
}

const EMPTY = Buffer.alloc(0);

/** The part of fetch's Response that Octokit and the OpenAI and Anthropic SDKs use (see the file comment). */
export class BufferedResponse {
  readonly type = 'basic';
  bodyUsed = false;
  private stream: ReadableStream<Uint8Array> | null | undefined;

  constructor(
    private readonly content: Buffer | null,
    readonly status: number,
    readonly statusText: string,
    readonly headers: ResponseHeaders,
    readonly url: string,
    readonly redirected: boolean,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.stream === undefined) this.stream = this.content ? new Blob([this.content]).stream() : null;
    return this.stream;
  }

  private consume(): Buffer {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.bodyUsed = true;
    return this.content ?? EMPTY;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(this.consume()); // strips a UTF-8 BOM, as fetch does
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.consume();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(this.consume());
  }

  async blob(): Promise<Blob> {
    return new Blob([this.consume()], { type: this.headers.get('content-type') ?? '' });
  }

  clone(): BufferedResponse {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    return new BufferedResponse(this.content, this.status, this.statusText, this.headers, this.url, this.redirected);
  }
}

interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  const pairs: Iterable<readonly [string, string]> =
    Symbol.iterator in Object(init)
      ? (init as Iterable<readonly [string, string]>)
      : Object.entries(init as Record<string, string>);
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    const text = String(value).trim();
    out[key] = key in out ? `${out[key]}, ${text}` : text;
  }
  return out;
}

/** The body as bytes, with the content-type fetch gives it; undefined for a kind this fetch leaves to the global one. */
function bodyBytes(body: unknown): { bytes: Buffer; type?: string } | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams) {
    return { bytes: Buffer.from(body.toString(), 'utf8'), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  }
  if (body instanceof ArrayBuffer) return { bytes: Buffer.from(body) };
  if (ArrayBuffer.isView(body)) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  return undefined;
}

function usesEnvProxy(): boolean {
  const flag = '--use-env-proxy';
  return (
    Boolean(process.env.NODE_USE_ENV_PROXY && process.env.NODE_USE_ENV_PROXY !== '0') ||
    process.execArgv.includes(flag) ||
    (process.env.NODE_OPTIONS ?? '').includes(flag)
  );
}

function decode(bytes: Buffer, encoding: string | null): Buffer {
  if (!encoding || bytes.length === 0) return bytes;
  const zlib = process.getBuiltinModule('node:zlib');
  let out = bytes;
  // Codings are listed in the order they were applied: undo them from the last.
  for (const coding of encoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip')
      out = zlib.gunzipSync(out, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    else if (coding === 'deflate') out = zlib.inflateSync(out);
    else if (coding === 'br') out = zlib.brotliDecompressSync(out);
    else if (coding !== 'identity') return bytes; // unknown coding: fetch hands the bytes over as they came
  }
  return out;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** One request/response exchange; `retried` is set on the one retry of a request a reused keep-alive socket lost. */
function exchange(
  out: Outgoing,
  signal: AbortSignal | undefined,
  retried = false,
): Promise<IncomingMessage & { bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const protocol = out.url.protocol as Protocol;
    const { agent, request } = transport(protocol);
    let responded = false;
    const onAbort = () => req.destroy(Object.assign(new Error('aborted'), { aborted: true }));
    const done = () => signal?.removeEventListener('abort', onAbort);
    const req = request(out.url, { method: out.method, headers: out.headers, agent }, (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        done();
        resolve(Object.assign(res, { bytes: Buffer.concat(chunks) }));
      });
      res.on('error', (error) => {
        done();
        reject(signal?.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: error }));
      });
    });
    req.setTimeout(IDLE_TIMEOUT_MS, () =>
      req.destroy(new Error(`request timed out: no data for ${IDLE_TIMEOUT_MS / 1000} s`)),
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      done();
      if (signal?.aborted) return reject(abortReason(signal));
      // A kept-alive connection the server closed as the request went out (it closes idle ones): sent again once on a
      // new connection, as Node's http documentation advises, but only if repeating it is harmless. A POST or PATCH
      // fails as it would with undici, and its caller decides (the GitHub client's UncertainWriteError).
      if (!responded && !retried && req.reusedSocket && error.code === 'ECONNRESET' && IDEMPOTENT.has(out.method)) {
        exchange(out, signal, true).then(resolve, reject);
        return;
      }
      reject(new TypeError('fetch failed', { cause: error }));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end(out.body);
  });
}

/**
 * fetch(input, init) for string or URL input, as described in the file comment; anything else goes to the global fetch.
 * Typed as fetch so it drops into Octokit's `request.fetch` and the SDKs' `fetch` option.
 */
export const nodeFetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
  const body = bodyBytes(init.body);
  const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? new URL(input.href) : undefined;
  if (!url || body === undefined || usesEnvProxy() || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return globalThis.fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortReason(signal);

  const upper = (init.method ?? 'GET').toUpperCase();
  let method = NORMALIZED_METHODS.has(upper) ? upper : (init.method ?? 'GET');
  const headers = headerRecord(init.headers);
  if (body?.type && !('content-type' in headers)) headers['content-type'] = body.type;
  let bytes = body?.bytes;
  const redirect = init.redirect ?? 'follow';
  let current = url;
  for (let redirects = 0; ; redirects++) {
    if (bytes) headers['content-length'] = String(bytes.length);
    else if (method === 'POST' || method === 'PUT') headers['content-length'] = '0';
    else delete headers['content-length'];
    const res = await exchange({ url: current, method, headers, body: bytes }, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECT_STATUS.has(status) && location && redirect !== 'manual') {
      if (redirect === 'error')
        throw new TypeError('fetch failed', { cause: new Error(`unexpected redirect to ${location}`) });
      if (redirects >= MAX_REDIRECTS)
        throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new TypeError('fetch failed', { cause: new Error(`redirect to a ${next.protocol} URL`) });
      }
      if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        bytes = undefined;
        for (const name of BODY_HEADERS) delete headers[name];
      }
      if (next.origin !== current.origin) {
        delete headers.authorization;
        delete headers['proxy-authorization'];
        delete headers.cookie;
      }
      current = next;
      continue;
    }
    const responseHeaders = new ResponseHeaders(res.rawHeaders);
    const hasBody = method !== 'HEAD' && !NULL_BODY_STATUS.has(status);
    return new BufferedResponse(
      hasBody ? decode(res.bytes, responseHeaders.get('content-encoding')) : null,
      status,
      res.statusMessage ?? '',
      responseHeaders,
      current.href,
      redirects > 0,
    ) as unknown as Response;
  }
}) as typeof fetch;
