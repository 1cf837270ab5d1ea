/**
 * The agent's workspace tools. Coders get read_file, list_files, search, write_file, edit_file and (when commands are
 * configured) run_command; reviewers and planners get the read-only three. Every path goes through the PathGuard; a
 * refused path is an error result for the model and an entry in `refusals`, which the phase reports.
 *
 * run_command takes a NAME from the configured commands (`{ test: 'npm test' }`), never a command line from the
 * model. The configured line runs with `sh -c` in the workspace root, with the scrubbed environment of env.ts, a
 * timeout (and never past the loop's deadline), its process group killed at the end, and only the tail of its output
 * kept.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { secretFileMatch } from '@hydraflow/core';
import { defineTool, type AgentTool, type ToolContext, type ToolOutcome } from '../tool-loop';
import { runCommand } from './command';
import { commandEnv } from './env';
import { PathGuard, type AccessMode } from './path-guard';
import { TestRuns } from './test-runs';

export interface Refusal {
  tool: string;
  path: string;
  reason: string;
}

export interface WorkspaceToolsOptions {
  /** The repository checkout the agent works in. */
  root: string;
  /** Allowed commands by name, e.g. `{ test: 'npm test', lint: 'npm run lint' }` (from configuration only). */
  commands?: Record<string, string>;
  /** Extra globs the agent may read but never write (`.git/` and `.github/` are always protected). */
  protectedPaths?: readonly string[];
  /** Per-command timeout (default 10 minutes). */
  commandTimeoutMs?: number;
  /** Characters of command output kept, from the end (default 20,000). */
  maxOutputChars?: number;
  /** Entries list_files returns at most (default 1,000). */
  maxListEntries?: number;
  /** Matches search returns at most (default 200). */
  maxSearchResults?: number;
  /** Extra environment variable names commands receive (the deny list still applies). */
  allowEnv?: readonly string[];
  /** Variables commands receive by value (implement.env; the deny list still applies). */
  extraEnv?: Readonly<Record<string, string>>;
  /**
   * The commands' HOME: default a fresh temporary directory. The agent job gives its own runner's HOME, where setup
   * steps put toolchains and caches (nothing of HydraFlow's is there: that job holds no token).
   */
  home?: string;
  /** Where the allowed variables come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Start the `test` command in the background when a turn changed the tree (test-runs.ts; default off). */
  testAhead?: boolean;
}

export interface WorkspaceToolset {
  tools: AgentTool[];
  /** Every refused path so far, in order. */
  refusals: Refusal[];
  guard: PathGuard;
  /**
   * Called by the tool loop after a turn's tools ran, while the model thinks: starts the tests ahead when the turn
   * changed the tree and testAhead is on.
   */
  afterTools(context: ToolContext): void;
  /**
   * The `test` command's outcome on the final tree (undefined without a test command): the last run when nothing
   * could have changed the workspace since (no write, edit or other command) and it ran to an exit code, since
   * running it again would only repeat it; else a new run.
   */
  finalTest(timeoutMs: number): Promise<ToolOutcome | undefined>;
  /**
   * A number that changes whenever something may have changed the tree (a write, an edit, a command, a test run), and
   * a promise that resolves once no test run is going: to tell whether a snapshot of the tree taken between turns
   * still stands for it at the end.
   */
  treeVersion(): number;
  settled(): Promise<void>;
  /** Kill a test run still going; remove the commands' temporary HOME. */
  dispose(): Promise<void>;
}

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_READ_CHARS = 100_000;

function gitEnv(home: string): Record<string, string> {
  return { ...commandEnv({ home }), LC_ALL: 'C' };
}

/** Run git in the workspace (no shell), hooks and fsmonitor off; stdout capped. */
function git(root: string, home: string, args: string[], maxBytes = 8 * 1024 * 1024) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'git',
      [
        '--literal-pathspecs',
        '-c',
        'core.hooksPath=/dev/null',
        '-c',
        'core.fsmonitor=false',
        '-c',
        'core.quotePath=false',
        ...args,
      ],
      { cwd: root, env: gitEnv(home), maxBuffer: maxBytes, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr || (error && code === -1 ? error.message : '')),
        });
      },
    );
  });
}

function isBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8000).includes(0);
}

export async function createWorkspaceTools(options: WorkspaceToolsOptions): Promise<WorkspaceToolset> {
  return build(options, false);
}

/** read_file, list_files, search: for reviewers and planners. */
export async function createReadOnlyTools(options: WorkspaceToolsOptions): Promise<WorkspaceToolset> {
  return build(options, true);
}

async function build(options: WorkspaceToolsOptions, readOnly: boolean): Promise<WorkspaceToolset> {
  const guard = await PathGuard.create(options.root, options.protectedPaths ?? []);
  const root = guard.root;
  // A fresh directory for TMPDIR (and HOME, unless one is given), removed when the toolset is disposed.
  const scratch = await mkdtemp(join(tmpdir(), 'hydraflow-agent-home-'));
  const home = options.home ?? scratch;
  const refusals: Refusal[] = [];
  const commands = options.commands ?? {};
  const names = Object.keys(commands);
  const env = commandEnv({
    home,
    tmp: scratch,
    ...(options.env ? { source: options.env } : {}),
    ...(options.allowEnv ? { allow: options.allowEnv } : {}),
    ...(options.extraEnv ? { values: options.extraEnv } : {}),
  });
  const maxOutputChars = options.maxOutputChars ?? 20_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 600_000;
  const testLine = commands.test;
  const tests = new TestRuns(
    (timeoutMs, signal) => runCommand(testLine ?? 'false', { cwd: root, env, timeoutMs, maxOutputChars, signal }),
    { ahead: options.testAhead === true && testLine !== undefined && !readOnly },
  );
  const maxList = options.maxListEntries ?? 1000;
  const maxMatches = options.maxSearchResults ?? 200;

  const guarded = async (tool: string, path: string, mode: AccessMode, allowRoot = false) => {
    const r = await guard.resolve(path, mode, { allowRoot });
    if (!r.ok) refusals.push({ tool, path, reason: r.reason });
    return r;
  };
  const refused = (path: string, reason: string): ToolOutcome => ({
    content: `Refused: ${path}: ${reason}.`,
    isError: true,
  });

  const readFileTool = defineTool({
    name: 'read_file',
    description:
      'Read a text file of the repository. Paths are relative to the repository root. For long files, ask for a line range.',
    input: z.object({
      path: z.string().describe('File path relative to the repository root'),
      start_line: z.number().int().min(1).optional().describe('First line to return (1-based)'),
      end_line: z.number().int().min(1).optional().describe('Last line to return (inclusive)'),
    }),
    async run({ path, start_line, end_line }) {
      const r = await guarded('read_file', path, 'read');
      if (!r.ok) return refused(path, r.reason);
      const stat = await lstat(r.abs).catch(() => undefined);
      if (!stat) return { content: `No such file: ${path}`, isError: true };
      if (!stat.isFile())
        return { content: `${path} is not a file${stat.isDirectory() ? ' (use list_files)' : ''}`, isError: true };
      if (stat.size > 20 * MAX_FILE_BYTES)
        return { content: `${path} is too large (${stat.size} bytes)`, isError: true };
      const buffer = await readFile(r.abs);
      if (isBinary(buffer)) return { content: `${path} is a binary file`, isError: true };
      const lines = buffer.toString('utf8').split('\n');
      const from = start_line ?? 1;
      const to = Math.min(end_line ?? lines.length, lines.length);
      let text = lines.slice(from - 1, to).join('\n');
      let note = start_line !== undefined || end_line !== undefined ? `[lines ${from}-${to} of ${lines.length}]\n` : '';
      if (text.length > MAX_READ_CHARS) {
        const kept = text.slice(0, MAX_READ_CHARS);
        const keptLines = kept.split('\n').length - 1;
        text = kept.slice(0, kept.lastIndexOf('\n') + 1);
        note = `[lines ${from}-${from + keptLines - 1} of ${lines.length} shown; read the rest with start_line=${from + keptLines}]\n`;
      }
      return { content: note + text };
    },
  });

  const listFilesTool = defineTool({
    name: 'list_files',
    description: `List the repository's files (tracked, plus untracked files that are not ignored), optionally under a directory. At most ${maxList} entries.`,
    input: z.object({
      dir: z.string().optional().describe('Directory relative to the repository root (default: all)'),
    }),
    async run({ dir }) {
      const r = await guarded('list_files', dir ?? '.', 'read', true);
      if (!r.ok) return refused(dir ?? '.', r.reason);
      const out = await git(root, home, [
        'ls-files',
        '-z',
        '--cached',
        '--others',
        '--exclude-standard',
        '--',
        r.rel || '.',
      ]);
      if (out.code !== 0) return { content: `list_files failed: ${out.stderr.trim()}`, isError: true };
      const files = [...new Set(out.stdout.split('\0').filter(Boolean))].sort();
      const present: string[] = [];
      for (const f of files) {
        if (present.length >= maxList) break;
        if (
          await lstat(join(root, f)).then(
            () => true,
            () => false,
          )
        )
          present.push(f);
      }
      const more = files.length - present.length;
      if (present.length === 0) return { content: `No files under ${dir ?? 'the repository root'}.` };
      return {
        content:
          present.join('\n') + (more > 0 && present.length >= maxList ? `\n[… ${more} more; list a subdirectory]` : ''),
      };
    },
  });

  const searchTool = defineTool({
    name: 'search',
    description: `Search file contents like grep: POSIX extended regular expression by default, or a literal string with fixed_strings. Returns path:line: text, at most ${maxMatches} matches.`,
    input: z.object({
      pattern: z.string().min(1),
      path: z.string().optional().describe('File or directory to search (default: the whole repository)'),
      fixed_strings: z.boolean().optional().describe('Treat the pattern as a literal string'),
      ignore_case: z.boolean().optional(),
    }),
    async run({ pattern, path, fixed_strings, ignore_case }) {
      const r = await guarded('search', path ?? '.', 'read', true);
      if (!r.ok) return refused(path ?? '.', r.reason);
      const out = await git(root, home, [
        'grep',
        '-n',
        '-I',
        '--no-color',
        '--untracked',
        fixed_strings ? '-F' : '-E',
        ...(ignore_case ? ['-i'] : []),
        '-e',
        pattern,
        '--',
        r.rel || '.',
      ]);
      if (out.code === 1) return { content: 'No matches.' };
      if (out.code !== 0)
        return { content: `search failed: ${out.stderr.trim() || `exit ${out.code}`}`, isError: true };
      // Files that hold credentials by convention are not for reading (path-guard.ts), nor for searching.
      const lines = out.stdout.split('\n').filter((l) => l && !secretFileMatch(l.slice(0, l.indexOf(':'))));
      const shown = lines.slice(0, maxMatches).map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
      return {
        content:
          shown.join('\n') +
          (lines.length > maxMatches ? `\n[… ${lines.length - maxMatches} more matches; narrow the search]` : ''),
      };
    },
  });

  const writeFileTool = defineTool({
    name: 'write_file',
    description: 'Create or overwrite a file with the given content. Parent directories are created.',
    input: z.object({ path: z.string(), content: z.string() }),
    async run({ path, content }) {
      const r = await guarded('write_file', path, 'write');
      if (!r.ok) return refused(path, r.reason);
      if (Buffer.byteLength(content) > MAX_FILE_BYTES)
        return { content: `Content too large (max ${MAX_FILE_BYTES} bytes)`, isError: true };
      const stat = await lstat(r.abs).catch(() => undefined);
      if (stat && !stat.isFile()) return { content: `${path} exists and is not a regular file`, isError: true };
      await tests.changing();
      await mkdir(dirname(r.abs), { recursive: true });
      await writeFile(r.abs, content);
      return { content: `Wrote ${path} (${content.split('\n').length} lines).` };
    },
  });

  const editFileTool = defineTool({
    name: 'edit_file',
    description:
      'Replace one exact occurrence of old_string with new_string in a file. old_string must appear exactly once (include surrounding lines to make it unique); whitespace matters.',
    input: z.object({ path: z.string(), old_string: z.string().min(1), new_string: z.string() }),
    async run({ path, old_string, new_string }) {
      const r = await guarded('edit_file', path, 'write');
      if (!r.ok) return refused(path, r.reason);
      const stat = await lstat(r.abs).catch(() => undefined);
      if (!stat?.isFile()) return { content: `No such file: ${path} (use write_file to create it)`, isError: true };
      const text = await readFile(r.abs, 'utf8');
      const first = text.indexOf(old_string);
      if (first < 0)
        return {
          content: `old_string was not found in ${path}. Read the file again and copy the text exactly.`,
          isError: true,
        };
      const count = text.split(old_string).length - 1;
      if (count > 1)
        return {
          content: `old_string appears ${count} times in ${path}; include more surrounding text so it is unique.`,
          isError: true,
        };
      const next = text.slice(0, first) + new_string + text.slice(first + old_string.length);
      if (Buffer.byteLength(next) > MAX_FILE_BYTES)
        return { content: `Result too large (max ${MAX_FILE_BYTES} bytes)`, isError: true };
      await tests.changing();
      await writeFile(r.abs, next);
      return { content: `Edited ${path}.` };
    },
  });

  const tools: AgentTool[] = [readFileTool, listFilesTool, searchTool];
  if (!readOnly) {
    tools.push(writeFileTool, editFileTool);
    if (names.length > 0) {
      tools.push(
        defineTool({
          name: 'run_command',
          description: `Run one of the repository's configured commands in the repository root and get its exit code and the end of its output. Available: ${names
            .map((n) => `${n} (${commands[n]})`)
            .join(', ')}.`,
          input: z.object({ name: z.enum(names as [string, ...string[]]) }),
          async run({ name }, context) {
            const line = commands[name];
            if (line === undefined) return { content: `Unknown command '${name}'`, isError: true };
            const timeoutMs = Math.max(0, Math.min(commandTimeoutMs, context.remainingMs));
            if (name === 'test') return tests.test(timeoutMs);
            await tests.changing(); // any other command may write
            return runCommand(line, { cwd: root, env, timeoutMs, maxOutputChars });
          },
        }),
      );
    }
  }
  return {
    tools,
    refusals,
    guard,
    afterTools: (context) => tests.startAhead(Math.min(commandTimeoutMs, context.remainingMs)),
    finalTest: async (timeoutMs) => (testLine === undefined ? undefined : tests.final(timeoutMs)),
    treeVersion: () => tests.version,
    settled: () => tests.settled(),
    dispose: async () => {
      await tests.dispose();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

export type { ToolContext };
