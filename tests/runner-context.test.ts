/** The runner's context (src/runner/context.ts): what HydraFlow takes from the environment and the event. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunnerContext } from '../src/runner/context';

function contextOf(eventName: string, payload: unknown, env: Record<string, string> = {}) {
  const path = join(mkdtempSync(join(tmpdir(), 'hydraflow-context-')), 'event.json');
  writeFileSync(path, JSON.stringify(payload));
  return readRunnerContext({
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: path,
    GITHUB_REPOSITORY: 'acme/widgets',
    GITHUB_REPOSITORY_ID: '42',
    ...env,
  });
}

describe('the default branch', () => {
  it('is the one the event’s repository names', () => {
    const payload = { action: 'opened', repository: { default_branch: 'trunk' } };
    expect(contextOf('issues', payload, { GITHUB_REF: 'refs/heads/other' }).defaultBranch).toBe('trunk');
  });

  it('is the scheduled run’s own branch when its payload names no repository (the hourly sweep of a master repository)', () => {
    expect(contextOf('schedule', { schedule: '17 * * * *' }, { GITHUB_REF: 'refs/heads/master' }).defaultBranch).toBe(
      'master',
    );
    expect(contextOf('schedule', { schedule: '17 * * * *' }).defaultBranch).toBe('main');
  });
});
