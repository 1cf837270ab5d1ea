import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GitError, GitWorkspace, isSafeBranchName, scrubGitEnv } from '../src/index';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() };
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();
}
const ME = { name: 'HydraFlow', email: 'hydraflow@example.com' };

/** A bare "remote" with one commit on main, and a clone of it. */
function world(): { remote: string; clone: string; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'hf-git-'));
  dirs.push(root);
  const remote = join(root, 'remote.git');
  const seed = join(root, 'seed');
  git(root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  git(root, 'init', '--quiet', '--initial-branch=main', seed);
  writeFileSync(join(seed, 'README.md'), 'hello\n');
  writeFileSync(join(seed, 'a.txt'), 'one\n');
  git(seed, 'add', '.');
  git(seed, '-c', 'user.name=Seed', '-c', 'user.email=seed@example.com', 'commit', '--quiet', '-m', 'seed');
  git(seed, 'push', '--quiet', remote, 'main');
  const clone = join(root, 'clone');
  git(root, 'clone', '--quiet', remote, clone);
  return { remote, clone, root };
}

describe('GitWorkspace against real repositories', () => {
  it('branchFiles: a branch as GitHub lists a pull request’s files (status, counts, hunks without header)', async () => {
    const { clone } = world();
    const ws = await GitWorkspace.open(clone);
    await ws.checkoutBranch('hydraflow/issue-7', { from: 'origin/main' });
    writeFileSync(join(clone, 'a.txt'), 'one\ntwo'); // no newline at the end now
    writeFileSync(join(clone, 'new.txt'), 'x\ny\n');
    writeFileSync(join(clone, 'blob.bin'), Buffer.from([0, 1, 2, 0]));
    git(clone, 'mv', 'README.md', 'READ.md');
    await ws.commitAll('change', ME);
    const files = await ws.branchFiles('origin/main');
    expect(files).toEqual([
      { path: 'READ.md', status: 'renamed', additions: 0, deletions: 0 },
      {
        path: 'a.txt',
        status: 'modified',
        additions: 1,
        deletions: 0,
        patch: '@@ -1 +1,2 @@\n one\n+two\n\\ No newline at end of file',
      },
      { path: 'blob.bin', status: 'added', additions: 0, deletions: 0 },
      { path: 'new.txt', status: 'added', additions: 2, deletions: 0, patch: '@@ -0,0 +1,2 @@\n+x\n+y' },
    ]);
    // from the merge base: a commit on main after the branch point is not the branch's
    git(clone, 'checkout', '--quiet', 'main');
    writeFileSync(join(clone, 'later.txt'), 'later\n');
    git(clone, 'add', '.');
    git(clone, '-c', 'user.name=Seed', '-c', 'user.email=seed@example.com', 'commit', '--quiet', '-m', 'later');
    git(clone, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    git(clone, 'checkout', '--quiet', 'hydraflow/issue-7');
    expect((await ws.branchFiles('origin/main')).map((f) => f.path)).toEqual([
      'READ.md',
      'a.txt',
      'blob.bin',
      'new.txt',
    ]);
    await expect(ws.branchFiles('--output=/tmp/x')).rejects.toThrow(GitError);
  });

  it('branchFiles of the staged change is the pull request the commit will make, before it is made', async () => {
    const { clone } = world();
    const ws = await GitWorkspace.open(clone);
    await ws.checkoutBranch('hydraflow/issue-8', { from: 'origin/main' });
    writeFileSync(join(clone, 'a.txt'), 'one\nround one\n');
    await ws.commitAll('round 1', ME); // an earlier round's commit is part of the pull request
    git(clone, 'checkout', '--quiet', '-b', 'elsewhere', 'main'); // origin/main moves on meanwhile
    writeFileSync(join(clone, 'later.txt'), 'later\n');
    await ws.commitAll('on main', ME);
    git(clone, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    git(clone, 'checkout', '--quiet', 'hydraflow/issue-8');

    writeFileSync(join(clone, 'a.txt'), 'one\nround two\n');
    writeFileSync(join(clone, 'added.txt'), 'new\n');
    await ws.stageAll();
    const before = await ws.branchFiles('origin/main', { staged: true });
    const sha = await ws.commitStaged('round 2', ME);
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const after = await ws.branchFiles('origin/main');
    expect(before).toEqual(after);
    expect(after.map((f) => [f.path, f.patch])).toEqual([
      ['a.txt', '@@ -1 +1,2 @@\n one\n+round two'],
      ['added.txt', '@@ -0,0 +1 @@\n+new'],
    ]);

    expect(await ws.commitStaged('nothing staged', ME)).toBeNull();
    writeFileSync(join(clone, 'a.txt'), 'conflict?\n');
    await ws.stageAll();
    writeFileSync(join(clone, '.git', 'index.lock'), ''); // another git holds the index: a real failure, not "nothing"
    await expect(ws.commitStaged('blocked', ME)).rejects.toThrow(/git commit failed \(exit 128\)/);
  });

  it('head, branch, changed files with status, diff, commit, nothing-to-commit', async () => {
    const { clone } = world();
    const ws = await GitWorkspace.open(clone);
    expect(await ws.currentBranch()).toBe('main');
    const head = await ws.headSha();
    expect(head).toMatch(/^[0-9a-f]{40}$/);

    writeFileSync(join(clone, 'a.txt'), 'two\n');
    writeFileSync(join(clone, 'new file.txt'), 'x\n');
    mkdirSync(join(clone, 'dir'));
    writeFileSync(join(clone, 'dir', 'b.txt'), 'b\n');
    rmSync(join(clone, 'README.md'));
    git(clone, 'add', 'dir/b.txt');
    const changed = await ws.changedFiles();
    expect(changed.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'README.md', status: 'deleted', staged: false, code: ' D' },
      { path: 'a.txt', status: 'modified', staged: false, code: ' M' },
      { path: 'dir/b.txt', status: 'added', staged: true, code: 'A ' },
      { path: 'new file.txt', status: 'untracked', staged: false, code: '??' },
    ]);
    expect(await ws.diff()).toContain('-one\n+two');
    expect(await ws.diff({ staged: true })).toContain('+b');
    expect(await ws.diff({ staged: true })).not.toContain('+two');

    const sha = await ws.commitAll('fix: two\n\nBody line', ME);
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(sha).not.toBe(head);
    expect(git(clone, 'log', '-1', '--format=%an <%ae>|%cn|%s|%b')).toBe(
      'HydraFlow <hydraflow@example.com>|HydraFlow|fix: two|Body line',
    );
    expect(await ws.changedFiles()).toEqual([]);
    expect(await ws.commitAll('again', ME)).toBeNull();
  });

  it('checkoutBranch creates from a base, pushes, and a re-run continues from the remote branch', async () => {
    const { clone, root, remote } = world();
    const ws = await GitWorkspace.open(clone);
    const first = await ws.checkoutBranch('hydraflow/issue-7', { from: 'origin/main' });
    expect(first.resumed).toBe(false);
    writeFileSync(join(clone, 'a.txt'), 'fixed\n');
    const sha = await ws.commitAll('fix', ME);
    await ws.push('hydraflow/issue-7');
    expect(git(remote, 'rev-parse', 'refs/heads/hydraflow/issue-7')).toBe(sha);

    // A re-run: a fresh clone that only knows main.
    const again = join(root, 'rerun');
    git(root, 'clone', '--quiet', '--single-branch', '--branch', 'main', remote, again);
    const ws2 = await GitWorkspace.open(again);
    const second = await ws2.checkoutBranch('hydraflow/issue-7', { from: 'origin/main' });
    expect(second).toEqual({ resumed: true, head: sha });
    expect(readFileSync(join(again, 'a.txt'), 'utf8')).toBe('fixed\n');
    // Same call twice is a no-op.
    expect(await ws2.checkoutBranch('hydraflow/issue-7', { from: 'origin/main' })).toEqual({
      resumed: true,
      head: sha,
    });
    expect(await ws2.currentBranch()).toBe('hydraflow/issue-7');

    // fetch: true for an existing branch, false for a missing one.
    expect(await ws2.fetch('main')).toBe(true);
    expect(await ws2.fetch('no-such-branch')).toBe(false);

    // A fetch begun ahead (the plan phase's prefetch) stands in for checkoutBranch's own: another fresh clone resumes
    // from it; a prefetch that found no branch starts from the base; a failed one falls back to the local refs.
    const third = join(root, 'prefetched');
    git(root, 'clone', '--quiet', '--single-branch', '--branch', 'main', remote, third);
    const ws3 = await GitWorkspace.open(third);
    const prefetch = ws3.fetch('hydraflow/issue-7');
    expect(await ws3.checkoutBranch('hydraflow/issue-7', { from: 'origin/main', fetched: prefetch })).toEqual({
      resumed: true,
      head: sha,
    });
    const base = git(third, 'rev-parse', 'origin/main');
    expect(
      await ws3.checkoutBranch('hydraflow/issue-9', { from: 'origin/main', fetched: ws3.fetch('hydraflow/issue-9') }),
    ).toEqual({ resumed: false, head: base });
    const offline = Promise.reject(new Error('offline'));
    offline.catch(() => undefined); // as prefetchBranch does: checkoutBranch awaits it later
    expect(await ws3.checkoutBranch('hydraflow/issue-7', { from: 'origin/main', fetched: offline })).toEqual({
      resumed: true,
      head: sha,
    });
  });

  it('pushedTwin: after a refused push, the commit of the remote branch that is the same change committed at another moment', async () => {
    const { clone, root, remote } = world();
    const commitFix = async (dir: string, date: string, text = 'fixed\n') => {
      // the change on main, as the agent's patch is applied to the start commit
      git(dir, 'checkout', '--quiet', '-b', 'hydraflow/issue-7', 'origin/main');
      writeFileSync(join(dir, 'a.txt'), text);
      execFileSync('git', ['add', '-A'], { cwd: dir, env: ENV });
      execFileSync('git', ['-c', 'user.name=H', '-c', 'user.email=h@example.com', 'commit', '--quiet', '-m', 'fix'], {
        cwd: dir,
        env: { ...ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
      return GitWorkspace.open(dir);
    };
    const first = await commitFix(clone, '2026-01-01T00:00:00Z');
    await first.push('hydraflow/issue-7');
    const pushed = git(remote, 'rev-parse', 'refs/heads/hydraflow/issue-7');

    // the same change on the same parent, committed later in a fresh clone: its push is refused, the twin is found
    const again = join(root, 'again');
    git(root, 'clone', '--quiet', '--single-branch', '--branch', 'main', remote, again);
    const second = await commitFix(again, '2026-01-02T00:00:00Z');
    expect(git(again, 'rev-parse', 'HEAD')).not.toBe(pushed);
    await expect(second.push('hydraflow/issue-7')).rejects.toBeInstanceOf(GitError);
    expect(await second.pushedTwin('hydraflow/issue-7')).toBe(pushed);

    // someone's commit on top of it: the twin is still found, under it
    git(
      clone,
      '-c',
      'user.name=H',
      '-c',
      'user.email=h@example.com',
      'commit',
      '--quiet',
      '--allow-empty',
      '-m',
      'on top',
    );
    await first.push('hydraflow/issue-7');
    expect(git(remote, 'rev-parse', 'refs/heads/hydraflow/issue-7')).not.toBe(pushed);
    expect(await second.pushedTwin('hydraflow/issue-7')).toBe(pushed);

    // another change: no twin
    const other = join(root, 'other');
    git(root, 'clone', '--quiet', '--single-branch', '--branch', 'main', remote, other);
    const third = await commitFix(other, '2026-01-02T00:00:00Z', 'another fix\n');
    await expect(third.push('hydraflow/issue-7')).rejects.toBeInstanceOf(GitError);
    expect(await third.pushedTwin('hydraflow/issue-7')).toBeUndefined();
  });

  it('refuses branch names that could be flags or odd refs, before running git', async () => {
    const { clone } = world();
    const ws = await GitWorkspace.open(clone);
    for (const bad of [
      '--upload-pack=touch /tmp/pwned',
      '-f',
      'a b',
      'a..b',
      'x;rm',
      'x\nrm',
      '/abs',
      'a/',
      'HEAD',
      'x.lock',
      '',
    ]) {
      expect(isSafeBranchName(bad)).toBe(false);
      await expect(ws.push(bad)).rejects.toBeInstanceOf(GitError);
      await expect(ws.checkoutBranch(bad, { from: 'main' })).rejects.toBeInstanceOf(GitError);
    }
    expect(isSafeBranchName('hydraflow/issue-12.fix_2')).toBe(true);
    await expect(ws.checkoutBranch('ok', { from: '--orphan' })).rejects.toBeInstanceOf(GitError);
  });

  it('every name isSafeBranchName accepts, git check-ref-format --branch accepts too (it replaces that git call)', () => {
    // names built from the allowed characters, biased to the pieces git's rules are about: dots, slashes, ".lock"
    const piece = fc.constantFrom('a', 'Z', '0', '-', '_', '.', '/', '..', '.lock', 'HEAD', '@');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const name = pieces.join('');
        if (!isSafeBranchName(name)) return;
        const git = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' });
        expect({ name, code: git.status }).toEqual({ name, code: 0 });
      }),
      { numRuns: 300 },
    );
    for (const bad of ['a.lock/b', 'a/.b', 'a//b']) expect(isSafeBranchName(bad)).toBe(false);
  });

  it('a push token goes on the command line only: not in .git/config, not in errors', async () => {
    const { clone, root } = world();
    const token = 'ghs_SECRETTOKEN123456';
    // A remote that does not exist: the push fails and the error must not carry the token (plain or base64).
    const ws = new GitWorkspace(clone, { remoteUrl: join(root, 'missing.git') });
    writeFileSync(join(clone, 'a.txt'), 'x\n');
    await ws.commitAll('x', ME);
    const error = (await ws.push('feature', { token }).catch((e: unknown) => e)) as GitError;
    expect(error).toBeInstanceOf(GitError);
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    const shown = `${error.message} ${error.args.join(' ')} ${error.stderr}`;
    expect(shown).not.toContain(token);
    expect(shown).not.toContain(basic);
    expect(readFileSync(join(clone, '.git', 'config'), 'utf8')).not.toMatch(/extraheader|SECRETTOKEN/);

    // A successful push with a token leaves no trace in the config either.
    const ok = await GitWorkspace.open(clone);
    await ok.push('feature', { token });
    expect(readFileSync(join(clone, '.git', 'config'), 'utf8')).not.toMatch(/extraheader|SECRETTOKEN/);
  });

  it('planted hooks never run inside HydraFlow (commit and push)', async () => {
    const { clone } = world();
    const marker = join(clone, '..', 'hook-ran');
    for (const hook of ['pre-commit', 'commit-msg', 'pre-push', 'post-commit'])
      writeFileSync(join(clone, '.git', 'hooks', hook), `#!/bin/sh\necho ran > ${JSON.stringify(marker)}\n`, {
        mode: 0o755,
      });
    mkdirSync(join(clone, '.husky'));
    writeFileSync(join(clone, '.husky', 'pre-commit'), `#!/bin/sh\necho ran > ${JSON.stringify(marker)}\n`, {
      mode: 0o755,
    });
    git(clone, 'config', 'core.hooksPath', '.husky');
    const ws = await GitWorkspace.open(clone);
    writeFileSync(join(clone, 'a.txt'), 'x\n');
    expect(await ws.commitAll('x', ME)).not.toBeNull();
    await ws.push('main');
    expect(() => readFileSync(marker)).toThrow();
  });

  it('git runs without secrets in its environment', () => {
    const env = scrubGitEnv({
      PATH: '/bin',
      GITHUB_TOKEN: 'x',
      INPUT_GITHUB_TOKEN: 'x',
      OPENAI_API_KEY: 'x',
      MY_SECRET: 'x',
      GIT_DIR: '/x',
      HOME: '/h',
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', LC_ALL: 'C' });
  });
});

describe('the agent’s change as a patch, applied as data on another clone', () => {
  it('snapshot → writePatch on one clone, resetIndexTo → applyToIndex on a fresh one: the same tree, the working tree untouched', async () => {
    const { remote, clone, root } = world();
    const start = git(clone, 'rev-parse', 'HEAD');
    const ws = await GitWorkspace.open(clone);
    writeFileSync(join(clone, 'a.txt'), 'one\ntwo\n');
    writeFileSync(join(clone, 'blob.bin'), Buffer.from([0, 1, 2, 0, 255]));
    writeFileSync(join(clone, 'big.txt'), 'x'.repeat(5000));
    writeFileSync(join(clone, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(clone, 'ignored.txt'), 'not part of it\n');
    rmSync(join(clone, 'README.md'));
    git(clone, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-qam', 'the commands committed');
    const index = join(root, 'scratch-index');
    await ws.snapshot(start, index);
    const entries = await ws.stagedEntries(start, { index });
    expect(entries.map((e) => [e.path, e.status, e.oldMode, e.newMode, e.bytes])).toEqual([
      ['.gitignore', 'A', '000000', '100644', 12],
      ['README.md', 'D', '100644', '000000', 0],
      ['a.txt', 'M', '100644', '100644', 8],
      ['big.txt', 'A', '000000', '100644', 5000],
      ['blob.bin', 'A', '000000', '100644', 5],
    ]);
    const patch = join(root, 'change.patch');
    await ws.writePatch(start, patch, { index, leaveOut: ['big.txt'] });
    expect(git(clone, 'rev-parse', 'HEAD')).not.toBe(start); // the repository's own HEAD and index are not touched

    const fresh = join(root, 'fresh');
    git(root, 'clone', '--quiet', remote, fresh);
    const target = await GitWorkspace.open(fresh);
    await target.resetIndexTo(start);
    await target.applyToIndex(readFileSync(patch));
    const staged = await target.stagedEntries(start);
    expect(staged.map((e) => e.path)).toEqual(['.gitignore', 'README.md', 'a.txt', 'blob.bin']);
    expect(git(fresh, 'show', ':blob.bin')).toBe(Buffer.from([0, 1, 2, 0, 255]).toString());
    expect(readFileSync(join(fresh, 'a.txt'), 'utf8')).toBe('one\n'); // the working tree was never written
  });

  it('a link, a submodule and a mode change come through as modes the publish check refuses; a patch that does not apply is a GitError', async () => {
    const { remote, clone, root } = world();
    const start = git(clone, 'rev-parse', 'HEAD');
    const ws = await GitWorkspace.open(clone);
    execFileSync('ln', ['-s', '/etc/passwd', join(clone, 'link')]);
    execFileSync('chmod', ['+x', join(clone, 'a.txt')]);
    const index = join(root, 'scratch-index');
    await ws.snapshot(start, index);
    const patch = join(root, 'change.patch');
    await ws.writePatch(start, patch, { index });
    const fresh = join(root, 'fresh');
    git(root, 'clone', '--quiet', remote, fresh);
    const target = await GitWorkspace.open(fresh);
    await target.resetIndexTo(start);
    await target.applyToIndex(readFileSync(patch));
    const staged = await target.stagedEntries(start);
    expect(staged.map((e) => [e.path, e.oldMode, e.newMode])).toEqual([
      ['a.txt', '100644', '100755'],
      ['link', '000000', '120000'],
    ]);
    await target.resetIndexTo(start);
    await expect(
      target.applyToIndex(Buffer.from('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-no\n+yes\n')),
    ).rejects.toThrow(GitError);
  });
});
