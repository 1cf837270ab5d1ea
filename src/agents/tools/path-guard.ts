/**
 * Where the agent's file tools may go. A path from the model is refused when it is absolute, escapes the workspace
 * root (`..`, or a symlink — anywhere on the path, dangling or not — whose real target is outside), or touches `.git`
 * (at any depth: it holds the checkout's credentials and hooks). Writes are also refused under `.github/` (workflows
 * run with the repository's secrets) and under the configured protected globs. The rules are applied to both the path
 * as given and its real path, case-insensitively (macOS and Windows file systems are). A write to a file with more
 * than one hard link is refused too (it could be a link to a file outside).
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { protectedMatch, secretFileMatch } from '@hydraflow/core';

export type AccessMode = 'read' | 'write';

export type GuardResult = { ok: true; abs: string; rel: string } | { ok: false; reason: string };

export class PathGuard {
  private constructor(
    /** The workspace root, as a real path. */
    readonly root: string,
    private readonly protectedGlobs: readonly string[],
  ) {}

  static async create(root: string, protectedGlobs: readonly string[] = []): Promise<PathGuard> {
    return new PathGuard(await realpath(resolve(root)), protectedGlobs);
  }

  /** The lexical rules for a workspace-relative path ('/' separated); null when allowed. */
  check(rel: string, mode: AccessMode): string | null {
    const posix = rel.split(sep).join('/');
    const segments = posix.split('/').filter((s) => s !== '' && s !== '.');
    if (segments.some((s) => s.toLowerCase() === '.git')) return 'the .git directory is off limits';
    const path = segments.join('/');
    if (mode === 'read') {
      const secret = secretFileMatch(path);
      return secret ? `files matching '${secret}' hold credentials by convention; they are not for reading` : null;
    }
    if (segments[0]?.toLowerCase() === '.github') return '.github/ is protected (workflows and repository settings)';
    const hit = protectedMatch(path, this.protectedGlobs);
    return hit ? `the path matches the protected pattern '${hit}'` : null;
  }

  private inside(abs: string): string | undefined {
    const rel = relative(this.root, abs);
    if (rel === '') return '';
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
    return rel;
  }

  /** Resolve a model-given path; `allowRoot` admits '' / '.' (for directory listings). */
  async resolve(input: unknown, mode: AccessMode, options: { allowRoot?: boolean } = {}): Promise<GuardResult> {
    if (typeof input !== 'string') return { ok: false, reason: 'the path must be a string' };
    if (input.includes('\0')) return { ok: false, reason: 'the path contains a NUL byte' };
    if (input.length > 4096) return { ok: false, reason: 'the path is too long' };
    if (isAbsolute(input) || /^[A-Za-z]:[\\/]/.test(input) || input.startsWith('\\') || input.startsWith('~'))
      return { ok: false, reason: 'absolute paths are not allowed; use a path relative to the repository root' };
    const abs = resolve(this.root, input);
    const rel = this.inside(abs);
    if (rel === undefined) return { ok: false, reason: 'the path is outside the repository' };
    if (rel === '' && !options.allowRoot)
      return { ok: false, reason: 'the path names the repository root, not a file' };
    const lexical = this.check(rel, mode);
    if (lexical) return { ok: false, reason: lexical };

    // Real path: the deepest existing ancestor, resolved; a dangling symlink on the way is refused.
    let existing = abs;
    let rest = '';
    let real: string | undefined;
    for (;;) {
      try {
        real = await realpath(existing);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
          return { ok: false, reason: `cannot resolve the path (${(error as NodeJS.ErrnoException).code})` };
        const link = await lstat(existing).catch(() => undefined);
        if (link?.isSymbolicLink()) return { ok: false, reason: 'the path goes through a dangling symbolic link' };
        if (existing === this.root) return { ok: false, reason: 'the repository root is missing' };
        rest = rest ? join(basename(existing), rest) : basename(existing);
        existing = dirname(existing);
      }
    }
    const realAbs = rest ? join(real, rest) : real;
    const realRel = this.inside(realAbs);
    if (realRel === undefined)
      return { ok: false, reason: 'the path resolves (through a symbolic link) outside the repository' };
    const byReal = this.check(realRel, mode);
    if (byReal) return { ok: false, reason: `${byReal} (through a symbolic link)` };
    if (mode === 'write') {
      const stat = await lstat(realAbs).catch(() => undefined);
      if (stat && stat.isFile() && stat.nlink > 1) return { ok: false, reason: 'the file has several hard links' };
    }
    return { ok: true, abs: realAbs, rel: realRel.split(sep).join('/') };
  }
}
