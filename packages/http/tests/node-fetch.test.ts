import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFetch } from '../src';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  connection: number;
}

/** A local HTTP server that records every request (and on which connection it came) and answers with `handler`. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void,
): Promise<{ url: string; seen: Seen[]; aborted: () => number; server: Server }> {
  const seen: Seen[] = [];
  let connections = 0;
  let aborted = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    req.on('end', () => {
      const entry = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body,
        connection: (req.socket as unknown as { n: number }).n,
      };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  server.on('connection', (socket) => Object.assign(socket, { n: ++connections }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    aborted: () => aborted,
    server,
  };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

describe('nodeFetch', () => {
  it('sends the method, headers and body, and exposes the response as fetch does', async () => {
    const { url, seen } = await serve((_req, res) => {
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('X-Multi', ['a', 'b']);
      res.setHeader('Set-Cookie', ['x=1', 'y=2']);
      res.setHeader('A-First', 'yes');
      res.end('\uFEFF{"ok":true,"n":3}');
    });
    const headers = new Headers({ Authorization: 'token t', 'X-Custom': 'v' });
    const response = await nodeFetch(`${url}/things?a=1`, { method: 'PATCH', headers, body: '{"x":1}' });

    expect(seen[0]).toMatchObject({ method: 'PATCH', url: '/things?a=1', body: '{"x":1}' });
    expect(seen[0]!.headers).toMatchObject({
      authorization: 'token t',
      'x-custom': 'v',
      'content-length': '7',
      'content-type': 'text/plain;charset=UTF-8',
    });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.url).toBe(`${url}/things?a=1`);
    expect(response.redirected).toBe(false);
    expect(response.headers.get('x-multi')).toBe('a, b');
    expect(response.headers.get('X-MULTI')).toBe('a, b');
    expect(response.headers.has('content-type')).toBe(true);
    expect(response.headers.get('missing')).toBeNull();
    const names = [...response.headers].map(([name]) => name);
    expect(names).toEqual([...names].sort());
    expect([...response.headers].filter(([name]) => name === 'set-cookie')).toEqual([
      ['set-cookie', 'x=1'],
      ['set-cookie', 'y=2'],
    ]);
    const copy = response.clone();
    expect(await response.json()).toEqual({ ok: true, n: 3 }); // the BOM is stripped, as fetch's text() does
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(new Uint8Array(await copy.arrayBuffer())[0]).toBe(0xef);
  });

  it('keeps the connection alive between requests, and sends POST without a body with content-length 0', async () => {
    const { url, seen } = await serve((_req, res) => res.end('ok'));
    await (await nodeFetch(`${url}/a`)).text();
    await (await nodeFetch(`${url}/b`, { method: 'post' })).text();
    expect(seen.map((s) => [s.method, s.connection])).toEqual([
      ['GET', 1],
      ['POST', 1],
    ]);
    expect(seen[1]!.headers['content-length']).toBe('0');
    expect(seen[0]!.headers['content-length']).toBeUndefined();
  });

  it('follows redirects as fetch does: 302 after POST becomes a GET, 307 keeps the body, other origins get no authorization', async () => {
    const other = await serve((_req, res) => res.end('elsewhere'));
    const { url, seen } = await serve((req, res) => {
      const to: Record<string, [number, string]> = {
        '/post302': [302, '/landed'],
        '/post307': [307, '/landed'],
        '/away': [301, `${other.url}/there`],
      };
      const hop = to[req.url!];
      if (hop) res.writeHead(hop[0], { Location: hop[1] }).end();
      else res.end(`landed ${req.method}`);
    });
    const r302 = await nodeFetch(`${url}/post302`, {
      method: 'POST',
      body: 'payload',
      headers: { 'content-type': 'text/plain' },
    });
    expect(await r302.text()).toBe('landed GET');
    expect(r302.redirected).toBe(true);
    expect(r302.url).toBe(`${url}/landed`);
    expect(seen[1]).toMatchObject({ method: 'GET', body: '' });
    expect(seen[1]!.headers['content-type']).toBeUndefined();

    const r307 = await nodeFetch(`${url}/post307`, { method: 'POST', body: 'payload' });
    expect(await r307.text()).toBe('landed POST');
    expect(seen[3]).toMatchObject({ method: 'POST', body: 'payload' });

    const away = await nodeFetch(`${url}/away`, { headers: { authorization: 'token secret', 'x-keep': '1' } });
    expect(await away.text()).toBe('elsewhere');
    expect(other.seen[0]!.headers.authorization).toBeUndefined();
    expect(other.seen[0]!.headers['x-keep']).toBe('1');

    const manual = await nodeFetch(`${url}/post302`, { method: 'POST', redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('/landed');
    await expect(nodeFetch(`${url}/post302`, { redirect: 'error' })).rejects.toThrow(TypeError);
  });

  it('stops after 20 redirects', async () => {
    const { url, seen } = await serve((_req, res) => res.writeHead(302, { Location: '/again' }).end());
    const error = await nodeFetch(`${url}/loop`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error as Error).cause)).toMatch(/redirect count exceeded/);
    expect(seen).toHaveLength(21);
  });

  it('aborts a request in flight: rejects with the signal’s reason and closes the connection', async () => {
    const { url, aborted } = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const pending = nodeFetch(`${url}/slow`, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    await expect.poll(aborted).toBe(1);

    const before = new AbortController();
    before.abort(new Error('not wanted'));
    await expect(nodeFetch(`${url}/never`, { signal: before.signal })).rejects.toThrow('not wanted');
  });

  it('fails a refused connection as undici does: TypeError "fetch failed" with the cause', async () => {
    const { url, server } = await serve(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    const error = await nodeFetch(`${url}/gone`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect((error as { cause: { code: string } }).cause.code).toBe('ECONNREFUSED');
  });

  it('sends an idempotent request again on a new connection when the kept-alive one was closed under it', async () => {
    let dropNext = false;
    const { url, seen } = await serve((req, res) => {
      if (dropNext && req.url === '/second') {
        dropNext = false;
        req.socket.destroy(); // as a server does that closes an idle keep-alive connection just as a request arrives
        return;
      }
      res.end('fine');
    });
    await (await nodeFetch(`${url}/first`)).text();
    dropNext = true;
    const second = await nodeFetch(`${url}/second`);
    expect(await second.text()).toBe('fine');
    expect(seen.map((s) => [s.url, s.connection])).toEqual([
      ['/first', 1],
      ['/second', 1],
      ['/second', 2],
    ]);

    // A POST is not sent twice: the server may have acted on it, so the caller decides (Octokit: UncertainWriteError).
    dropNext = true;
    seen.length = 0;
    await (await nodeFetch(`${url}/warm`)).text();
    const post = await nodeFetch(`${url}/second`, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
    expect(post).toBeInstanceOf(TypeError);
    expect(seen.filter((s) => s.url === '/second')).toHaveLength(1);
  });

  it('decodes a gzip body, and has no body for HEAD and 204', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/empty') return res.writeHead(204).end();
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'text/plain' });
      res.end(req.method === 'HEAD' ? undefined : gzipSync('compressed text'));
    });
    expect(await (await nodeFetch(`${url}/z`)).text()).toBe('compressed text');
    const head = await nodeFetch(`${url}/z`, { method: 'HEAD' });
    expect(head.body).toBeNull();
    expect(await head.text()).toBe('');
    const empty = await nodeFetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('hands what it does not handle to the global fetch: a Request object, a stream body', async () => {
    const { url, seen } = await serve((_req, res) => res.end('ok'));
    const viaRequest = await nodeFetch(new Request(`${url}/req`, { method: 'PUT', body: 'r' }));
    expect(await viaRequest.text()).toBe('ok');
    const stream = new Blob(['streamed']).stream();
    const viaStream = await nodeFetch(`${url}/stream`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(viaStream).toBeInstanceOf(Response); // the global fetch's own Response
    expect(seen.map((s) => [s.url, s.body])).toEqual([
      ['/req', 'r'],
      ['/stream', 'streamed'],
    ]);
  });
});
