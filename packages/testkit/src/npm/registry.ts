/**
 * A stand-in of the npm registry, wire-compatible for what `npm ci` and `npm install` ask of it: a package's document
 * (`GET /<name>`) and its tarball (`GET /<name>/-/<name>-<version>.tgz`). It serves real tarballs as published
 * (packages/testkit/fixtures/npm/), so a lockfile's integrity checks as on the real registry; npm rewrites a
 * lockfile's registry.npmjs.org URLs to the configured registry (its `replace-registry-host` default).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { REPO_ROOT } from '../runner/run-action';

export interface NpmPackage {
  name: string;
  version: string;
  tarball: Buffer;
  dependencies?: Record<string, string>;
}

export interface NpmRegistry {
  /** For `npm_config_registry`, with the trailing slash npm expects. */
  url: string;
  /** Every path asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** A tarball shipped with the testkit, as downloaded from the npm registry. */
export function fixturePackage(name: string, version: string): NpmPackage {
  const tarball = readFileSync(join(REPO_ROOT, 'packages/testkit/fixtures/npm', `${name}-${version}.tgz`));
  return { name, version, tarball };
}

export async function startNpmRegistry(packages: NpmPackage[]): Promise<NpmRegistry> {
  const requests: string[] = [];
  let url = '';
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    requests.push(path);
    const tarball = /^\/(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(path);
    if (tarball) {
      const pkg = packages.find((p) => p.name === tarball[1] && p.version === tarball[2]);
      if (!pkg) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': pkg.tarball.length });
      return void res.end(pkg.tarball);
    }
    const name = path.slice(1);
    const versions = packages.filter((p) => p.name === name);
    if (versions.length === 0) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'Not found' }));
    }
    const doc = {
      name,
      'dist-tags': { latest: versions.at(-1)!.version },
      versions: Object.fromEntries(
        versions.map((p) => [
          p.version,
          {
            name,
            version: p.version,
            dependencies: p.dependencies ?? {},
            dist: {
              tarball: `${url}${name}/-/${name.split('/').at(-1)}-${p.version}.tgz`,
              integrity: `sha512-${createHash('sha512').update(p.tarball).digest('base64')}`,
              shasum: createHash('sha1').update(p.tarball).digest('hex'),
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  return {
    url,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
