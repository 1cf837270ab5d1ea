import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GitWorkspace } from '@hydraflow/git';
import { remoteUrlOf } from './remote-url';

/** Where the repository's files come from: the job's workspace, the remote, its default branch and the git token. */
export interface WorkingTreeSource {
  workspace: string;
  remoteUrl: string;
  branch: string;
  token: string | undefined;
}

/** The source of the run's repository files (the routing step's git token: the push token if set, else its own). */
export function workingTreeSource(
  runner: { workspace: string; serverUrl: string; owner: string; repo: string; defaultBranch: string },
  token: string | undefined,
): WorkingTreeSource {
  return { workspace: runner.workspace, remoteUrl: remoteUrlOf(runner), branch: runner.defaultBranch, token };
}

/**
 * The working tree of a phase's context: its workspace, fetched from its remote at the default branch (the branch its
 * next phase is dispatched on) with its git token.
 */
export function workingTreeOf(ctx: {
  workspace: string;
  remoteUrl: string;
  gitToken: string | undefined;
  next: { ref: string };
}): Promise<string> {
  return workingTree({ workspace: ctx.workspace, remoteUrl: ctx.remoteUrl, branch: ctx.next.ref, token: ctx.gitToken });
}

/** Whether the job checked the repository out itself (a step such as actions/checkout ran before HydraFlow's). */
export function hasCheckout(workspace: string): boolean {
  return existsSync(join(workspace, '.git'));
}

/**
 * Whether the job left the workspace empty: no checkout step, nothing any step put there (the template's routing job).
 * Only then does HydraFlow read the configuration through the API and fetch the code into it; a workspace that holds
 * anything is read as it is, a checkout or not.
 */
export function isEmptyWorkspace(workspace: string): boolean {
  try {
    return readdirSync(workspace).length === 0;
  } catch {
    return true; // not made yet (git init makes it)
  }
}

/** Whether a phase can have the repository's files here: a checkout, or an empty workspace HydraFlow fetches into. */
export function canHaveWorkingTree(workspace: string): boolean {
  return hasCheckout(workspace) || isEmptyWorkspace(workspace);
}

/** The working tree being put in place, by workspace (one routing step per process; tests run several in one). */
const begun = new Map<string, Promise<string>>();

/**
 * The repository's files in the job's workspace, for the phases that read them (plan, discover, grooming, implement's
 * hand-off): what the job's workspace holds (its checkout), or when the job left it empty, the default branch's last
 * commit, fetched by HydraFlow the first time a phase asks — or earlier, when the run's decision says one will (beginWorkingTree in run.ts), so that the
 * fetch runs while the model answers. The template's routing job has no checkout step (docs/adr/0020): most events
 * read no code, and a full clone on every one of them cost the most of any step on a real repository. Resolves to the
 * workspace's path.
 */
export function workingTree(source: WorkingTreeSource): Promise<string> {
  let tree = begun.get(source.workspace);
  if (!tree) {
    tree = isEmptyWorkspace(source.workspace) ? fetchTree(source) : Promise.resolve(source.workspace);
    tree.catch(() => begun.delete(source.workspace)); // a failed fetch is tried again by the next phase that asks
    begun.set(source.workspace, tree);
  }
  return tree;
}

async function fetchTree(source: WorkingTreeSource): Promise<string> {
  const git = await GitWorkspace.open(source.workspace, { remoteUrl: source.remoteUrl });
  await git.ensureRepository();
  // The last commit is all a phase reads; implement's hand-off fetches its branch (and what it needs of the history).
  // A repository with no commit yet has no files to read: the workspace stays empty.
  if (await git.fetch(source.branch, { depth: 1, ...(source.token ? { token: source.token } : {}) }))
    await git.detachAtRemote(source.branch);
  return source.workspace;
}
