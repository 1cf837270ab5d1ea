/**
 * A small, real Node project in a bare git repository: the repository HydraFlow's lifecycle tests work on. Its tests
 * use `node --test` (nothing to install), so a coding agent's edit genuinely passes or fails them. Commits have a fixed
 * author and date, so the shas are the same on every run.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { initBareRepo, runGit } from '../github/git';
import { REPO_ROOT } from '../runner/run-action';

export const SAMPLE_AUTHOR = { name: 'Sample Maintainer', email: 'maintainer@example.com' };
/** 2026-01-01T00:00:00Z */
export const SAMPLE_DATE = 1_767_225_600;

export const SAMPLE_CI_WORKFLOW = `name: CI
on:
  pull_request:
    types: [opened, synchronize, reopened]
  push:
    branches: [main]

permissions:
  contents: read

jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - name: Test
        run: npm test
`;

export const SAMPLE_CONFIG = `# HydraFlow configuration of the sample repository
implement:
  commands:
    test: npm test
`;

export const SAMPLE_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify(
    {
      name: 'sample-strings',
      version: '1.0.0',
      private: true,
      type: 'module',
      description: 'Tiny string and number helpers (HydraFlow sample repository).',
      main: 'src/index.js',
      scripts: { test: 'node --test' },
      license: 'MIT',
    },
    null,
    2,
  )}\n`,
  'README.md': `# sample-strings

Tiny string and number helpers.

- \`slugify(text)\`: lower-case words joined by dashes
- \`capitalize(word)\`: first letter upper-cased
- \`clamp(n, min, max)\`: a number kept within bounds
- \`sum(numbers)\`: the total of a list

Run the tests with \`npm test\` (Node's built-in test runner, no dependencies).
`,
  'src/index.js': `export { slugify, capitalize } from './strings.js';
export { clamp, sum } from './numbers.js';
`,
  'src/strings.js': `/** Lower-case words joined by dashes: "Hello, World!" -> "hello-world". */
export function slugify(text) {
  return String(text)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The word with its first letter upper-cased. */
export function capitalize(word) {
  const s = String(word);
  return s.charAt(0).toUpperCase() + s.slice(1);
}
`,
  'src/numbers.js': `/** n kept within [min, max]. */
export function clamp(n, min, max) {
  if (min > max) throw new RangeError('min must not be greater than max');
  return Math.min(Math.max(n, min), max);
}

/** The total of a list of numbers (0 for an empty list). */
export function sum(numbers) {
  return numbers.reduce((total, n) => total + n, 0);
}
`,
  'test/strings.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify, capitalize } from '../src/strings.js';

test('slugify joins lower-case words with dashes', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
  assert.equal(slugify('  many   spaces  '), 'many-spaces');
});

test('capitalize upper-cases the first letter only', () => {
  assert.equal(capitalize('hydra'), 'Hydra');
  assert.equal(capitalize(''), '');
});
`,
  'test/numbers.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clamp, sum } from '../src/numbers.js';

test('clamp keeps a number within bounds', () => {
  assert.equal(clamp(5, 0, 10), 5);
  assert.equal(clamp(-1, 0, 10), 0);
  assert.equal(clamp(11, 0, 10), 10);
  assert.throws(() => clamp(1, 2, 0), RangeError);
});

test('sum adds a list', () => {
  assert.equal(sum([1, 2, 3]), 6);
  assert.equal(sum([]), 0);
});
`,
  '.gitignore': 'node_modules/\n',
};

export interface SampleRepo {
  /** path of the bare repository (the "GitHub remote") */
  bareRepo: string;
  /** `.github/workflows` of a checkout of main (what GitHub reads workflows from) */
  workflowsDir: string;
  /** the working copy workflowsDir belongs to */
  checkoutDir: string;
  /** sha of main's initial commit */
  initialSha: string;
  /** clone the bare repository into `dest` (a fresh directory), checked out at main */
  clone(dest: string): string;
}

export interface CommitOptions {
  author?: { name: string; email: string };
  /** seconds since the epoch; default SAMPLE_DATE */
  date?: number;
}

function commitEnv(o: CommitOptions = {}): Record<string, string> {
  const a = o.author ?? SAMPLE_AUTHOR;
  const date = `${o.date ?? SAMPLE_DATE} +0000`;
  return {
    GIT_AUTHOR_NAME: a.name,
    GIT_AUTHOR_EMAIL: a.email,
    GIT_COMMITTER_NAME: a.name,
    GIT_COMMITTER_EMAIL: a.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

function writeFiles(dir: string, files: Record<string, string | null>) {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    if (content === null) rmSync(file, { force: true });
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
  }
}

/** Clone a bare repository (no credentials anywhere: it is a local path). */
export function cloneRepo(bareRepo: string, dest: string, ref?: string): string {
  runGit(['clone', '--quiet', ...(ref ? ['--branch', ref] : []), bareRepo, dest]);
  return dest;
}

/**
 * Commit `files` (null deletes) on `branch` of a bare repository and push it, as a developer would. The branch is
 * created from `from` (default: the branch itself, or main) when it does not exist. Returns the new commit's sha.
 */
export function commitToBranch(
  bareRepo: string,
  branch: string,
  files: Record<string, string | null>,
  message: string,
  options: CommitOptions & { from?: string } = {},
): string {
  const work = mkdtempSync(join(tmpdir(), 'hydraflow-commit-'));
  try {
    cloneRepo(bareRepo, work);
    const exists = runGit(['rev-parse', '--verify', '--quiet', `origin/${branch}`], { cwd: work, okCodes: [1] });
    if (exists.status === 0) runGit(['checkout', '--quiet', '-B', branch, `origin/${branch}`], { cwd: work });
    else runGit(['checkout', '--quiet', '-b', branch, `origin/${options.from ?? 'main'}`], { cwd: work });
    writeFiles(work, files);
    runGit(['add', '-A'], { cwd: work });
    runGit(['commit', '--quiet', '--allow-empty', '-m', message], { cwd: work, env: commitEnv(options) });
    runGit(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`], { cwd: work });
    return runGit(['rev-parse', 'HEAD'], { cwd: work }).stdout.trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Create the sample repository under `dir`: `<dir>/remote.git` (bare) and `<dir>/checkout` (a clone of main). */
export function createSampleRepo(
  dir: string,
  options: { extraFiles?: Record<string, string>; hydraflowWorkflow?: string } = {},
): SampleRepo {
  mkdirSync(dir, { recursive: true });
  const bareRepo = join(dir, 'remote.git');
  initBareRepo(bareRepo, 'main');
  const seed = join(dir, 'seed');
  mkdirSync(seed, { recursive: true });
  runGit(['init', '--quiet', '--initial-branch=main', seed]);
  const template =
    options.hydraflowWorkflow ?? readFileSync(join(REPO_ROOT, 'workflows-templates/hydraflow.yml'), 'utf8');
  writeFiles(seed, {
    ...SAMPLE_FILES,
    '.github/workflows/ci.yml': SAMPLE_CI_WORKFLOW,
    '.github/workflows/hydraflow.yml': template,
    '.github/hydraflow.yml': SAMPLE_CONFIG,
    ...options.extraFiles,
  });
  runGit(['add', '-A'], { cwd: seed });
  runGit(['commit', '--quiet', '-m', 'Initial commit: string and number helpers'], { cwd: seed, env: commitEnv() });
  runGit(['push', '--quiet', bareRepo, 'HEAD:refs/heads/main'], { cwd: seed });
  const initialSha = runGit(['rev-parse', 'HEAD'], { cwd: seed }).stdout.trim();
  rmSync(seed, { recursive: true, force: true });
  const checkoutDir = cloneRepo(bareRepo, join(dir, 'checkout'));
  return {
    bareRepo,
    checkoutDir,
    workflowsDir: join(checkoutDir, '.github/workflows'),
    initialSha,
    clone: (dest: string) => cloneRepo(bareRepo, dest),
  };
}
