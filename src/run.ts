import './zod-jitless'; // first: before any module builds a schema
import {
  CreditExhaustedError,
  RateLimitedError,
  UserError,
  handOffConfig,
  hasDayLimits,
  ISSUE_PHASES,
  isIssuePhase,
  loadConfigDetailed,
  neutralizeText,
  phaseFacts,
  readConfigFile,
  readHandedConfig,
  route,
  UNSIGNED_STATE_NOTE,
  type HydraflowConfig,
  type LoadedConfig,
} from '@hydraflow/core';
import type { Decision } from './execute';
import { gitTokenOf, parseInputs, type ActionInputs } from './inputs';
import { createModels } from './models';
import { beginEarlyCall } from './phases/early-calls';
import { phaseSpansBlock, type PhaseOutcome } from './phases/phase-context';
import { nodeFetch } from '@hydraflow/http';
import { readRunnerContext, type RunnerContext } from './runner/context';
import { remoteConfigFile, remoteConfigSource } from './runner/remote-config';
import { isEmptyWorkspace, workingTree, workingTreeSource } from './runner/working-tree';
import { createRunnerIO, type RunnerIO } from './runner/io';

export interface RunOptions {
  io?: RunnerIO;
  /** The HTTP client under Octokit (tests inject faults such as a crash after a write). */
  fetch?: typeof fetch;
  /** How the run waits for another to finish (tests advance their fake clock instead). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RunResult {
  decision: string;
  failed: boolean;
  message: string;
}

/**
 * The action: read the runner's context once, decide what the event asks for, do it, report. The GitHub side (the
 * client, the handlers, the phases: ./execute) is loaded only once the decision needs it, and after the phase's early
 * model call is on its way (phases/early-calls.ts), so that its loading hides behind the model's latency.
 */
export async function run(env: NodeJS.ProcessEnv = process.env, options: RunOptions = {}): Promise<RunResult> {
  const io = options.io ?? createRunnerIO(env);
  let decided = 'none';
  let early: Awaited<ReturnType<typeof beginEarlyCall>>;
  try {
    const runner = readRunnerContext(env);
    const inputs = parseInputs(env, io);
    const loaded = await loadRunConfig(runner, inputs, env, options.fetch ?? nodeFetch);
    for (const warning of loaded.warnings) io.warning(warning);
    const config = loaded.config;

    if (inputs.phase === 'agent') {
      // The coding agent's own job: no GitHub token, no routing; it works on the task the routing job handed on.
      const { runAgentStep } = await import('./phases/agent');
      const outcome = await runAgentStep({ runner, config, now: () => new Date(), ...agentModels(inputs, config) });
      for (const [name, value] of Object.entries(outcome.outputs)) io.setOutput(name, value);
      if (outcome.fatal) throw outcome.fatal; // credit or budget: reported as such (report below)
      io.info(`HydraFlow: ${outcome.summary}`);
      if (outcome.failed) io.error(outcome.summary);
      return { decision: 'agent', failed: outcome.failed === true, message: outcome.summary };
    }
    const decision: Decision = inputs.phase
      ? explicitPhase(inputs.phase, inputs.issue ?? runner.payload.issue?.number, runner.payload.sender?.login)
      : route(
          { name: runner.eventName, action: runner.payload.action, payload: runner.payload },
          { botLogins: config.bot_logins, config },
        );
    decided = describe(decision);
    io.setOutput('decision', decided);
    if (decision.kind === 'skip') {
      io.info(`HydraFlow: nothing to do (${decision.reason})`);
      return { decision: decided, failed: false, message: decision.reason };
    }
    const models = createModels(inputs, config);
    // A human who sets hydraflow-find asks for a fresh triage even if the issue is unchanged.
    const forced = runner.eventName === 'issues' && runner.payload.action === 'labeled';
    // Not for a label: who set it may not steer (handlers/label-steering.ts), and a call begun before that is known
    // would be spent on their say. Nor under a daily limit: the day's ledger must be read before anything is spent.
    early =
      decision.kind === 'phase' && !forced && !decision.minPermission && !hasDayLimits(config)
        ? beginEarlyCall(runner, config, models, decision, inputs.phase)
        : undefined;
    await early?.sent; // the process is busy loading code until the request is out: the GitHub side comes after
    // A run that will read the repository's files fetches them now, in a job that left its workspace empty (ADR 0020):
    // git works while the model answers; begun after the early call is out, whose start it would slow on a small runner.
    if (decision.kind === 'phase' && phaseFacts(decision.phase).workingTree && isEmptyWorkspace(runner.workspace))
      workingTree(workingTreeSource(runner, gitTokenOf(inputs))).catch(() => undefined); // a phase awaits it
    const { createApp, execute } = await import('./execute');
    const app = createApp(runner, inputs, config, {
      workflowFromConfig: 'workflow' in loaded.sources,
      io,
      env,
      models,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
    const outcome = await execute(app, decision, forced, early);
    io.info(`HydraFlow: ${outcome.summary}`);
    if (outcome.stage !== undefined && outcome.stage !== null) io.setOutput('stage', outcome.stage);
    for (const [name, value] of Object.entries(outcome.outputs ?? {})) io.setOutput(name, value);
    if (outcome.outputs?.agent) io.setOutput('run-config', handOffConfig(loaded));
    if (outcome.phases) io.setOutput('phases', outcome.phases.map((p) => p.phase).join(','));
    io.appendSummary(summaryMarkdown(decision, outcome, runner, Boolean(inputs.stateKey)));
    if (outcome.failed) io.error(outcome.summary);
    return { decision: decided, failed: outcome.failed === true, message: outcome.summary };
  } catch (error) {
    if (error instanceof RateLimitedError) {
      // Not a failure (ADR 0014): nothing was left half-done, and the hourly sweep resumes what this run could not do.
      const message = `HydraFlow stopped for GitHub's rate limit: ${error.message}. The issue is left as it was; the workflow's hourly scheduled run resumes it within the budget GitHub gives.`;
      io.warning(message);
      return { decision: decided, failed: false, message };
    }
    return { decision: decided, failed: true, message: report(io, error) };
  } finally {
    early?.cancel(); // not adopted (the work was done already, or another run holds the issue): stop paying for it
  }
}

/** The agent's models: through the job's model proxy when there is one (its token stands in for the key). */
function agentModels(inputs: ActionInputs, config: HydraflowConfig) {
  const proxy = inputs.modelProxy;
  if (!proxy) return { ...createModels(inputs, config), proxy };
  const keys = { anthropicApiKey: proxy.token, openaiApiKey: proxy.token };
  return { ...createModels({ ...inputs, ...keys }, { ...config, base_url: proxy.url }), proxy };
}

/**
 * The config this step runs with. The publish step goes by the routing step's (input run-config, handoff.ts): after the
 * agent's commands ran, neither the working tree nor the environment is HydraFlow's to trust. The agent step takes it
 * too when given (its checkout is the issue's branch, whose file may differ); every other step resolves its own.
 */
async function loadRunConfig(
  { workspace }: RunnerContext,
  inputs: ActionInputs,
  env: NodeJS.ProcessEnv,
  fetchImpl: typeof fetch,
): Promise<LoadedConfig> {
  if (inputs.runConfig !== undefined) return readHandedConfig(inputs.runConfig);
  if (inputs.phase === 'publish') {
    throw new UserError(
      'input run-config: the publish job needs the routing job’s output run-config (`run-config: ${{ needs.hydraflow.outputs.run-config }}`); update your workflow from workflows-templates/hydraflow.yml',
    );
  }
  // The workspace's file (the job's checkout has it); in a job that left its workspace empty (the template's routing
  // job), the default branch's, read through the API (docs/adr/0020).
  const remote = isEmptyWorkspace(workspace) ? remoteConfigSource(env, fetchImpl) : undefined;
  const file = remote ? await remoteConfigFile(workspace, remote) : await readConfigFile(workspace, inputs.configPath);
  return loadConfigDetailed({
    fileText: file?.text,
    filePath: file?.path ?? inputs.configPath,
    env,
    inputs: inputs.configOverrides,
  });
}

function explicitPhase(phase: string, issue: number | undefined, actor: string | undefined): Decision {
  if (!isIssuePhase(phase))
    throw new UserError(`input phase: expected one of ${ISSUE_PHASES.join(', ')} or agent, got "${phase}"`);
  if (!issue) throw new UserError(`input phase "${phase}": expected an issue number (input issue), got none`);
  return { kind: 'phase', phase, issue, actor: actor ?? '', dispatched: false };
}

function describe(decision: Decision): string {
  switch (decision.kind) {
    case 'skip':
      return 'skip';
    case 'phase':
      return decision.phase;
    case 'command':
      return `command:${decision.command}`;
    default:
      return decision.kind;
  }
}

/**
 * The job summary: markdown GitHub renders on the run's page. The outcome's summary and details can hold a model's
 * words (an escalation's reason, the triage verdict), so they are neutralized like the progress comment's, with the
 * repository's own links kept.
 */
function summaryMarkdown(
  decision: Decision,
  outcome: PhaseOutcome,
  runner: { serverUrl: string; owner: string; repo: string },
  signed: boolean,
): string {
  const repository = `${runner.serverUrl.replace(/\/$/, '')}/${runner.owner}/${runner.repo}/`;
  const shown = (text: string) => neutralizeText(text, { trustedPrefixes: [repository] });
  const lines = [`### HydraFlow · ${describe(decision)}`, '', shown(outcome.summary)];
  if (!signed) lines.push('', `> [!CAUTION]\n> ${UNSIGNED_STATE_NOTE}`);
  const spans = outcome.phases ?? [];
  if (spans.length > 1) {
    const took = spans.map((s) => `${s.phase} ${((s.endedAt - s.startedAt) / 1000).toFixed(1)} s`).join(' → ');
    lines.push('', `Phases in this run: ${took}`);
  }
  // The same spans, machine-readable (epoch ms): HydraFlow's bench reads them to split a step's requests by phase.
  if (spans.length > 0) lines.push('', phaseSpansBlock(spans));
  if (outcome.details) lines.push('', shown(outcome.details));
  return lines.join('\n');
}

/** One place that reports: user mistakes as such, credit exhaustion loudly, anything else as a HydraFlow bug. */
/**
 * A request GitHub answered with an error status, in one line that says what is left to do; undefined for any other
 * error. Recognised by shape (octokit's RequestError: status and request), since this file loads no GitHub client.
 */
function githubRefusal(error: unknown): string | undefined {
  const e = error as { status?: unknown; request?: { method?: unknown; url?: unknown } } | null;
  const method = e?.request?.method;
  const url = e?.request?.url;
  if (typeof e?.status !== 'number' || typeof method !== 'string' || typeof url !== 'string') return undefined;
  const what = `GitHub answered ${e.status} to ${method} ${URL.canParse(url) ? new URL(url).pathname : url}`;
  if (e.status === 404)
    return `${what}: the issue or pull request is gone (deleted or transferred), or this token cannot see it. Nothing was changed; nothing is left to do for this event.`;
  if (e.status === 401) return `${what}: the token was refused; check the github-token input. Nothing was changed.`;
  return `${what}: re-run this workflow run to finish (HydraFlow looks before it writes again).`;
}

function report(io: RunnerIO, error: unknown): string {
  let message: string;
  const refusal = githubRefusal(error);
  if (error instanceof UserError) {
    message = `HydraFlow configuration problem: ${error.message}`;
  } else if (error instanceof CreditExhaustedError) {
    message = `HydraFlow stopped: the ${error.provider} account is out of credit. ${error.message}`;
  } else if (refusal) {
    message = `HydraFlow stopped: ${refusal}`;
  } else {
    const e = error instanceof Error ? error : new Error(String(error));
    message = `HydraFlow failed: ${e.message}`;
    if (e.stack) io.info(e.stack);
  }
  io.error(message);
  return message;
}
