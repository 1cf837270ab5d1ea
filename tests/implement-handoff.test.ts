import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '@hydraflow/core';
import { implementTaskSchema, readHandoff } from '../src/phases/implement-handoff';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hf-handoff-'));
  dirs.push(d);
  return d;
}

describe('reading a hand-off file that the agent’s commands could have replaced', () => {
  it('refuses a pipe, a link and a huge file at once, with a UserError that says what it found', () => {
    const d = dir();
    execFileSync('mkfifo', [join(d, 'pipe')]); // opening it for reading would wait for a writer forever
    writeFileSync(join(d, 'real.json'), '{}');
    symlinkSync(join(d, 'real.json'), join(d, 'link'));
    writeFileSync(join(d, 'huge'), '');
    truncateSync(join(d, 'huge'), 5_000_000);
    const read = (name: string) => () => readHandoff(join(d, name), implementTaskSchema, 'implement task');
    expect(read('pipe')).toThrow(UserError);
    expect(read('pipe')).toThrow(/not a regular file/);
    expect(read('link')).toThrow(/ELOOP/);
    expect(read('huge')).toThrow(/5000000 bytes, more than 4000000/);
  });
});
