import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { UserError } from '@hydraflow/core';

/** What the Actions runner tells a step about where and why it runs, read once from the environment. */
export interface RunnerContext {
  eventName: string;
  payload: Record<string, any>;
  owner: string;
  repo: string;
  /** The repository's id (GITHUB_REPOSITORY_ID): what HydraFlow's signed state binds (a rename keeps it). */
  repositoryId: number;
  apiUrl: string;
  serverUrl: string;
  runId: string;
  runAttempt: number;
  /** The workflow file this run came from (`.github/workflows/x.yml`), used to dispatch the next phase to it. */
  workflowFile: string | undefined;
  /** The repository's default branch: dispatched workflows must exist there. */
  defaultBranch: string;
  workspace: string;
  /** RUNNER_TEMP: shared by the steps of one job, emptied after it (where the agent step's hand-off files live). */
  tempDir: string;
  /** GITHUB_JOB: the job id, which names the check run this job shows on a pull request's head. */
  job?: string;
}

// in a module of its own: the publish step uses it before the rest of the bundle (and @hydraflow/core) is loaded
export { remoteUrlOf } from './remote-url';

/** This workflow run's page (its attempt's, after a re-run), where a human finds each job's log. */
export function runUrlOf(runner: Pick<RunnerContext, 'serverUrl' | 'owner' | 'repo' | 'runId' | 'runAttempt'>): string {
  const run = `${runner.serverUrl.replace(/\/$/, '')}/${runner.owner}/${runner.repo}/actions/runs/${runner.runId}`;
  return runner.runAttempt > 1 ? `${run}/attempts/${runner.runAttempt}` : run;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new UserError(`${name} is not set: HydraFlow must run as a GitHub Actions step`);
  return value;
}

export function readRunnerContext(env: NodeJS.ProcessEnv = process.env): RunnerContext {
  const eventName = required(env, 'GITHUB_EVENT_NAME');
  const eventPath = required(env, 'GITHUB_EVENT_PATH');
  let payload: Record<string, any>;
  try {
    payload = JSON.parse(readFileSync(eventPath, 'utf8')) as Record<string, any>;
  } catch (error) {
    throw new UserError(`GITHUB_EVENT_PATH ${eventPath}: expected a JSON event payload (${(error as Error).message})`);
  }
  const [owner, repo] = required(env, 'GITHUB_REPOSITORY').split('/');
  if (!owner || !repo) throw new UserError(`GITHUB_REPOSITORY: expected owner/name, got "${env.GITHUB_REPOSITORY}"`);
  const repositoryId = Number(env.GITHUB_REPOSITORY_ID || payload.repository?.id);
  if (!Number.isInteger(repositoryId) || repositoryId <= 0) {
    throw new UserError(
      `GITHUB_REPOSITORY_ID: expected the repository's numeric id (the runner sets it), got "${env.GITHUB_REPOSITORY_ID ?? ''}"`,
    );
  }
  // GITHUB_WORKFLOW_REF is `owner/repo/.github/workflows/file.yml@refs/heads/main`.
  const workflowFile = env.GITHUB_WORKFLOW_REF?.match(/\/(\.github\/workflows\/[^@]+)@/)?.[1];
  return {
    eventName,
    payload,
    owner,
    repo,
    repositoryId,
    apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
    serverUrl: env.GITHUB_SERVER_URL || 'https://github.com',
    runId: env.GITHUB_RUN_ID || `local-${Date.now()}`,
    runAttempt: Number(env.GITHUB_RUN_ATTEMPT || '1'),
    workflowFile,
    // A scheduled run's payload may not name the repository; such a run is on the default branch's last commit.
    defaultBranch:
      payload.repository?.default_branch ||
      (eventName === 'schedule' ? env.GITHUB_REF?.replace(/^refs\/heads\//, '') : undefined) ||
      'main',
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    tempDir: env.RUNNER_TEMP || tmpdir(),
    ...(env.GITHUB_JOB ? { job: env.GITHUB_JOB } : {}),
  };
}
