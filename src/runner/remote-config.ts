import { CONFIG_FILE, configFileCandidates } from '@hydraflow/core/config-file-names';
import { RateLimitedError } from '@hydraflow/core/errors';
import { getInput } from './io';
import { isEmptyWorkspace } from './working-tree';

/** The configuration file's path and text. */
export interface ConfigFile {
  path: string;
  text: string;
}

/** Where a job with no checkout reads its configuration: GitHub's GraphQL API, at the default branch's last commit. */
export interface RemoteConfigSource {
  graphqlUrl: string;
  owner: string;
  repo: string;
  token: string | undefined;
  /** The configured path (input config-path). */
  path: string;
  fetch: typeof fetch;
}

/** The read begun at the step's start, by workspace (one routing step per process; tests run several in one). */
const begun = new Map<string, Promise<ConfigFile | undefined>>();

/** The step's environment's source, or undefined when it cannot name one (run() reports a malformed environment). */
export function remoteConfigSource(env: NodeJS.ProcessEnv, fetchImpl: typeof fetch): RemoteConfigSource | undefined {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/');
  if (!owner || !repo) return undefined;
  const apiUrl = (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/$/, '');
  return {
    graphqlUrl: env.GITHUB_GRAPHQL_URL || `${apiUrl}/graphql`,
    owner,
    repo,
    // as src/inputs.ts reads them (that module loads the config schemas: this one runs before the bundle has)
    token: getInput('github-token', env) || env.GITHUB_TOKEN || undefined,
    path: getInput('config-path', env) || CONFIG_FILE,
    fetch: fetchImpl,
  };
}

/**
 * Begins reading the configuration as soon as the step starts (src/main.ts, before the rest of the bundle loads), when
 * the job left its workspace empty: the routing job of the template has no checkout (docs/adr/0020), and the
 * configuration decides everything after. The round trip then runs while the process loads.
 */
export function beginRemoteConfig(workspace: string, source: RemoteConfigSource | undefined): void {
  if (!source || !isEmptyWorkspace(workspace) || begun.has(workspace)) return;
  const read = readRemoteConfig(source);
  read.catch(() => undefined); // remoteConfigFile awaits it: its failure surfaces there
  begun.set(workspace, read);
}

/** The configuration read through the API: the read begun at the start, else one begun now. */
export function remoteConfigFile(workspace: string, source: RemoteConfigSource): Promise<ConfigFile | undefined> {
  const read = begun.get(workspace) ?? readRemoteConfig(source);
  begun.delete(workspace);
  return read;
}

type Blob = { object?: { text?: string | null; isTruncated?: boolean; isBinary?: boolean | null } | null } | null;
type Answer = {
  data?: { repository?: { defaultBranchRef?: { target?: Record<string, Blob> | null } | null } | null } | null;
  errors?: { type?: string; message?: string }[];
};

const ATTEMPTS = 3;

/**
 * The first candidate path the default branch's last commit holds, or undefined when it holds none (or the repository
 * has no commit yet): every candidate in one GraphQL request (`Commit.file`), whatever the repository has. A 5xx or a
 * dropped connection is asked again (a read is safe to repeat); anything else is an error naming the file.
 */
async function readRemoteConfig(source: RemoteConfigSource): Promise<ConfigFile | undefined> {
  const paths = configFileCandidates(source.path);
  const files = paths
    .map((_, i) => `f${i}: file(path: $p${i}) { object { ... on Blob { text isTruncated isBinary } } }`)
    .join(' ');
  const query =
    `query($owner: String!, $repo: String!, ${paths.map((_, i) => `$p${i}: String!`).join(', ')}) ` +
    `{ repository(owner: $owner, name: $repo) { defaultBranchRef { target { ... on Commit { ${files} } } } } }`;
  const variables = {
    owner: source.owner,
    repo: source.repo,
    ...Object.fromEntries(paths.map((p, i) => [`p${i}`, p])),
  };
  const where = `${paths.join(' or ')} on the default branch`;
  let failure = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** (attempt - 2)));
    const res = await source
      .fetch(source.graphqlUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'hydraflow',
          ...(source.token ? { authorization: `bearer ${source.token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
      })
      .catch((error: unknown) => error as Error);
    if (res instanceof Error) {
      failure = res.message;
      continue;
    }
    if (res.status >= 500) {
      failure = `GitHub answered ${res.status}`;
      continue;
    }
    const answer = (await res.json().catch(() => undefined)) as Answer | undefined;
    const limited =
      res.status === 429 ||
      (res.status === 403 && res.headers.get('x-ratelimit-remaining') === '0') ||
      answer?.errors?.some((e) => e.type === 'RATE_LIMITED');
    if (limited) {
      throw new RateLimitedError(
        `reading ${where}: GitHub's rate limit for this token is spent; re-run the job once it resets`,
      );
    }
    if (res.status !== 200 || !answer?.data || answer.errors?.length) {
      const why = answer?.errors?.[0]?.message ?? `GitHub answered ${res.status}`;
      throw new Error(`reading ${where}: ${why}; the routing job needs permission contents: read`);
    }
    const commit = answer.data.repository?.defaultBranchRef?.target;
    if (!commit) return undefined; // a repository with no commit yet has no file
    for (const [i, path] of paths.entries()) {
      const blob = commit[`f${i}`];
      if (!blob) continue;
      const text = blob.object?.text;
      if (typeof text !== 'string' || blob.object?.isTruncated || blob.object?.isBinary)
        throw new Error(`reading ${path} on the default branch: GitHub gave no text for it (binary, or too large)`);
      return { path, text };
    }
    return undefined;
  }
  throw new Error(`reading ${where} failed ${ATTEMPTS} times (${failure}); re-run the job`);
}
