import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundle, ROOT } from '../scripts/build';

describe('dist/', () => {
  it('matches the sources (run `pnpm build` and commit dist/ when this fails)', async () => {
    const built = await bundle();
    const committed = new Map(
      readdirSync(join(ROOT, 'dist')).map((name) => [name, readFileSync(join(ROOT, 'dist', name))] as const),
    );
    expect([...committed.keys()].sort()).toEqual([...built.keys()].sort());
    const stale = [...built].filter(([name, content]) => !content.equals(committed.get(name)!)).map(([name]) => name);
    expect(stale, `stale files in dist/: ${stale.join(', ')}`).toEqual([]);
  }, 180_000);
});
