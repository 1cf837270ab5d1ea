import { configFileCandidates } from '@hydraflow/core/config-file-names';
import { RateLimitedError } from '@hydraflow/core/errors';
import { isEmptyWorkspace } from './working-tree';

/** The configuration file's path and text. */
export interface ConfigFile {
  path: string;
  text: string;
}

/** Where a job with no checkout reads its configuration: the contents API, at the repository's default branch. */
export interface RemoteConfigSource {
  apiUrl: string;
  owner: string;
  repo: string;
  /** The default branch as the event names it; unnamed (a scheduled run's payload), the API takes the default branch. */
  ref: string | undefined;
  token: string | undefined;
  /** The configured path (input config-path). */
  path: string;
  fetch: typeof fetch;
}

/** The read begun at the step's start, by workspace (one routing step per process; tests run several in one). */
const begun = new Map<string, Promise<ConfigFile | undefined>>();

/** The step's environment's source, or undefined when it cannot name one (run() reports a malformed environment). */
export function remoteConfigSource(
  env: NodeJS.ProcessEnv,
  payload: { repository?: { default_branch?: string } },
  fetchImpl: typeof fetch,
): RemoteConfigSource | undefined {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/');
  if (!owner || !repo) return undefined;
  return {
    apiUrl: (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/$/, ''),
    owner,
    repo,
    ref: payload.repository?.default_branch || undefined,
    token: env['INPUT_GITHUB-TOKEN']?.trim() || env.GITHUB_TOKEN || undefined,
    path: env['INPUT_CONFIG-PATH']?.trim() || '.github/hydraflow.yml',
    fetch: fetchImpl,
  };
}

/**
 * Begins reading the configuration through the API as soon as the step starts (src/main.ts, before the rest of the
 * bundle loads), when the job left its workspace empty: the routing job of the template has none (docs/adr/0020), and the
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

/** The first candidate path the default branch holds (all asked at once), or undefined when it holds none. */
async function readRemoteConfig(source: RemoteConfigSource): Promise<ConfigFile | undefined> {
  const files = await Promise.all(configFileCandidates(source.path).map((path) => readFileAt(source, path)));
  return files.find((f) => f !== undefined);
}

const ATTEMPTS = 3;

/**
 * One file through GET /repos/{owner}/{repo}/contents/{path}: its text, or undefined when there is none (404). A 5xx
 * or a dropped connection is asked again (a GET is safe to repeat); anything else is an error naming the file.
 */
async function readFileAt(source: RemoteConfigSource, path: string): Promise<ConfigFile | undefined> {
  const url =
    `${source.apiUrl}/repos/${encodeURIComponent(source.owner)}/${encodeURIComponent(source.repo)}/contents/` +
    `${path.split('/').map(encodeURIComponent).join('/')}${source.ref ? `?ref=${encodeURIComponent(source.ref)}` : ''}`;
  const at = source.ref ?? 'the default branch';
  const headers: Record<string, string> = {
    accept: 'application/vnd.github+json',
    'user-agent': 'hydraflow',
    'x-github-api-version': '2022-11-28',
    ...(source.token ? { authorization: `token ${source.token}` } : {}),
  };
  let failure = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** (attempt - 2)));
    const res = await source.fetch(url, { headers }).catch((error: unknown) => error as Error);
    if (res instanceof Error) {
      failure = res.message;
      continue;
    }
    if (res.status === 404) return undefined;
    const body = (await res.json().catch(() => undefined)) as
      { type?: string; encoding?: string; content?: string; message?: string } | undefined;
    if (res.status >= 500) {
      failure = `GitHub answered ${res.status}`;
      continue;
    }
    if (res.status === 429 || (res.status === 403 && res.headers.get('x-ratelimit-remaining') === '0')) {
      throw new RateLimitedError(
        `reading ${path} through the contents API: GitHub's rate limit for this token is spent; re-run the job once it resets`,
      );
    }
    if (res.status !== 200) {
      throw new Error(
        `reading ${path} at ${at} through the contents API: GitHub answered ${res.status} (${body?.message ?? 'no message'}); the routing job needs permission contents: read`,
      );
    }
    if (body?.type !== 'file' || body.encoding !== 'base64' || typeof body.content !== 'string') {
      throw new Error(
        `reading ${path} at ${at} through the contents API: expected a file's base64 content, got ${body?.type ?? 'nothing'}${body?.encoding ? ` (${body.encoding})` : ''} — a file over 1 MB, or not a file`,
      );
    }
    return { path, text: Buffer.from(body.content, 'base64').toString('utf8') };
  }
  throw new Error(
    `reading ${path} at ${at} through the contents API failed ${ATTEMPTS} times (${failure}); re-run the job`,
  );
}
