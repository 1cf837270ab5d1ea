/**
 * Git objects as the git data API (POST /git/trees, /git/commits) and GraphQL (`Ref.target`, `Commit.file`,
 * `createCommitOnBranch`) see them: from the bare repository when the world has one, else from objects kept in memory
 * (a world without git has no code, but a branch of HydraFlow's own, its spend ledger, still needs commits). The
 * in-memory shas are git's own (the same bytes git would hash), so both kinds of world answer alike. Trees are flat:
 * a path with a directory in it is not emulated.
 */
import { createHash } from 'node:crypto';
import type { GitIdentity, GitRepo } from './git';

export interface GitCommitObject {
  tree: string;
  parents: string[];
  message: string;
  author: GitIdentity;
  committer: GitIdentity;
}

export interface GitTreeInput {
  path: string;
  mode: string;
  /** The new file's text; or `sha` of an existing blob; `sha: null` deletes the path. */
  content?: string;
  sha?: string | null;
}

export interface GitData {
  /** A new tree: `base`'s entries (if any) with `entries` applied. Throws on a path with a directory in it. */
  createTree(base: string | undefined, entries: readonly GitTreeInput[]): string;
  createCommit(commit: GitCommitObject): string;
  commit(sha: string): GitCommitObject | undefined;
  /** The blob at `path` in commit `sha`. */
  fileAt(sha: string, path: string): { oid: string; text: string } | undefined;
  /** Whether `ancestor` is `descendant` or one of its ancestors. */
  isAncestor(ancestor: string, descendant: string): boolean;
}

type Entry = { mode: string; sha: string };

function flatPath(path: string): string {
  if (path === '' || path.includes('/')) throw new Error(`tree path "${path}" (directories are not emulated)`);
  return path;
}

function applyEntries(base: Map<string, Entry>, entries: readonly GitTreeInput[], blob: (text: string) => string) {
  const out = new Map(base);
  for (const e of entries) {
    const path = flatPath(e.path);
    if (e.content !== undefined) out.set(path, { mode: e.mode, sha: blob(e.content) });
    else if (e.sha === null) out.delete(path);
    else if (e.sha) out.set(path, { mode: e.mode, sha: e.sha });
  }
  return out;
}

const identityLine = (who: GitIdentity) => `${who.name} <${who.email}> ${who.date ?? 0} +0000`;

/** Objects in memory, hashed as git hashes them. */
export class MemoryGitData implements GitData {
  private readonly blobs = new Map<string, string>();
  private readonly trees = new Map<string, Map<string, Entry>>();
  private readonly commits = new Map<string, GitCommitObject>();

  private hash(type: string, body: Buffer): string {
    return createHash('sha1')
      .update(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]))
      .digest('hex');
  }

  private blob(text: string): string {
    const sha = this.hash('blob', Buffer.from(text));
    this.blobs.set(sha, text);
    return sha;
  }

  createTree(base: string | undefined, entries: readonly GitTreeInput[]): string {
    const tree = applyEntries(base ? (this.trees.get(base) ?? new Map()) : new Map(), entries, (t) => this.blob(t));
    const body = Buffer.concat(
      [...tree.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([path, e]) => Buffer.concat([Buffer.from(`${e.mode} ${path}\0`), Buffer.from(e.sha, 'hex')])),
    );
    const sha = this.hash('tree', body);
    this.trees.set(sha, tree);
    return sha;
  }

  createCommit(commit: GitCommitObject): string {
    const text = [
      `tree ${commit.tree}`,
      ...commit.parents.map((p) => `parent ${p}`),
      `author ${identityLine(commit.author)}`,
      `committer ${identityLine(commit.committer)}`,
      '',
      commit.message,
    ].join('\n');
    const sha = this.hash('commit', Buffer.from(text));
    this.commits.set(sha, commit);
    return sha;
  }

  commit(sha: string): GitCommitObject | undefined {
    return this.commits.get(sha);
  }

  fileAt(sha: string, path: string): { oid: string; text: string } | undefined {
    const entry = this.trees.get(this.commits.get(sha)?.tree ?? '')?.get(path);
    const text = entry && this.blobs.get(entry.sha);
    return entry && text !== undefined ? { oid: entry.sha, text } : undefined;
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const queue = [descendant];
    while (queue.length > 0) {
      const sha = queue.pop()!;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.commits.get(sha)?.parents ?? []));
    }
    return false;
  }
}

/** Objects in the world's bare repository. */
export class BareGitData implements GitData {
  constructor(private readonly git: GitRepo) {}

  createTree(base: string | undefined, entries: readonly GitTreeInput[]): string {
    const current = new Map<string, Entry>();
    for (const e of base ? this.git.lsTree(base) : []) current.set(e.path, { mode: e.mode, sha: e.sha });
    const tree = applyEntries(current, entries, (text) =>
      this.git.out(['hash-object', '-w', '--stdin'], { input: text }),
    );
    const listing = [...tree.entries()].map(([path, e]) => `${e.mode} blob ${e.sha}\t${path}`).join('\n');
    return this.git.out(['mktree'], { input: listing ? `${listing}\n` : '' });
  }

  createCommit(commit: GitCommitObject): string {
    return this.git.commitTree(commit.tree, commit.parents, commit.message, commit.author, commit.committer);
  }

  commit(sha: string): GitCommitObject | undefined {
    if (!this.git.commitExists(sha)) return undefined;
    const raw = this.git.out(['cat-file', 'commit', sha]);
    const split = raw.indexOf('\n\n');
    const headers = raw.slice(0, split).split('\n');
    const field = (name: string) =>
      headers.filter((h) => h.startsWith(`${name} `)).map((h) => h.slice(name.length + 1));
    const identity = (line: string | undefined): GitIdentity => {
      const m = /^(.*) <(.*)> (\d+) [+-]\d{4}$/.exec(line ?? '');
      return { name: m?.[1] ?? '', email: m?.[2] ?? '', date: Number(m?.[3] ?? 0) };
    };
    return {
      tree: field('tree')[0]!,
      parents: field('parent'),
      message: split < 0 ? '' : raw.slice(split + 2),
      author: identity(field('author')[0]),
      committer: identity(field('committer')[0]),
    };
  }

  fileAt(sha: string, path: string): { oid: string; text: string } | undefined {
    const entry = this.git.lsTree(sha, path).find((e) => e.path === path && e.type === 'blob');
    return entry ? { oid: entry.sha, text: this.git.readBlob(entry.sha).toString('utf8') } : undefined;
  }

  isAncestor(ancestor: string, descendant: string): boolean {
    return this.git.isAncestor(ancestor, descendant);
  }
}
