import { GitWorkspace } from '@hydraflow/git';
import { getInput } from '../runner/io';
import { remoteUrlOf } from '../runner/remote-url';

/** Where the publish job's repository comes from: its workspace, the remote, the base branch and the git token. */
export interface PublishFetch {
  workspace: string;
  remoteUrl: string;
  base: string;
  token: string | undefined;
}

/** The fetch begun at the step's start, by workspace (one publish step per process; tests run several in one). */
const begun = new Map<string, Promise<boolean>>();

function initAndFetch(spec: PublishFetch): Promise<boolean> {
  return GitWorkspace.open(spec.workspace, { remoteUrl: spec.remoteUrl }).then(async (git) => {
    await git.ensureRepository();
    return git.fetch(spec.base, spec.token ? { token: spec.token } : {});
  });
}

/**
 * Begins the publish job's repository as soon as the step starts (src/main.ts, before the rest of the bundle loads):
 * `git init` in the empty workspace and a fetch of the base branch, which holds the start commit the patch applies to.
 * Everything it needs is the runner's variables, the step's inputs and the event's default branch, none of the issue's
 * state, so git's round trip to the server runs while the process loads the GitHub side and reads the state; on GitHub
 * a fetch costs far more than the requests it hides behind. It writes only this job's own repository; if the step then
 * finds nothing to publish, nothing was spent but the fetch. Nothing here may load @hydraflow/core (it would undo that).
 */
export function beginPublishFetch(env: NodeJS.ProcessEnv, payload: { repository?: { default_branch?: string } }): void {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/');
  const spec: PublishFetch = {
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    remoteUrl: remoteUrlOf({ serverUrl: env.GITHUB_SERVER_URL || 'https://github.com', owner, repo }),
    base: payload.repository?.default_branch || 'main',
    // the push token when there is one, as the publish step pushes with it (inputs.ts)
    token: getInput('push-token', env) || getInput('github-token', env) || env.GITHUB_TOKEN || undefined,
  };
  if (!owner || !repo || begun.has(spec.workspace)) return; // run() reports a malformed GITHUB_REPOSITORY
  const fetched = initAndFetch(spec);
  fetched.catch(() => undefined); // publishedBase awaits it: its failure surfaces there
  begun.set(spec.workspace, fetched);
}

/** The publish job's repository, with the base branch fetched: the fetch begun at the start, else one begun now. */
export function publishBase(spec: PublishFetch): Promise<boolean> {
  const fetched = begun.get(spec.workspace) ?? initAndFetch(spec);
  begun.delete(spec.workspace);
  return fetched;
}
