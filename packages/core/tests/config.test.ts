import { readFileSync } from 'node:fs';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import {
  ConfigError,
  UserError,
  configSchema,
  loadConfig,
  loadConfigDetailed,
  handOffConfig,
  modelFor,
  readConfigFile,
  readHandedConfig,
  suggest,
} from '../src/index';
import { SCHEMA_PATH, renderConfigSchema } from '../../../scripts/generate-config-schema';

const none = { env: {}, inputs: {} };

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toBeInstanceOf(UserError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  it('an empty config works', () => {
    const c = loadConfig(none);
    expect(c).toEqual({
      provider: 'anthropic',
      models: { default: 'claude-sonnet-4-6' },
      clarity_threshold: 7,
      max_shape_turns: 10,
      shape_timeout_minutes: 60,
      budgets: { per_run: { usd: 2, tokens: 2_000_000 }, per_issue: { usd: 10, tokens: 10_000_000 }, per_day: {} },
      auto_triage: true,
      outsider_issues: 'wait',
      commands: { min_permission: 'write', allowed_bots: [] },
      bot_logins: ['github-actions[bot]'],
      workflow: 'hydraflow.yml',
      plan: { min_score: 6, min_mean: 7, max_revisions: 2 },
      adversarial: { enabled: false },
      implement: {
        commands: { test: 'npm test' },
        protected_paths: ['@defaults'],
        env: {},
        pass_env: [],
        max_turns: 40,
        max_minutes: 20,
        max_files: 30,
        max_lines: 1_500,
        runner_root: 'drop',
        test_ahead: true,
      },
      review: { max_rounds: 3, threshold: 7 },
      memory: { enabled: true, max_entries: 200, max_age_days: 90 },
      merge: { policy: 'human', method: 'squash', required_checks: [], required_approvals: 1 },
      grooming: {
        route: 'complex',
        complexity_threshold: 7,
        agents: ['pm', 'engineer', 'qa', 'research'],
        custom_agents: [],
        max_turns: 6,
        max_sub_issues: 8,
        cache_warmup: true,
      },
      discover: { web_search: true, max_searches: 5 },
      pricing: {},
    });
    expect(loadConfig({ fileText: '', ...none }).clarity_threshold).toBe(7);
    expect(loadConfig({ fileText: '# only a comment\n', ...none }).auto_triage).toBe(true);
  });
  it('picks the provider from the API keys present', () => {
    expect(loadConfig({ env: { OPENAI_API_KEY: 'sk' }, inputs: {} })).toMatchObject({
      provider: 'openai',
      models: { default: 'gpt-4.1' },
    });
    expect(loadConfig({ env: {}, inputs: { 'openai-api-key': 'sk' } }).provider).toBe('openai');
    expect(loadConfig({ env: { OPENAI_API_KEY: 'sk', ANTHROPIC_API_KEY: 'a' }, inputs: {} }).provider).toBe(
      'anthropic',
    );
    expect(loadConfig({ env: { OPENAI_API_KEY: '' }, inputs: {} }).provider).toBe('anthropic');
  });
  it('partial nested objects keep the other defaults', () => {
    const c = loadConfig({ fileText: 'budgets:\n  per_run:\n    usd: 5\n', ...none });
    expect(c.budgets).toEqual({
      per_run: { usd: 5, tokens: 2_000_000 },
      per_issue: { usd: 10, tokens: 10_000_000 },
      per_day: {},
    });
  });
  it('modelFor falls back to models.default', () => {
    const c = loadConfig({ fileText: 'models:\n  triage: claude-haiku-4-5\n', ...none });
    expect(modelFor(c, 'triage')).toBe('claude-haiku-4-5');
    expect(modelFor(c, 'plan')).toBe('claude-sonnet-4-6');
  });
});

describe('precedence: defaults < file < env < inputs', () => {
  const file = 'clarity_threshold: 5\nworkflow: from-file.yml\nauto_triage: false\nmodels:\n  default: gpt-4o\n';
  it('layers', () => {
    expect(loadConfig({ fileText: file, ...none }).clarity_threshold).toBe(5);
    const env = { HYDRAFLOW_CLARITY_THRESHOLD: '6', HYDRAFLOW_WORKFLOW: 'from-env.yml', HYDRAFLOW_AUTO_TRIAGE: 'yes' };
    const withEnv = loadConfigDetailed({ fileText: file, env, inputs: {} });
    expect(withEnv.config).toMatchObject({
      clarity_threshold: 6,
      workflow: 'from-env.yml',
      auto_triage: true,
      models: { default: 'gpt-4o' },
    });
    expect(withEnv.sources).toMatchObject({
      clarity_threshold: 'HYDRAFLOW_CLARITY_THRESHOLD',
      'models.default': '.github/hydraflow.yml',
    });
    const withInputs = loadConfigDetailed({
      fileText: file,
      env,
      inputs: { 'clarity-threshold': '8', workflow: '', model_triage: 'gpt-4.1-mini', 'github-token': 'x' },
    });
    expect(withInputs.config).toMatchObject({
      clarity_threshold: 8,
      workflow: 'from-env.yml',
      models: { triage: 'gpt-4.1-mini' },
    });
    expect(withInputs.sources.clarity_threshold).toBe('input clarity-threshold');
  });
  it('env lists, per-role models, budgets', () => {
    const c = loadConfig({
      env: {
        HYDRAFLOW_BOT_LOGINS: 'my-app[bot], hydra-user',
        HYDRAFLOW_MODEL_REVIEW: 'claude-opus-4-1',
        HYDRAFLOW_BUDGET_RUN_USD: '0.5',
        HYDRAFLOW_BUDGET_ISSUE_TOKENS: '1_000_000',
        HYDRAFLOW_STATE_KEY: 'secret',
      },
      inputs: {},
    });
    expect(c.bot_logins).toEqual(['my-app[bot]', 'hydra-user']);
    expect(c.models.review).toBe('claude-opus-4-1');
    expect(c.budgets.per_run.usd).toBe(0.5);
    expect(c.budgets.per_issue.tokens).toBe(1_000_000);
  });
  it('warns about unknown HYDRAFLOW_* variables with a suggestion', () => {
    const r = loadConfigDetailed({ env: { HYDRAFLOW_CLARITY_TRESHOLD: '3' }, inputs: {} });
    expect(r.warnings[0]).toMatch(/HYDRAFLOW_CLARITY_TRESHOLD .*did you mean HYDRAFLOW_CLARITY_THRESHOLD/);
  });
});

describe('error messages name key, value, expectation and source', () => {
  it('bad env value', () => {
    const e = errorOf(() => loadConfig({ env: { HYDRAFLOW_CLARITY_THRESHOLD: 'high' }, inputs: {} }));
    expect(e.message).toBe(
      'clarity_threshold: expected a number from 0 to 10, got "high" (from HYDRAFLOW_CLARITY_THRESHOLD)',
    );
    expect(e.problems[0]).toMatchObject({ path: 'clarity_threshold', source: 'HYDRAFLOW_CLARITY_THRESHOLD' });
  });
  it('bad input overrides a good file value and is blamed', () => {
    const e = errorOf(() =>
      loadConfig({ fileText: 'clarity_threshold: 5', env: {}, inputs: { 'clarity-threshold': '11' } }),
    );
    expect(e.message).toBe('clarity_threshold: expected a number from 0 to 10, got 11 (from input clarity-threshold)');
  });
  it('bad file values', () => {
    expect(errorOf(() => loadConfig({ fileText: 'commands:\n  min_permission: owner', ...none })).message).toBe(
      'commands.min_permission: expected one of read, triage, write, maintain, admin, got "owner" (from .github/hydraflow.yml)',
    );
    expect(errorOf(() => loadConfig({ fileText: 'budgets:\n  per_run: 5', ...none })).message).toBe(
      'budgets.per_run: expected a mapping with the keys usd and tokens, got 5 (from .github/hydraflow.yml)',
    );
    expect(errorOf(() => loadConfig({ fileText: 'provider: gemini', ...none })).message).toContain(
      'provider: expected one of anthropic, openai, openai-compatible, got "gemini"',
    );
    expect(errorOf(() => loadConfig({ fileText: 'outsider_issues: triage', ...none })).message).toBe(
      'outsider_issues: expected wait or go, got "triage" (from .github/hydraflow.yml)',
    );
    expect(errorOf(() => loadConfig({ fileText: 'bot_logins: []', ...none })).message).toContain(
      'bot_logins: expected at least one GitHub login',
    );
    expect(
      errorOf(() => loadConfig({ fileText: 'workflow: x.txt', filePath: '.github/hydraflow.yaml', ...none })).message,
    ).toBe(
      'workflow: expected a workflow file name such as "hydraflow.yml", got "x.txt" (from .github/hydraflow.yaml)',
    );
  });
  it('unknown keys get a did-you-mean', () => {
    const e = errorOf(() =>
      loadConfig({ fileText: 'clarity_treshold: 5\nbudgets:\n  per_run:\n    usdd: 3\n', ...none }),
    );
    expect(e.problems.map((p) => p.message)).toEqual([
      'budgets.per_run.usdd: unknown key (from .github/hydraflow.yml); did you mean "usd"?',
      'clarity_treshold: unknown key (from .github/hydraflow.yml); did you mean "clarity_threshold"?',
    ]);
    expect(e.message).toMatch(/^2 problems/);
    expect(errorOf(() => loadConfig({ fileText: 'clarityThreshold: 5', ...none })).message).toContain(
      'did you mean "clarity_threshold"',
    );
    expect(errorOf(() => loadConfig({ fileText: 'zzz: 1', ...none })).message).toContain(
      'expected one of provider, base_url',
    );
    expect(suggest('auto-triage', ['auto_triage', 'workflow'])).toBe('auto_triage');
  });
  it('YAML problems', () => {
    expect(errorOf(() => loadConfig({ fileText: 'foo: [\n', ...none })).message).toMatch(
      /^\.github\/hydraflow\.yml: invalid YAML at line \d+, column \d+: /,
    );
    expect(errorOf(() => loadConfig({ fileText: 'a: 1\na: 2\n', ...none })).message).toMatch(/invalid YAML/);
    expect(errorOf(() => loadConfig({ fileText: '- a\n', ...none })).message).toContain('expected a mapping of keys');
  });
  it('openai-compatible needs base_url and a model', () => {
    const e = errorOf(() => loadConfig({ fileText: 'provider: openai-compatible', ...none }));
    expect(e.problems.map((p) => p.path)).toEqual(['models.default', 'base_url']);
    const ok = loadConfig({
      fileText: 'provider: openai-compatible\nbase_url: http://localhost:11434/v1\nmodels:\n  default: llama3.1',
      ...none,
    });
    expect(ok).toMatchObject({ provider: 'openai-compatible', base_url: 'http://localhost:11434/v1' });
  });
});

describe('readConfigFile', () => {
  it('reads .github/hydraflow.yml or returns undefined', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-cfg-'));
    expect(await readConfigFile(dir)).toBeUndefined();
    mkdirSync(join(dir, '.github'));
    writeFileSync(join(dir, '.github/hydraflow.yml'), 'clarity_threshold: 4\n');
    expect(await readConfigFile(dir)).toEqual({ path: '.github/hydraflow.yml', text: 'clarity_threshold: 4\n' });
  });
});

describe('JSON Schema', () => {
  it('the committed schema file is up to date (run `pnpm schema`)', () => {
    expect(readFileSync(SCHEMA_PATH, 'utf8')).toBe(renderConfigSchema());
  });

  const samples: Record<string, string> = {
    empty: '{}',
    full: `
provider: openai
base_url: https://api.openai.com/v1
models: { default: gpt-4.1, triage: gpt-4.1-mini, my-role: o4-mini }
clarity_threshold: 6.5
budgets: { per_run: { usd: 1.5, tokens: 100000 }, per_issue: { usd: 20 } }
auto_triage: false
commands: { min_permission: maintain, allowed_bots: ["renovate[bot]"] }
bot_logins: ["my-app[bot]", hydra-user]
workflow: agent.yaml
pricing: { my-model: { input: 1, output: 2, cached_input: 0.1 }, default: { input: 3, output: 15 } }
`,
    unknownKey: 'clarity_treshold: 5',
    nestedUnknown: 'budgets: { per_run: { usdd: 1 } }',
    badType: 'clarity_threshold: high',
    outOfRange: 'clarity_threshold: 11',
    negativeBudget: 'budgets: { per_run: { usd: -1 } }',
    fractionalTokens: 'budgets: { per_run: { tokens: 1.5 } }',
    badEnum: 'provider: gemini',
    badPermission: 'commands: { min_permission: owner }',
    emptyBots: 'bot_logins: []',
    badLogin: 'bot_logins: ["not a login"]',
    badWorkflow: 'workflow: run.sh',
    badRole: 'models: { Triage: x }',
    emptyModel: 'models: { default: "" }',
    badUrl: 'base_url: ftp://x',
    badPrice: 'pricing: { m: { input: 1 } }',
    extraPriceKey: 'pricing: { m: { input: 1, output: 1, per_call: 3 } }',
    notAnObjectBudget: 'budgets: { per_run: 5 }',
  };

  it('ajv and zod agree on sample configs', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')));
    const verdicts: Record<string, [boolean, boolean]> = {};
    for (const [name, text] of Object.entries(samples)) {
      const data = parse(text) ?? {};
      verdicts[name] = [configSchema.safeParse(data).success, validate(data) as boolean];
    }
    for (const [name, [z, a]] of Object.entries(verdicts)) expect({ name, ajv: a }).toEqual({ name, ajv: z });
    expect(verdicts.full).toEqual([true, true]);
    expect(verdicts.unknownKey).toEqual([false, false]);
  });
});

describe('run-config: the config a routing step hands to the steps after the agent', () => {
  it('comes back exactly as resolved, sources included, without reading a file or the environment', () => {
    const loaded = loadConfigDetailed({
      fileText: 'merge:\n  policy: human\nimplement:\n  protected_paths: ["infra/**"]\n',
      env: { HYDRAFLOW_BOT_LOGINS: 'app-bot[bot]' },
      inputs: { model: 'claude-sonnet-4-6' },
    });
    const back = readHandedConfig(handOffConfig(loaded));
    expect(back.config).toEqual(loaded.config);
    expect(back.sources).toEqual(loaded.sources);
  });

  it('refuses anything else with a UserError that names the input', () => {
    for (const text of [
      'not json',
      '{"v":1}',
      JSON.stringify({ v: 1, config: { merge: { policy: 'yolo' } }, sources: {} }),
    ]) {
      expect(() => readHandedConfig(text)).toThrow(UserError);
      expect(() => readHandedConfig(text)).toThrow(
        /input run-config: expected the run-config output of the routing step/,
      );
    }
  });
});

describe("implement.env and implement.pass_env: what the agent's commands get", () => {
  it('takes plain names and values, and refuses a name that looks like a secret, saying why', () => {
    const ok = loadConfigDetailed({
      fileText: 'implement:\n  env:\n    DATABASE_URL: postgres://localhost/test\n  pass_env: [JAVA_HOME]\n',
      env: {},
      inputs: {},
    });
    expect(ok.config.implement.env).toEqual({ DATABASE_URL: 'postgres://localhost/test' });
    expect(ok.config.implement.pass_env).toEqual(['JAVA_HOME']);
    for (const fileText of [
      'implement:\n  env:\n    NPM_TOKEN: x\n',
      'implement:\n  pass_env: [AWS_SECRET_ACCESS_KEY]\n',
    ]) {
      expect(() => loadConfigDetailed({ fileText, env: {}, inputs: {} })).toThrow(UserError);
      expect(() => loadConfigDetailed({ fileText, env: {}, inputs: {} })).toThrow(/looks like a secret/);
    }
  });
});
