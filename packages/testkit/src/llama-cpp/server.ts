/**
 * Running llama.cpp's `llama-server` for the interop test, and what stands between it and HydraFlow: a proxy on the
 * OpenAI wire that records every call (role, status, time, answer) and sends each role to the server of its choice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { parseRoleAndIssue } from '../models/script';
import { CONTEXT_LENGTH } from './model';

export interface LlamaServer {
  /** http://127.0.0.1:<port> (the OpenAI wire is under /v1). */
  url: string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `binary` serving `model` on a free port and waits until it answers /health. The server's log goes to
 * `logFile`. Its context is the model's whole context by default.
 */
export async function startLlamaServer(options: {
  binary: string;
  model: string;
  logFile: string;
  contextSize?: number;
}): Promise<LlamaServer> {
  const port = await freePort();
  const log = createWriteStream(options.logFile);
  const child: ChildProcess = spawn(
    options.binary,
    [
      '-m',
      options.model,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '-c',
      String(options.contextSize ?? CONTEXT_LENGTH),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`llama-server exited (${code}); see ${options.logFile}`))),
  );
  exited.catch(() => undefined);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const healthy = await Promise.race([
      fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ),
      exited,
    ]);
    if (healthy) break;
    if (Date.now() > deadline) throw new Error(`llama-server did not get healthy in 60 s; see ${options.logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface ProxiedCall {
  role: string | undefined;
  status: number;
  ms: number;
  /** `json_schema`, `json_object`, `tools` or `text`: how the request asked for its answer. */
  mode: string;
  /** The answer's message content or tool calls (200), or the error body. */
  answer: string;
}

export interface RoutingProxy {
  /** The OpenAI base URL to give HydraFlow. */
  baseUrl: string;
  calls: ProxiedCall[];
  close(): Promise<void>;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** What a call's answer was, in a line: content, tool calls, or the error. */
function answerOf(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as {
      choices?: { message?: { content?: string | null; tool_calls?: { function?: unknown }[] } }[];
    };
    const message = parsed.choices?.[0]?.message;
    if (status === 200 && message)
      return message.tool_calls?.length
        ? JSON.stringify(message.tool_calls.map((c) => c.function))
        : (message.content ?? '');
  } catch {
    // not JSON: shown as it is
  }
  return body;
}

/**
 * A proxy in front of llama-server(s): each call goes to `route(role)` (a server's URL) and is recorded. The role is
 * read as the scripted model server reads it (`HydraFlow <role> agent` at the start of the system prompt or the first
 * user message).
 */
export async function startRoutingProxy(route: (role: string | undefined) => string): Promise<RoutingProxy> {
  const calls: ProxiedCall[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const started = Date.now();
      const body = await readBody(req);
      let role: string | undefined;
      let mode = 'text';
      try {
        const json = JSON.parse(body.toString('utf8')) as {
          messages?: { role?: string; content?: unknown }[];
          response_format?: { type?: string };
          tools?: unknown[];
        };
        const text = (m: { content?: unknown } | undefined) => (typeof m?.content === 'string' ? m.content : '');
        const system = json.messages?.find((m) => m.role === 'system');
        const user = json.messages?.find((m) => m.role === 'user');
        role = parseRoleAndIssue(text(system), text(user)).role;
        mode = json.tools?.length ? 'tools' : (json.response_format?.type ?? 'text');
      } catch {
        // forwarded as it is
      }
      const upstream = new URL(req.url ?? '/', route(role));
      const forward = httpRequest(
        upstream,
        { method: req.method, headers: { ...req.headers, host: upstream.host, 'content-length': body.length } },
        (answer) => {
          void readBody(answer).then((payload) => {
            const status = answer.statusCode ?? 502;
            calls.push({ role, status, ms: Date.now() - started, mode, answer: answerOf(status, payload.toString()) });
            res.writeHead(status, answer.headers);
            res.end(payload);
          });
        },
      );
      forward.on('error', (error) => {
        calls.push({ role, status: 502, ms: Date.now() - started, mode, answer: String(error) });
        res.writeHead(502).end();
      });
      forward.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
