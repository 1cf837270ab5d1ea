/**
 * HydraFlow's spend ledger branch (packages/github/src/spend-ledger.ts) against the emulator's git data: REST trees and
 * commits, GraphQL `Ref.target`/`Commit.file`/`parents` and `createCommitOnBranch`'s compare-and-swap, in a world with
 * a bare repository and in one without (objects in memory).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRestClient } from '../../github/src/client';
import { SpendLedgerBranch } from '../../github/src/spend-ledger';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { createSampleRepo } from '../src/sample-repo/index';
import { octokit, rejects } from './github-helpers';

const repo = { owner: 'acme', repo: 'widgets' };
let gh: GitHubEmulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await gh?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  gh = undefined;
  dir = undefined;
});

const worlds = {
  'without git (objects in memory)': () =>
    startGitHubEmulator({ ...repo, clock: () => Date.parse('2026-11-20T23:59:00Z') }),
  'with a bare repository': () => {
    dir = mkdtempSync(join(tmpdir(), 'hydraflow-spend-test-'));
    const sample = createSampleRepo(join(dir, 'sample'));
    return startGitHubEmulator({
      ...repo,
      git: { bareRepo: sample.bareRepo },
      clock: () => Date.parse('2026-11-20T23:59:00Z'),
    });
  },
};

describe.each(Object.entries(worlds))('the spend ledger branch, %s', (_name, start) => {
  it('is created as a commit of its own, read back with its parent and GitHub’s clock, and moved by compare-and-swap only', async () => {
    gh = await start();
    const ledger = new SpendLedgerBranch(createRestClient({ token: gh.botToken, baseUrl: gh.url }), repo);
    const none = await ledger.read();
    expect(none).toMatchObject({ head: null, parent: null, text: null });
    expect(none.serverTime.toISOString()).toBe('2026-11-20T23:59:00.000Z');

    const created = await ledger.write(null, 'first\n', 'spend: first');
    expect(created.ok).toBe(true);
    const first = await ledger.read();
    expect(first).toMatchObject({ parent: null, text: 'first\n' });
    expect(gh.world.gitData().fileAt(first.head!, 'README.md')?.text).toContain("HydraFlow's spend ledger");
    // a second creator finds the branch there
    expect(await ledger.write(null, 'other\n', 'spend: other')).toEqual({ ok: false });

    const next = await ledger.write(first.head, 'second\n', 'spend: second');
    expect(next.ok).toBe(true);
    const second = await ledger.read();
    expect(second).toMatchObject({ parent: first.head, text: 'second\n' });
    expect(second.head).toBe(next.ok && next.head);
    // a writer that read `first` and writes after `second` is refused: nothing is overwritten
    expect(await ledger.write(first.head, 'stale\n', 'spend: stale')).toEqual({ ok: false });
    expect((await ledger.read()).text).toBe('second\n');

    // anyone with write access can still push a commit of their own (fast-forward) — the codec detects it — but the
    // git data API refuses to rewind the branch without force
    const mallory = octokit(gh.url, gh.addUser({ login: 'mallory', permission: 'write' }).token);
    const back = await rejects(mallory.rest.git.updateRef({ ...repo, ref: 'heads/hydraflow/spend', sha: first.head! }));
    expect(back.status).toBe(422);
    const tree = await mallory.rest.git.createTree({
      ...repo,
      base_tree: gh.world.gitData().commit(second.head!)!.tree,
      tree: [{ path: 'spend.json', mode: '100644', type: 'blob', content: 'forged\n' }],
    });
    const commit = await mallory.rest.git.createCommit({
      ...repo,
      message: 'x',
      tree: tree.data.sha,
      parents: [second.head!],
    });
    await mallory.rest.git.updateRef({ ...repo, ref: 'heads/hydraflow/spend', sha: commit.data.sha });
    expect(await ledger.read()).toMatchObject({ head: commit.data.sha, parent: second.head, text: 'forged\n' });
    expectNoViolations(gh);
  });
});
