/**
 * The HydraFlow configuration: `.github/hydraflow.yml`, `HYDRAFLOW_*` environment variables and action inputs
 * (see load.ts for precedence). Every field has a working default; an empty file is a valid config.
 *
 * Error messages (`error: ...`) are phrased as the expectation, because loadConfig prints
 * `<key>: expected <this>, got <value> (from <source>)`. Descriptions feed docs/configuration.md and the JSON Schema.
 */
import { z } from 'zod';
import { planConfigSchema } from '../plan/gate';
import { adversarialConfigSchema } from '../adversarial/config';
import { DEFAULTS_TOKEN } from '../implement/safe-outputs';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names the agent's commands never get (src/agents/tools/env.ts drops them as well). */
const SECRET_ENV_NAME = /TOKEN|KEY|SECRET|PASSW|CREDENTIAL|^GITHUB_|^ACTIONS_|^RUNNER_|^INPUT_|^HYDRAFLOW_/i;

export const PROVIDERS = ['anthropic', 'openai', 'openai-compatible'] as const;
export type ConfigProvider = (typeof PROVIDERS)[number];

export const PERMISSIONS = ['read', 'triage', 'write', 'maintain', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The built-in default model per provider (openai-compatible has none: models.default is required there). */
export const DEFAULT_MODELS: Readonly<Record<ConfigProvider, string | undefined>> = {
  anthropic: 'claude-sonnet-4-6',
  openai: 'gpt-4.1',
  'openai-compatible': undefined,
};

/** Roles HydraFlow's phases use today; `models` also accepts other role names (later phases add theirs). */
export const KNOWN_ROLES = [
  'triage',
  'discover',
  'shape',
  'plan',
  'plan_review',
  'implement',
  'review',
  'groom',
  'summary',
  'adversarial',
] as const;

const e = (text: string) => ({ error: text });

const modelId = z
  .string(e('a model id such as "claude-sonnet-4-6" or "gpt-4.1"'))
  .min(1, e('a model id such as "claude-sonnet-4-6" or "gpt-4.1"'))
  .max(100, e('a model id of at most 100 characters'))
  .regex(/^[A-Za-z0-9._:/@-]+$/, e('a model id (letters, digits, . _ : / @ -)'));

const usd = (text: string) => z.number(e(text)).positive(e(text)).max(10_000, e(text));
const tokenCount = (text: string) => z.number(e(text)).int(e(text)).positive(e(text));

const budgetLimit = (defaults: { usd: number; tokens: number }, scope: string) =>
  z
    .strictObject(
      {
        usd: usd('a positive number of US dollars (at most 10000)')
          .default(defaults.usd)
          .describe(`Maximum spend in USD per ${scope}.`),
        tokens: tokenCount('a positive whole number of tokens')
          .default(defaults.tokens)
          .describe(`Maximum tokens (input + cached + cache write + output) per ${scope}.`),
      },
      e('a mapping with the keys usd and tokens'),
    )
    .prefault({});

const priceNumber = z
  .number(e('a price in USD per million tokens (a number ≥ 0)'))
  .min(0, e('a price in USD per million tokens (a number ≥ 0)'));

export const modelPriceConfigSchema = z.strictObject(
  {
    input: priceNumber.describe('USD per million uncached input tokens.'),
    output: priceNumber.describe('USD per million output tokens.'),
    cached_input: priceNumber
      .optional()
      .describe('USD per million input tokens read from the prompt cache (default: input).'),
    cache_write: priceNumber
      .optional()
      .describe('USD per million input tokens written to the prompt cache (default: input).'),
  },
  e('a mapping with the keys input, output and optionally cached_input, cache_write'),
);

const login = z
  .string(e('a GitHub login such as "my-app[bot]"'))
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\[bot\])?$/, e('a GitHub login such as "my-app[bot]"'))
  .max(64, e('a GitHub login of at most 64 characters'));

export const configSchema = z
  .strictObject(
    {
      provider: z
        .enum(PROVIDERS, e(`one of ${PROVIDERS.join(', ')}`))
        .optional()
        .describe(
          'Model provider. Default: "openai" when only an OpenAI API key is present, else "anthropic". Use "openai-compatible" with base_url for other OpenAI-style endpoints.',
        ),
      base_url: z
        .string(e('an http(s) URL such as "https://api.example.com/v1"'))
        .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d+)?(\/\S*)?$/, e('an http(s) URL such as "https://api.example.com/v1"'))
        .optional()
        .describe('API base URL (required for openai-compatible; optional proxy URL for the others).'),
      models: z
        .record(
          z.string().regex(/^[a-z][a-z0-9_-]*$/, e('a role name (lower-case letters, digits, - and _)')),
          modelId,
          e('a mapping of role to model id, e.g. "default: claude-sonnet-4-6"'),
        )
        .prefault({})
        .describe(
          `Model per role: "default" plus any of ${KNOWN_ROLES.join(', ')} (other role names are accepted). Default: claude-sonnet-4-6 (anthropic), gpt-4.1 (openai); required for openai-compatible.`,
        ),
      clarity_threshold: z
        .number(e('a number from 0 to 10'))
        .min(0, e('a number from 0 to 10'))
        .max(10, e('a number from 0 to 10'))
        .default(7)
        .describe(
          'Triage routes an issue to discover (product track) when its clarity score is below this (ADR-0031).',
        ),
      max_shape_turns: z
        .number(e('a whole number from 0 to 50'))
        .int(e('a whole number from 0 to 50'))
        .min(0, e('a whole number from 0 to 50'))
        .max(50, e('a whole number from 0 to 50'))
        .default(10)
        .describe(
          'Shape: conversation turns (a model call answering a human reply) at most; past them a human is asked to pick a direction (docs/adr/0016-shape.md).',
        ),
      shape_timeout_minutes: z
        .number(e('a whole number of minutes from 5 to 43200'))
        .int(e('a whole number of minutes from 5 to 43200'))
        .min(5, e('a whole number of minutes from 5 to 43200'))
        .max(43_200, e('a whole number of minutes from 5 to 43200'))
        .default(60)
        .describe(
          'Shape: minutes without a human reply before the hourly sweep escalates the conversation to hydraflow-hitl (no model call; docs/adr/0016-shape.md).',
        ),
      budgets: z
        .strictObject(
          {
            per_run: budgetLimit({ usd: 2, tokens: 2_000_000 }, 'workflow run').describe(
              'Limits for one workflow run.',
            ),
            per_issue: budgetLimit({ usd: 10, tokens: 10_000_000 }, 'issue (all runs)').describe(
              'Limits for one issue over all runs.',
            ),
            per_day: z
              .strictObject(
                {
                  usd: usd('a positive number of US dollars (at most 10000)')
                    .optional()
                    .describe(
                      "Maximum spend in USD of the whole repository per UTC day, over every issue and run (the daily budget, `budget.daily_usd` in issue #17's words). Kept in HydraFlow's spend ledger on the branch hydraflow/spend, not in any issue's state. Unset: no daily limit.",
                    ),
                  issues_per_author: z
                    .number(e('a whole number from 1 to 1000'))
                    .int(e('a whole number from 1 to 1000'))
                    .min(1, e('a whole number from 1 to 1000'))
                    .max(1000, e('a whole number from 1 to 1000'))
                    .optional()
                    .describe(
                      'How many issues of one author HydraFlow starts (triages) per UTC day; the next one waits for the next day. Unset: no limit.',
                    ),
                },
                e('a mapping with the keys usd and issues_per_author'),
              )
              .prefault({})
              .describe(
                'Limits for the whole repository per UTC day. Reaching one pauses the issue that reached it, with a note and the day’s spend; paused issues resume the next UTC day (docs/adr/0005-daily-budget.md).',
              ),
          },
          e('a mapping with the keys per_run, per_issue and per_day'),
        )
        .prefault({})
        .describe('Spending limits, checked before every model call.'),
      auto_triage: z
        .boolean(e('true or false'))
        .default(true)
        .describe(
          'Triage every newly opened issue. When false, only issues labelled hydraflow-find (or /triage) are triaged.',
        ),
      outsider_issues: z
        .enum(['wait', 'go'], e('wait or go'))
        .default('wait')
        .describe(
          "What HydraFlow does with an issue opened by someone outside the repository (below commands.min_permission on the repository, by GitHub's permission API): wait = triage it, then wait for someone with commands.min_permission to comment /retry before planning, grooming or discovery spend on it; go = treat it like anyone's.",
        ),
      commands: z
        .strictObject(
          {
            min_permission: z
              .enum(PERMISSIONS, e(`one of ${PERMISSIONS.join(', ')}`))
              .default('write')
              .describe(
                'Lowest repository permission allowed to run slash commands and move labels. GitHub reports maintain as write and triage as read.',
              ),
            allowed_bots: z
              .array(login, e('a list of GitHub logins'))
              .max(50, e('at most 50 logins'))
              .default([])
              .describe('Other bots (e.g. "renovate[bot]") whose events and comments may start work.'),
          },
          e('a mapping with the keys min_permission and allowed_bots'),
        )
        .prefault({})
        .describe('Slash commands (/groom, /ship-it, /triage, /retry, /help).'),
      bot_logins: z
        .array(login, e('a list of GitHub logins'))
        .min(1, e('at least one GitHub login'))
        .max(10, e('at most 10 logins'))
        .default(['github-actions[bot]'])
        .describe(
          "HydraFlow's own identities: its state comments are trusted only from these, and their events never start work. Add your App's \"name[bot]\" or the PAT user's login.",
        ),
      grooming: z
        .strictObject({
          route: z
            .enum(['complex', 'always', 'never'], e('complex, always or never'))
            .default('complex')
            .describe(
              'Which clear issues triage sends to grooming before planning: complex (complexity at or above complexity_threshold), always, or never (then only /groom grooms).',
            ),
          complexity_threshold: z
            .number(e('a number from 0 to 10'))
            .min(0, e('a number from 0 to 10'))
            .max(10, e('a number from 0 to 10'))
            .default(7)
            .describe('With route: complex, triage grooms issues whose complexity score is at least this.'),
          agents: z
            .array(z.enum(['pm', 'engineer', 'qa', 'research'], e('pm, engineer, qa or research')))
            .min(1, e('at least one of pm, engineer, qa, research'))
            .default(['pm', 'engineer', 'qa', 'research'])
            .describe('The built-in grooming agents that run (in parallel).'),
          custom_agents: z
            .array(
              z.strictObject(
                {
                  name: z
                    .string(e('an agent name (lower-case letters, digits, - and _; 2-31 characters)'))
                    .regex(
                      /^[a-z][a-z0-9_-]{1,30}$/,
                      e('an agent name (lower-case letters, digits, - and _; 2-31 characters)'),
                    )
                    .refine(
                      (n) => !['pm', 'engineer', 'qa', 'research', 'summary'].includes(n),
                      e('a name that is not a built-in agent (pm, engineer, qa, research, summary)'),
                    )
                    .describe("The agent's name: its questions are tagged with it; its model is models.groom_<name>."),
                  purpose: z
                    .string(e('one sentence saying what the agent judges'))
                    .min(1)
                    .max(300)
                    .describe('What this agent judges, e.g. "Security: threats, secrets, permissions".'),
                  checks: z
                    .array(z.string(e('a check, one short sentence')).min(1).max(200))
                    .min(1, e('at least one check'))
                    .max(12, e('at most 12 checks'))
                    .describe('What it checks, one short sentence each.'),
                },
                e('a mapping with the keys name, purpose and checks'),
              ),
            )
            .max(4, e('at most 4 custom agents'))
            .default([])
            .describe('Project-specific agents (e.g. security, performance) that join the parallel set.'),
          max_turns: z
            .number(e('a whole number from 1 to 20'))
            .int()
            .min(1)
            .max(20)
            .default(6)
            .describe('Model turns per grooming agent (the engineer and research agents read code and search issues).'),
          max_sub_issues: z
            .number(e('a whole number from 0 to 20'))
            .int()
            .min(0)
            .max(20)
            .default(8)
            .describe('Phase sub-issues one grooming run may create (0: never split).'),
          cache_warmup: z
            .boolean(e('true or false'))
            .default(true)
            .describe(
              'The engineer (the longest agent) starts first and writes the prompt cache; the others start after its first turn and read it instead of each paying to write it. Off the critical path, much cheaper.',
            ),
        })
        .prefault({})
        .describe(
          'Grooming (/groom): agents that judge whether an issue is ready to plan, and split big work into phases.',
        ),
      discover: z
        .strictObject({
          web_search: z
            .boolean(e('true or false'))
            .default(true)
            .describe(
              "The research agent may use the provider's own server-side web search (Anthropic's web search tool), billed by the provider per search. Ignored where the provider has none (openai, openai-compatible).",
            ),
          max_searches: z
            .number(e('a whole number from 1 to 20'))
            .int()
            .min(1, e('a whole number from 1 to 20'))
            .max(20, e('a whole number from 1 to 20'))
            .default(5)
            .describe('Web searches per research run at most.'),
        })
        .prefault({})
        .describe('Discover (the product track): the research agent that writes the brief.'),
      memory: z
        .strictObject({
          enabled: z
            .boolean(e('true or false'))
            .default(true)
            .describe(
              'Keep a memory of what HydraFlow learns (preferences from shape conversations) in memory.md on the branch hydraflow/memory, and recall the relevant entries into the discover and shape prompts.',
            ),
          max_entries: z
            .number(e('a whole number from 1 to 1000'))
            .int(e('a whole number from 1 to 1000'))
            .min(1, e('a whole number from 1 to 1000'))
            .max(1000, e('a whole number from 1 to 1000'))
            .default(200)
            .describe('Memories kept at most; past it, the least recently confirmed go first.'),
          max_age_days: z
            .number(e('a whole number of days from 1 to 3650'))
            .int(e('a whole number of days from 1 to 3650'))
            .min(1, e('a whole number of days from 1 to 3650'))
            .max(3650, e('a whole number of days from 1 to 3650'))
            .default(90)
            .describe(
              'A memory not confirmed for this many days is no longer recalled, and dropped on the next write.',
            ),
        })
        .prefault({})
        .describe('The per-repository memory store (docs/adr/0015-memory-store.md).'),
      plan: planConfigSchema,
      adversarial: adversarialConfigSchema,
      implement: z
        .strictObject({
          commands: z
            .record(
              z.string().regex(/^[a-z][a-z0-9_-]*$/, e('a command name (lower-case letters, digits, - and _)')),
              z.string(e('a shell command such as "npm test"')).min(1).max(500),
            )
            .default({ test: 'npm test' })
            .describe(
              'Commands the coding agent may run, by name (it can only ask for a name, never a command line). `test` also decides whether the work is done.',
            ),
          protected_paths: z
            .array(z.string(e('a path glob such as "infra/**"')).min(1).max(200))
            .max(100)
            .default([DEFAULTS_TOKEN])
            .describe(
              'Globs the agent may not change, in addition to .github/ and .git (always protected). The default, `@defaults`, is a list of CI definitions, git metadata and hooks, package manifests and lockfiles, and credential files (docs/configuration.md); a list of your own replaces it unless it contains `@defaults`.',
            ),
          max_turns: z
            .number(e('a whole number from 1 to 200'))
            .int()
            .min(1)
            .max(200)
            .default(40)
            .describe('Model turns per implement run.'),
          max_minutes: z
            .number(e('a number of minutes from 1 to 120'))
            .min(1)
            .max(120)
            .default(20)
            .describe('Wall time per implement run.'),
          max_files: z
            .number(e('a whole number from 1 to 500'))
            .int()
            .min(1)
            .max(500)
            .default(30)
            .describe('Files one change may touch.'),
          max_lines: z
            .number(e('a whole number from 1 to 50000'))
            .int()
            .min(1)
            .max(50_000)
            .default(1_500)
            .describe('Lines one change may add and remove.'),
          env: z
            .record(
              z
                .string()
                .regex(ENV_NAME, e('an environment variable name (letters, digits, _)'))
                .refine((name) => !SECRET_ENV_NAME.test(name), {
                  message:
                    'a name that looks like a secret (TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL): pass secrets to your setup steps, never to the agent',
                }),
              z.string(e('a string value')).max(4_000),
            )
            .default({})
            .describe(
              "Environment variables the agent's commands get, by name and value (non-secret: e.g. a test database's URL from a service container).",
            ),
          pass_env: z
            .array(
              z
                .string()
                .regex(ENV_NAME, e('an environment variable name (letters, digits, _)'))
                .refine((name) => !SECRET_ENV_NAME.test(name), {
                  message:
                    'a name that looks like a secret (TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL): pass secrets to your setup steps, never to the agent',
                }),
            )
            .max(100)
            .default([])
            .describe(
              "Names of variables the agent's commands get from the agent job's environment, as your setup steps left them (e.g. JAVA_HOME, GOPATH set through GITHUB_ENV). PATH and HOME always pass.",
            ),
          runner_root: z
            .enum(['drop', 'keep'], e('drop or keep'))
            .default('drop')
            .describe(
              "Whether the agent job's user gives up root before the agent runs, where it has passwordless sudo (GitHub's hosted runners): `drop` takes sudo and root-owned service sockets such as Docker's from it for the rest of the job, so that code the agent's commands run cannot read the model key from another process's memory; `keep` leaves them (tests that need Docker), and that code can (docs/adr/0023-the-agent-job-gives-up-root.md).",
            ),
          test_ahead: z
            .boolean(e('true or false'))
            .default(true)
            .describe(
              'Start the `test` command in the background after the agent changes files, while the model decides its next step; the agent gets that run when it asks for `test` next, and it is killed first when the agent does anything else that may change the tree. Turn off when tests are expensive or must never run unasked.',
            ),
        })
        .prefault({})
        .describe('The coding agent (implement phase) and the checks on what it produced.'),
      review: z
        .strictObject({
          max_rounds: z
            .number(e('a whole number from 1 to 10'))
            .int()
            .min(1)
            .max(10)
            .default(3)
            .describe('Review rounds before a human decides.'),
          threshold: z
            .number(e('a number from 0 to 10'))
            .min(0)
            .max(10)
            .default(7)
            .describe('Review score at or above which HydraFlow approves (with no critical finding open).'),
        })
        .prefault({})
        .describe('The reviewer (review phase).'),
      merge: z
        .strictObject({
          policy: z
            .enum(['human', 'auto'], e('human or auto'))
            .default('human')
            .describe(
              'human: a person must approve the pull request or comment /ship-it before HydraFlow merges; auto: HydraFlow merges when its review approved and checks are green.',
            ),
          method: z
            .enum(['squash', 'merge', 'rebase'], e('squash, merge or rebase'))
            .default('squash')
            .describe('How pull requests are merged.'),
          required_checks: z
            .array(
              z
                .string(e('a check name, as GitHub shows it on the pull request'))
                .min(1, e('a check name, as GitHub shows it on the pull request'))
                .max(200, e('a check name of at most 200 characters')),
              e('a list of check names'),
            )
            .max(50, e('at most 50 check names'))
            .default([])
            .describe(
              'Checks (check runs or commit statuses, by name) that must have reported success before HydraFlow merges; until one reports, HydraFlow waits. Without any, every check present must pass and a commit with no checks at all counts as green: name your CI here so a merge never races its first report.',
            ),
          required_approvals: z
            .number(e('a whole number from 1 to 10'))
            .int(e('a whole number from 1 to 10'))
            .min(1, e('a whole number from 1 to 10'))
            .max(10, e('a whole number from 1 to 10'))
            .default(1)
            .describe(
              'Under policy human: how many different people with write access (commands.min_permission, if stricter) must give their go on the head HydraFlow merges (an approving review of that commit, or /ship-it written after HydraFlow saw it).',
            ),
        })
        .prefault({})
        .describe('When and how HydraFlow merges.'),
      workflow: z
        .string(e('a workflow file name such as "hydraflow.yml"'))
        .regex(/^[A-Za-z0-9._-]+\.ya?ml$/, e('a workflow file name such as "hydraflow.yml"'))
        .default('hydraflow.yml')
        .describe('Your workflow file in .github/workflows that HydraFlow dispatches to start the next phase.'),
      pricing: z
        .record(
          z.string().regex(/^[A-Za-z0-9._:/@-]+$/, e('a model id')),
          modelPriceConfigSchema,
          e('a mapping of model id to prices'),
        )
        .prefault({})
        .describe(
          'Price overrides in USD per million tokens, keyed by model id; the key "default" prices unknown models (else $5 in / $25 out for openai and anthropic, $0 for openai-compatible).',
        ),
    },
    e('a mapping of configuration keys'),
  )
  .describe('HydraFlow configuration (.github/hydraflow.yml)');

/** The config as written (every key optional). */
export type HydraflowConfigInput = z.input<typeof configSchema>;
type Parsed = z.output<typeof configSchema>;

/** The resolved config: defaults applied, provider and default model decided. */
export interface HydraflowConfig extends Omit<Parsed, 'provider' | 'models'> {
  provider: ConfigProvider;
  models: { default: string } & Record<string, string>;
}

/** The model for a role: `models.<role>`, else `models.default`. */
/**
 * The model of a role: `models.<role>`, else for a grooming agent role (`groom_pm`, `groom_engineer`, …,
 * `groom_summary`, `groom_<custom>`) `models.groom`, for an adversarial voter (`adv_builder`, `adv_tester`,
 * `adv_risk-skeptic`, …) `models.adversarial`, else `models.default`.
 */
export function modelFor(config: Pick<HydraflowConfig, 'models'>, role: string): string {
  const family = role.startsWith('groom_')
    ? config.models.groom
    : role.startsWith('adv_')
      ? config.models.adversarial
      : undefined;
  return config.models[role] ?? family ?? config.models.default;
}

/** The JSON Schema of `.github/hydraflow.yml` (generated into schema/hydraflow-config.schema.json). */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    title: 'HydraFlow configuration',
    ...schema,
  };
}
