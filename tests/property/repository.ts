/**
 * The repository of a history: a real bare git repository behind the GitHub emulator, served where HydraFlow derives
 * its git URL (`GITHUB_SERVER_URL/<owner>/<repo>.git`), so that the implement phase checks out, the agent job works on
 * the start commit and the publish job pushes and opens pull requests for real. One template is built per test file
 * and copied per history (a copy costs a few milliseconds, a fresh repository a dozen git processes).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGit } from '@hydraflow/testkit';

/**
 * The repository's HydraFlow config: the agent's `test` command is `true` (the sample has no tests worth running
 * thousands of times) and is not run ahead. Written into every routing job's workspace as well.
 */
export const CONFIG = 'implement:\n  commands:\n    test: "true"\n  test_ahead: false\n';

const FILES: Record<string, string> = {
  'README.md': '# widgets\n',
  'src/index.js': 'export const widgets = [];\n',
  '.github/hydraflow.yml': CONFIG,
};

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Ada',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
};

/** A bare repository with one commit on main, in `dir/template.git`. */
export function buildTemplate(dir: string): string {
  const bare = join(dir, 'template.git');
  // no hook samples and one pack: every history copies it, then removes it (a copy of a fresh `git init` is ~30 files)
  runGit(['init', '--bare', '--quiet', '--template=', '--initial-branch=main', bare]);
  const seed = join(dir, 'seed');
  runGit(['init', '--quiet', '--initial-branch=main', seed]);
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(join(seed, path, '..'), { recursive: true });
    writeFileSync(join(seed, path), text);
  }
  runGit(['add', '-A'], { cwd: seed });
  runGit(['commit', '--quiet', '-m', 'Initial commit'], { cwd: seed, env: GIT_IDENTITY });
  runGit(['push', '--quiet', bare, 'HEAD:refs/heads/main'], { cwd: seed });
  runGit(['--git-dir', bare, 'repack', '-a', '-d', '-q']);
  runGit(['--git-dir', bare, 'prune-packed']);
  rmSync(seed, { recursive: true, force: true });
  return bare;
}

export interface HistoryRepository {
  /** The bare repository (the emulator's git data). */
  bare: string;
  /** GITHUB_SERVER_URL: HydraFlow fetches and pushes `<serverUrl>/acme/widgets.git`. */
  serverUrl: string;
  /** A fresh checkout, as actions/checkout leaves one (`ref`: a commit to detach at). */
  checkout(ref?: string): string;
}

export function copyTemplate(template: string, dir: string): HistoryRepository {
  const bare = join(dir, 'server/acme/widgets.git');
  cpSync(template, bare, { recursive: true });
  let checkouts = 0;
  return {
    bare,
    serverUrl: `file://${join(dir, 'server')}`,
    checkout(ref) {
      const dest = mkdtempSync(join(dir, `checkout-${checkouts++}-`));
      runGit(['clone', '--quiet', bare, dest]);
      if (ref) runGit(['checkout', '--quiet', '--detach', ref], { cwd: dest });
      return dest;
    },
  };
}

/**
 * Removes a history's directory. A crashed run's git (a fetch, or the `gc --auto` it detached) may still be writing in
 * its workspace, so the removal is retried, and a directory still busy is left to the system's temp cleanup: litter,
 * never a history's failure (the pull property once failed on ENOTEMPTY here, with every invariant holding).
 */
export function removeHistoryDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw error;
  }
}
