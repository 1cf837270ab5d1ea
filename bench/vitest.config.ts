import { defineConfig } from 'vitest/config';

// The lifecycle benchmark needs the lifecycle simulator, which runs under vitest (as in the root vitest.config.ts).
export default defineConfig({
  test: {
    include: ['bench/**/*.bench-run.ts'],
    testTimeout: 600_000,
    pool: 'forks',
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
