/**
 * Whether the agent job prepares the project before the coding agent runs its tests (README step 4): the doctor's
 * check for a new project's most common first failure — a test command that needs installed dependencies, in a job
 * that installs none, which sends every issue to a human with "cannot find package".
 */
import { usesAction, workflowJobs } from './workflow-steps';

/** Lockfiles at a repository's root whose dependencies a test run needs installed, and the command that installs them. */
export const DEPENDENCY_LOCKFILES: Readonly<Record<string, string>> = {
  'package-lock.json': 'npm ci',
  'npm-shrinkwrap.json': 'npm ci',
  'yarn.lock': 'yarn install --frozen-lockfile',
  'pnpm-lock.yaml': 'pnpm install --frozen-lockfile',
  'bun.lock': 'bun install --frozen-lockfile',
  'bun.lockb': 'bun install --frozen-lockfile',
  'requirements.txt': 'pip install -r requirements.txt',
  'poetry.lock': 'poetry install',
  'Pipfile.lock': 'pipenv install --deploy',
  'uv.lock': 'uv sync --locked',
  'Gemfile.lock': 'bundle install',
  'composer.lock': 'composer install',
};

/** Whether a step of the agent job is the user's setup: not the checkout and not HydraFlow's model proxy. */
const isSetup = (uses: string) => !/^actions\/checkout@/.test(uses) && !usesAction(uses, 'model-proxy');

/**
 * How many steps the workflow's agent job runs before the coding agent, besides the model proxy and the checkout: the
 * user's setup. Undefined when the text is not a workflow with a job whose steps use actions/agent (a workflow of the
 * user's own, or a file that does not parse), which the doctor then does not judge.
 */
export function agentSetupSteps(workflowText: string): number | undefined {
  for (const steps of workflowJobs(workflowText) ?? []) {
    const agent = steps.findIndex((s) => usesAction(s.uses, 'agent'));
    if (agent >= 0) return steps.slice(0, agent).filter((s) => isSetup(s.uses)).length;
  }
  return undefined;
}

/** Whether a test command installs its own dependencies first (`npm ci && npm test`). */
export function installsItself(command: string): boolean {
  return /\b(?:ci|install|sync)\b/.test(command);
}
