/**
 * The test world in one object: a GitHub emulator, a scripted model server, and a way to run HydraFlow's built action
 * on real webhook payloads — the MockWorld every test, `pnpm demo` and `pnpm bench` use.
 */
import { startGitHubEmulator, type GitHubEmulator } from './github/index';
import { buildEvent, type EventOverrides } from './events/index';
import { startModelServer, type ModelServer, type ModelServerOptions, type Script } from './models/index';
import { runAction, type ActionRun, type RunActionOptions } from './runner/run-action';

/** `openai-compatible` talks the OpenAI wire to the model server by base URL (set `models.default` in the config). */
export type WorldProvider = 'anthropic' | 'openai' | 'openai-compatible';

export interface WorldOptions {
  provider?: WorldProvider;
  script?: Script;
  owner?: string;
  repo?: string;
  /** HYDRAFLOW_STATE_KEY for signed state; default a fixed test key. Pass '' for none. */
  stateKey?: string;
  /** Text of .github/hydraflow.yml. */
  config?: string;
  /** Options of the scripted model server beyond the script (e.g. a minimum cacheable prompt length). */
  models?: Omit<ModelServerOptions, 'script'>;
  /** GitHub's clock (ms since the epoch), which a test may move: a new UTC day, an hour's rate limit. */
  clock?: () => number;
}

export const TEST_STATE_KEY = 'test-state-key-0123456789abcdef';
export const MODEL_API_KEY = 'sk-test-hydraflow';

export interface World {
  gh: GitHubEmulator;
  models: ModelServer;
  provider: WorldProvider;
  stateKey: string;
  /** Runs the built action on a real example payload of `event.action`, adapted to the world. */
  run(
    event: string,
    action: string | undefined,
    overrides?: EventOverrides,
    options?: Partial<Omit<RunActionOptions, 'gh' | 'event' | 'payload'>>,
  ): Promise<ActionRun>;
  /** Runs the workflow_dispatch HydraFlow recorded last (the next phase), as GitHub would start it. */
  runDispatch(
    index?: number,
    options?: Partial<Omit<RunActionOptions, 'gh' | 'event' | 'payload'>>,
  ): Promise<ActionRun>;
  /** The inputs the workflow template passes to the action in this world. */
  inputs(): Record<string, string>;
  close(): Promise<void>;
}

export async function createWorld(options: WorldOptions = {}): Promise<World> {
  const gh = await startGitHubEmulator({
    owner: options.owner ?? 'acme',
    repo: options.repo ?? 'widgets',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const models = await startModelServer({ ...options.models, script: options.script ?? {} });
  const provider = options.provider ?? 'anthropic';
  const stateKey = options.stateKey ?? TEST_STATE_KEY;
  const inputs = (): Record<string, string> => ({
    'github-token': gh.botToken,
    provider,
    'base-url': provider === 'anthropic' ? models.anthropicBaseUrl : models.openaiBaseUrl,
    [provider === 'anthropic' ? 'anthropic-api-key' : 'openai-api-key']: MODEL_API_KEY,
    'state-key': stateKey,
  });
  const world: World = {
    gh,
    models,
    provider,
    stateKey,
    inputs,
    run(event, action, overrides = {}, runOptions = {}) {
      const payload = buildEvent(gh, event, action, overrides);
      return runAction({
        gh,
        event,
        payload,
        ...(options.config !== undefined ? { config: options.config } : {}),
        ...runOptions,
        inputs: { ...inputs(), ...runOptions.inputs },
      });
    },
    runDispatch(index = gh.world.dispatches.length - 1, runOptions = {}) {
      const dispatch = gh.world.dispatches[index];
      if (!dispatch) throw new Error(`no workflow_dispatch #${index} was recorded`);
      const payload = buildEvent(gh, 'workflow_dispatch', undefined, {
        inputs: dispatch.inputs,
        ref: dispatch.ref,
        workflow: String(dispatch.workflow_id),
        sender: dispatch.actor,
      });
      return runAction({
        gh,
        event: 'workflow_dispatch',
        payload,
        ...(options.config !== undefined ? { config: options.config } : {}),
        ...runOptions,
        inputs: { ...inputs(), ...runOptions.inputs },
      });
    },
    async close() {
      await Promise.all([gh.close(), models.close()]);
    },
  };
  return world;
}
