/**
 * Builds the one bundle every HydraFlow action runs (dist/), with @vercel/ncc. `bundle()` is shared with the test that
 * fails when the committed dist/ no longer matches the sources.
 */
import { transform } from 'esbuild';
import { createRequire } from 'node:module';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SDK_GLOBALS } from '../packages/http/src/headers';

const require = createRequire(import.meta.url);
const ncc = require('@vercel/ncc') as (
  input: string,
  options: Record<string, unknown>,
) => Promise<{ code: string; assets: Record<string, { source: Buffer | string }> }>;

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The files of dist/, by relative path. */
export async function bundle(): Promise<Map<string, Buffer>> {
  const { code, assets } = await ncc(join(ROOT, 'src/main.ts'), {
    minify: true,
    target: 'es2022',
    license: 'licenses.txt',
    quiet: true,
    sourceMap: false,
  });
  const files = new Map<string, Buffer>([['index.js', Buffer.from(code)]]);
  for (const [name, asset] of Object.entries(assets)) {
    // ncc minifies only the entry; the lazily loaded chunks (SDKs) are minified here, which halves their parse time.
    const source = name.endsWith('.index.js')
      ? (
          await transform(asset.source.toString(), {
            minify: true,
            target: 'es2022',
            format: 'esm',
            legalComments: 'none',
            // the SDKs' Headers and FormData are HydraFlow's, not Node's (whose first touch loads undici)
            define: Object.fromEntries(Object.entries(SDK_GLOBALS).map(([name, to]) => [name, `globalThis.${to}`])),
          })
        ).code
      : asset.source;
    files.set(name, Buffer.from(source));
  }
  return files;
}

async function main(): Promise<void> {
  const files = await bundle();
  const dist = join(ROOT, 'dist');
  rmSync(dist, { recursive: true, force: true });
  for (const [name, content] of files) {
    mkdirSync(dirname(join(dist, name)), { recursive: true });
    writeFileSync(join(dist, name), content);
  }
  const total = [...files.values()].reduce((n, b) => n + b.length, 0);
  console.log(`dist/: ${readdirSync(dist).length} files, ${(total / 1e6).toFixed(2)} MB`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
