/**
 * The release workflow (.github/workflows/release.yml): valid for GitHub's workflow schema, and its tagging step —
 * run here as the runner would, against a real git remote — tags vX.Y.Z, moves vX, never moves a released version
 * and refuses a malformed one with a one-line error.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseWorkflowFile, tokenHelpers } from '@hydraflow/testkit';

const ROOT = join(import.meta.dirname, '..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=m', '-c', 'user.email=m@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

async function tagScript(): Promise<string> {
  const wf = await parseWorkflowFile(readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8'), 'release.yml');
  const step = wf.jobs[0]!.steps.find((s) => s.id === 'tag')!;
  const tokens = await tokenHelpers();
  expect(tokens.isLiteral(step.run!)).toBe(true); // no ${{ }} inside the script: the version comes through env
  return step.run!.toString();
}

function releaseRepo(): { clone: string; remote: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hf-release-'));
  dirs.push(dir);
  const remote = join(dir, 'remote.git');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  const clone = join(dir, 'clone');
  git(dir, 'clone', '--quiet', remote, clone);
  writeFileSync(join(clone, 'README.md'), 'one\n');
  git(clone, 'add', '.');
  git(clone, 'commit', '--quiet', '-m', 'one');
  git(clone, 'push', '--quiet', 'origin', 'main');
  return { clone, remote };
}

function release(clone: string, script: string, version: string) {
  const output = join(clone, '..', 'output');
  writeFileSync(output, '');
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', script], {
    cwd: clone,
    env: {
      ...process.env,
      VERSION: version,
      GITHUB_OUTPUT: output,
      GIT_COMMITTER_NAME: 'm',
      GIT_COMMITTER_EMAIL: 'm@example.com',
    },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, outputs: readFileSync(output, 'utf8') };
}

describe('the release workflow', () => {
  it('is a valid workflow that checks dist/ is fresh and runs the tests before tagging', async () => {
    const wf = await parseWorkflowFile(
      readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8'),
      'release.yml',
    );
    const names = wf.jobs[0]!.steps.map((s) => s.name);
    const order = ['dist/ is what the sources build', 'Run pnpm test', 'Tag vX.Y.Z and move vX', 'GitHub release'];
    expect(order.map((n) => names.indexOf(n))).toEqual([...order.map((n) => names.indexOf(n))].sort((a, b) => a - b));
    expect(order.every((n) => names.includes(n))).toBe(true);
  });

  it('tags vX.Y.Z, moves vX with each release, never re-tags a version, refuses a malformed one', async () => {
    const script = await tagScript();
    const { clone, remote } = releaseRepo();
    const first = git(clone, 'rev-parse', 'HEAD');
    expect(release(clone, script, '1.2.0')).toMatchObject({ code: 0, outputs: 'tag=v1.2.0\nmajor=v1\n' });
    expect(git(remote, 'rev-parse', 'v1.2.0^{commit}', 'v1^{commit}').split('\n')).toEqual([first, first]);

    writeFileSync(join(clone, 'README.md'), 'two\n');
    git(clone, 'commit', '--quiet', '-am', 'two');
    const second = git(clone, 'rev-parse', 'HEAD');
    expect(release(clone, script, '1.3.0').code).toBe(0);
    expect(git(remote, 'rev-parse', 'v1.2.0^{commit}', 'v1.3.0^{commit}', 'v1^{commit}').split('\n')).toEqual([
      first,
      second,
      second,
    ]);

    const again = release(clone, script, '1.3.0');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('::error::v1.3.0 is already released (tags are never moved, only the major tag is)\n');
    const bad = release(clone, script, 'v1.4');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("::error::input version: expected X.Y.Z (e.g. 1.2.0), got 'v1.4'\n");
    expect(git(remote, 'tag', '--list').split('\n')).toEqual(['v1', 'v1.2.0', 'v1.3.0']);
  });
});
