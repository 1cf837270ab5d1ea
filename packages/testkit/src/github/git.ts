/**
 * A real bare git repository behind the emulator: refs, diffs, merges, all through the `git` CLI (execFileSync, no
 * shell). Synchronous on purpose: route handlers are synchronous, and every call is a few milliseconds on the small
 * repositories tests use. Needs git ≥ 2.38 (`merge-tree --write-tree`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmulatedPullFile } from './world';

export const ZERO_SHA = '0000000000000000000000000000000000000000';

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly status: number | null,
    readonly stderr: string,
    readonly stdout: string,
  ) {
    super(`git ${args.join(' ')} failed (${status}): ${stderr.trim() || stdout.trim()}`);
  }
}

export interface GitIdentity {
  name: string;
  email: string;
  /** seconds since the epoch */
  date?: number;
}

export interface PullDiffFile extends EmulatedPullFile {
  previous_filename?: string;
}

/** One `git ls-tree --long` entry: mode, object type and id, blob size (0 for trees and submodules), full path. */
export interface GitTreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size: number;
  path: string;
}

const BASE_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
};

/** What every git process of the emulator and the simulator runs with. */
function execOptions(opts: { cwd?: string; env?: Record<string, string> }) {
  return {
    cwd: opts.cwd,
    env: { ...process.env, ...BASE_ENV, ...opts.env },
    encoding: 'utf8' as const,
    maxBuffer: 64 * 1024 * 1024,
  };
}

/** Run git with no shell; returns stdout. Throws GitError on a non-zero exit unless `okCodes` lists it. */
export function runGit(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string; okCodes?: number[] } = {},
): { stdout: string; status: number } {
  try {
    const stdout = execFileSync('git', args, {
      ...execOptions(opts),
      input: opts.input,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return { stdout, status: 0 };
  } catch (e) {
    const err = e as { status: number | null; stderr?: string; stdout?: string };
    if (err.status !== null && opts.okCodes?.includes(err.status))
      return { stdout: err.stdout ?? '', status: err.status };
    throw new GitError(args, err.status, String(err.stderr ?? ''), String(err.stdout ?? ''));
  }
}

/**
 * `runGit` without blocking: for the simulated runner's own git work (actions/checkout), which on GitHub runs on the
 * job's machine while the servers this process also hosts (the model servers, the emulator) go on answering.
 */
export function runGitAsync(args: string[], opts: { cwd?: string } = {}): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile('git', args, execOptions(opts), (error, stdout, stderr) => {
      if (!error) return resolve({ stdout });
      const status = typeof error.code === 'number' ? error.code : null;
      reject(new GitError(args, status, String(stderr), String(stdout)));
    });
  });
}

const REF_NAMESPACES = ['refs/heads', 'refs/tags'];

function readFilesRefs(gitDir: string): Map<string, string> {
  const map = new Map<string, string>();
  let packed = '';
  try {
    packed = readFileSync(join(gitDir, 'packed-refs'), 'utf8');
  } catch {
    // no packed-refs yet: every ref is loose
  }
  for (const line of packed.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (refs\/\S+)$/.exec(line);
    if (m && REF_NAMESPACES.some((ns) => m[2]!.startsWith(`${ns}/`))) map.set(m[2]!, m[1]!);
  }
  const walk = (ref: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(gitDir, ref), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const name = `${ref}/${e.name}`;
      if (e.isDirectory()) walk(name);
      else if (e.isFile() && !e.name.endsWith('.lock')) {
        const sha = readFileSync(join(gitDir, name), 'utf8').trim();
        if (/^[0-9a-f]{40,64}$/.test(sha)) map.set(name, sha);
      }
    }
  };
  for (const ns of REF_NAMESPACES) walk(ns);
  return new Map([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function identityEnv(author: GitIdentity, committer: GitIdentity): Record<string, string> {
  const env: Record<string, string> = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
  if (author.date !== undefined) env.GIT_AUTHOR_DATE = `${author.date} +0000`;
  if (committer.date !== undefined) env.GIT_COMMITTER_DATE = `${committer.date} +0000`;
  return env;
}

export class GitRepo {
  /** mergeTree's answers, by "ours theirs" commit ids */
  private readonly merges = new Map<string, { clean: boolean; tree: string; conflicts: string[] }>();

  constructor(readonly dir: string) {}

  git(args: string[], opts: { env?: Record<string, string>; input?: string; okCodes?: number[] } = {}) {
    return runGit(['--git-dir', this.dir, ...args], opts);
  }

  out(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): string {
    return this.git(args, opts).stdout.trim();
  }

  /**
   * The branch HEAD points at ("main"). Read from the HEAD file when it is a symbolic ref of the files backend (every
   * emulator starts by asking: a git process each would be most of a small test's start); else asked of git.
   */
  headBranch(): string | undefined {
    if (!existsSync(join(this.dir, 'reftable'))) {
      const head = /^ref: refs\/heads\/(\S+)\s*$/.exec(readFileSync(join(this.dir, 'HEAD'), 'utf8'));
      if (head) return head[1];
    }
    const r = this.git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { okCodes: [1, 128] });
    return r.status === 0 ? r.stdout.trim() : undefined;
  }

  /**
   * Every ref (branches and tags) → object sha. Read from the files backend directly (packed-refs, then loose refs
   * over them, as git resolves them): the emulator refreshes refs on every request, and a `git` process per request
   * was most of its serving time. A reftable repository falls back to `git for-each-ref`.
   */
  refs(): Map<string, string> {
    if (!existsSync(join(this.dir, 'reftable'))) return readFilesRefs(this.dir);
    const out = this.out(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags']);
    const map = new Map<string, string>();
    for (const line of out.split('\n')) {
      if (!line) continue;
      const i = line.lastIndexOf(' ');
      map.set(line.slice(0, i), line.slice(i + 1));
    }
    return map;
  }

  revParse(rev: string): string | undefined {
    const r = this.git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { okCodes: [1, 128] });
    return r.status === 0 ? r.stdout.trim() : undefined;
  }

  commitExists(sha: string): boolean {
    return /^[0-9a-f]{40}$/.test(sha) && this.revParse(sha) === sha;
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    return this.git(['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] }).status === 0;
  }

  mergeBase(a: string, b: string): string | undefined {
    const r = this.git(['merge-base', a, b], { okCodes: [1] });
    return r.status === 0 ? r.stdout.trim() : undefined;
  }

  /**
   * The tree entries at `path` in `treeish` (a commit or tree): `path` itself when given (a file or a directory, not
   * its contents), else the entries of `treeish`. Paths are literal, never globs.
   */
  lsTree(treeish: string, path?: string): GitTreeEntry[] {
    const args = [
      '--literal-pathspecs',
      'ls-tree',
      '-z',
      '--long',
      treeish,
      ...(path !== undefined ? ['--', path] : []),
    ];
    const r = this.git(args, { okCodes: [128] });
    if (r.status !== 0) return [];
    return r.stdout
      .split('\0')
      .filter(Boolean)
      .map((rec) => {
        const tab = rec.indexOf('\t');
        const [mode, type, sha, size] = rec.slice(0, tab).split(/\s+/);
        return {
          mode: mode!,
          type: type as GitTreeEntry['type'],
          sha: sha!,
          size: size === '-' || size === undefined ? 0 : Number(size),
          path: rec.slice(tab + 1),
        };
      });
  }

  /** A blob's bytes (binary-safe). */
  readBlob(sha: string): Buffer {
    return execFileSync('git', ['--git-dir', this.dir, 'cat-file', 'blob', sha], {
      env: { ...process.env, ...BASE_ENV },
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  }

  /** Compare-and-swap a ref: `old` = ZERO_SHA means "must not exist yet"; undefined means unconditional. */
  updateRef(ref: string, sha: string, old?: string): void {
    this.git(['update-ref', ref, sha, ...(old !== undefined ? [old] : [])]);
  }

  deleteRef(ref: string): void {
    this.git(['update-ref', '-d', ref]);
  }

  /** Commits in `base..head`, oldest first (`--first-parent` not applied). */
  commitsBetween(base: string, head: string): string[] {
    const out = this.out(['rev-list', '--reverse', '--topo-order', `${base}..${head}`]);
    return out ? out.split('\n') : [];
  }

  /**
   * A three-way merge without a worktree: the resulting tree and whether it is clean. Remembered per commit pair: two
   * commits always merge to the same tree (written to the object database the first time), and a pull request's
   * mergeability, its test merge and its merge each ask for the same pair while a workflow step waits on the answer.
   */
  mergeTree(ours: string, theirs: string): { clean: boolean; tree: string; conflicts: string[] } {
    const key = `${ours} ${theirs}`;
    const known = this.merges.get(key);
    if (known) return { ...known, conflicts: [...known.conflicts] };
    const r = this.git(['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, theirs], {
      okCodes: [1],
    });
    const lines = r.stdout.split('\n').filter(Boolean);
    const merged = { clean: r.status === 0, tree: lines[0] ?? '', conflicts: lines.slice(1) };
    // only full commit ids name the same commits forever (a branch name or short id could move)
    if (/^[0-9a-f]{40}$/.test(ours) && /^[0-9a-f]{40}$/.test(theirs)) this.merges.set(key, merged);
    return { ...merged, conflicts: [...merged.conflicts] };
  }

  commitTree(tree: string, parents: string[], message: string, author: GitIdentity, committer: GitIdentity): string {
    return this.out(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], {
      input: message,
      env: identityEnv(author, committer),
    });
  }

  /**
   * Replays `base..head` onto `onto` (a rebase merge), one commit at a time in a temporary worktree, keeping each
   * commit's author and message. Returns the new tip, or undefined on a conflict (nothing is changed then).
   */
  rebase(onto: string, base: string, head: string, committer: GitIdentity): string | undefined {
    const work = mkdtempSync(join(tmpdir(), 'hydraflow-rebase-'));
    try {
      this.git(['worktree', 'add', '--detach', work, onto]);
      const env = {
        GIT_COMMITTER_NAME: committer.name,
        GIT_COMMITTER_EMAIL: committer.email,
        ...(committer.date !== undefined ? { GIT_COMMITTER_DATE: `${committer.date} +0000` } : {}),
      };
      const commits = this.commitsBetween(base, head);
      for (const c of commits) {
        const r = runGit(['cherry-pick', '--allow-empty', '--keep-redundant-commits', c], {
          cwd: work,
          env,
          okCodes: [1],
        });
        if (r.status !== 0) {
          runGit(['cherry-pick', '--abort'], { cwd: work, okCodes: [1, 128] });
          return undefined;
        }
      }
      return runGit(['rev-parse', 'HEAD'], { cwd: work }).stdout.trim();
    } finally {
      this.git(['worktree', 'remove', '--force', work], { okCodes: [1, 128] });
      rmSync(work, { recursive: true, force: true });
      this.git(['worktree', 'prune'], { okCodes: [1, 128] });
    }
  }

  /**
   * The files of a pull request the way GitHub computes them: the diff from the merge base of base and head to head
   * (`base...head`), with rename detection; `patch` holds the hunks only (from the first `@@`), as in the REST API.
   */
  diffFiles(base: string, head: string): PullDiffFile[] {
    const range = `${base}...${head}`;
    const common = ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '-M'];
    const nameStatus = this.git([...common, '--name-status', '-z', range]).stdout.split('\0');
    const numstat = this.git([...common, '--numstat', '-z', range]).stdout.split('\0');
    const patchText = this.git([...common, '-U3', range]).stdout;
    const sections = patchText.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));

    const entries: Array<{ status: string; path: string; from?: string }> = [];
    for (let i = 0; i < nameStatus.length;) {
      const code = nameStatus[i++];
      if (!code) break;
      if (code.startsWith('R') || code.startsWith('C')) {
        const from = nameStatus[i++]!;
        const to = nameStatus[i++]!;
        entries.push({ status: code[0]!, path: to, from });
      } else {
        entries.push({ status: code[0]!, path: nameStatus[i++]! });
      }
    }
    // numstat -z: "add\tdel\tpath\0" or, for renames, "add\tdel\t\0from\0to\0"
    const counts: Array<{ additions: number; deletions: number }> = [];
    for (let i = 0; i < numstat.length;) {
      const rec = numstat[i++];
      if (!rec) break;
      const [a, d, p] = rec.split('\t');
      if (p === '') i += 2;
      counts.push({ additions: a === '-' ? 0 : Number(a), deletions: d === '-' ? 0 : Number(d) });
    }
    return entries.map((e, idx) => {
      const status: PullDiffFile['status'] =
        e.status === 'A' ? 'added' : e.status === 'D' ? 'removed' : e.status === 'R' ? 'renamed' : 'modified';
      const section = sections[idx] ?? '';
      const at = section.search(/^@@ /m);
      const patch = at >= 0 ? section.slice(at).replace(/\n$/, '') : undefined;
      const file: PullDiffFile = {
        filename: e.path,
        status,
        additions: counts[idx]?.additions ?? 0,
        deletions: counts[idx]?.deletions ?? 0,
        ...(patch !== undefined ? { patch } : {}),
      };
      if (e.from !== undefined) file.previous_filename = e.from;
      return file;
    });
  }
}

/** Create an empty bare repository with `initialBranch` as HEAD. */
export function initBareRepo(dir: string, initialBranch = 'main'): GitRepo {
  runGit(['init', '--bare', '--quiet', `--initial-branch=${initialBranch}`, dir]);
  return new GitRepo(dir);
}
