/**
 * Writes schema/hydraflow-config.schema.json from the zod config schema (packages/core/src/config/schema.ts).
 * Run `pnpm schema` after changing the config schema; a test fails while the committed file is stale.
 * `--check` exits non-zero instead of writing when the file is stale.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from '../packages/core/src/config/schema';

export const SCHEMA_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../schema/hydraflow-config.schema.json');

export function renderConfigSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

async function main(): Promise<void> {
  const text = renderConfigSchema();
  if (process.argv.includes('--check')) {
    const current = await readFile(SCHEMA_PATH, 'utf8').catch(() => '');
    if (current !== text) {
      console.error(`${SCHEMA_PATH} is stale: run pnpm schema`);
      process.exitCode = 1;
    }
    return;
  }
  await mkdir(dirname(SCHEMA_PATH), { recursive: true });
  await writeFile(SCHEMA_PATH, text);
  console.log(`wrote ${SCHEMA_PATH}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
