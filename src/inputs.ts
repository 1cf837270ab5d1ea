import { CONFIG_FILE, UserError } from '@hydraflow/core';
import { getInput, type RunnerIO } from './runner/io';

/** The action's inputs, parsed once into a typed object (root action.yml and actions/<phase>/action.yml). */
export interface ActionInputs {
  /** Run this phase instead of routing the event. */
  phase: string | undefined;
  /** The issue for an explicit phase; defaults to the event's issue. */
  issue: number | undefined;
  githubToken: string;
  /** Optional App token or PAT for git pushes, so CI runs on HydraFlow's branches (GITHUB_TOKEN pushes start none). */
  pushToken: string | undefined;
  anthropicApiKey: string | undefined;
  openaiApiKey: string | undefined;
  configPath: string;
  /** The routing step's resolved config (its output run-config), for the agent and publish steps after it. */
  runConfig: string | undefined;
  stateKey: string | undefined;
  /** HYDRAFLOW_STATE_KEY_PREVIOUS during a key rotation: verifies state signed before it, never signs. */
  previousStateKey: string | undefined;
  /** The agent job's model proxy (actions/model-proxy's output proxy), which holds the model key for the agent step. */
  modelProxy: { url: string; token: string } | undefined;
  /**
   * The agent job's result as GitHub reports it to the publish job (`needs.agent.result`): what to tell the human when
   * that job handed on nothing. Undefined when not given (an older template) or not one of GitHub's words.
   */
  agentResult: AgentJobResult | undefined;
  /**
   * The public key the agent job's model proxy signs its count of the job's model calls with (its output meter-key):
   * with it, the publish job ledgers that count and nothing the agent's result says. Undefined: an older template.
   */
  meterKey: string | undefined;
  /** All inputs by lower-cased name: those that name a config key override it (highest precedence). */
  configOverrides: Record<string, string | undefined>;
}

const optional = (value: string) => (value === '' ? undefined : value);

/** A job's result as `needs.<job>.result` gives it. */
export const AGENT_JOB_RESULTS = ['success', 'failure', 'cancelled', 'skipped'] as const;
export type AgentJobResult = (typeof AGENT_JOB_RESULTS)[number];

export function parseInputs(env: NodeJS.ProcessEnv, io: RunnerIO): ActionInputs {
  const phaseInput = getInput('phase', env);
  const githubToken = getInput('github-token', env) || env.GITHUB_TOKEN || '';
  // The agent step runs the coding agent and is given no GitHub token on purpose.
  if (!githubToken && phaseInput !== 'agent') {
    throw new UserError('input github-token: expected a token (pass secrets.GITHUB_TOKEN or a PAT), got nothing');
  }
  const issueText = getInput('issue', env);
  const issue = issueText === '' ? undefined : Number(issueText);
  if (issue !== undefined && !(Number.isInteger(issue) && issue > 0)) {
    throw new UserError(`input issue: expected a positive issue number, got "${issueText}"`);
  }
  const phase = optional(getInput('phase', env));
  if (phase !== undefined && !/^[a-z][a-z0-9-]*$/.test(phase)) {
    throw new UserError(`input phase: expected a phase name such as "triage", got "${phase}"`);
  }
  const inputs: ActionInputs = {
    phase,
    issue,
    githubToken,
    pushToken: optional(getInput('push-token', env)),
    anthropicApiKey: optional(getInput('anthropic-api-key', env)),
    openaiApiKey: optional(getInput('openai-api-key', env)),
    configPath: getInput('config-path', env) || CONFIG_FILE,
    runConfig: optional(getInput('run-config', env)),
    stateKey: optional(getInput('state-key', env)),
    previousStateKey: optional(getInput('state-key-previous', env)),
    modelProxy: parseProxy(getInput('model-proxy', env)),
    agentResult: parseAgentResult(getInput('agent-result', env), io),
    meterKey: parseMeterKey(getInput('meter-key', env)),
    // Every input may set a config key (provider, base-url, model, model-<role>, clarity-threshold, ...); the config
    // loader picks the ones it knows and documents them (docs/configuration.md).
    configOverrides: Object.fromEntries(
      Object.entries(env)
        .filter(([name, value]) => name.startsWith('INPUT_') && value !== undefined && value.trim() !== '')
        .map(([name, value]) => [name.slice('INPUT_'.length).toLowerCase(), value!.trim()]),
    ),
  };
  // Secrets never reach logs, even if a model or an error message echoes them.
  for (const secret of [
    inputs.githubToken,
    inputs.pushToken,
    inputs.anthropicApiKey,
    inputs.openaiApiKey,
    inputs.stateKey,
    inputs.previousStateKey,
    inputs.modelProxy?.token,
  ]) {
    if (secret) io.mask(secret);
  }
  return inputs;
}

/** Input meter-key: an Ed25519 public key as actions/model-proxy writes it (a JWK's `x`, base64url). */
function parseMeterKey(text: string): string | undefined {
  if (text === '') return undefined;
  if (/^[A-Za-z0-9_-]{43}$/.test(text)) return text;
  throw new UserError(
    `input meter-key: expected the agent job's output meter-key (\`\${{ needs.agent.outputs.meter-key }}\`, 43 base64url characters), got "${text.slice(0, 60)}"`,
  );
}

/** Input model-proxy: `{"url":"http://127.0.0.1:<port>","token":"<hex>"}` as actions/model-proxy writes it. */
export function parseProxy(text: string): { url: string; token: string } | undefined {
  if (text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const v = value as { url?: unknown; token?: unknown } | undefined;
  if (typeof v?.url !== 'string' || !/^http:\/\/127\.0\.0\.1:\d+$/.test(v.url) || typeof v.token !== 'string')
    throw new UserError(
      'input model-proxy: expected the output proxy of actions/model-proxy (`${{ steps.model.outputs.proxy }}`), got something else',
    );
  return { url: v.url, token: v.token };
}

/**
 * Input agent-result: only what it changes is a message, so a value that is not one of GitHub's words is warned about
 * and left out rather than stopping the publish job (which would leave the issue waiting).
 */
function parseAgentResult(text: string, io: RunnerIO): AgentJobResult | undefined {
  if (text === '') return undefined;
  if ((AGENT_JOB_RESULTS as readonly string[]).includes(text)) return text as AgentJobResult;
  io.warning(
    `input agent-result: expected the agent job's result (\`\${{ needs.agent.result }}\`: ${AGENT_JOB_RESULTS.join(', ')}), got "${text}"; ignored`,
  );
  return undefined;
}

/** The token git fetches and pushes with: the push token if one is configured, else the GitHub token. */
export function gitTokenOf(inputs: Pick<ActionInputs, 'pushToken' | 'githubToken'>): string | undefined {
  return inputs.pushToken ?? inputs.githubToken;
}
