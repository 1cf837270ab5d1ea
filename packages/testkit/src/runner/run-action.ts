/**
 * Runs HydraFlow's built dist/ the way the Actions runner does: a child process of node with INPUT_*, GITHUB_*,
 * GITHUB_EVENT_PATH, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY, then hands back what the step produced. The world's end
 * state is read from the emulator itself. The step ends when its process exits (waitForStep), as on a runner; the
 * lifecycle simulator passes the job's HOME, RUNNER_TEMP and RUNNER_TRACKING_ID in `env` and its runner-file
 * directory in `stepDir`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GitHubEmulator } from '../github/server';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const DIST_ENTRY = join(REPO_ROOT, 'dist/index.js');

export interface RunActionOptions {
  gh: GitHubEmulator;
  /** GITHUB_EVENT_NAME, e.g. `issues`. */
  event: string;
  payload: Record<string, unknown>;
  /** Action inputs by name as in action.yml (`github-token`, `phase`, ...). */
  inputs?: Record<string, string>;
  /** Extra environment (e.g. HYDRAFLOW_* variables, or a canary secret). */
  env?: Record<string, string>;
  /** Text of .github/hydraflow.yml in the checked-out workspace. */
  config?: string;
  runId?: string;
  runAttempt?: number;
  /** The workflow file this run belongs to. */
  workflowFile?: string;
  entry?: string;
  timeoutMs?: number;
  /** GITHUB_WORKSPACE: the runner's, as it is (default: a fresh directory per run standing for a checkout) */
  workspace?: string;
  /**
   * Where the step's runner files go (event.json, GITHUB_OUTPUT, GITHUB_ENV, ...): default a fresh temp directory that
   * is left behind. The lifecycle simulator passes one inside the job's runner directory, removed with it.
   */
  stepDir?: string;
  /** GITHUB_EVENT_PATH: an event file already written (the job's); default one written in the step's directory. */
  eventPath?: string;
  /** A command the action's node process is started under (e.g. `setpriv` as the job's user); default none. */
  launcher?: string[];
  /** told the step's process as soon as it runs (the lifecycle simulator signals it when its run is cancelled) */
  onSpawn?: (child: ChildProcess) => void;
}

export interface ActionRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  /** What the step appended to GITHUB_ENV and GITHUB_PATH, for the job's later steps (the simulator applies them). */
  envFile: Record<string, string>;
  pathFile: string[];
  durationMs: number;
}

let runCounter = 0;

/** How long the output of a step may still arrive after its process exited (its pipes may be held by a daemon). */
const OUTPUT_GRACE_MS = 200;

/**
 * The exit code of a step's process, as the runner waits for it: the step ends when its process exits, not when the
 * last holder of its stdout/stderr closes them (a background process a step started may hold them for hours); what
 * is still in the pipes arrives within a short grace. `timeoutMs`: SIGKILL the process (its children are the job's
 * to clean up) and resolve with `onTimeout`'s value, or reject when it throws.
 */
export function waitForStep(child: ChildProcess, timeoutMs: number, onTimeout: () => number): Promise<number> {
  return new Promise<number>((resolvePromise, reject) => {
    let code: number | undefined;
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(grace);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolvePromise(code ?? 1);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      clearTimeout(grace);
      try {
        resolvePromise(onTimeout());
      } catch (err) {
        reject(err as Error);
      }
    }, timeoutMs);
    child.on('exit', (c) => {
      code = c ?? 1;
      grace = setTimeout(finish, OUTPUT_GRACE_MS);
    });
    child.on('close', (c) => {
      code ??= c ?? 1;
      finish();
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      clearTimeout(grace);
      reject(err);
    });
  });
}

/** Parses the GITHUB_OUTPUT file format (`name<<delimiter` heredocs and `name=value` lines). */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!);
      outputs[heredoc[1]!] = value.join('\n');
    } else if (line.includes('=')) {
      outputs[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return outputs;
}

/** GITHUB_ENV and GITHUB_PATH as the runner reads them once a step has ended. */
export function readRunnerFiles(env: Record<string, string>): { envFile: Record<string, string>; pathFile: string[] } {
  return {
    envFile: parseOutputFile(readFileSync(env.GITHUB_ENV!, 'utf8')),
    pathFile: readFileSync(env.GITHUB_PATH!, 'utf8')
      .split(/\r?\n/)
      .filter((line) => line.trim() !== ''),
  };
}

/** The environment the runner gives a step, for this emulated repository and event. */
export function runnerEnv(options: RunActionOptions, dir: string): Record<string, string> {
  const { gh } = options;
  const repo = { owner: gh.world.owner, name: gh.world.repo, defaultBranch: gh.world.defaultBranch };
  const workspace = options.workspace ?? join(dir, 'workspace');
  // The harness's own workspace stands for a checkout (it holds .github/, and the config when given); a workspace the
  // caller passes is the runner's, left as it is: an empty one is a job with no checkout step (docs/adr/0020).
  if (!options.workspace || options.config !== undefined) mkdirSync(join(workspace, '.github'), { recursive: true });
  if (options.config !== undefined) writeFileSync(join(workspace, '.github/hydraflow.yml'), options.config);
  const eventPath = options.eventPath ?? join(dir, 'event.json');
  if (!options.eventPath) writeFileSync(eventPath, JSON.stringify(options.payload));
  const outputPath = join(dir, 'output');
  const summaryPath = join(dir, 'summary');
  writeFileSync(outputPath, '');
  writeFileSync(summaryPath, '');
  writeFileSync(join(dir, 'env'), '');
  writeFileSync(join(dir, 'path'), '');
  const workflowFile = options.workflowFile ?? '.github/workflows/hydraflow.yml';
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_API_URL: gh.url,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_GRAPHQL_URL: `${gh.url}/graphql`,
    GITHUB_REPOSITORY: `${repo.owner}/${repo.name}`,
    GITHUB_REPOSITORY_OWNER: repo.owner,
    GITHUB_REPOSITORY_ID: String(gh.world.repoId),
    GITHUB_EVENT_NAME: options.event,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_ENV: join(dir, 'env'),
    GITHUB_PATH: join(dir, 'path'),
    GITHUB_WORKSPACE: workspace,
    GITHUB_RUN_ID: options.runId ?? String(1_000_000 + ++runCounter),
    GITHUB_RUN_ATTEMPT: String(options.runAttempt ?? 1),
    GITHUB_WORKFLOW_REF: `${repo.owner}/${repo.name}/${workflowFile}@refs/heads/${repo.defaultBranch}`,
    GITHUB_REF: `refs/heads/${repo.defaultBranch}`,
    GITHUB_ACTOR: String((options.payload.sender as { login?: string } | undefined)?.login ?? 'octocat'),
    RUNNER_TEMP: dir,
    ...options.env,
  };
  for (const [name, value] of Object.entries(options.inputs ?? {})) {
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  }
  return env;
}

export async function runAction(options: RunActionOptions): Promise<ActionRun> {
  const dir = options.stepDir ?? mkdtempSync(join(tmpdir(), 'hydraflow-run-'));
  mkdirSync(dir, { recursive: true });
  const env = runnerEnv(options, dir);
  const started = performance.now();
  // HYDRAFLOW_CPU_PROF_DIR: a V8 CPU profile of every run, for finding where a run's time goes (bench/lib/profile.ts).
  const profile = process.env.HYDRAFLOW_CPU_PROF_DIR;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, '--cpu-prof-interval=200'] : [];
  const [cmd, ...args] = [...(options.launcher ?? []), process.execPath, ...flags, options.entry ?? DIST_ENTRY];
  const child = spawn(cmd!, args, { env, cwd: env.GITHUB_WORKSPACE });
  options.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exitCode = await waitForStep(child, options.timeoutMs ?? 60_000, () => {
    throw new Error(`action did not finish within ${options.timeoutMs ?? 60_000} ms\n${stdout}\n${stderr}`);
  });
  return {
    exitCode,
    stdout,
    stderr,
    outputs: parseOutputFile(readFileSync(env.GITHUB_OUTPUT!, 'utf8')),
    summary: readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8'),
    ...readRunnerFiles(env),
    durationMs: performance.now() - started,
  };
}
