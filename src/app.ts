import { hasDayLimits, secretValuesOf, type HydraflowConfig } from '@hydraflow/core';
import {
  createRestClient,
  GraphqlGrooming,
  RateBudget,
  readRateLimit,
  RestIssues,
  RestPulls,
  RestSetup,
  MemoryBranch,
  SpendLedgerBranch,
  type GroomingPort,
  type IssuesPort,
  type PullsPort,
} from '@hydraflow/github';
import { DaySpend } from './budget/day-spend';
import { Memory } from './memory/memory';
import type { ActionInputs } from './inputs';
import { createModels, type Models } from './models';
import type { RunnerContext } from './runner/context';
import type { RunnerIO } from './runner/io';
import { runClock } from './runner/clock';

/** The adapters one run uses, built once at the edge from the runner context, inputs and config. */
export interface App extends Models {
  runner: RunnerContext;
  inputs: ActionInputs;
  config: HydraflowConfig;
  issues: IssuesPort;
  pulls: PullsPort;
  /**
   * Pull requests as the push token's identity, when one is set: the pull request is opened with it, because a pull
   * request opened with GITHUB_TOKEN starts no workflow — the user's CI would never run on it.
   */
  pullsAsPusher: PullsPort | undefined;
  grooming: GroomingPort;
  /** What `doctor` reads of the repository's settings. */
  setup: RestSetup;
  /** The workflow file that receives the next phase's dispatch. */
  workflow: string;
  /** The repository's day (budgets.per_day), when a daily limit is set: read and written once per step. */
  daySpend: DaySpend | undefined;
  /** The repository's memory (memory.enabled): recalled into discover and shape, written by the routing job only. */
  memory: Memory | undefined;
  now: () => Date;
  /** Waits on the clock `now` reads (a test's fake clock advances instead of waiting). */
  sleep: (ms: number) => Promise<void>;
  /** The run's rate-limit policy (ADR 0014): which waits fit, and GitHub's primary budget as last reported. */
  rate: RateBudget;
  /** Makes sure `requests` GitHub requests are left before writing (RateBudget.ensure; GET /rate_limit if need be). */
  ensureRequests: (requests: number, what: string) => Promise<void>;
  /**
   * Whether a phase may go on with the next one in this run (next-phase.ts); false in the hourly sweep, which works on
   * many issues and dispatches each one's next phase.
   */
  chain: boolean;
}

export function createApp(
  runner: RunnerContext,
  inputs: ActionInputs,
  config: HydraflowConfig,
  options: {
    workflowFromConfig: boolean;
    io: RunnerIO;
    /** The step's environment: its secret values are masked in everything sent to GitHub. */
    env: NodeJS.ProcessEnv;
    fetch?: typeof fetch;
    /** The run's model side, if it was made before the GitHub side (run.ts: an early model call already uses it). */
    models?: Models;
    sleep?: (ms: number) => Promise<void>;
  },
): App {
  // Whatever a phase writes, no secret of this run's environment reaches GitHub (the canary test plants one).
  const redact = secretValuesOf(options.env);
  const clock = runClock();
  // One policy for every client of the run: the waits it may still afford are the run's, whichever token waited.
  const rate = new RateBudget({ clock, log: options.io.warning });
  const octokit = createRestClient({
    token: inputs.githubToken,
    baseUrl: runner.apiUrl,
    log: options.io.warning,
    redact,
    budget: rate,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const repo = { owner: runner.owner, repo: runner.repo };
  const issues = new RestIssues(octokit, repo, config.bot_logins);
  const pulls = new RestPulls(octokit, repo, config.bot_logins);
  const pusher = inputs.pushToken
    ? createRestClient({
        token: inputs.pushToken,
        baseUrl: runner.apiUrl,
        log: options.io.warning,
        redact,
        budget: new RateBudget({ clock, log: options.io.warning, sharesWaitsWith: rate }),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      })
    : undefined;
  // By default the next phase goes to the very workflow this run belongs to; `workflow:` in config overrides it.
  const ownWorkflow = runner.workflowFile?.split('/').pop();
  return {
    runner,
    inputs,
    config,
    issues,
    pulls,
    pullsAsPusher: pusher ? new RestPulls(pusher, repo, config.bot_logins) : undefined,
    grooming: new GraphqlGrooming(octokit, repo),
    // the settings need Administration: read, which GITHUB_TOKEN never has; a push App may have it
    setup: new RestSetup(pusher ?? octokit, repo),
    ...(options.models ?? createModels(inputs, config)),
    workflow: options.workflowFromConfig || !ownWorkflow ? config.workflow : ownWorkflow,
    // written with the workflow's token, never the push token: its commits must start no workflow
    daySpend: hasDayLimits(config)
      ? new DaySpend(new SpendLedgerBranch(octokit, repo), {
          repository: `${runner.owner}/${runner.repo}`,
          key: inputs.stateKey,
          previousKey: inputs.previousStateKey,
          limits: config.budgets.per_day,
          runId: runner.runId,
        })
      : undefined,
    // the workflow's token, like the spend ledger: its commits start no workflow
    memory: config.memory.enabled
      ? new Memory(new MemoryBranch(octokit, repo), {
          config,
          now: () => new Date(clock.now()),
          warn: options.io.warning,
        })
      : undefined,
    now: () => new Date(clock.now()),
    sleep: options.sleep ?? ((ms) => clock.sleep(ms)),
    rate,
    ensureRequests: (requests, what) => rate.ensure(requests, what, () => readRateLimit(octokit)),
    chain: true,
  };
}
