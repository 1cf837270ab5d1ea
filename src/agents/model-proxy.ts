/**
 * The model key's keeper in the agent job (ADR 0001, "The model key"). The agent job runs repository code — the agent's
 * `test` command, and on a refine round the setup steps too — as the runner's user, and any process of that user can
 * read every other one's environment from /proc. So the key must not be in the environment of any process alive once
 * that code may run. `actions/model-proxy`, the job's first step, starts this proxy before the checkout: the step's
 * process hands the key to a detached process through a pipe (never its environment or arguments) and exits; the agent
 * step then talks to the proxy on 127.0.0.1 with a random per-run token in place of the key. The proxy forwards only
 * the provider's model calls (POST to the messages or chat completions endpoint) to the configured upstream,
 * swapping the token for the key, and stops when the agent step is done with it or its time is up.
 *
 * The agent step's environment holds the proxy's token, so the code its commands run can call the model through the
 * proxy too: the proxy bounds and counts what the whole job spends, and signs its count for the publish job
 * (src/agents/proxy-meter.ts, docs/adr/0022-the-model-proxy-meters-the-agent.md).
 *
 * What this does not stop: a process of the same user reading the proxy's memory, which needs ptrace rights that the
 * Linux Yama policy of GitHub's Ubuntu runners (ptrace_scope 1) grants only over one's own descendants — or root, which
 * the job's user of GitHub's hosted runners can become (sudo, Docker): open, see docs/adr/0001-agent-job.md.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { join } from 'node:path';
import { createServer as createNetServer } from 'node:net';
import type { ProviderName } from '@hydraflow/providers';
import {
  meterKeyPair,
  parseProxyLimits,
  ProxyMeter,
  PROXY_LIMITS_FILE,
  signMeter,
  type ProxyLimits,
  type SignedMeter,
} from './proxy-meter';

/** What the launcher hands the proxy on its standard input. */
export interface ProxySpec {
  provider: ProviderName;
  key: string;
  /** The provider's base URL, e.g. https://api.anthropic.com or https://api.openai.com/v1. */
  upstream: string;
  token: string;
  /** The proxy exits after this long, whatever happens. */
  ttlMs: number;
  /** The port on 127.0.0.1 to listen on (chosen by the launcher, so it need not wait for the proxy to start). */
  port: number;
  /** The agent's first model call, sent as soon as the proxy starts (see FirstTurn). */
  firstTurn?: FirstTurn | undefined;
  /** What the agent job may call and spend (without them: any model call, counted all the same). */
  limits?: ProxyLimits | undefined;
  /** The key the proxy signs its count with (PKCS#8, base64): made by the launcher, never on disk. */
  signingKey: string;
}

/**
 * The agent's first model call as the routing job built it from the task (src/agents/first-turn.ts): the request the
 * agent step's SDK sends through this proxy, key aside. The proxy sends it upstream as soon as it starts, while the
 * checkout and the setup steps run, and answers the agent's identical request with its answer (docs/adr/0021).
 */
export interface FirstTurn {
  /** The proxy's path the SDK posts to, e.g. /v1/messages or /chat/completions. */
  path: string;
  /** The SDK's headers, without the key and per-connection ones. */
  headers: Record<string, string>;
  body: string;
}

/** Where the first turn is in the task hand-off (written by the routing job, downloaded by actions/model-proxy). */
export const FIRST_TURN_FILE = 'first-turn.json';

/** The directory actions/model-proxy downloads the task artifact to (its own, apart from the agent step's). */
export const PROXY_TASK_DIR = 'hydraflow-model-proxy';

/** Where the agent step finds the proxy: the output `proxy` of actions/model-proxy, its input `model-proxy`. */
export interface ProxyHandle {
  url: string;
  token: string;
}

export const DEFAULT_UPSTREAM: Record<ProviderName, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  'openai-compatible': '',
};

/** The argument that makes the bundle's entry serve a proxy instead of running a phase (src/main.ts). */
export const SERVE_ARG = 'serve-model-proxy';

/**
 * Model calls only: what the agent's provider sends for a turn (Messages, Chat Completions), nothing that lists, uploads
 * or administers, and no endpoint whose answers the meter cannot read.
 */
const MODEL_CALL = /^\/(?:v1\/)?(?:messages|chat\/completions)$/;

/** A free port on 127.0.0.1, as the system hands one out. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Starts the proxy as a detached process of `entry` (the bundle) with a minimal environment and hands it the key on
 * its standard input. It resolves once the process runs, not once it listens: the agent step that calls it comes after
 * the checkout and the setup steps, and its model client retries a refused connection anyway. `meterKey` is the
 * public half of the key the proxy signs its count with (the step's output meter-key, for the publish job).
 */
export async function launchModelProxy(
  entry: string,
  spec: Omit<ProxySpec, 'token' | 'port' | 'signingKey'>,
): Promise<ProxyHandle & { meterKey: string }> {
  const token = randomBytes(32).toString('hex');
  const { privateKey, publicKey } = meterKeyPair();
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' };
  // the runner's orphan clean-up finds a job's processes by this variable: the proxy must be among them
  if (process.env.RUNNER_TRACKING_ID) env.RUNNER_TRACKING_ID = process.env.RUNNER_TRACKING_ID;
  const child = spawn(process.execPath, [entry, SERVE_ARG], {
    env,
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', resolve);
  });
  child.stdin.end(JSON.stringify({ ...spec, token, port, signingKey: privateKey } satisfies ProxySpec));
  child.unref();
  return { url: `http://127.0.0.1:${port}`, token, meterKey: publicKey };
}

/** The step's inputs (action.yml of actions/model-proxy), as the runner passes them. */
const input = (env: NodeJS.ProcessEnv, name: string) => (env[`INPUT_${name.toUpperCase()}`] ?? '').trim();

/**
 * actions/model-proxy, the agent job's first step: starts the proxy and sets the output `proxy`. It reads its inputs
 * without the config machinery (this step is on the agent job's critical path): the provider, base URL and time limit
 * from its own inputs, else the routing job's resolved configuration (input run-config). Returns an error to report,
 * or the handle.
 */
export async function startProxyStep(
  env: NodeJS.ProcessEnv,
  entry: string,
): Promise<(ProxyHandle & { meterKey: string }) | string> {
  let handed: { provider?: unknown; base_url?: unknown; implement?: { max_minutes?: unknown } } = {};
  const runConfig = input(env, 'run-config');
  if (runConfig) {
    try {
      handed = (JSON.parse(runConfig) as { config?: typeof handed }).config ?? {};
    } catch {
      return 'input run-config: expected the run-config output of the routing job (JSON), got other text';
    }
  }
  const keys = { anthropic: input(env, 'anthropic-api-key'), openai: input(env, 'openai-api-key') };
  const provider = input(env, 'provider') || String(handed.provider ?? '') || (keys.anthropic ? 'anthropic' : 'openai');
  if (provider !== 'anthropic' && provider !== 'openai' && provider !== 'openai-compatible')
    return `input provider: expected anthropic, openai or openai-compatible, got "${provider}"`;
  const key = provider === 'anthropic' ? keys.anthropic : keys.openai;
  if (!key) return `No API key for provider '${provider}': set the model API key secret`;
  const upstream = input(env, 'base-url') || String(handed.base_url ?? '') || DEFAULT_UPSTREAM[provider];
  if (!/^https?:\/\/[^\s]+$/.test(upstream))
    return `Provider '${provider}' needs a base URL (http or https), got "${upstream}"`;
  const minutes = Number(handed.implement?.max_minutes) || 20;
  const task = env.RUNNER_TEMP ? join(env.RUNNER_TEMP, PROXY_TASK_DIR) : undefined;
  const firstTurn = task && readHanded(join(task, FIRST_TURN_FILE), 'the first turn', 8_000_000, parseFirstTurn);
  if (typeof firstTurn === 'string') return firstTurn;
  const limits = task && readHanded(join(task, PROXY_LIMITS_FILE), 'the limits', 100_000, parseProxyLimits);
  if (typeof limits === 'string') return limits;
  // the agent's time, its final test run and a margin: the proxy never outlives its job by much
  return launchModelProxy(entry, { provider, key, upstream, ttlMs: (minutes + 15) * 60_000, firstTurn, limits });
}

/**
 * A file of the step's task download (input task-artifact-id given, and a routing job that wrote it): undefined when
 * it is not there, an error to report when it is not `what` the routing job writes, else what `parse` made of it.
 */
function readHanded<T>(path: string, what: string, maxBytes: number, parse: (text: string) => T | string) {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) return undefined;
  const read =
    stats.isFile() && stats.size <= maxBytes ? parse(readFileSync(path, 'utf8')) : 'not a small regular file';
  return typeof read === 'string'
    ? `${path}: expected ${what} the routing job hands on in its task artifact (${read})`
    : read;
}

/** The first turn as the routing job wrote it (src/agents/first-turn.ts); an error naming what is wrong otherwise. */
function parseFirstTurn(text: string): FirstTurn | string {
  try {
    const turn = JSON.parse(text) as FirstTurn;
    const headersOk =
      typeof turn.headers === 'object' &&
      turn.headers !== null &&
      Object.values(turn.headers).every((v) => typeof v === 'string');
    return MODEL_CALL.test(turn.path) && headersOk && typeof turn.body === 'string' ? turn : 'not a model call';
  } catch {
    return 'not JSON';
  }
}

function sameToken(given: string | undefined, token: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token the SDK sent in place of the key: Anthropic's x-api-key, or OpenAI's bearer. */
function presentedToken(req: IncomingMessage): string | undefined {
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey;
  return /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

function deny(res: ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'hydraflow_model_proxy', message } }));
}

/** An upstream answer, read whole: the first turn's, kept until the agent asks for it. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The first turn on its way: its request, its answer (undefined: it could not be sent), whether the agent took it. */
interface FirstTurnCall {
  turn: FirstTurn;
  /** The request's body, compared with the agent's. */
  body: Buffer;
  answer: Promise<Answer | undefined>;
  claimed: boolean;
}

/**
 * What the proxy tells the agent step when it stops: whether the agent took the first turn it sent, and that turn's
 * answer if not (it was billed all the same).
 */
export interface ProxyLeftovers {
  firstTurn?: 'taken' | 'not taken';
  unclaimed?: { status: number; body: string };
  /** The proxy's signed count of what the agent job spent (absent: the proxy was given no limits). */
  meter?: SignedMeter;
}

/** Headers that describe one connection or one message's framing, never copied from an answer that is replayed. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'content-length'];

/** Sends a model call upstream with the key in place of the token; `answer` gets the response as it comes. */
function sendUpstream(
  spec: ProxySpec,
  url: string,
  given: IncomingHttpHeaders | Record<string, string>,
  answer: (response: IncomingMessage) => void,
) {
  const upstream = new URL(spec.upstream.replace(/\/+$/, ''));
  const headers: Record<string, string | string[] | undefined> = { ...given, host: upstream.host };
  delete headers.authorization;
  delete headers['x-api-key'];
  if (spec.provider === 'anthropic') headers['x-api-key'] = spec.key;
  else headers.authorization = `Bearer ${spec.key}`;
  const target = new URL(`${upstream.pathname === '/' ? '' : upstream.pathname}${url}`, upstream);
  // node:https (and TLS with it) only in the proxy that needs it: the launcher, on the job's critical path, loads none
  const send = target.protocol === 'https:' ? process.getBuiltinModule('node:https').request : httpRequest;
  return send(target, { method: 'POST', headers }, answer);
}

/** The SDKs' own limit on one attempt (packages/providers: timeoutMs). */
const FIRST_TURN_TIMEOUT_MS = 120_000;

/** Sends the first turn now and reads its answer whole. */
function beginFirstTurn(spec: ProxySpec, turn: FirstTurn): FirstTurnCall {
  const body = Buffer.from(turn.body);
  const answer = new Promise<Answer | undefined>((resolve) => {
    const headers = { ...turn.headers, 'content-length': String(body.length) };
    const out = sendUpstream(spec, turn.path, headers, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', () => resolve(undefined));
      response.on('close', () => {
        if (!response.complete) resolve(undefined); // cut off before its end
      });
    });
    out.on('error', () => resolve(undefined));
    // as long as the SDK waits for an attempt: an answer that never comes makes the agent's own request go upstream
    out.setTimeout(FIRST_TURN_TIMEOUT_MS, () => out.destroy(new Error('no answer in time')));
    out.end(body);
  });
  return { turn, body, answer, claimed: false };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The proxy's request handler: checks the token and the endpoint, then forwards with the key, one call at a time. */
export function proxyHandler(spec: ProxySpec, onShutdown: () => void, first?: FirstTurnCall) {
  const meter = spec.limits ? new ProxyMeter(spec.limits) : undefined;
  // One call upstream at a time, the first turn first: the meter admits each against everything billed before it.
  let queue: Promise<unknown> = first
    ? first.answer.then((answer) => answer && meter?.account(answer.status, answer.body, first.body))
    : Promise.resolve();
  let stopping = false;
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const call = () =>
      new Promise<void>((done) => {
        // a request this job may not make: the SDK reports a 400 as a request it must not retry
        const refused = meter?.admit(body, req.headers);
        if (refused) return done(deny(res, 400, refused));
        const out = sendUpstream(spec, req.url ?? '', req.headers, (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => done(meter?.account(answer.statusCode ?? 502, Buffer.concat(chunks), body)));
          answer.on('close', () => done()); // cut off: what it billed is unknown, and no answer reached the caller
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        out.on('error', (error) => {
          if (res.headersSent) res.destroy();
          else deny(res, 502, `the model provider could not be reached: ${error.message}`);
          done();
        });
        res.on('close', () => {
          if (!res.writableFinished) out.destroy(); // the caller gave up: so does the call
        });
        out.end(body);
      });
    queue = queue.then(call, call);
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!sameToken(presentedToken(req), spec.token)) return deny(res, 401, 'not the token this proxy was started with');
    if (stopping) return deny(res, 503, 'the model proxy is stopping: the coding agent is done with the model');
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'POST' && path === '/shutdown') {
      stopping = true;
      // every call already accepted is answered and counted before the count is signed
      void Promise.all([queue, leftovers(first)]).then(([, left]) => {
        const signed = meter ? { meter: signMeter(meter.report(), spec.signingKey) } : {};
        const text = JSON.stringify({ ...left, ...signed } satisfies ProxyLeftovers);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text, onShutdown);
      });
      return;
    }
    if (req.method !== 'POST' || !MODEL_CALL.test(path))
      return deny(res, 403, `only model calls are forwarded, not ${req.method} ${path}`);
    void readBody(req).then(
      async (body) => {
        // Maybe the first turn: answered with the first turn's answer when it is that very request (byte for byte);
        // anything else goes upstream like any call.
        if (!first || first.claimed || req.url !== first.turn.path || !body.equals(first.body))
          return forward(req, res, body);
        first.claimed = true;
        const answer = await first.answer;
        if (!answer) return forward(req, res, body); // it could not be sent: send the agent's own
        const headers = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.includes(k)));
        res.writeHead(answer.status, { ...headers, 'content-length': answer.body.length });
        res.end(answer.body);
      },
      () => res.destroy(),
    );
  };
}

/** The first turn's answer when the agent never took it (its request differed): it was billed all the same. */
async function leftovers(first: FirstTurnCall | undefined): Promise<ProxyLeftovers> {
  if (!first) return {};
  if (first.claimed) return { firstTurn: 'taken' };
  // an answer still on its way is waited for (within the agent step's stop timeout): the step ledgers it
  const answer = await first.answer;
  return {
    firstTurn: 'not taken',
    ...(answer ? { unclaimed: { status: answer.status, body: answer.body.toString('utf8') } } : {}),
  };
}

/** The detached process: reads its spec from standard input, listens on 127.0.0.1 at the port it was given. */
export async function serveModelProxy(): Promise<void> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  const spec = JSON.parse(text) as ProxySpec;
  const first = spec.firstTurn ? beginFirstTurn(spec, spec.firstTurn) : undefined;
  const server = createServer(proxyHandler(spec, () => process.exit(0), first));
  server.keepAliveTimeout = 5_000;
  const lifetime = setTimeout(() => process.exit(0), spec.ttlMs);
  lifetime.unref();
  server.listen(spec.port, '127.0.0.1');
}

/**
 * Asks the proxy to stop (the agent step is done with it) and returns what it left: the first turn's answer if the
 * agent never took it. A proxy already gone, or one that does not answer within `timeoutMs` (it first waits for the
 * call in flight), left nothing.
 */
export async function stopModelProxy(handle: ProxyHandle, timeoutMs = 10_000): Promise<ProxyLeftovers> {
  return new Promise<ProxyLeftovers>((resolve) => {
    const req = httpRequest(`${handle.url}/shutdown`, {
      method: 'POST',
      headers: { authorization: `Bearer ${handle.token}` },
      timeout: timeoutMs,
    });
    req.on('response', (res) => {
      readBody(res).then(
        (body) => resolve(parseLeftovers(body.toString('utf8'))),
        () => resolve({}),
      );
    });
    req.on('error', () => resolve({}));
    req.on('timeout', () => {
      req.destroy();
      resolve({});
    });
    req.end();
  });
}

function parseLeftovers(text: string): ProxyLeftovers {
  try {
    const left = JSON.parse(text) as ProxyLeftovers;
    const u = left.unclaimed;
    const m = left.meter;
    return {
      ...(left.firstTurn === 'taken' || left.firstTurn === 'not taken' ? { firstTurn: left.firstTurn } : {}),
      ...(u && typeof u.status === 'number' && typeof u.body === 'string' ? { unclaimed: u } : {}),
      ...(m && typeof m.report === 'string' && typeof m.signature === 'string'
        ? { meter: { report: m.report, signature: m.signature } }
        : {}),
    };
  } catch {
    return {};
  }
}
