/**
 * Loading the configuration. Precedence, lowest first:
 *
 *   built-in defaults  <  .github/hydraflow.yml  <  HYDRAFLOW_* environment variables  <  action inputs
 *
 * Every error is a ConfigError (a UserError) whose message names the key path, the bad value, what was expected and
 * where the value came from, e.g.
 *   clarity_threshold: expected a number from 0 to 10, got "high" (from HYDRAFLOW_CLARITY_THRESHOLD)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { UserError } from '../errors';
import { CONFIG_FILE, configFileCandidates } from './file-names';
import { DEFAULT_MODELS, configSchema, type ConfigProvider, type HydraflowConfig } from './schema';

export { CONFIG_FILE };

type Kind = 'string' | 'number' | 'boolean' | 'list';

export interface ConfigVariable {
  path: readonly string[];
  env: string;
  input: string;
  kind: Kind;
}

/** Every environment variable and action input that sets a config key. */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  { path: ['provider'], env: 'HYDRAFLOW_PROVIDER', input: 'provider', kind: 'string' },
  { path: ['base_url'], env: 'HYDRAFLOW_BASE_URL', input: 'base-url', kind: 'string' },
  { path: ['models', 'default'], env: 'HYDRAFLOW_MODEL', input: 'model', kind: 'string' },
  { path: ['clarity_threshold'], env: 'HYDRAFLOW_CLARITY_THRESHOLD', input: 'clarity-threshold', kind: 'number' },
  { path: ['budgets', 'per_run', 'usd'], env: 'HYDRAFLOW_BUDGET_RUN_USD', input: 'budget-run-usd', kind: 'number' },
  {
    path: ['budgets', 'per_run', 'tokens'],
    env: 'HYDRAFLOW_BUDGET_RUN_TOKENS',
    input: 'budget-run-tokens',
    kind: 'number',
  },
  {
    path: ['budgets', 'per_issue', 'usd'],
    env: 'HYDRAFLOW_BUDGET_ISSUE_USD',
    input: 'budget-issue-usd',
    kind: 'number',
  },
  {
    path: ['budgets', 'per_issue', 'tokens'],
    env: 'HYDRAFLOW_BUDGET_ISSUE_TOKENS',
    input: 'budget-issue-tokens',
    kind: 'number',
  },
  { path: ['budgets', 'per_day', 'usd'], env: 'HYDRAFLOW_BUDGET_DAY_USD', input: 'budget-day-usd', kind: 'number' },
  { path: ['auto_triage'], env: 'HYDRAFLOW_AUTO_TRIAGE', input: 'auto-triage', kind: 'boolean' },
  { path: ['commands', 'min_permission'], env: 'HYDRAFLOW_MIN_PERMISSION', input: 'min-permission', kind: 'string' },
  { path: ['commands', 'allowed_bots'], env: 'HYDRAFLOW_ALLOWED_BOTS', input: 'allowed-bots', kind: 'list' },
  { path: ['bot_logins'], env: 'HYDRAFLOW_BOT_LOGINS', input: 'bot-logins', kind: 'list' },
  { path: ['workflow'], env: 'HYDRAFLOW_WORKFLOW', input: 'workflow', kind: 'string' },
];

/** Per-role models: HYDRAFLOW_MODEL_<ROLE> and input model-<role> set models.<role>. */
const ENV_ROLE_MODEL = /^HYDRAFLOW_MODEL_([A-Z][A-Z0-9_]*)$/;
const INPUT_ROLE_MODEL = /^model[-_]([a-z][a-z0-9_-]*)$/;

/** HYDRAFLOW_* variables that are not config keys (secrets and such); never reported as unknown. */
export const NON_CONFIG_ENV = ['HYDRAFLOW_STATE_KEY'] as const;

export interface ConfigProblem {
  /** Dotted key path, e.g. `budgets.per_run.usd`. */
  path: string;
  /** Where the offending value came from: the file name, the env var name, `input <name>` or `default`. */
  source: string;
  message: string;
}

export class ConfigError extends UserError {
  override name = 'ConfigError';
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(
      problems.length === 1
        ? problems[0]!.message
        : `${problems.length} problems in the HydraFlow configuration:\n${problems.map((p) => `- ${p.message}`).join('\n')}`,
    );
  }
}

export interface LoadConfigOptions {
  /** Text of .github/hydraflow.yml, when the file exists. */
  fileText?: string | undefined;
  /** Name shown in messages for the file. Default `.github/hydraflow.yml`. */
  filePath?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Action inputs by name as in action.yml (`clarity-threshold`; `clarity_threshold` also works). Empty = unset. */
  inputs: Readonly<Record<string, string | undefined>>;
}

export interface LoadedConfig {
  config: HydraflowConfig;
  /** Which source set each explicitly given key (dotted path → source). Keys not listed have their default. */
  sources: Readonly<Record<string, string>>;
  /** Non-fatal notes, e.g. an unknown HYDRAFLOW_* variable with a suggestion. */
  warnings: string[];
}

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function setPath(target: Obj, path: readonly string[], value: unknown): void {
  let cur = target;
  for (const seg of path.slice(0, -1)) {
    if (!isObj(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Obj;
  }
  cur[path[path.length - 1]!] = value;
}

function getPath(target: unknown, path: readonly PropertyKey[]): unknown {
  let cur = target;
  for (const seg of path) {
    if (!isObj(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k] as Obj, v) : v;
  }
  return out;
}

function recordLeaves(value: unknown, path: string[], source: string, sources: Record<string, string>): void {
  if (isObj(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) recordLeaves(v, [...path, k], source, sources);
  } else if (path.length > 0) {
    sources[path.join('.')] = source;
  }
}

function coerce(raw: string, kind: Kind): unknown {
  const text = raw.trim();
  switch (kind) {
    case 'string':
      return text;
    case 'number': {
      const n = Number(text.replace(/_/g, ''));
      return text !== '' && Number.isFinite(n) ? n : text;
    }
    case 'boolean': {
      const t = text.toLowerCase();
      if (['true', 'yes', 'on', '1'].includes(t)) return true;
      if (['false', 'no', 'off', '0'].includes(t)) return false;
      return text;
    }
    case 'list':
      return text.split(/[\s,]+/).filter((s) => s !== '');
  }
}

function inputValue(inputs: LoadOptionsInputs, name: string): string | undefined {
  const v = inputs[name] ?? inputs[name.replace(/-/g, '_')];
  return v === undefined || v.trim() === '' ? undefined : v;
}
type LoadOptionsInputs = Readonly<Record<string, string | undefined>>;

// ---------------------------------------------------------------------------------------------------------------
// did-you-mean

function levenshtein(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

/** The closest candidate to `word`, if it is close enough to be a plausible typo. */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const w = norm(word);
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const n = norm(c);
    const d = n === w ? 0 : n.includes(w) || w.includes(n) ? 1 : levenshtein(w, n);
    if (!best || d < best.d) best = { c, d };
  }
  if (!best) return undefined;
  return best.d <= Math.max(2, Math.floor(w.length / 3)) ? best.c : undefined;
}

/** Keys the schema allows at `path` (for unknown-key suggestions). */
function knownKeysAt(path: readonly PropertyKey[]): string[] {
  let node = configSchema as unknown as z.ZodType;
  const unwrap = (n: z.ZodType): z.ZodType => {
    let cur = n;
    for (;;) {
      const def = (cur as unknown as { _zod: { def: { type: string; innerType?: z.ZodType } } })._zod.def;
      if ((def.type === 'default' || def.type === 'prefault' || def.type === 'optional') && def.innerType)
        cur = def.innerType;
      else return cur;
    }
  };
  for (const seg of path) {
    node = unwrap(node);
    const def = (
      node as unknown as { _zod: { def: { type: string; shape?: Record<string, z.ZodType>; valueType?: z.ZodType } } }
    )._zod.def;
    if (def.type === 'object' && def.shape) node = def.shape[String(seg)] ?? node;
    else if (def.type === 'record' && def.valueType) node = def.valueType;
    else return [];
  }
  node = unwrap(node);
  const def = (node as unknown as { _zod: { def: { type: string; shape?: Record<string, unknown> } } })._zod.def;
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

// ---------------------------------------------------------------------------------------------------------------

function fmtValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function sourceOf(path: readonly string[], sources: Readonly<Record<string, string>>): string {
  for (let n = path.length; n > 0; n--) {
    const s = sources[path.slice(0, n).join('.')];
    if (s !== undefined) return s;
  }
  // a parent object set as a whole, or a child key of something set
  const prefix = path.join('.');
  const child = Object.entries(sources).find(([k]) => prefix !== '' && k.startsWith(`${prefix}.`));
  return child?.[1] ?? 'default';
}

function problemsFromZod(error: z.ZodError, merged: Obj, sources: Readonly<Record<string, string>>): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code !== 'unrecognized_keys') {
      if (seen.has(path.join('.'))) continue;
      seen.add(path.join('.'));
    }
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path);
      for (const key of issue.keys) {
        const full = [...path, key];
        const hint = suggest(key, known);
        const src = sourceOf(full, sources);
        out.push({
          path: full.join('.'),
          source: src,
          message: `${full.join('.')}: unknown key (from ${src}); ${hint ? `did you mean "${hint}"?` : `expected one of ${known.join(', ')}`}`,
        });
      }
      continue;
    }
    const src = sourceOf(path, sources);
    const value = issue.code === 'invalid_key' ? path[path.length - 1] : getPath(merged, issue.path);
    const expectation = issue.code === 'invalid_key' ? 'a valid key' : issue.message;
    const inner = issue.code === 'invalid_key' ? (issue.issues?.[0]?.message ?? expectation) : expectation;
    const generic = /^Invalid input: expected (\w+)/.exec(inner);
    const what = generic
      ? `a value of type ${generic[1]}`
      : /^(Invalid|Too|Expected)/.test(inner)
        ? inner.charAt(0).toLowerCase() + inner.slice(1)
        : inner;
    out.push({
      path: path.join('.') || '(root)',
      source: src,
      message: `${path.join('.') || '(config)'}: expected ${what.replace(/^expected /, '')}, got ${fmtValue(value)} (from ${src})`,
    });
  }
  return out;
}

function parseYaml(text: string, filePath: string): Obj {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const pos = err.linePos?.[0];
    const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
    throw new ConfigError([
      {
        path: '(file)',
        source: filePath,
        message: `${filePath}: invalid YAML${where}: ${(err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
      },
    ]);
  }
  const value = doc.toJS() as unknown;
  if (value === null || value === undefined) return {};
  if (!isObj(value)) {
    throw new ConfigError([
      {
        path: '(file)',
        source: filePath,
        message: `${filePath}: expected a mapping of keys (e.g. "clarity_threshold: 7"), got ${fmtValue(value)}`,
      },
    ]);
  }
  return value;
}

function hasKey(
  env: Readonly<Record<string, string | undefined>>,
  inputs: LoadOptionsInputs,
  envName: string,
  inputName: string,
) {
  const v = env[envName];
  return (v !== undefined && v.trim() !== '') || inputValue(inputs, inputName) !== undefined;
}

/** Default provider from which API key is present: only OpenAI → openai; otherwise anthropic. */
export function detectProvider(
  env: Readonly<Record<string, string | undefined>>,
  inputs: LoadOptionsInputs,
): ConfigProvider {
  const anthropic = hasKey(env, inputs, 'ANTHROPIC_API_KEY', 'anthropic-api-key');
  const openai = hasKey(env, inputs, 'OPENAI_API_KEY', 'openai-api-key');
  return openai && !anthropic ? 'openai' : 'anthropic';
}

/** Load, merge and validate the configuration; throws ConfigError (a UserError). */
export function loadConfigDetailed(options: LoadConfigOptions): LoadedConfig {
  const filePath = options.filePath ?? CONFIG_FILE;
  const sources: Record<string, string> = {};
  const warnings: string[] = [];

  const fileObj = options.fileText === undefined ? {} : parseYaml(options.fileText, filePath);
  recordLeaves(fileObj, [], filePath, sources);

  const envObj: Obj = {};
  const inputObj: Obj = {};
  const envSources: Record<string, string> = {};
  const inputSources: Record<string, string> = {};
  const knownEnv = new Set<string>([...CONFIG_VARIABLES.map((v) => v.env), ...NON_CONFIG_ENV]);

  for (const v of CONFIG_VARIABLES) {
    const ev = options.env[v.env];
    if (ev !== undefined && ev.trim() !== '') {
      setPath(envObj, v.path, coerce(ev, v.kind));
      envSources[v.path.join('.')] = v.env;
    }
    const iv = inputValue(options.inputs, v.input);
    if (iv !== undefined) {
      setPath(inputObj, v.path, coerce(iv, v.kind));
      inputSources[v.path.join('.')] = `input ${v.input}`;
    }
  }
  for (const [name, value] of Object.entries(options.env)) {
    if (!name.startsWith('HYDRAFLOW_') || value === undefined || value.trim() === '' || knownEnv.has(name)) continue;
    const m = ENV_ROLE_MODEL.exec(name);
    if (m) {
      const role = m[1]!.toLowerCase();
      setPath(envObj, ['models', role], value.trim());
      envSources[`models.${role}`] = name;
      continue;
    }
    const hint = suggest(name, [...knownEnv]);
    warnings.push(`${name} is not a HydraFlow setting and is ignored${hint ? `; did you mean ${hint}?` : ''}`);
  }
  for (const [name, value] of Object.entries(options.inputs)) {
    const m = INPUT_ROLE_MODEL.exec(name);
    if (!m || value === undefined || value.trim() === '') continue;
    const role = m[1]!.replace(/-/g, '_');
    setPath(inputObj, ['models', role], value.trim());
    inputSources[`models.${role}`] = `input ${name}`;
  }

  // A later layer that sets a key replaces the earlier source for that key and everything below it.
  const layer = (add: Record<string, string>) => {
    for (const [k, s] of Object.entries(add)) {
      for (const existing of Object.keys(sources)) if (existing.startsWith(`${k}.`)) delete sources[existing];
      sources[k] = s;
    }
  };
  layer(envSources);
  layer(inputSources);

  const merged = deepMerge(deepMerge(fileObj, envObj), inputObj);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(problemsFromZod(parsed.error, merged, sources));

  const data = parsed.data;
  const provider: ConfigProvider = data.provider ?? detectProvider(options.env, options.inputs);
  const providerSource = sources.provider ?? 'detected from the API keys present';
  const problems: ConfigProblem[] = [];
  const defaultModel = data.models.default ?? DEFAULT_MODELS[provider];
  if (defaultModel === undefined) {
    problems.push({
      path: 'models.default',
      source: 'default',
      message: `models.default: expected a model id, got nothing (required when provider is ${provider}, from ${providerSource}; set models.default in ${filePath}, HYDRAFLOW_MODEL or the model input)`,
    });
  }
  if (provider === 'openai-compatible' && data.base_url === undefined) {
    problems.push({
      path: 'base_url',
      source: 'default',
      message: `base_url: expected an http(s) URL such as "https://api.example.com/v1", got nothing (required when provider is openai-compatible, from ${providerSource})`,
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const config: HydraflowConfig = {
    ...data,
    provider,
    models: { ...data.models, default: defaultModel! },
  };
  return { config, sources, warnings };
}

/** The resolved config, or a ConfigError (UserError) naming key, value, expectation and source. */
export function loadConfig(options: LoadConfigOptions): HydraflowConfig {
  return loadConfigDetailed(options).config;
}

/**
 * The only file access in core: read `.github/hydraflow.yml` (or `.yaml`) under `workspace`.
 * Returns undefined when neither exists.
 */
export async function readConfigFile(
  workspace: string,
  path: string = CONFIG_FILE,
): Promise<{ path: string; text: string } | undefined> {
  for (const rel of configFileCandidates(path)) {
    try {
      return { path: rel, text: await readFile(join(workspace, rel), 'utf8') };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
  }
  return undefined;
}
