/**
 * The files through which a step talks to the runner once it has ended: GITHUB_ENV and GITHUB_PATH (variables and
 * PATH entries for every later step of the job), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY. The agent step writes none of
 * them. Its commands could: the paths are in the step's environment, which they can read from the process table. Through
 * GITHUB_ENV or GITHUB_PATH they would reach into the publish step, which holds the GitHub token (a `git` of their own
 * first on PATH, HOME pointing at a .gitconfig of theirs, Node's proxy and TLS variables).
 */
import { chmodSync, lstatSync, rmSync, truncateSync, writeFileSync } from 'node:fs';

const STEP_FILES = ['GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY'] as const;

export interface StepFilesWatch {
  /** Cuts every file that grew back to its size when watched; the names of those that had grown. */
  restore(): string[];
}

/**
 * Makes `path` again a plain file of `size` bytes (its size when watched), if it is there: true if it had to. Whatever the commands
 * put there instead — more lines, a read-only mode, a FIFO the runner would hang on, a symbolic link, a directory —
 * goes; a file that cannot be cut is replaced by an empty one, and one that reappears while that happens throws.
 */
export function resetStepFile(path: string, size: number): boolean {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return false; // gone: the runner reads nothing from it
  }
  if (stat.isFile() && stat.size === size && (stat.mode & 0o600) === 0o600) return false;
  if (stat.isFile()) {
    try {
      chmodSync(path, 0o644);
      truncateSync(path, size);
      return true;
    } catch {
      // replaced below
    }
  }
  rmSync(path, { force: true, recursive: true });
  writeFileSync(path, '', { flag: 'wx', mode: 0o644 });
  return true;
}

/** The size of the plain file at `path`; 0 for anything else or nothing. */
export function plainSize(path: string): number {
  try {
    const stat = lstatSync(path);
    return stat.isFile() ? stat.size : 0;
  } catch {
    return 0;
  }
}

/** Notes the size of each step file now (they start empty for every step). */
export function watchStepFiles(env: NodeJS.ProcessEnv): StepFilesWatch {
  const watched = STEP_FILES.flatMap((name) => {
    const path = env[name];
    return path ? [{ name, path, size: plainSize(path) }] : [];
  });
  return {
    restore: () => watched.flatMap(({ name, path, size }) => (resetStepFile(path, size) ? [name] : [])),
  };
}
