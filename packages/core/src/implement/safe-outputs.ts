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

/** Paths no agent may change, whatever the config says: CI definitions and git internals. */
export const ALWAYS_PROTECTED = ['.github/**', '.git/**'] as const;

/** Minimal glob: `**` any depth, `*` within a segment, `?` one character. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function isProtected(path: string, protectedPaths: readonly string[]): boolean {
  return [...ALWAYS_PROTECTED, ...protectedPaths].some((glob) => globToRegExp(glob).test(path));
}

function isOutsideWorkspace(path: string): boolean {
  return path.startsWith('/') || path.split('/').includes('..') || path === '';
}

export function checkChanges(files: readonly ChangedFile[], limits: OutputLimits): OutputProblem[] {
  const problems: OutputProblem[] = [];
  for (const f of files) {
    if (isOutsideWorkspace(f.path)) problems.push({ path: f.path, problem: 'outside the workspace' });
    else if (isProtected(f.path, limits.protectedPaths)) problems.push({ path: f.path, problem: 'a protected path' });
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
    if (secret.length >= MIN_SECRET_LENGTH && text.includes(secret)) found.push('a secret value of this workflow');
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
  for (const secret of [...knownSecrets]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length))
    if (out.includes(secret)) out = out.split(secret).join('***');
  return out;
}

/** Values of environment variables that look like secrets: what the publishing step must never write anywhere. */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => value && /TOKEN|KEY|SECRET|PASSWORD|CANARY|CREDENTIAL/i.test(name))
    .map(([, value]) => value!);
}
