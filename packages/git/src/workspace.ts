/**
 * GitWorkspace: the git CLI at one directory, through execFile (no shell, arguments never interpolated).
 *
 * Hardening, because the working tree is written by an agent and by commands the agent can influence:
 * - every git call disables hooks (`core.hooksPath=/dev/null`, and `commit --no-verify`) and fsmonitor, so nothing the
 *   agent planted in the repository runs inside HydraFlow's process tree with its environment;
 * - git runs with a scrubbed environment (no GITHUB_*, ACTIONS_*, INPUT_*, *TOKEN*, *KEY*, *SECRET*, *PASSWORD*), and no
 *   terminal prompts;
 * - a push token goes only on the command line, as `-c http.<origin>/.extraheader=AUTHORIZATION: basic …` scoped to
 *   the push URL's origin: never written to .git/config, never in an error message (redacted), never logged;
 * - the push URL is captured when the workspace is opened (`GitWorkspace.open`), before any agent ran, so a rewritten
 *   `remote.origin.url` cannot redirect the token;
 * - branch names are checked (`[A-Za-z0-9._/-]`, no leading `-`, and `git check-ref-format --branch`'s rules), so a model-chosen
 *   name can never become a flag of `git push` / `git checkout`.
 *
 * Not covered here (docs/architecture.md, known limits): a repository-local `url.<x>.insteadOf`, `http.proxy` or filter
 * driver written by an agent's command still applies to our git calls (the header being origin-scoped, it is not sent
 * to a rewritten host); the robust fix is to run the agent's commands as another user or in a container.
 */
import { execFile } from 'node:child_process';
// the errors alone, not the barrel: the publish step loads git before the rest of HydraFlow (src/phases/publish-fetch.ts)
import { HydraflowError } from '@hydraflow/core/errors';
import { parseBranchFiles, type BranchFile } from './branch-files';

export class GitError extends HydraflowError {
  override name = 'GitError';
  constructor(
    message: string,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** A push git refused because the remote branch holds commits the pushed one does not (not a fast-forward). */
export function isRefusedPush(error: unknown): boolean {
  return error instanceof GitError && /\[rejected\]|non-fast-forward|fetch first/.test(error.stderr);
}

export interface GitIdentity {
  name: string;
  email: string;
}

export type ChangeStatus =
  'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'typechange' | 'untracked' | 'conflicted';

export interface ChangedFile {
  path: string;
  status: ChangeStatus;
  /** For renames and copies: the path it came from. */
  from?: string;
  /** True when the change (or part of it) is staged. */
  staged: boolean;
  /** Raw porcelain v1 XY code, e.g. ' M', 'A ', '??'. */
  code: string;
}

/** One path of a staged change, as `git diff --cached --raw` reports it, with its new content's size. */
export interface StagedEntry {
  path: string;
  /** `A` added, `M` modified, `D` deleted, `T` type changed. */
  status: string;
  /** Git's file modes: 100644 file, 100755 executable, 120000 symbolic link, 160000 submodule, 000000 none. */
  oldMode: string;
  newMode: string;
  blob: string;
  /** Size of the new content in bytes (0 when deleted). */
  bytes: number;
}

function assertSha(sha: string): void {
  if (!/^[0-9a-f]{40}$/.test(sha)) throw new GitError(`Refusing commit ${JSON.stringify(sha)}`, [], null, '');
}

export interface GitWorkspaceOptions {
  /** The git executable (default `git` from PATH). */
  gitPath?: string;
  /** Remote name (default `origin`). */
  remote?: string;
  /**
   * The URL pushes and fetches go to. Default: the remote's URL as read by `GitWorkspace.open` (captured before any
   * agent touched the repository). Without it (plain constructor), the remote name is used.
   */
  remoteUrl?: string;
  /** Environment for git (default: process.env, scrubbed). */
  env?: NodeJS.ProcessEnv;
  /** Per-command timeout in ms (default 5 minutes). */
  timeoutMs?: number;
}

const SAFE_BRANCH = /^[A-Za-z0-9._/-]+$/;

/** Branch names HydraFlow will pass to git: `[A-Za-z0-9._/-]`, not starting with `-` or `/`, no `..`, `//`, `.lock`. */
export function isSafeBranchName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= 200 &&
    SAFE_BRANCH.test(name) &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.startsWith('.') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    !name.endsWith('.lock') &&
    !name.includes('.lock/') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.includes('/.') &&
    name !== 'HEAD'
  );
}

export function assertSafeBranchName(name: string): void {
  if (!isSafeBranchName(name))
    throw new GitError(
      `Refusing branch name ${JSON.stringify(name)}: only [A-Za-z0-9._/-] is allowed, not starting with '-'`,
      [],
      null,
      '',
    );
}

const SECRET_ENV = [
  /^GITHUB_/i,
  /^ACTIONS_/i,
  /^INPUT_/i,
  /^RUNNER_/i,
  /TOKEN/i,
  /KEY/i,
  /SECRET/i,
  /PASSW/i,
  /CREDENTIAL/i,
  /^HYDRAFLOW_/i,
];

/** process.env without anything that looks like a secret or runner plumbing; git-specific settings forced. */
export function scrubGitEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || SECRET_ENV.some((p) => p.test(k))) continue;
    // Git's own env overrides could point git elsewhere (GIT_DIR, GIT_CONFIG_*, GIT_SSH_COMMAND…): none inherited.
    if (/^GIT_/i.test(k)) continue;
    out[k] = v;
  }
  out.GIT_TERMINAL_PROMPT = '0';
  out.GCM_INTERACTIVE = 'never';
  out.LC_ALL = 'C';
  return out;
}

/** Config every call carries: no hooks, no fsmonitor, no pager, no signing prompts. */
const HARDENING = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'commit.gpgsign=false'];

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return `${u.protocol}//${u.host}/`;
  } catch {
    return undefined;
  }
}

export class GitWorkspace {
  private readonly git: string;
  private readonly remote: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly timeoutMs: number;
  private readonly secrets: string[] = [];

  constructor(
    readonly dir: string,
    private readonly options: GitWorkspaceOptions = {},
  ) {
    this.git = options.gitPath ?? 'git';
    this.remote = options.remote ?? 'origin';
    this.env = scrubGitEnv(options.env ?? process.env);
    this.timeoutMs = options.timeoutMs ?? 5 * 60_000;
  }

  /** Open a workspace and capture the remote's URL now, before any agent can rewrite .git/config. */
  static async open(dir: string, options: GitWorkspaceOptions = {}): Promise<GitWorkspace> {
    const probe = new GitWorkspace(dir, options);
    if (options.remoteUrl !== undefined) return probe;
    const url = await probe.run(['remote', 'get-url', probe.remote], { allowFail: true });
    return url.code === 0 && url.stdout.trim()
      ? new GitWorkspace(dir, { ...options, remoteUrl: url.stdout.trim() })
      : probe;
  }

  /** Where pushes and fetches go: the captured URL, else the remote name. */
  get pushTarget(): string {
    return this.options.remoteUrl ?? this.remote;
  }

  private redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (s) out = out.split(s).join('***');
    return out.replace(/(AUTHORIZATION:\s*\w+\s+)\S+/gi, '$1***');
  }

  /** Run git; throws GitError (redacted) on a non-zero exit unless allowFail. */
  private run(
    args: string[],
    opts: { allowFail?: boolean; config?: string[]; stdin?: string | Buffer; index?: string } = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const full = [...HARDENING, ...(opts.config ?? []), ...args];
    const env = opts.index ? { ...this.env, GIT_INDEX_FILE: opts.index } : this.env;
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.git,
        full,
        { cwd: this.dir, env, timeout: this.timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          if (error && (!opts.allowFail || code === -1)) {
            const shown = args.map((a) => this.redact(a)).join(' ');
            const why = code === -1 ? (error.killed ? 'timed out' : this.redact(error.message)) : `exit ${code}`;
            reject(
              new GitError(
                `git ${shown} failed (${why}): ${this.redact(String(stderr)).trim().slice(-2000)}`,
                args.map((a) => this.redact(a)),
                code === -1 ? null : code,
                this.redact(String(stderr)),
              ),
            );
            return;
          }
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      // git may exit before reading its input (a commit refused at once): the exit code tells; the broken pipe does not.
      child.stdin?.on('error', () => undefined);
      if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
      else child.stdin?.end();
    });
  }

  async headSha(): Promise<string> {
    return (await this.run(['rev-parse', '--verify', 'HEAD^{commit}'])).stdout.trim();
  }

  /** The checked-out branch, or null on a detached HEAD. */
  async currentBranch(): Promise<string | null> {
    const r = await this.run(['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : null;
  }

  private auth(token: string | undefined): string[] {
    if (!token) return [];
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    this.secrets.push(token, basic);
    const origin = originOf(this.pushTarget);
    const key = origin ? `http.${origin}.extraheader` : 'http.extraheader';
    return ['-c', `${key}=AUTHORIZATION: basic ${basic}`];
  }

  /**
   * Fetch one branch from the remote into `refs/remotes/<remote>/<branch>`. Returns false when the remote has no such
   * branch.
   */
  async fetch(branch: string, options: { token?: string; depth?: number } = {}): Promise<boolean> {
    assertSafeBranchName(branch);
    return this.fetchChecked(branch, options);
  }

  private async fetchChecked(branch: string, options: { token?: string; depth?: number }): Promise<boolean> {
    const depth = options.depth !== undefined ? [`--depth=${Math.max(1, Math.floor(options.depth))}`] : [];
    const r = await this.run(
      [
        'fetch',
        '--no-tags',
        '--quiet',
        ...depth,
        this.pushTarget,
        `+refs/heads/${branch}:refs/remotes/${this.remote}/${branch}`,
      ],
      { allowFail: true, config: this.auth(options.token) },
    );
    if (r.code === 0) return true;
    if (/couldn't find remote ref|no such ref|not our ref/i.test(r.stderr)) return false;
    throw new GitError(
      `git fetch ${branch} failed (exit ${r.code}): ${this.redact(r.stderr).trim().slice(-2000)}`,
      ['fetch', branch],
      r.code,
      this.redact(r.stderr),
    );
  }

  /** The commit `ref` names, or undefined when it names none. */
  private async commitOf(ref: string): Promise<string | undefined> {
    const r = await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  /**
   * Switch to `name`, idempotent across re-runs: if the remote has the branch (it is fetched first), continue from it
   * (`resumed: true`); otherwise create or reset it at `from`. Uncommitted changes are discarded by neither path: git
   * refuses the switch if they would be overwritten. `fetched`: that fetch (`fetch(name)`), begun earlier by the caller.
   */
  async checkoutBranch(
    name: string,
    options: { from: string; token?: string; fetched?: Promise<boolean> },
  ): Promise<{ resumed: boolean; head: string }> {
    assertSafeBranchName(name);
    const remoteRef = `refs/remotes/${this.remote}/${name}`;
    let onRemote: boolean | undefined;
    try {
      onRemote = await (options.fetched ?? this.fetchChecked(name, options.token ? { token: options.token } : {}));
    } catch {
      onRemote = undefined; // no remote / offline: fall back to what we have locally
    }
    // The start point's commit is the head after `checkout -B`: read once, it also proves the start point exists.
    const fromRemote = onRemote !== false ? await this.commitOf(remoteRef) : undefined;
    const start = fromRemote ? remoteRef : options.from;
    const head = fromRemote ?? (start.startsWith('-') ? undefined : await this.commitOf(start));
    if (!head)
      throw new GitError(
        `Cannot create branch ${name}: start point ${JSON.stringify(start)} does not exist`,
        [],
        null,
        '',
      );
    await this.run(['checkout', '--quiet', '--no-track', '-B', name, head, '--']);
    return { resumed: fromRemote !== undefined, head };
  }

  /**
   * Makes the directory a git repository if it is not one (a job without a checkout step fetches what it needs).
   * `git init` leaves an existing repository as it is, so it is run without asking first.
   */
  async ensureRepository(): Promise<void> {
    await this.run(['-c', 'init.defaultBranch=hydraflow', 'init', '--quiet']);
  }

  /** Puts the working tree at the remote branch `branch` (fetched), on a detached HEAD, as a job's checkout would. */
  async detachAtRemote(branch: string): Promise<void> {
    assertSafeBranchName(branch);
    await this.run(['checkout', '--quiet', '--detach', `refs/remotes/${this.remote}/${branch}`, '--']);
  }

  /**
   * Stages the whole working tree (untracked files included, ignored ones not) into `index`, a throwaway index file,
   * on top of `start`'s tree: the repository's own index, which the agent's commands may have written, is not used.
   */
  async snapshot(start: string, index: string): Promise<void> {
    assertSha(start);
    await this.run(['read-tree', start], { index });
    await this.run(['add', '--all', '--', '.'], { index });
  }

  /**
   * What the index (or `index`, a throwaway one) holds against the commit `against`, one entry per path: modes and
   * the new content's size read from git's object database, never through the working tree. Renames off.
   */
  async stagedEntries(against: string, options: { index?: string } = {}): Promise<StagedEntry[]> {
    assertSha(against);
    const raw = await this.run(['diff', '--cached', '--raw', '-z', '--no-renames', '--abbrev=40', against, '--'], {
      ...(options.index ? { index: options.index } : {}),
    });
    const fields = raw.stdout.split('\0');
    const entries: StagedEntry[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const m = /^:(\d{6}) (\d{6}) [0-9a-f]+ ([0-9a-f]+) ([A-Z])/.exec(fields[i]!);
      if (!m) continue;
      entries.push({ path: fields[i + 1]!, oldMode: m[1]!, newMode: m[2]!, blob: m[3]!, status: m[4]!, bytes: 0 });
    }
    // Sizes of the new blobs in one git process (a gitlink names a commit of another repository: missing here).
    const blobs = entries.filter((e) => e.status !== 'D' && e.newMode !== '160000');
    if (blobs.length > 0) {
      const sizes = await this.run(['cat-file', '--batch-check=%(objectsize)'], {
        stdin: blobs.map((e) => `${e.blob}\n`).join(''),
      });
      sizes.stdout
        .trim()
        .split('\n')
        .forEach((line, i) => (blobs[i]!.bytes = Number(line) || 0));
    }
    return entries;
  }

  /**
   * Writes the change from the commit `against` to `index` (a throwaway index) as a binary patch to `file`: full
   * object names, no renames, fixed `a/` `b/` prefixes, no external diff or textconv whatever the repository's config
   * says. `leaveOut`: paths not to include.
   */
  async writePatch(against: string, file: string, options: { index: string; leaveOut?: string[] }): Promise<void> {
    assertSha(against);
    await this.run(
      [
        '-c',
        'core.quotePath=false',
        'diff',
        '--cached',
        '--binary',
        '--full-index',
        '--no-renames',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '--src-prefix=a/',
        '--dst-prefix=b/',
        `--output=${file}`,
        against,
        '--',
        '.',
        ...(options.leaveOut ?? []).map((p) => `:(exclude,literal)${p}`),
      ],
      { index: options.index },
    );
  }

  /**
   * HEAD detached at `sha` and the index reset to its tree, fetching the commit first if this clone lacks it. The
   * working tree is left as it is: nothing HydraFlow does after this reads it.
   */
  async resetIndexTo(sha: string, options: { token?: string } = {}): Promise<void> {
    assertSha(sha);
    // HEAD and the index are separate files: both are set at once. A clone that lacks the commit fails both, and
    // fetches it first (asked only then: the publish job has usually just fetched it with its base branch).
    const reset = () =>
      Promise.all([this.run(['update-ref', '--no-deref', 'HEAD', sha]), this.run(['read-tree', sha])]);
    try {
      return void (await reset());
    } catch (error) {
      if (await this.commitOf(sha)) throw error; // the commit is there: something else failed
    }
    await this.run(['fetch', '--no-tags', '--quiet', this.pushTarget, sha], { config: this.auth(options.token) });
    await reset();
  }

  /**
   * Applies a patch to the index only (`git apply --cached`): git parses it as data and writes blobs and index
   * entries, never a file of the working tree, so no filter, hook or link of the change runs or is followed. Throws
   * GitError with git's reason when the patch does not apply.
   */
  async applyToIndex(patch: Buffer): Promise<void> {
    await this.run(['apply', '--cached', '--binary', '--whitespace=nowarn', '--recount', '-'], { stdin: patch });
  }

  /** Staged, unstaged and untracked (not ignored) changes, one entry per path. */
  async changedFiles(): Promise<ChangedFile[]> {
    const r = await this.run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
    const fields = r.stdout.split('\0');
    const out: ChangedFile[] = [];
    for (let i = 0; i < fields.length; i++) {
      const entry = fields[i];
      if (!entry || entry.length < 4) continue;
      const code = entry.slice(0, 2);
      const path = entry.slice(3);
      const [x, y] = [code[0] ?? ' ', code[1] ?? ' '];
      let from: string | undefined;
      if (x === 'R' || x === 'C') from = fields[++i];
      const status: ChangeStatus =
        code === '??'
          ? 'untracked'
          : x === 'U' || y === 'U' || code === 'AA' || code === 'DD'
            ? 'conflicted'
            : x === 'R'
              ? 'renamed'
              : x === 'C'
                ? 'copied'
                : x === 'D' || y === 'D'
                  ? 'deleted'
                  : x === 'A'
                    ? 'added'
                    : x === 'T' || y === 'T'
                      ? 'typechange'
                      : 'modified';
      out.push({ path, status, staged: code !== '??' && x !== ' ', code, ...(from !== undefined ? { from } : {}) });
    }
    return out;
  }

  /**
   * Unified diff of tracked files: the working tree against the index, or (`staged`) the index against HEAD. Binary
   * files are diffed as text (a search of the diff sees their bytes too), with no renames and the standard `a/` `b/`
   * prefixes whatever the repository's config says, since the agent's commands could have changed it.
   */
  async diff(options: { staged?: boolean } = {}): Promise<string> {
    return (
      await this.run([
        '-c',
        'core.quotePath=false',
        'diff',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '--text',
        '--no-renames',
        '--src-prefix=a/',
        '--dst-prefix=b/',
        ...(options.staged ? ['--cached'] : []),
        '--',
      ])
    ).stdout;
  }

  /**
   * The files a pull request from HEAD into `base` (a ref, e.g. `origin/main`) shows, as GitHub lists them: the diff of
   * `base...HEAD` (from their merge base), renames detected; external diff drivers and textconv filters off, since the
   * agent's commands could have configured them. `staged`: of the commit the index would make, before it is made (the
   * index against the merge base of `base` and HEAD, which a commit on HEAD does not move).
   */
  async branchFiles(base: string, options: { staged?: boolean } = {}): Promise<BranchFile[]> {
    if (base.startsWith('-')) throw new GitError(`Refusing base ${JSON.stringify(base)}`, [], null, '');
    const diff = (...args: string[]) =>
      this.run([
        '-c',
        'core.quotePath=false',
        'diff',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '-M',
        ...args,
        ...(options.staged ? ['--cached', '--merge-base', base] : [`${base}...HEAD`]),
        '--',
      ]).then((r) => r.stdout);
    const [nameStatus, numstat, patch] = await Promise.all([
      diff('--name-status', '-z'),
      diff('--numstat', '-z'),
      diff('-U3'),
    ]);
    return parseBranchFiles(nameStatus, numstat, patch);
  }

  /** Stage everything (`add -A`) and commit as `author`; null when there is nothing to commit. */
  async commitAll(message: string, author: GitIdentity): Promise<string | null> {
    await this.stageAll();
    return this.commitStaged(message, author);
  }

  /** Stage every change of the working tree, untracked files included (`add -A`). */
  async stageAll(): Promise<void> {
    await this.run(['add', '--all', '--', '.']);
  }

  /** Commit what is staged as `author`; null when nothing is. */
  async commitStaged(message: string, author: GitIdentity): Promise<string | null> {
    const commit = await this.run(['commit', '--quiet', '--no-verify', '--file=-'], {
      allowFail: true,
      stdin: message,
      config: [
        '-c',
        `user.name=${author.name}`,
        '-c',
        `user.email=${author.email}`,
        '-c',
        `committer.name=${author.name}`,
        '-c',
        `committer.email=${author.email}`,
      ],
    });
    if (commit.code !== 0) {
      // Asked only when the commit failed: a failure with nothing staged is "nothing to commit", anything else an error.
      const staged = await this.run(['diff', '--cached', '--quiet', '--no-ext-diff'], { allowFail: true });
      if (staged.code === 0) return null;
      throw new GitError(
        `git commit failed (exit ${commit.code}): ${this.redact(commit.stderr || commit.stdout)
          .trim()
          .slice(-2000)}`,
        ['commit'],
        commit.code,
        this.redact(commit.stderr),
      );
    }
    return this.headSha();
  }

  /**
   * Push HEAD to `refs/heads/<branch>` on the captured remote URL. With a token, it authenticates with an HTTP header
   * given on the command line only. Never forces.
   */
  async push(branch: string, options: { token?: string } = {}): Promise<void> {
    assertSafeBranchName(branch);
    await this.run(['push', '--quiet', '--no-verify', this.pushTarget, `HEAD:refs/heads/${branch}`], {
      config: this.auth(options.token),
    });
    // Keep the remote-tracking ref in step when pushing to the named remote's URL.
    await this.run(['update-ref', `refs/remotes/${this.remote}/${branch}`, 'HEAD'], { allowFail: true });
  }

  /**
   * After a push of HEAD to `branch` was refused: the commit of the remote branch that is HEAD's twin — the same tree
   * on the same parents, so the same change committed at another moment (an earlier attempt of the same job) — when the
   * branch holds one, right after HEAD's parent on its first-parent line, with or without commits on top of it; else
   * undefined.
   */
  async pushedTwin(branch: string, options: { token?: string } = {}): Promise<string | undefined> {
    if (!(await this.fetch(branch, options))) return undefined;
    const ours = await this.treeAndParents('HEAD');
    const parent = ours.content.split(' ')[1];
    if (!parent) return undefined;
    const chain = await this.run(
      ['rev-list', '--first-parent', '--reverse', `${parent}..refs/remotes/${this.remote}/${branch}`, '--'],
      { allowFail: true },
    );
    const next = chain.stdout.split('\n')[0]?.trim();
    if (chain.code !== 0 || !next) return undefined;
    const theirs = await this.treeAndParents(next);
    return theirs.content === ours.content ? theirs.sha : undefined;
  }

  private async treeAndParents(ref: string): Promise<{ sha: string; content: string }> {
    const [sha = '', ...rest] = (await this.run(['log', '-1', '--format=%H %T %P', ref, '--'])).stdout
      .trim()
      .split(' ');
    return { sha, content: rest.join(' ') };
  }
}
