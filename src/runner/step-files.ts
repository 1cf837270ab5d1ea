/**
 * The files through which a step talks to the runner once it has ended: GITHUB_ENV and GITHUB_PATH (variables and
 * PATH entries for every later step of the job), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY. The agent step writes none of
 * them. Its commands could: the paths are in the step's environment, which they can read from the process table. Through
 * GITHUB_ENV or GITHUB_PATH they would reach into the publish step, which holds the GitHub token (a `git` of their own
 * first on PATH, HOME pointing at a .gitconfig of theirs, Node's proxy and TLS variables).
 */
import { statSync, truncateSync } from 'node:fs';

const STEP_FILES = ['GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY'] as const;

export interface StepFilesWatch {
  /** Cuts every file that grew back to its size when watched; the names of those that had grown. */
  restore(): string[];
}

/** Notes the size of each step file now (they start empty for every step). */
export function watchStepFiles(env: NodeJS.ProcessEnv): StepFilesWatch {
  const sizeOf = (path: string) => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  const watched = STEP_FILES.flatMap((name) => {
    const path = env[name];
    return path ? [{ name, path, size: sizeOf(path) }] : [];
  });
  return {
    restore: () =>
      watched.flatMap(({ name, path, size }) => {
        if (sizeOf(path) === size) return [];
        truncateSync(path, size);
        return [name];
      }),
  };
}
