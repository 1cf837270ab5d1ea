/**
 * A stateful GitHub REST and GraphQL emulator on 127.0.0.1 that the real Octokit talks to unchanged (baseUrl /
 * GITHUB_API_URL). Plain node:http. REST requests and responses are checked against GitHub's OpenAPI description,
 * GraphQL documents against GitHub's GraphQL schema (graphql.ts); anything that does not conform is answered the way
 * GitHub would and recorded in `violations`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Faults, WRITE_METHODS } from './faults';
import { fillRequired, formatAjvErrors, getValidators, matchSpecOperation, responseSchema } from './openapi';
import { DOCS, HttpError, matchRoute, type RouteResult } from './routes';
import {
  BOT_ID,
  BOT_LOGIN,
  GitHubWorld,
  type EmulatedEvent,
  type EmulatedUser,
  type Permission,
  type TokenKind,
} from './world';
import { GitRepo } from './git';
import { prepareGraphql, runGraphql, type PreparedGraphql } from './graphql';

export interface GitHubEmulatorOptions {
  owner: string;
  repo: string;
  defaultBranch?: string;
  /** validate requests and responses against GitHub's OpenAPI description (default true) */
  validate?: boolean;
  /** injectable clock (ms since epoch), default Date.now */
  clock?: () => number;
  /** primary rate limit per token per hour (default 1000, like GITHUB_TOKEN) */
  rateLimit?: number;
  /**
   * Back the repository's git data (refs, pull request files, mergeability, merges) with a real bare repository.
   * The default branch is the bare repository's HEAD unless `defaultBranch` says otherwise.
   */
  git?: { bareRepo: string };
}

export interface RequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  actor: string | null;
  operationId: string | null;
  at: number;
  /** Time the emulator spent serving it (arrival → response sent), ms: the test world's share of a round trip. */
  servedMs?: number;
  body?: unknown;
}

export interface Violation {
  kind: 'request' | 'response' | 'unknown-route' | 'not-emulated';
  method: string;
  path: string;
  operationId: string | null;
  status?: number;
  errors: string[];
}

export interface GitHubEmulator {
  readonly url: string;
  readonly world: GitHubWorld;
  readonly requests: RequestLogEntry[];
  readonly violations: Violation[];
  readonly faults: Faults;
  readonly botToken: string;
  /** The bare repository behind git data, when `git` was given. */
  readonly git: GitRepo | undefined;
  /** Every state change a webhook would report, in order (see EmulatedEvent). */
  readonly events: EmulatedEvent[];
  /**
   * A user and their permission on the repository. `association`: the author_association GitHub shows for them when
   * it is not what the permission implies (an organization MEMBER with no access to the repository, say).
   */
  addUser(u: { login: string; type?: 'User' | 'Bot'; permission: Permission; association?: string }): {
    login: string;
    id: number;
    token: string;
  };
  /** A GitHub App (or PAT) identity: changes made with its token DO start workflows (viaToken 'app'). */
  addApp(u: { login: string; permission?: Permission }): { login: string; id: number; token: string };
  /** Called synchronously for each event as it happens (to snapshot payloads). Returns an unsubscribe function. */
  onEvent(listener: (e: EmulatedEvent) => void): () => void;
  /** Record an event that happened outside the REST API (a test's "user opened an issue", a check run from CI). */
  emitEvent(e: Omit<EmulatedEvent, 'seq' | 'at' | 'viaToken'> & { viaToken?: TokenKind; at?: number }): EmulatedEvent;
  /**
   * Diff branch heads of the bare repository against the last report: emits `push` per moved branch and
   * `pull_request.synchronize` per open pull request whose head moved, as made by `actor`. No-op without git.
   */
  syncGit(pusher: { actor: string; viaToken?: TokenKind }): EmulatedEvent[];
  close(): Promise<void>;
}

type RateResource = 'core' | 'graphql';

interface Bucket {
  resource: RateResource;
  used: number;
  resetAt: number;
  epoch: number;
}

const HOUR = 3_600_000;

export async function startGitHubEmulator(opts: GitHubEmulatorOptions): Promise<GitHubEmulator> {
  const clock = opts.clock ?? Date.now;
  const validate = opts.validate !== false;
  const limit = opts.rateLimit ?? 1000;
  const world = new GitHubWorld({ owner: opts.owner, repo: opts.repo, defaultBranch: opts.defaultBranch, clock });
  world.addUser({ login: opts.owner, type: 'User', permission: 'admin' });
  const bot = world.addUser({ login: BOT_LOGIN, type: 'Bot', permission: 'write', id: BOT_ID });
  if (opts.git) {
    const git = new GitRepo(opts.git.bareRepo);
    world.git = git;
    world.defaultBranch = opts.defaultBranch ?? git.headBranch() ?? world.defaultBranch;
    world.refreshFromGit();
    for (const [ref, sha] of world.refs) if (ref.startsWith('refs/heads/')) world.gitReported.set(ref, sha);
  }
  const requests: RequestLogEntry[] = [];
  const violations: Violation[] = [];
  const faults = new Faults();
  const buckets = new Map<string, Bucket>();
  const writeTimes = new Map<string, number[]>();

  function bucketFor(login: string, resource: RateResource = 'core'): Bucket {
    const now = clock();
    let b = buckets.get(`${resource} ${login}`);
    if (!b || now >= b.resetAt) {
      // first use: any primaryRemaining() override applies; a window that expired starts fresh
      b = { resource, used: 0, resetAt: now + HOUR, epoch: b ? faults.primaryEpoch : -1 };
      buckets.set(`${resource} ${login}`, b);
    }
    if (b.epoch !== faults.primaryEpoch) {
      b.epoch = faults.primaryEpoch;
      b.used = faults.primaryOverride !== undefined ? Math.max(0, limit - faults.primaryOverride) : 0;
    }
    return b;
  }

  function rateHeaders(b: Bucket): Record<string, string> {
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - b.used)),
      'x-ratelimit-used': String(b.used),
      'x-ratelimit-reset': String(Math.floor(b.resetAt / 1000)),
      'x-ratelimit-resource': b.resource,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = (req.method ?? 'GET').toUpperCase();
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = u.pathname.replace(/\/+$/, '') || '/';
    const queryObj = Object.fromEntries(u.searchParams);
    const at = clock();
    const servedFrom = performance.now();
    let actor: EmulatedUser | undefined;
    let operationId: string | null = null;
    let template: string | undefined;
    let parsedBody: unknown;
    let headers: Record<string, string> = {};
    let resource: RateResource = 'core';
    const record = (v: Pick<Violation, 'kind' | 'errors'>, status?: number) =>
      violations.push({ ...v, method, path, operationId, ...(status !== undefined ? { status } : {}) });
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    await faults.runBefore(method, path, raw);

    const result: RouteResult = (() => {
      // -- authentication
      const auth = req.headers.authorization ?? '';
      const m = /^(?:token|bearer)\s+(\S+)$/i.exec(auth);
      const login = m ? world.tokens.get(m[1]!) : undefined;
      actor = login ? world.users.get(login) : undefined;
      if (!actor) return err(401, 'Bad credentials', 'https://docs.github.com/rest');

      if (world.git) world.refreshFromGit();

      // -- routing: POST /graphql (validated against GitHub's GraphQL schema) or a REST route
      let gql: Extract<PreparedGraphql, { ok: true }> | undefined;
      let match: ReturnType<typeof matchRoute>;
      if (method === 'POST' && path === '/graphql') {
        resource = 'graphql';
        try {
          parsedBody = raw.length > 0 ? JSON.parse(raw) : undefined;
        } catch {
          return err(400, 'Problems parsing JSON');
        }
        const prepared = prepareGraphql(parsedBody);
        operationId = prepared.operationId;
        if (!prepared.ok) {
          record(prepared.violation, prepared.result.status);
          return prepared.result;
        }
        gql = prepared;
      } else {
        match = matchRoute(method, path);
        if (!match) {
          const spec = validate ? matchSpecOperation(method, path) : undefined;
          operationId = spec?.operationId ?? null;
          violations.push({
            kind: spec ? 'not-emulated' : 'unknown-route',
            method,
            path,
            operationId,
            status: 404,
            errors: [spec ? `${spec.template} (${spec.operationId}) is not emulated` : 'no such route in the emulator'],
          });
          return err(404, 'Not Found');
        }
        template = match.route.template;
      }

      // -- primary rate limit (GET /rate_limit is free, as on GitHub). GraphQL has its own budget; GitHub charges a
      // query max(1, connection nodes / 100) points, which is 1 for every document HydraFlow sends.
      const bucket = bucketFor(actor.login, resource);
      if (template !== '/rate_limit') {
        if (bucket.used >= limit) {
          headers = rateHeaders(bucket);
          // GraphQL reports an exhausted budget inside a 200, as a RATE_LIMITED error
          if (gql)
            return {
              status: 200,
              body: { errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded for installation.' }] },
            };
          return err(
            403,
            `API rate limit exceeded for installation. If you reach out to GitHub Support for help, please include the request ID.`,
          );
        }
        bucket.used++;
      }
      headers = rateHeaders(bucket);

      // -- injected failures (not performed)
      const failure = faults.takeFailure(method, path);
      if (failure !== undefined) return err(failure, failure >= 500 ? 'Server Error' : 'Injected failure');

      // -- secondary rate limit on content-creating requests (a GraphQL mutation is one)
      const isWrite = gql ? gql.operation === 'mutation' : WRITE_METHODS.includes(method);
      if (isWrite && faults.secondary) {
        const now = clock();
        const times = (writeTimes.get(actor.login) ?? []).filter((t) => t > now - 60_000);
        writeTimes.set(actor.login, times);
        if (times.length >= faults.secondary.writesPerMinute) {
          const retry = Math.max(1, Math.ceil((times[0]! + 60_000 - now) / 1000));
          headers['retry-after'] = String(retry);
          return err(
            403,
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.',
            'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          );
        }
        times.push(now);
      }

      // -- a write that was performed may still be answered with an injected failure
      const afterWrite = (r: RouteResult, performed: boolean): RouteResult => {
        const after = isWrite && performed ? faults.takeAfterWrite(method, path) : undefined;
        return after !== undefined ? err(after, 'Server Error') : r;
      };

      if (gql) {
        const run = runGraphql(world, actor, gql);
        for (const v of run.violations) record(v, run.result.status);
        return afterWrite(run.result, run.performed);
      }
      const route = match!.route; // every request that is not GraphQL was routed above
      const params: Record<string, string> = { ...match!.params };
      const tpl = template!;

      // -- body
      if (raw.length > 0) {
        try {
          parsedBody = JSON.parse(raw);
        } catch {
          return err(400, 'Problems parsing JSON');
        }
      }

      // -- OpenAPI request validation
      if (validate) {
        const v = getValidators(method, tpl);
        if (!v) {
          violations.push({
            kind: 'not-emulated',
            method,
            path,
            operationId: null,
            errors: [`${tpl} is not in the OpenAPI description`],
          });
        } else {
          operationId = v.operationId;
          const data: Record<string, unknown> = {};
          for (const n of v.paramNames.path) if (params[n] !== undefined) data[n] = params[n];
          for (const n of v.paramNames.query) if (queryObj[n] !== undefined) data[n] = queryObj[n];
          if (v.params && !v.params(data)) {
            const errors = formatAjvErrors(v.params.errors, 'params');
            const pathErr = (v.params.errors ?? []).some((e) =>
              v.paramNames.path.some((n) => e.instancePath === `/${n}`),
            );
            violations.push({ kind: 'request', method, path, operationId, status: pathErr ? 404 : 422, errors });
            return pathErr ? err(404, 'Not Found') : validationError(errors, operationId);
          }
          if (parsedBody === undefined && v.bodyRequired) {
            const errors = ['body: request body is required'];
            violations.push({ kind: 'request', method, path, operationId, status: 400, errors });
            return err(400, 'Problems parsing JSON');
          }
          if (parsedBody !== undefined && v.body && !v.body(parsedBody)) {
            const errors = formatAjvErrors(v.body.errors, 'body');
            violations.push({ kind: 'request', method, path, operationId, status: 422, errors });
            return validationError(errors, operationId);
          }
        }
      }

      // -- perform
      try {
        const r = route.handler({
          world,
          actor,
          method,
          path,
          params,
          query: u.searchParams,
          body: parsedBody as Record<string, unknown> | undefined,
          notEmulated: (what) => record({ kind: 'not-emulated', errors: [`${what} is not emulated`] }),
          rejected: (why) => record({ kind: 'request', errors: [why] }, 422),
        });
        if (tpl === '/rate_limit') r.body = rateLimitBody(bucket, bucketFor(actor.login, 'graphql'));
        return afterWrite(r, r.status < 400);
      } catch (e) {
        if (e instanceof HttpError) {
          Object.assign(headers, e.headers);
          return {
            status: e.status,
            body: { message: e.message, documentation_url: docsFor(operationId), ...e.extra, status: String(e.status) },
          };
        }
        return err(500, `Emulator error: ${(e as Error).stack ?? String(e)}`);
      }
    })();

    // -- fill required fields and validate the response against the description
    if (result.body !== undefined && template && result.status < 500) {
      try {
        const schema = responseSchema(method, template, result.status);
        if (schema) result.body = fillRequired(schema, result.body, { apiUrl: world.apiUrl, now: world.now() });
        if (validate) {
          const v = getValidators(method, template);
          const fn = v?.response(result.status);
          if (fn && !fn(result.body)) {
            violations.push({
              kind: 'response',
              method,
              path,
              operationId: v!.operationId,
              status: result.status,
              errors: formatAjvErrors(fn.errors, 'response'),
            });
          }
        }
      } catch (e) {
        violations.push({
          kind: 'response',
          method,
          path,
          operationId,
          status: result.status,
          errors: [`validator error: ${(e as Error).message}`],
        });
      }
    }

    const entry: RequestLogEntry = {
      method,
      path,
      query: queryObj,
      status: result.status,
      actor: actor?.login ?? null,
      operationId,
      at,
    };
    if (parsedBody !== undefined) entry.body = parsedBody;
    requests.push(entry);

    const outHeaders: Record<string, string> = {
      // the world's clock, which a test may move (a new UTC day): clients that read GitHub's time see it
      date: new Date(clock()).toUTCString(),
      'x-github-request-id': randomBytes(8).toString('hex').toUpperCase(),
      'x-github-media-type': 'github.v3; format=json',
      ...headers,
      ...(result.headers ?? {}),
    };
    if (!outHeaders['x-ratelimit-limit'] && actor)
      Object.assign(outHeaders, rateHeaders(bucketFor(actor.login, resource)));
    if (result.status === 204 || result.body === undefined) {
      res.writeHead(result.status, outHeaders);
      res.end();
      entry.servedMs = performance.now() - servedFrom;
      return;
    }
    const payload = JSON.stringify(result.body);
    outHeaders['content-type'] = 'application/json; charset=utf-8';
    outHeaders['content-length'] = String(Buffer.byteLength(payload));
    res.writeHead(result.status, outHeaders);
    res.end(payload);
    entry.servedMs = performance.now() - servedFrom;
  }

  function rateLimitBody(b: Bucket, g: Bucket) {
    const counts = (x: Bucket) => ({
      limit,
      remaining: Math.max(0, limit - x.used),
      used: x.used,
      reset: Math.floor(x.resetAt / 1000),
    });
    const core = counts(b);
    const other = (l: number) => ({ limit: l, remaining: l, used: 0, reset: Math.floor((clock() + HOUR) / 1000) });
    return {
      resources: { core, search: other(30), graphql: counts(g), integration_manifest: other(5000) },
      rate: core,
    };
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `Emulator crashed: ${String(e)}` }));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  world.apiUrl = url;

  return {
    url,
    world,
    requests,
    violations,
    faults,
    botToken: bot.token,
    git: world.git,
    events: world.events,
    addUser(u) {
      const user = world.addUser(u);
      return { login: user.login, id: user.id, token: user.token };
    },
    addApp(u) {
      const login = u.login.endsWith('[bot]') ? u.login : `${u.login}[bot]`;
      const user = world.addUser({ login, type: 'Bot', permission: u.permission ?? 'write' });
      world.appLogins.add(login);
      return { login: user.login, id: user.id, token: user.token };
    },
    onEvent(listener) {
      world.eventListeners.push(listener);
      return () => {
        const i = world.eventListeners.indexOf(listener);
        if (i >= 0) world.eventListeners.splice(i, 1);
      };
    },
    emitEvent(e) {
      return world.emit(e);
    },
    syncGit(pusher) {
      return world.syncGit(pusher);
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.closeAllConnections?.();
        server.close((e) => (e ? reject(e) : resolve()));
      });
    },
  };
}

function docsFor(operationId: string | null): string {
  return operationId ? `${DOCS}/${operationId.split('/')[0]}` : DOCS;
}

function err(status: number, message: string, documentation_url = DOCS): RouteResult {
  return { status, body: { message, documentation_url, status: String(status) } };
}

function validationError(errors: string[], operationId: string | null): RouteResult {
  return {
    status: 422,
    body: {
      message: `Invalid request.\n\n${errors.join('\n')}`,
      documentation_url: docsFor(operationId),
      status: '422',
    },
  };
}

/** Throw with a readable list when the emulator saw requests or sent responses that break GitHub's description. */
export function expectNoViolations(gh: Pick<GitHubEmulator, 'violations'>): void {
  if (gh.violations.length === 0) return;
  const lines = gh.violations.map(
    (v) =>
      `- [${v.kind}] ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}${v.status ? ` → ${v.status}` : ''}\n    ${v.errors.slice(0, 8).join('\n    ')}`,
  );
  throw new Error(`GitHub emulator recorded ${gh.violations.length} OpenAPI violation(s):\n${lines.join('\n')}`);
}
