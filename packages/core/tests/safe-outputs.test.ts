import { describe, expect, it } from 'vitest';
import {
  checkChanges,
  decideMerge,
  DEFAULT_PROTECTED_PATHS,
  findSecrets,
  globToRegExp,
  isProtected,
  protectedMatch,
  secretFileMatch,
  secretValuesOf,
} from '../src/index';

const limits = { maxFiles: 5, maxLines: 100, maxFileBytes: 10_000, protectedPaths: ['infra/**', '*.lock'] };
const file = (path: string, lines = 1, bytes = 10) => ({ path, status: 'modified', lines, bytes });

describe('safe outputs', () => {
  it('refuses workflows, git internals, configured protected paths and escapes', () => {
    const problems = checkChanges(
      [
        file('.github/workflows/ci.yml'),
        file('.git/config'),
        file('infra/main.tf'),
        file('yarn.lock'),
        file('../x'),
        file('/etc/passwd'),
        file('src/ok.ts'),
      ],
      { ...limits, maxFiles: 10 },
    );
    expect(problems.map((p) => p.path)).toEqual([
      '.github/workflows/ci.yml',
      '.git/config',
      'infra/main.tf',
      'yarn.lock',
      '../x',
      '/etc/passwd',
    ]);
  });

  it('caps files, lines and file size', () => {
    const many = Array.from({ length: 6 }, (_, i) => file(`src/f${i}.ts`, 20, 20_000));
    const problems = checkChanges(many, limits).map((p) => p.problem);
    expect(problems.filter((p) => p.includes('bytes'))).toHaveLength(6);
    expect(problems).toContain('6 files changed, more than the 5 allowed');
    expect(problems).toContain('120 lines changed, more than the 100 allowed');
  });

  it('globs match like gitignore-style paths, case-insensitively: one matcher for the tools and the publish check', () => {
    expect(globToRegExp('src/**/*.ts').test('src/a/b/c.ts')).toBe(true);
    expect(globToRegExp('src/**/*.ts').test('src/c.ts')).toBe(true);
    expect(globToRegExp('*.lock').test('dir/yarn.lock')).toBe(true); // no slash: any depth
    expect(globToRegExp('/yarn.lock').test('dir/yarn.lock')).toBe(false);
    expect(globToRegExp('infra/').test('infra/prod/main.tf')).toBe(true);
    expect(globToRegExp('infra').test('infra/prod/main.tf')).toBe(true); // a directory covers what is under it
    expect(isProtected('.github/dependabot.yml', [])).toBe(true);
    expect(isProtected('.GitHub/workflows/x.yml', [])).toBe(true);
    // the tools refused these and the publish check used to push them (issue #16)
    for (const [path, glob] of [
      ['infra/main.tf', 'infra/'],
      ['certs/server.pem', '*.pem'],
      ['docs/CODEOWNERS', 'CODEOWNERS'],
      ['.husky/pre-commit', '.husky/'],
    ])
      expect(protectedMatch(path!, [glob!])).toBe(glob);
  });

  it('protects, by default, what runs in CI with its secrets and git metadata anywhere; a list of your own replaces it unless it says @defaults', () => {
    for (const path of [
      'package.json',
      'packages/a/package.json',
      'pnpm-lock.yaml',
      '.gitattributes',
      'vendor/.gitmodules',
      '.husky/pre-push',
      '.circleci/config.yml',
      'Makefile',
      'requirements-dev.txt',
      '.env.production',
      'sub/.git/config',
      'sub/.GIT/hooks/pre-commit',
    ])
      expect(protectedMatch(path, ['@defaults']), path).toBeDefined();
    for (const path of ['src/index.ts', 'README.md', 'test/sum.test.js', '.gitignore'])
      expect(protectedMatch(path, ['@defaults']), path).toBeUndefined();
    expect(protectedMatch('package.json', ['infra/'])).toBeUndefined();
    expect(protectedMatch('package.json', ['infra/', '@defaults'])).toBe('package.json');
    expect(DEFAULT_PROTECTED_PATHS).toContain('.gitmodules');
  });

  it('refuses links, submodules and mode changes; a new executable file is fine', () => {
    const withModes = (path: string, oldMode: string, newMode: string) => ({ ...file(path), oldMode, newMode });
    const problems = checkChanges(
      [
        withModes('link', '000000', '120000'),
        withModes('vendor/lib', '000000', '160000'),
        withModes('run.sh', '100644', '100755'),
        withModes('tool.sh', '000000', '100755'),
        withModes('src/a.ts', '100644', '100644'),
      ],
      limits,
    );
    expect(problems).toEqual([
      { path: 'link', problem: 'a symbolic link (HydraFlow pushes regular files only)' },
      { path: 'vendor/lib', problem: 'a submodule (HydraFlow pushes regular files only)' },
      { path: 'run.sh', problem: 'a mode change (100644 → 100755)' },
    ]);
  });

  it('knows credential files by name, not their examples', () => {
    expect(secretFileMatch('.env')).toBe('.env');
    expect(secretFileMatch('config/.env.local')).toBe('.env.*');
    expect(secretFileMatch('keys/deploy.pem')).toBe('*.pem');
    expect(secretFileMatch('.env.example')).toBeUndefined();
    expect(secretFileMatch('src/env.ts')).toBeUndefined();
  });

  it('finds known secret values and credential shapes, not ordinary text', () => {
    const env = { HYDRAFLOW_CANARY: 'canary-4f1d2e', GITHUB_TOKEN: 'ghs_x', PATH: '/usr/bin' };
    const known = secretValuesOf(env);
    expect(known).toEqual(['canary-4f1d2e', 'ghs_x']);
    expect(findSecrets('leak: canary-4f1d2e', known)).toEqual(['a secret value of this workflow']);
    expect(findSecrets(`token ghp_${'a'.repeat(36)}`, [])).toEqual(['something shaped like a GitHub token']);
    expect(findSecrets('const sum = (a, b) => a + b; // ghs_x is too short to match', known)).toEqual([]);
  });
});

describe('merge policy', () => {
  const base = {
    policy: 'human' as const,
    pipelineApproved: true,
    humanApproved: true,
    checks: 'success' as const,
    mergeable: true,
    fixAttempts: 0,
  };
  it('merges only with every gate open', () => {
    expect(decideMerge(base)).toEqual({ action: 'merge' });
    expect(decideMerge({ ...base, humanApproved: false }).action).toBe('wait');
    expect(decideMerge({ ...base, policy: 'auto', humanApproved: false })).toEqual({ action: 'merge' });
    expect(decideMerge({ ...base, pipelineApproved: false }).action).toBe('wait');
    expect(decideMerge({ ...base, checks: 'pending' }).action).toBe('wait');
  });
  it('tries one fix for red checks or a conflict, then escalates', () => {
    expect(decideMerge({ ...base, checks: 'failure' }).action).toBe('fix');
    expect(decideMerge({ ...base, checks: 'failure', fixAttempts: 1 }).action).toBe('escalate');
    expect(decideMerge({ ...base, mergeable: false }).action).toBe('fix');
    expect(decideMerge({ ...base, mergeable: false, fixAttempts: 1 }).action).toBe('escalate');
  });
});

describe('a secret in disguise', () => {
  const secret = 'sk-ant-api03-canary-7f3a9c2e41';
  it('is found and masked in hex and in base64 at any offset of a longer encoded text, whatever surrounds it', async () => {
    const { redactSecrets } = await import('../src/index');
    for (const prefix of ['', 'A', 'AB', 'KEY=', 'ANTHROPIC_API_KEY=']) {
      const text = `${prefix}${secret}\nPATH=/usr/bin\n`;
      for (const encoded of [
        Buffer.from(text).toString('base64'),
        Buffer.from(text).toString('base64url'),
        Buffer.from(text).toString('hex'),
        Buffer.from(text).toString('hex').toUpperCase(),
      ]) {
        expect(findSecrets(`out: ${encoded}`, [secret]).length, `${prefix} ${encoded}`).toBeGreaterThan(0);
        const masked = redactSecrets(`out: ${encoded}`, [secret]);
        expect(masked).toContain('***');
        // what is left of the encoding no longer decodes to the secret
        expect(
          Buffer.from(
            masked.slice(5),
            encoded.length % 2 === 0 && /^[0-9a-f]+$/i.test(encoded) ? 'hex' : 'base64',
          ).toString(),
        ).not.toContain(secret);
      }
    }
  });

  it('does not mask ordinary text for a short value', () => {
    expect(findSecrets('abc', ['abc'])).toEqual([]);
    expect(findSecrets(Buffer.from('the value is 12345').toString('base64'), ['1234567'])).toEqual([]);
  });
});
