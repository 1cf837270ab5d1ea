/**
 * What GitHub checks of a `workflow_dispatch` request against the workflow file at the dispatched ref: the workflow
 * must listen to `workflow_dispatch`, every input sent must be declared, and every required input without a default
 * must be sent. Each is a 422 with GitHub's own message (e.g. `Unexpected inputs provided: ["x"]`), so a HydraFlow that
 * sends an input the user's workflow does not declare fails here as it would on GitHub.
 */
import { parse as parseYaml } from 'yaml';
import { readRepoPath, resolveCommitish } from './contents';
import type { GitHubWorld } from './world';

interface DispatchTrigger {
  inputs: Record<string, { required?: boolean; default?: unknown } | null>;
}

/** Parsed triggers by the workflow file's blob id: a file is parsed once however often it is dispatched. */
const parsed = new Map<string, DispatchTrigger | null>();

function dispatchTrigger(text: string): DispatchTrigger | null {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return null;
  }
  const on = (doc as { on?: unknown } | null)?.on;
  const events = typeof on === 'string' ? [on] : Array.isArray(on) ? on : undefined;
  if (events) return events.includes('workflow_dispatch') ? { inputs: {} } : null;
  if (!on || typeof on !== 'object' || !('workflow_dispatch' in on)) return null;
  const trigger = (on as { workflow_dispatch?: { inputs?: DispatchTrigger['inputs'] } | null }).workflow_dispatch;
  return { inputs: trigger?.inputs ?? {} };
}

/**
 * The 422 message GitHub answers this dispatch with, or undefined when it goes through. A workflow the world has no
 * file for (a test world without one) is not checked.
 */
export function dispatchInputsProblem(
  world: GitHubWorld,
  workflow: string,
  ref: string,
  inputs: Record<string, unknown>,
): string | undefined {
  if (/^\d+$/.test(workflow)) return undefined; // by id: the world names workflows by file
  const commit = resolveCommitish(world, ref);
  const file = commit ? readRepoPath(world, commit, `.github/workflows/${workflow}`) : undefined;
  if (file?.type !== 'file') return undefined;
  if (!parsed.has(file.sha)) parsed.set(file.sha, dispatchTrigger(file.content.toString('utf8')));
  const trigger = parsed.get(file.sha);
  if (!trigger) return "Workflow does not have 'workflow_dispatch' trigger";
  const unexpected = Object.keys(inputs).filter((name) => !(name in trigger.inputs));
  if (unexpected.length) return `Unexpected inputs provided: ${JSON.stringify(unexpected)}`;
  const missing = Object.entries(trigger.inputs).find(
    ([name, spec]) => spec?.required === true && spec.default === undefined && !(name in inputs),
  );
  return missing ? `Required input '${missing[0]}' not provided` : undefined;
}
