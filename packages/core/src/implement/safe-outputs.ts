/**
 * "Safe outputs": the coding agent runs without any token; what it produced is checked here, by a step that holds the
 * token but runs no agent, before anything is committed or pushed (field notes: every published attack on an AI action
 * combined untrusted text, tools and secrets in one process).
 */
export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | string;
  /** Lines added + removed. */
  lines: number;
  /** Size in bytes of the new content (0 when deleted). */
  bytes: number;
  /** Git file modes before and after (100644, 100755, 120000 link, 160000 submodule; 000000 none), when known. */
  oldMode?: string;
  newMode?: string;
}

export interface OutputLimits {
  maxFiles: number;
  maxLines: number;
  maxFileBytes: number;
  protectedPaths: readonly string[];
}

export interface OutputProblem {
  path?: string;
  problem: string;
}

/** Per changed file: larger is refused (and left out of the agent's patch). */
export const MAX_FILE_BYTES = 1_000_000;

/** Paths no agent may change, whatever the config says: CI definitions and git internals. */
export const ALWAYS_PROTECTED = ['.github/', '.git/'] as const;

/** Stands for DEFAULT_PROTECTED_PATHS inside a configured `implement.protected_paths` list. */
export const DEFAULTS_TOKEN = '@defaults';

/**
 * `implement.protected_paths` by default: what runs in the user's own CI, often with its secrets, or changes what git
 * does with the repository (docs/configuration.md says why each is here). A user's list replaces it; `@defaults`
 * inside that list keeps it.
 */
// prettier-ignore
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  // CI and build definitions of other systems
  '.gitlab-ci.yml', '.circleci/', '.buildkite/', '.travis.yml', '.drone.yml', 'azure-pipelines.yml',
  'bitbucket-pipelines.yml', 'Jenkinsfile', '.woodpecker/', '.woodpecker.yml', 'Makefile', 'Dockerfile',
  // git metadata and hooks
  '.gitattributes', '.gitmodules', '.husky/', '.githooks/', '.pre-commit-config.yaml', 'lefthook.yml', '.lefthook.yml',
  // package manifests and lockfiles: their scripts and dependencies run at install time in CI
  'package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'yarn.lock',
  '.yarnrc', '.yarnrc.yml', '.npmrc', '.pnpmfile.cjs', 'bun.lock', 'bun.lockb',
  'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements*.txt', 'Pipfile', 'Pipfile.lock', 'poetry.lock', 'uv.lock',
  'Cargo.toml', 'Cargo.lock', 'build.rs', 'go.mod', 'go.sum', 'Gemfile', 'Gemfile.lock', '*.gemspec', 'Rakefile',
  'pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts', 'gradlew', 'gradlew.bat',
  'gradle/wrapper/', 'mvnw', '.mvn/',
  // ownership and credentials
  'CODEOWNERS', '.env', '.env.*', '*.pem', '*.key',
];

/** The configured list with `@defaults` expanded. */
export function protectedPathsOf(configured: readonly string[]): string[] {
  return configured.flatMap((glob) => (glob === DEFAULTS_TOKEN ? DEFAULT_PROTECTED_PATHS : [glob]));
}

/**
 * A gitignore-flavoured glob, case-insensitive (macOS and Windows file systems are): `*`, `?`, `**`; a glob without a
 * slash matches at any depth; a trailing slash, or a glob naming a directory, covers everything under it. The one
 * matcher of protected paths, for the agent's tools and the publish check alike.
 */
export function globToRegExp(glob: string): RegExp {
  let g = glob.trim().replace(/^\.\//, '');
  if (g.endsWith('/')) g += '**';
  if (!g.includes('/')) g = `**/${g}`;
  if (g.startsWith('/')) g = g.slice(1);
  let re = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i] as string;
    if (c === '*' && g[i + 1] === '*') {
      const slash = g[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}(?:/.*)?$`, 'i');
}

/** The always-protected or configured glob `path` matches (`/`-separated, relative to the root), if any. */
export function protectedMatch(path: string, protectedPaths: readonly string[]): string | undefined {
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s.toLowerCase() === '.git')) return '.git/';
  const rel = segments.join('/');
  return [ALWAYS_PROTECTED[0], ...protectedPathsOf(protectedPaths)].find((glob) => globToRegExp(glob).test(rel));
}

/**
 * Files that hold credentials by convention, which the agent's read tools refuse (a setup step may have written one):
 * examples and templates of them are fine.
 */
const SECRET_FILES = [
  '.env',
  '.env.*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa*',
  'id_ed25519*',
  '.netrc',
  '.npmrc',
  '.pypirc',
];
const SECRET_FILE_EXAMPLE = /\.(example|sample|template|dist)$/i;

/** The credential-file glob `path` matches, unless it is an example of one. */
export function secretFileMatch(path: string): string | undefined {
  if (SECRET_FILE_EXAMPLE.test(path)) return undefined;
  return SECRET_FILES.find((glob) => globToRegExp(glob).test(path));
}

export function isProtected(path: string, protectedPaths: readonly string[]): boolean {
  return protectedMatch(path, protectedPaths) !== undefined;
}

function isOutsideWorkspace(path: string): boolean {
  return path.startsWith('/') || path.split('/').includes('..') || path === '';
}

const LINK_MODE = '120000';
const SUBMODULE_MODE = '160000';

/** Why a file's mode is refused: links and submodules point outside the change; a mode change makes code runnable. */
function modeProblem(f: ChangedFile): string | undefined {
  if (f.newMode === LINK_MODE) return 'a symbolic link (HydraFlow pushes regular files only)';
  if (f.newMode === SUBMODULE_MODE) return 'a submodule (HydraFlow pushes regular files only)';
  if (f.oldMode && f.newMode && f.oldMode !== '000000' && f.newMode !== '000000' && f.oldMode !== f.newMode)
    return `a mode change (${f.oldMode} → ${f.newMode})`;
  return undefined;
}

export function checkChanges(files: readonly ChangedFile[], limits: OutputLimits): OutputProblem[] {
  const problems: OutputProblem[] = [];
  for (const f of files) {
    const glob = isOutsideWorkspace(f.path) ? undefined : protectedMatch(f.path, limits.protectedPaths);
    if (isOutsideWorkspace(f.path)) problems.push({ path: f.path, problem: 'outside the workspace' });
    else if (glob) problems.push({ path: f.path, problem: `a protected path (${glob})` });
    const mode = modeProblem(f);
    if (mode) problems.push({ path: f.path, problem: mode });
    if (f.bytes > limits.maxFileBytes) {
      problems.push({
        path: f.path,
        problem: `${f.bytes} bytes, more than the ${limits.maxFileBytes} allowed per file`,
      });
    }
  }
  if (files.length > limits.maxFiles) {
    problems.push({ problem: `${files.length} files changed, more than the ${limits.maxFiles} allowed` });
  }
  const lines = files.reduce((n, f) => n + f.lines, 0);
  if (lines > limits.maxLines)
    problems.push({ problem: `${lines} lines changed, more than the ${limits.maxLines} allowed` });
  return problems;
}

/** Known secret values shorter than this are ignored: they would match ordinary text by accident. */
const MIN_SECRET_LENGTH = 8;

/** Shapes of credentials worth refusing on sight, whoever they belong to. */
const SECRET_PATTERNS: readonly { name: string; pattern: RegExp }[] = [
  { name: 'GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b/ },
  { name: 'OpenAI key', pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/ },
  { name: 'Anthropic key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}\b/ },
  { name: 'AWS access key', pattern: /\bAKIA[0-9A-Z]{16}\b/ },
  { name: 'private key', pattern: /-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----/ },
];

/**
 * Where `text` contains a known secret value (from the environment of the step that publishes) or something shaped
 * like a credential. Known values shorter than 8 characters are ignored (they would match by accident).
 */
export function findSecrets(text: string, knownSecrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const secret of knownSecrets) {
    for (const form of secretForms(secret))
      if (text.includes(form.text))
        found.push(`a secret value of this workflow${form.encoding ? ` (${form.encoding})` : ''}`);
  }
  for (const { name, pattern } of SECRET_PATTERNS)
    if (pattern.test(text)) found.push(`something shaped like a ${name}`);
  return [...new Set(found)];
}

/**
 * `text` with every known secret value (MIN_SECRET_LENGTH or longer, as in findSecrets) replaced by `***`, as GitHub masks
 * them in logs. Longer values first, so one that contains another is masked whole.
 */
export function redactSecrets(text: string, knownSecrets: readonly string[]): string {
  let out = text;
  const forms = knownSecrets.flatMap((secret) => secretForms(secret).map((f) => f.text));
  for (const form of forms.sort((a, b) => b.length - a.length))
    if (out.includes(form)) out = out.split(form).join('***');
  return out;
}

/**
 * A secret as it may appear in text: as is, in hex (either case), and in base64 and base64url at each of the three
 * alignments it can have inside a longer encoded text (only the characters that depend on the secret alone, so the
 * form is found whatever surrounds it). Forms shorter than MIN_SECRET_LENGTH are left out, as short secrets are.
 */
export function secretForms(secret: string): { text: string; encoding?: string }[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const bytes = Buffer.from(secret, 'utf8');
  const hex = bytes.toString('hex');
  const forms: { text: string; encoding?: string }[] = [
    { text: secret },
    { text: hex, encoding: 'hex' },
    { text: hex.toUpperCase(), encoding: 'hex' },
  ];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // the first characters mix the padding's bits with the secret's, the last one the secret's with what follows
    const start = [0, 2, 3][offset]!;
    const end = (offset + bytes.length) % 3 === 0 ? encoded.length : encoded.length - 1;
    const stable = encoded.slice(start, end);
    if (stable.length < MIN_SECRET_LENGTH) continue;
    forms.push({ text: stable, encoding: 'base64' });
    const url = stable.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== stable) forms.push({ text: url, encoding: 'base64url' });
  }
  return forms;
}

/** Values of environment variables that look like secrets: what the publishing step must never write anywhere. */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => value && /TOKEN|KEY|SECRET|PASSWORD|CANARY|CREDENTIAL/i.test(name))
    .map(([, value]) => value!);
}
