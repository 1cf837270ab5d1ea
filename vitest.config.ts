import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'packages/*/tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One test file per core, not vitest's default of one fewer: most of a file's time is in the processes it starts
    // (HydraFlow steps, git), so on a 2-core machine one worker left a core idle. Measured on the 2-core development
    // machine: the suite in 922 s instead of 1,442, every test passing, the slowest file within its timeout.
    maxWorkers: availableParallelism(),
    // @actions/workflow-parser imports its JSON schemas without `with { type: 'json' }` (it is built for bundlers);
    // inlining lets vite transform it instead of Node's loader refusing it.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
