/**
 * Runs HydraFlow's phases in-process against a test World, as the action would after a workflow_dispatch: the same
 * runner context, inputs and config parsing as `src/run.ts`, without a child process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@hydraflow/core';
import type { World } from '@hydraflow/testkit';
import { createApp, type App } from '../../src/app';
import { parseInputs } from '../../src/inputs';
import { readRunnerContext } from '../../src/runner/context';
import type { RunnerIO } from '../../src/runner/io';

export const quietIO: RunnerIO = {
  setOutput() {},
  appendSummary() {},
  mask() {},
  info() {},
  notice() {},
  warning() {},
  error() {},
};

/** The action's App for a workflow_dispatch of `phase` on `issue`, as run `runId` attempt `attempt`. */
export function dispatchedApp(
  w: World,
  args: { issue: number; phase: string; runId: string; attempt?: number; env?: Record<string, string> },
): App {
  const dir = mkdtempSync(join(tmpdir(), 'hydraflow-event-'));
  writeFileSync(join(dir, 'event.json'), JSON.stringify({ inputs: { issue: String(args.issue), phase: args.phase } }));
  const env = {
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_EVENT_PATH: join(dir, 'event.json'),
    GITHUB_REPOSITORY: 'acme/widgets',
    GITHUB_REPOSITORY_ID: String(w.gh.world.repoId),
    GITHUB_API_URL: w.gh.url,
    GITHUB_RUN_ID: args.runId,
    GITHUB_RUN_ATTEMPT: String(args.attempt ?? 1),
    GITHUB_WORKFLOW_REF: 'acme/widgets/.github/workflows/hydraflow.yml@refs/heads/main',
    ...Object.fromEntries(Object.entries(w.inputs()).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
    ...args.env,
  };
  const inputs = parseInputs(env, quietIO);
  const config = loadConfig({ env: {}, inputs: inputs.configOverrides });
  return createApp(readRunnerContext(env), inputs, config, { workflowFromConfig: false, io: quietIO, env });
}
