import { describe, expect, it } from 'vitest';
import { checkChanges, decideMerge, findSecrets, globToRegExp, isProtected, secretValuesOf } from '../src/index';

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

  it('globs match like gitignore-style paths', () => {
    expect(globToRegExp('src/**/*.ts').test('src/a/b/c.ts')).toBe(true);
    expect(globToRegExp('src/**/*.ts').test('src/c.ts')).toBe(true);
    expect(globToRegExp('*.lock').test('dir/yarn.lock')).toBe(false);
    expect(isProtected('.github/dependabot.yml', [])).toBe(true);
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
