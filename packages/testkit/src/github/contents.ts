/**
 * The repository's files at a ref, as GET /contents and GET /actions/workflows read them: from the bare git repository
 * when the world has one, else from `world.files` (path → content, directories implied, the same at every ref).
 */
import { createHash } from 'node:crypto';
import { fakeSha, type GitHubWorld } from './world';

export interface RepoEntry {
  type: 'file' | 'dir' | 'symlink' | 'submodule';
  name: string;
  path: string;
  /** blob, tree or (submodule) commit id */
  sha: string;
  /** bytes; 0 for directories and submodules */
  size: number;
  /** git's file mode (100755 for an executable); absent in a world without git, where every file is 100644 */
  mode?: string;
}

export type RepoPath =
  | (RepoEntry & { type: 'file'; content: Buffer })
  | (RepoEntry & { type: 'symlink'; target: string })
  | (RepoEntry & { type: 'submodule' })
  | (RepoEntry & { type: 'dir'; entries: RepoEntry[] });

/** git's blob id of `content` */
export function blobSha(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * The commit `ref` (a branch, a tag, a full ref name or a commit sha) names, or undefined when it names nothing. Without
 * a git repository: the sha of a known ref.
 */
export function resolveCommitish(world: GitHubWorld, ref: string): string | undefined {
  if (!ref || ref.startsWith('-')) return undefined;
  if (world.git) return world.git.revParse(ref);
  for (const full of [ref, `refs/heads/${ref}`, `refs/tags/${ref}`]) {
    const sha = world.refs.get(full);
    if (sha) return sha;
  }
  return [...world.refs.values()].find((s) => s === ref);
}

/** The file, directory, symlink or submodule at `path` ("" is the root) in `commit`, or undefined. */
export function readRepoPath(world: GitHubWorld, commit: string, path: string): RepoPath | undefined {
  return world.git ? readGitPath(world, commit, path) : readWorldFiles(world, path);
}

function readGitPath(world: GitHubWorld, commit: string, path: string): RepoPath | undefined {
  const git = world.git!;
  const listDir = (tree: string, dir: string): RepoEntry[] =>
    git.lsTree(tree).map((e) => {
      const type =
        e.type === 'tree' ? 'dir' : e.type === 'commit' ? 'submodule' : e.mode === '120000' ? 'symlink' : 'file';
      return { type, name: e.path, path: dir ? `${dir}/${e.path}` : e.path, sha: e.sha, size: e.size, mode: e.mode };
    });
  if (path === '') {
    const tree = git.out(['rev-parse', `${commit}^{tree}`]);
    return { type: 'dir', name: '', path: '', sha: tree, size: 0, entries: listDir(tree, '') };
  }
  const e = git.lsTree(commit, path).find((x) => x.path === path);
  if (!e) return undefined;
  const base = { name: baseName(path), path, sha: e.sha, size: e.size };
  if (e.type === 'tree') return { ...base, type: 'dir', size: 0, entries: listDir(e.sha, path) };
  if (e.type === 'commit') return { ...base, type: 'submodule', size: 0 };
  const content = git.readBlob(e.sha);
  if (e.mode === '120000') return { ...base, type: 'symlink', target: content.toString('utf8') };
  return { ...base, type: 'file', content };
}

function readWorldFiles(world: GitHubWorld, path: string): RepoPath | undefined {
  const text = world.files.get(path);
  if (text !== undefined) {
    const content = Buffer.from(text, 'utf8');
    return { type: 'file', name: baseName(path), path, sha: blobSha(content), size: content.length, content };
  }
  const prefix = path ? `${path}/` : '';
  const children = new Map<string, RepoEntry>();
  for (const [p, t] of [...world.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const name = rest.split('/')[0]!;
    if (children.has(name)) continue;
    const childPath = prefix + name;
    if (rest.includes('/')) children.set(name, { type: 'dir', name, path: childPath, sha: '', size: 0 });
    else {
      const content = Buffer.from(t, 'utf8');
      children.set(name, { type: 'file', name, path: childPath, sha: blobSha(content), size: content.length });
    }
  }
  if (children.size === 0) return undefined;
  const entries = [...children.values()].map((c) =>
    c.type === 'dir' ? { ...c, sha: (readWorldFiles(world, c.path) as RepoEntry).sha } : c,
  );
  const sha = fakeSha(`tree ${path}\n${entries.map((c) => `${c.type} ${c.sha} ${c.name}`).join('\n')}`);
  return { type: 'dir', name: baseName(path), path, sha, size: 0, entries };
}

export interface RepoWorkflow {
  id: number;
  /** ".github/workflows/ci.yml" */
  path: string;
  /** the file's top-level `name:`, else its path (as GitHub names an unnamed workflow) */
  name: string;
}

/** A stable workflow id per path (GitHub's are assigned at first push; ours are derived). */
export function workflowId(path: string): number {
  return 100_000_000 + (parseInt(fakeSha(`workflow:${path}`).slice(0, 8), 16) % 100_000_000);
}

/** The workflows of the default branch: `.github/workflows/*.yml|yaml`, by path. */
export function repoWorkflows(world: GitHubWorld): RepoWorkflow[] {
  const commit = resolveCommitish(world, world.defaultBranch);
  const dir = commit ? readRepoPath(world, commit, '.github/workflows') : undefined;
  if (dir?.type !== 'dir') return [];
  return dir.entries
    .filter((e) => e.type === 'file' && /\.ya?ml$/.test(e.name))
    .map((e) => {
      const file = readRepoPath(world, commit!, e.path);
      const text = file?.type === 'file' ? file.content.toString('utf8') : '';
      return { id: workflowId(e.path), path: e.path, name: workflowName(text) ?? e.path };
    });
}

/** A workflow file's top-level `name:` (a plain or quoted scalar), if any. */
function workflowName(yaml: string): string | undefined {
  const m = /^name:[ \t]*(.*?)[ \t]*$/m.exec(yaml);
  if (!m) return undefined;
  let v = m[1]!;
  if (/^"(?:[^"\\]|\\.)*"/.test(v)) v = JSON.parse(/^"(?:[^"\\]|\\.)*"/.exec(v)![0]) as string;
  else if (/^'(?:[^']|'')*'/.test(v)) v = /^'((?:[^']|'')*)'/.exec(v)![1]!.replace(/''/g, "'");
  else v = v.replace(/\s+#.*$/, '');
  return v || undefined;
}
