import { globToRegExp } from '@hydraflow/core';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentTool } from '../src/agents/tool-loop';
import {
  commandEnv,
  createReadOnlyTools,
  createWorkspaceTools,
  type WorkspaceToolset,
} from '../src/agents/tools/index';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(): { root: string; outside: string } {
  const base = mkdtempSync(join(tmpdir(), 'hf-tools-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const root = join(base, 'repo');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'src', 'a.ts'), 'const x = 1;\nconst y = x + 1;\nexport { y };\n');
  writeFileSync(join(root, 'src', 'b.ts'), 'import { y } from "./a";\nconsole.log(y);\n');
  writeFileSync(join(root, '.gitignore'), 'build/\n');
  mkdirSync(join(root, 'build'));
  writeFileSync(join(root, 'build', 'out.js'), 'const x = 1;\n');
  execFileSync('git', ['init', '--quiet', '--initial-branch=main'], { cwd: root });
  execFileSync('git', ['add', '.'], { cwd: root });
  writeFileSync(join(root, 'src', 'untracked.ts'), 'const x = 2;\n');
  return { root, outside };
}

async function tools(options: Parameters<typeof createWorkspaceTools>[0], readOnly = false): Promise<WorkspaceToolset> {
  const set = await (readOnly ? createReadOnlyTools(options) : createWorkspaceTools(options));
  cleanups.push(() => set.dispose());
  return set;
}

const call = (set: WorkspaceToolset, name: string, input: unknown) => {
  const tool = set.tools.find((t) => t.name === name) as AgentTool;
  const parsed = tool.input.parse(input);
  return tool.run(parsed, { deadline: Date.now() + 60_000, remainingMs: 60_000 });
};

describe('workspace tools', () => {
  it('read-only set for reviewers and planners', async () => {
    const { root } = setup();
    const set = await tools({ root, commands: { test: 'true' } }, true);
    expect(set.tools.map((t) => t.name)).toEqual(['read_file', 'list_files', 'search']);
  });

  it('list_files: tracked and untracked, not ignored; search like grep, literal or regex', async () => {
    const { root } = setup();
    const set = await tools({ root });
    expect((await call(set, 'list_files', {})).content.split('\n')).toEqual([
      '.gitignore',
      'src/a.ts',
      'src/b.ts',
      'src/untracked.ts',
    ]);
    expect((await call(set, 'list_files', { dir: 'src' })).content).not.toContain('.gitignore');
    expect((await call(set, 'search', { pattern: 'const x' })).content.split('\n')).toEqual([
      'src/a.ts:1:const x = 1;',
      'src/untracked.ts:1:const x = 2;',
    ]);
    expect((await call(set, 'search', { pattern: 'x + 1', fixed_strings: true })).content).toBe(
      'src/a.ts:2:const y = x + 1;',
    );
    expect((await call(set, 'search', { pattern: 'x \\+ [0-9]', path: 'src' })).content).toBe(
      'src/a.ts:2:const y = x + 1;',
    );
    expect((await call(set, 'search', { pattern: 'nothing-here' })).content).toBe('No matches.');
    expect((await call(set, 'search', { pattern: '--output=/tmp/x' })).content).toBe('No matches.');
    const capped = await tools({ root, maxListEntries: 2, maxSearchResults: 1 });
    expect((await call(capped, 'list_files', {})).content).toMatch(/\[… 2 more; list a subdirectory\]$/);
    expect((await call(capped, 'search', { pattern: 'const' })).content).toMatch(
      /\[… \d+ more matches; narrow the search\]$/,
    );
  });

  it('read_file ranges; edit_file needs an exact, unique match; write_file creates directories', async () => {
    const { root } = setup();
    const set = await tools({ root });
    expect((await call(set, 'read_file', { path: 'src/a.ts', start_line: 2, end_line: 2 })).content).toBe(
      '[lines 2-2 of 4]\nconst y = x + 1;',
    );
    expect(await call(set, 'edit_file', { path: 'src/a.ts', old_string: 'const', new_string: 'let' })).toMatchObject({
      isError: true,
      content: expect.stringMatching(/appears 2 times/),
    });
    expect(
      await call(set, 'edit_file', {
        path: 'src/a.ts',
        old_string: 'const y = x + 1;',
        new_string: 'const y = x + $&2;',
      }),
    ).toEqual({ content: 'Edited src/a.ts.' });
    expect(readFileSync(join(root, 'src', 'a.ts'), 'utf8')).toContain('const y = x + $&2;');
    expect(await call(set, 'write_file', { path: 'docs/deep/new.md', content: '# hi\n' })).toMatchObject({
      content: 'Wrote docs/deep/new.md (2 lines).',
    });
    expect(await call(set, 'read_file', { path: 'src' })).toMatchObject({ isError: true });
  });

  it('path guard: .git at any depth and any case, dangling links, hard links, protected globs', async () => {
    const { root, outside } = setup();
    const set = await tools({ root, protectedPaths: ['*.pem', 'config/prod/'] });
    symlinkSync(join(outside, 'does-not-exist'), join(root, 'dangling'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'innocent.txt'));
    linkSync(join(outside, 'secret.txt'), join(root, 'hardlink.txt'));
    mkdirSync(join(root, '.github'));
    writeFileSync(join(root, '.github', 'CODEOWNERS'), '* @a\n');
    symlinkSync(join(root, '.github'), join(root, 'gh'));
    const cases: [string, unknown, RegExp][] = [
      ['read_file', { path: '.GIT/config' }, /\.git directory/],
      ['write_file', { path: 'sub/.git/hooks/pre-commit', content: 'x' }, /\.git directory/],
      ['write_file', { path: '.GitHub/workflows/a.yml', content: 'x' }, /\.github/],
      ['write_file', { path: 'dangling', content: 'x' }, /dangling symbolic link/],
      ['write_file', { path: 'gh/workflows/x.yml', content: 'x' }, /\.github.*through a symbolic link/],
      ['read_file', { path: 'innocent.txt' }, /outside the repository/],
      ['write_file', { path: 'hardlink.txt', content: 'x' }, /hard links/],
      ['write_file', { path: 'keys/deploy.pem', content: 'x' }, /protected pattern '\*\.pem'/],
      ['edit_file', { path: 'config/prod/db.yml', old_string: 'a', new_string: 'b' }, /config\/prod\//],
      ['write_file', { path: 'src/../../outside/x', content: 'x' }, /outside the repository/],
      ['read_file', { path: '~/.ssh/id_rsa' }, /absolute/],
      ['list_files', { dir: '..' }, /outside the repository/],
      ['search', { pattern: 'SECRET', path: 'innocent.txt' }, /outside the repository/],
    ];
    for (const [name, input, reason] of cases) {
      const out = await call(set, name, input);
      expect(out.isError, `${name} ${JSON.stringify(input)}`).toBe(true);
      expect(out.content).toMatch(reason);
    }
    expect(set.refusals).toHaveLength(cases.length);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    // Reading .github is fine (reviewers need it); only writes are refused.
    expect((await call(set, 'read_file', { path: '.github/CODEOWNERS' })).isError).toBeUndefined();
    // The guard's lexical check can vet a diff's paths before a commit.
    expect(set.guard.check('.github/workflows/ci.yml', 'write')).toMatch(/\.github/);
    expect(set.guard.check('src/a.ts', 'write')).toBeNull();
  });

  it('run_command: only configured names; timeout kills the process group; output tail kept', async () => {
    const { root } = setup();
    const set = await tools({
      root,
      commands: {
        slow: 'sleep 30 & sleep 30; echo never',
        loud: 'for i in $(seq 1 5000); do echo line-$i; done; exit 3',
      },
      commandTimeoutMs: 300,
      maxOutputChars: 200,
    });
    const tool = set.tools.find((t) => t.name === 'run_command')!;
    expect(tool.input.safeParse({ name: 'rm -rf /' }).success).toBe(false);
    const started = Date.now();
    const slow = await call(set, 'run_command', { name: 'slow' });
    expect(slow).toMatchObject({ isError: true, content: expect.stringMatching(/^Timed out after/) });
    expect(Date.now() - started).toBeLessThan(5_000);
    const loud = await call(set, 'run_command', { name: 'loud' });
    expect(loud.content).toMatch(/^Exit code 3 after/);
    expect(loud.content).toMatch(/earlier characters of output cut/);
    expect(loud.content).toMatch(/line-5000\n$/);
    expect(loud.content).not.toContain('line-1\n');
  });

  it('the final test reuses the last run only while nothing could have changed the tree', async () => {
    const { root } = setup();
    const log = join(root, '..', 'test-runs.log');
    writeFileSync(log, '');
    const runs = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    const set = await tools({
      root,
      commands: { test: 'echo run >> ../test-runs.log; grep -c x src/a.ts; exit 1', lint: 'true' },
    });
    expect((await set.finalTest(60_000))?.content).toMatch(/^Exit code 1 after[\s\S]*\n3\n$/);
    expect(runs()).toBe(1);
    await call(set, 'run_command', { name: 'test' });
    await call(set, 'read_file', { path: 'src/a.ts' }); // reading changes nothing
    expect((await set.finalTest(60_000))?.content).toMatch(/^Exit code 1 /);
    expect(runs()).toBe(2);
    await call(set, 'edit_file', { path: 'src/a.ts', old_string: 'const y', new_string: 'let y' });
    await set.finalTest(60_000);
    expect(runs()).toBe(3);
    await call(set, 'run_command', { name: 'test' });
    await call(set, 'run_command', { name: 'lint' }); // any command may write
    await set.finalTest(60_000);
    expect(runs()).toBe(5);
    await call(set, 'write_file', { path: 'src/c.ts', content: 'x' });
    await set.finalTest(60_000);
    expect(runs()).toBe(6);
    const none = await tools({ root, commands: { lint: 'true' } });
    expect(await none.finalTest(60_000)).toBeUndefined();
  });

  it('tests ahead: started while the model thinks, handed to the next test call, killed before the tree changes', async () => {
    const { root } = setup();
    const log = join(root, '..', 'ahead.log');
    writeFileSync(log, '');
    const events = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const test = 'echo start >> ../ahead.log; sleep 0.4; echo end >> ../ahead.log; grep -c y src/a.ts';
    const set = await tools({ root, commands: { test, lint: 'true' }, testAhead: true });
    const context = { deadline: Date.now() + 60_000, remainingMs: 60_000 };
    const until = async (what: () => boolean) => {
      for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    };

    set.afterTools(context); // nothing changed yet: nothing starts
    await call(set, 'edit_file', { path: 'src/a.ts', old_string: 'const y = x + 1;', new_string: 'const y = x + 2;' });
    set.afterTools(context);
    await until(() => events().length > 0);
    expect(events()).toEqual(['start']); // running while "the model thinks"
    const handed = await call(set, 'run_command', { name: 'test' });
    expect(handed.content).toMatch(/^Exit code 0 after[\s\S]*\n2\n$/);
    expect(events()).toEqual(['start', 'end']); // the agent's call got the run ahead, no second run
    set.afterTools(context); // tested already: nothing starts
    expect((await set.finalTest(60_000))?.content).toBe(handed.content);
    expect(events()).toEqual(['start', 'end']);

    // A read goes on beside the run ahead, which is still handed over.
    await call(set, 'write_file', { path: 'src/d.ts', content: 'const y = 4;\n' });
    set.afterTools(context);
    await call(set, 'read_file', { path: 'src/d.ts' });
    await call(set, 'run_command', { name: 'test' });
    expect(events()).toEqual(['start', 'end', 'start', 'end']);

    // An edit first kills the run ahead (it never ends) and only then changes the file.
    await call(set, 'edit_file', { path: 'src/a.ts', old_string: 'const y = x + 2;', new_string: 'const z = x;' });
    set.afterTools(context);
    await until(() => events().length === 5);
    const edited = await call(set, 'edit_file', { path: 'src/d.ts', old_string: 'const y', new_string: 'let w' });
    expect(edited.content).toBe('Edited src/d.ts.');
    await new Promise((r) => setTimeout(r, 600));
    expect(events()).toEqual(['start', 'end', 'start', 'end', 'start']);
    // Nothing stands for the final tree any more: the final test runs it.
    expect((await set.finalTest(60_000))?.content).toMatch(/^Exit code 0 after[\s\S]*\n1\n$/); // export { y }
    expect(events()).toEqual(['start', 'end', 'start', 'end', 'start', 'start', 'end']);

    // Off (the default for createWorkspaceTools): a changed tree starts nothing between turns.
    const off = await tools({ root, commands: { test } });
    await call(off, 'write_file', { path: 'src/e.ts', content: 'x' });
    off.afterTools(context);
    await new Promise((r) => setTimeout(r, 100));
    expect(events()).toHaveLength(7);
  });

  it('command environment: allowlist, temp HOME, CI, and the deny list wins over an explicit allow', () => {
    const env = commandEnv({
      home: '/tmp/h',
      source: {
        PATH: '/bin',
        LANG: 'C.UTF-8',
        GITHUB_TOKEN: 't',
        AWS_SECRET_ACCESS_KEY: 's',
        MY_API_KEY: 'k',
        JAVA_HOME: '/j',
        HOME: '/root',
      },
      allow: ['JAVA_HOME', 'MY_API_KEY'],
    });
    expect(env).toEqual({
      PATH: '/bin',
      LANG: 'C.UTF-8',
      JAVA_HOME: '/j',
      HOME: '/tmp/h',
      TMPDIR: '/tmp/h',
      CI: 'true',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
    });
  });

  it('globs: gitignore flavour', () => {
    expect(globToRegExp('*.pem').test('a/b/c.pem')).toBe(true);
    expect(globToRegExp('config/prod/').test('config/prod/x/y.yml')).toBe(true);
    expect(globToRegExp('config/prod/').test('config/production.yml')).toBe(false);
    expect(globToRegExp('src/**/secret.ts').test('src/secret.ts')).toBe(true);
    expect(globToRegExp('src/*.ts').test('src/a/b.ts')).toBe(false);
    expect(globToRegExp('CODEOWNERS').test('docs/CODEOWNERS')).toBe(true);
  });
});
