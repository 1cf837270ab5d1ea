/**
 * The configuration a routing step resolved, handed to the agent and publish steps of the same job (action output and
 * input `run-config`). Those steps run after the coding agent's commands, which can rewrite the working tree (even
 * hide a rewritten .github/hydraflow.yml from git) and append HYDRAFLOW_* variables to GITHUB_ENV; a step output is
 * kept by the runner, out of their reach. So the later steps take this, re-validated, and resolve nothing anew.
 */
import { z } from 'zod';
import { UserError } from '../errors';
import type { LoadedConfig } from './load';
import { configSchema, type HydraflowConfig } from './schema';

const handedSchema = z.object({
  v: z.literal(1),
  config: configSchema,
  sources: z.record(z.string(), z.string()),
});

/** The text of output `run-config` for this resolved config. */
export function handOffConfig(loaded: LoadedConfig): string {
  return JSON.stringify({ v: 1, config: loaded.config, sources: loaded.sources });
}

/** Input `run-config` back as the config it was, or a UserError saying what is wrong with it. */
export function readHandedConfig(text: string): LoadedConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError('input run-config: expected the run-config output of the routing step (JSON), got other text');
  }
  const parsed = handedSchema.safeParse(json);
  if (!parsed.success || parsed.data.config.provider === undefined || !parsed.data.config.models.default) {
    throw new UserError(
      `input run-config: expected the run-config output of the routing step, got a value it does not validate (${parsed.success ? 'no provider or default model' : z.prettifyError(parsed.error).split('\n')[0]})`,
    );
  }
  return { config: parsed.data.config as HydraflowConfig, sources: parsed.data.sources, warnings: [] };
}
