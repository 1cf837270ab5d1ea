/**
 * The environment a workspace command gets: an allowlist, never the action's own environment. HOME and TMPDIR point
 * to a fresh temporary directory (no ~/.gitconfig, ~/.npmrc or ~/.docker/config.json credentials), CI=true.
 * Whatever is allowed, a name that looks like runner plumbing or a secret is dropped: GITHUB_*, ACTIONS_*, INPUT_*,
 * RUNNER_* (but RUNNER_TRACKING_ID, which lets the runner kill what they leave running), HYDRAFLOW_*, *TOKEN*, *KEY*,
 * *SECRET*, *PASSW*, *CREDENTIAL*.
 *
 * This scrubs the command's own environment. A process can still read its ancestors' environment through
 * /proc/<pid>/environ (same user) — keep secrets out of the agent step itself (see docs: safe outputs).
 */
export const BASE_ALLOWED_ENV = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TERM',
  'USER',
  'LOGNAME',
  'SHELL',
  'NODE_ENV',
] as const;

export const DENIED_ENV: readonly RegExp[] = [
  /^GITHUB_/i,
  /^ACTIONS_/i,
  /^INPUT_/i,
  /^RUNNER_/i,
  /^HYDRAFLOW_/i,
  /TOKEN/i,
  /KEY/i,
  /SECRET/i,
  /PASSW/i,
  /CREDENTIAL/i,
  /^NPM_CONFIG_/i,
  /^GIT_/i,
];

export function isDeniedEnv(name: string): boolean {
  return DENIED_ENV.some((p) => p.test(name));
}

export function commandEnv(args: {
  home: string;
  /** TMPDIR (default the home directory). */
  tmp?: string;
  source?: NodeJS.ProcessEnv;
  /** Extra names to pass through (still subject to the deny list). */
  allow?: readonly string[];
  /** Extra variables by value (still subject to the deny list). */
  values?: Readonly<Record<string, string>>;
}): Record<string, string> {
  const source = args.source ?? process.env;
  const out: Record<string, string> = {};
  for (const name of [...BASE_ALLOWED_ENV, ...(args.allow ?? [])]) {
    const value = source[name];
    if (value !== undefined && !isDeniedEnv(name)) out[name] = value;
  }
  for (const [name, value] of Object.entries(args.values ?? {})) if (!isDeniedEnv(name)) out[name] = value;
  // Not a secret: how the runner finds a job's processes to kill them when it ends, setsid'd ones included (a
  // self-hosted runner's machine outlives the job).
  if (source.RUNNER_TRACKING_ID) out.RUNNER_TRACKING_ID = source.RUNNER_TRACKING_ID;
  out.HOME = args.home;
  out.TMPDIR = args.tmp ?? args.home;
  out.CI = 'true';
  out.GIT_TERMINAL_PROMPT = '0';
  out.GIT_CONFIG_NOSYSTEM = '1';
  return out;
}
