import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'packages/*/tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // @actions/workflow-parser imports its JSON schemas without `with { type: 'json' }` (it is built for bundlers);
    // inlining lets vite transform it instead of Node's loader refusing it.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
