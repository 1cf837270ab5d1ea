/**
 * Workflow-run artifacts as `actions/upload-artifact@v4` and `actions/download-artifact@v4` (and later majors) leave
 * and find them, simulated by their documented inputs and outputs:
 *
 * - upload: `path` lines are @actions/glob patterns (`*`, `**`, `?`, `[...]`, `!` exclusions, `#` comments, `~`),
 *   relative to the workspace; a directory matches everything under it. The artifact's root is the search path of the
 *   one pattern (a single literal file: its directory), or the least common ancestor of the search paths of several.
 *   Hidden files and directories (a name starting with `.`, the searched directory itself included) are skipped unless
 *   `include-hidden-files: true`. Artifacts are immutable: a second upload of a name in the same workflow run fails
 *   with GitHub's 409 message unless `overwrite: true`, which deletes the old one (the new one gets a new id).
 * - download: by `name`, by `artifact-ids`, or every artifact of the run (optionally filtered by `pattern`); one
 *   artifact by name (v4), or any single artifact (v5 and later), or `merge-multiple: true` extracts into `path`, else
 *   each into `path/<name>/`.
 *
 * Not GitHub's: files are copied, not zipped, so `size` is the sum of the file sizes and `artifact-digest` is the
 * SHA-256 of a deterministic serialization of the files (each path in sorted order, NUL, its size, NUL, its bytes),
 * not of a zip archive. Artifacts live in the lifecycle's own directory, outside every job's runner, for as long as
 * the lifecycle; a run's artifacts outlive its re-run attempts (as on GitHub).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';

export interface StoredArtifact {
  id: number;
  name: string;
  runId: number;
  /** GITHUB_RUN_ATTEMPT of the job that uploaded it */
  attempt: number;
  /** the job that uploaded it */
  job: string;
  /** where its files are kept (relative paths under it as uploaded) */
  dir: string;
  /** relative paths, sorted */
  files: string[];
  /** bytes: the sum of the file sizes (GitHub reports the zip's size) */
  size: number;
  /** SHA-256 hex of the files' serialization (see the module comment), not of a zip */
  digest: string;
  createdAt: string;
  expiresAt: string;
  /** head branch and sha of the run, for the REST representation */
  headBranch: string;
  headSha: string;
}

export interface ArtifactStore {
  /** every artifact kept so far (deleted ones are gone), oldest first */
  readonly all: StoredArtifact[];
  list(runId: number): StoredArtifact[];
  get(id: number): StoredArtifact | undefined;
  close(): void;
}

/** What a simulated action step produced (the shape of the simulator's step results). */
export interface ArtifactStepResult {
  outcome: 'success' | 'failure';
  outputs: Record<string, string>;
  stdout: string;
}

export interface ArtifactStepContext {
  store: ArtifactStoreImpl;
  owner: string;
  repo: string;
  runId: number;
  attempt: number;
  job: string;
  headBranch: string;
  headSha: string;
  workspace: string;
  /** the job's HOME, for `~` */
  home: string;
  /** `uses:` as written (its major version decides download destinations) */
  uses: string;
  inputs: Record<string, string>;
  now: () => Date;
}

export class ArtifactStoreImpl implements ArtifactStore {
  readonly all: StoredArtifact[] = [];
  private nextId = 4_100_000_001;

  constructor(readonly root: string) {
    mkdirSync(root, { recursive: true });
  }

  list(runId: number) {
    return this.all.filter((a) => a.runId === runId);
  }

  get(id: number) {
    return this.all.find((a) => a.id === id);
  }

  create(a: Omit<StoredArtifact, 'id' | 'dir'>, files: Map<string, string>): StoredArtifact {
    const id = this.nextId++;
    const dir = join(this.root, String(id));
    for (const [rel, source] of files) {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      copyFileSync(source, join(dir, rel));
    }
    mkdirSync(dir, { recursive: true });
    const stored = { ...a, id, dir };
    this.all.push(stored);
    return stored;
  }

  delete(id: number) {
    const i = this.all.findIndex((a) => a.id === id);
    if (i < 0) return;
    rmSync(this.all[i]!.dir, { recursive: true, force: true });
    this.all.splice(i, 1);
  }

  close() {
    rmSync(this.root, { recursive: true, force: true });
  }
}

// -- @actions/glob, the parts upload-artifact uses -------------------------------------------------------------------

interface GlobPattern {
  negate: boolean;
  /** absolute, normalized */
  pattern: string;
  searchPath: string;
  regex: RegExp;
  /** the pattern + `/**` (implicitDescendants) */
  descendants: RegExp;
}

const GLOB_CHARS = /[*?[]/;

function segmentRegex(seg: string): string {
  if (seg === '**') return '(?:[^/]*(?:/[^/]*)*)';
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = seg.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        const body = seg.slice(i + 1, end).replace(/^!/, '^');
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return re;
}

function globRegex(pattern: string): RegExp {
  const segs = pattern.split('/');
  let re = '';
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (i === 0 && seg === '') continue;
    if (seg === '**') re += i === segs.length - 1 ? '(?:/.*)?' : '(?:/[^/]+)*';
    else re += `/${segmentRegex(seg)}`;
  }
  return new RegExp(`^${re}$`);
}

function parsePatterns(text: string, cwd: string, home: string): GlobPattern[] {
  const out: GlobPattern[] = [];
  for (const raw of text.split('\n').map((l) => l.trim())) {
    if (!raw || raw.startsWith('#')) continue;
    let line = raw;
    let negate = false;
    while (line.startsWith('!')) {
      negate = !negate;
      line = line.slice(1);
    }
    if (line.startsWith('~')) line = home + line.slice(1);
    const pattern = normalize(isAbsolute(line) ? line : resolve(cwd, line)).replace(/\/+$/, '') || '/';
    const segs = pattern.split('/');
    const firstGlob = segs.findIndex((s) => GLOB_CHARS.test(s));
    const searchPath = firstGlob < 0 ? pattern : segs.slice(0, firstGlob).join('/') || '/';
    out.push({
      negate,
      pattern,
      searchPath,
      regex: globRegex(pattern),
      descendants: globRegex(`${pattern}/**`),
    });
  }
  return out;
}

/** Search paths as @actions/glob reports them: of the positive patterns, without those under another one. */
function searchPathsOf(patterns: GlobPattern[]): string[] {
  const positive = patterns.filter((p) => !p.negate).map((p) => p.searchPath);
  const set = new Set(positive);
  const out: string[] = [];
  for (const p of positive) {
    if (out.includes(p)) continue;
    let parent = dirname(p);
    let under = false;
    for (let cur = p; parent !== cur; cur = parent, parent = dirname(parent)) {
      if (set.has(parent)) {
        under = true;
        break;
      }
    }
    if (!under) out.push(p);
  }
  return out;
}

function matches(patterns: GlobPattern[], path: string): boolean {
  let result = false;
  for (const p of patterns) {
    const hit = p.regex.test(path) || p.descendants.test(path);
    if (p.negate) result = result && !hit;
    else result = result || hit;
  }
  return result;
}

/** upload-artifact's getMultiPathLCA */
function leastCommonAncestor(paths: string[]): string {
  const split = paths.map((p) => normalize(p).split(sep));
  const shortest = Math.min(...split.map((s) => s.length));
  const common: string[] = [];
  for (let i = 0; i < shortest; i++) {
    const seg = split[0]![i]!;
    if (split.some((s) => s[i] !== seg)) break;
    common.push(seg);
  }
  return common.join(sep) || sep;
}

/** upload-artifact's findFilesToUpload: the files (absolute) and the artifact's root directory. */
export function findFilesToUpload(
  pathInput: string,
  cwd: string,
  home: string,
  includeHidden: boolean,
): { files: string[]; root: string } {
  const patterns = parsePatterns(pathInput, cwd, home);
  const searchPaths = searchPathsOf(patterns);
  const files: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    let st;
    try {
      st = statSync(path); // follows symbolic links; broken ones are left out
    } catch {
      return;
    }
    if (!includeHidden && basename(path).startsWith('.')) return;
    if (st.isDirectory()) {
      for (const child of readdirSync(path).sort()) visit(join(path, child));
    } else if (matches(patterns, path)) files.push(path);
  };
  for (const s of searchPaths) visit(s);
  let root: string;
  if (searchPaths.length > 1) root = leastCommonAncestor(searchPaths);
  else if (files.length === 1 && searchPaths[0] === files[0]) root = dirname(files[0]!);
  else root = searchPaths[0] ?? cwd;
  return { files, root };
}

/** SHA-256 of the files: for each relative path in sorted order, `path NUL size NUL bytes`. */
export function artifactDigest(files: Map<string, string>): { digest: string; size: number } {
  const hash = createHash('sha256');
  let size = 0;
  for (const rel of [...files.keys()].sort()) {
    const bytes = readFileSync(files.get(rel)!);
    size += bytes.length;
    hash.update(`${rel}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return { digest: hash.digest('hex'), size };
}

const INVALID_NAME_CHARS = ['"', ':', '<', '>', '|', '*', '?', '\r', '\n', '\\', '/'];

function fail(stdout: string[], message: string): ArtifactStepResult {
  stdout.push(`::error::${message.replace(/\n/g, '%0A')}`);
  return { outcome: 'failure', outputs: {}, stdout: `${stdout.join('\n')}\n` };
}

function bool(value: string | undefined, name: string): boolean {
  const v = (value ?? '').trim();
  if (v === '' || /^(false|False|FALSE)$/.test(v)) return false;
  if (/^(true|True|TRUE)$/.test(v)) return true;
  throw new Error(
    `Input does not meet YAML 1.2 "Core Schema" specification: ${name}\nSupport boolean input list: \`true | True | TRUE | false | False | FALSE\``,
  );
}

/** `actions/upload-artifact@v4`. */
export function uploadArtifact(ctx: ArtifactStepContext): ArtifactStepResult {
  const out: string[] = [];
  const { inputs } = ctx;
  const name = inputs.name || 'artifact';
  const pathInput = inputs.path ?? '';
  if (!pathInput.trim()) return fail(out, 'Input required and not supplied: path');
  const ifNoFiles = inputs['if-no-files-found'] || 'warn';
  let overwrite: boolean;
  let includeHidden: boolean;
  try {
    overwrite = bool(inputs.overwrite, 'overwrite');
    includeHidden = bool(inputs['include-hidden-files'], 'include-hidden-files');
  } catch (err) {
    return fail(out, (err as Error).message);
  }
  if (!['warn', 'error', 'ignore'].includes(ifNoFiles)) {
    return fail(
      out,
      `Unrecognized if-no-files-found input. Provided: ${ifNoFiles}. Available options: warn,error,ignore`,
    );
  }
  const retention = inputs['retention-days'] ? parseInt(inputs['retention-days'], 10) : 0;
  if (Number.isNaN(retention)) return fail(out, 'Invalid retention-days');
  if (inputs['compression-level']) {
    const level = parseInt(inputs['compression-level'], 10);
    if (Number.isNaN(level) || level < 0 || level > 9)
      return fail(out, 'Invalid compression-level. Valid values are 0-9');
  }
  const { files, root } = findFilesToUpload(pathInput, ctx.workspace, ctx.home, includeHidden);
  if (files.length === 0) {
    const message = `No files were found with the provided path: ${pathInput}. No artifacts will be uploaded.`;
    if (ifNoFiles === 'error') return fail(out, message);
    out.push(ifNoFiles === 'warn' ? `::warning::${message}` : message);
    return { outcome: 'success', outputs: {}, stdout: `${out.join('\n')}\n` };
  }
  out.push(`With the provided path, there will be ${files.length} file${files.length === 1 ? '' : 's'} uploaded`);
  const bad = INVALID_NAME_CHARS.find((c) => name.includes(c));
  if (bad)
    return fail(
      out,
      `The artifact name is not valid: ${name}. Contains the following character: ${JSON.stringify(bad)}`,
    );
  out.push('Artifact name is valid!');
  const byRel = new Map<string, string>();
  for (const f of files) byRel.set(relative(root, f), f);
  out.push('Root directory input is valid!');
  const existing = ctx.store.list(ctx.runId).find((a) => a.name === name);
  if (existing) {
    if (!overwrite) {
      return fail(
        out,
        'Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run',
      );
    }
    ctx.store.delete(existing.id);
    out.push(`Artifact '${name}' (ID: ${existing.id}) deleted`);
  }
  const { digest, size } = artifactDigest(byRel);
  const now = ctx.now();
  const days = retention > 0 ? Math.min(retention, 90) : 90;
  const stored = ctx.store.create(
    {
      name,
      runId: ctx.runId,
      attempt: ctx.attempt,
      job: ctx.job,
      files: [...byRel.keys()].sort(),
      size,
      digest,
      createdAt: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      expiresAt: new Date(now.getTime() + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      headBranch: ctx.headBranch,
      headSha: ctx.headSha,
    },
    byRel,
  );
  const url = `https://github.com/${ctx.owner}/${ctx.repo}/actions/runs/${ctx.runId}/artifacts/${stored.id}`;
  out.push(`Artifact ${name} has been successfully uploaded! Final size is ${size} bytes. Artifact ID is ${stored.id}`);
  out.push(`Artifact download URL: ${url}`);
  return {
    outcome: 'success',
    outputs: { 'artifact-id': String(stored.id), 'artifact-url': url, 'artifact-digest': digest },
    stdout: `${out.join('\n')}\n`,
  };
}

function extract(a: StoredArtifact, dest: string) {
  mkdirSync(dest, { recursive: true });
  for (const rel of a.files) {
    mkdirSync(dirname(join(dest, rel)), { recursive: true });
    copyFileSync(join(a.dir, rel), join(dest, rel));
  }
}

/** minimatch, as far as artifact names need it (`*`, `?`, `[...]`, `**`) */
function nameMatcher(pattern: string): RegExp {
  return new RegExp(`^${segmentRegex(pattern).replace('(?:[^/]*(?:/[^/]*)*)', '.*')}$`);
}

/** `actions/download-artifact@v4` (and later majors: a single artifact found by id goes straight into `path`). */
export function downloadArtifact(ctx: ArtifactStepContext): ArtifactStepResult {
  const out: string[] = [];
  const { inputs } = ctx;
  const major = Number(/@v?(\d+)/.exec(ctx.uses)?.[1] ?? 4);
  let mergeMultiple: boolean;
  try {
    mergeMultiple = bool(inputs['merge-multiple'], 'merge-multiple');
  } catch (err) {
    return fail(out, (err as Error).message);
  }
  const error = (message: string) => fail(out, `Unable to download artifact(s): ${message}`);
  let path = inputs.path || ctx.workspace;
  if (path.startsWith('~')) path = path.replace('~', ctx.home);
  if (inputs.name && inputs['artifact-ids']) {
    return error(`Inputs 'name' and 'artifact-ids' cannot be used together. Please specify only one.`);
  }
  const resolved = resolve(ctx.workspace, path);
  // Without a token: this run. With one: the run and repository given (only this repository is simulated).
  let runId = ctx.runId;
  let repository = `${ctx.owner}/${ctx.repo}`;
  if (inputs['github-token']) {
    repository = inputs.repository || repository;
    const [owner, repo] = repository.split('/');
    if (!owner || !repo) return error(`Invalid repository: '${repository}'. Must be in format owner/repo`);
    runId = parseInt(inputs['run-id'] || String(ctx.runId), 10);
  }
  const inRun = repository.toLowerCase() === `${ctx.owner}/${ctx.repo}`.toLowerCase() ? ctx.store.list(runId) : [];
  // listArtifacts({ latest: true }): the newest artifact of each name
  const latest = [...new Map(inRun.map((a) => [a.name, a])).values()];
  let artifacts: StoredArtifact[];
  const single = !!inputs.name;
  if (single) {
    const found = latest.find((a) => a.name === inputs.name);
    if (!found) {
      return error(
        `Artifact not found for name: ${inputs.name}\n        Please ensure that your artifact is not expired and the artifact was uploaded using a compatible version of toolkit/upload-artifact.\n        For more information, visit the GitHub Artifacts FAQ: https://github.com/actions/toolkit/blob/main/packages/artifact/docs/faq.md`,
      );
    }
    artifacts = [found];
  } else if (inputs['artifact-ids']) {
    const list = inputs['artifact-ids']
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (list.length === 0) return error(`No valid artifact IDs provided in 'artifact-ids' input`);
    const ids: number[] = [];
    for (const s of list) {
      const n = parseInt(s, 10);
      if (Number.isNaN(n)) return error(`Invalid artifact ID: '${s}'. Must be a number.`);
      ids.push(n);
    }
    artifacts = latest.filter((a) => ids.includes(a.id));
    if (artifacts.length === 0) return error('None of the provided artifact IDs were found');
    const missing = ids.filter((id) => !artifacts.some((a) => a.id === id));
    if (missing.length) out.push(`::warning::Could not find the following artifact IDs: ${missing.join(', ')}`);
  } else {
    artifacts = latest;
    if (inputs.pattern) {
      const re = nameMatcher(inputs.pattern);
      artifacts = artifacts.filter((a) => re.test(a.name));
    }
  }
  const straight = single || mergeMultiple || (major >= 5 && artifacts.length === 1);
  for (const a of artifacts) {
    out.push(`- ${a.name} (ID: ${a.id}, Size: ${a.size}, Expected Digest: ${a.digest})`);
    extract(a, straight ? resolved : join(resolved, a.name));
  }
  out.push(`Total of ${artifacts.length} artifact(s) downloaded`);
  return { outcome: 'success', outputs: { 'download-path': resolved }, stdout: `${out.join('\n')}\n` };
}
