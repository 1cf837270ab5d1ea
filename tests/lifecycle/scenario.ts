/**
 * The lifecycle world: the sample repository (a real bare git remote with real tests), the git-backed GitHub
 * emulator, the scripted model server, and the lifecycle simulator running the very workflow template a user copies
 * (packages/testkit). Scripts for each agent role are what the scenarios vary.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BOT_LOGIN,
  createLifecycle,
  createSampleRepo,
  MODEL_API_KEY,
  startGitHubEmulator,
  startModelServer,
  TEST_STATE_KEY,
  type GitHubEmulator,
  type ModelServerOptions,
  type Lifecycle,
  type ModelServer,
  type SampleRepo,
  type Script,
  type SimulatedClock,
} from '@hydraflow/testkit';

export interface LifecycleWorld {
  gh: GitHubEmulator;
  models: ModelServer;
  sample: SampleRepo;
  lc: Lifecycle;
  /** The repository secrets HYDRAFLOW_STATE_KEY and ANTHROPIC_API_KEY of this world. */
  stateKey: string;
  modelKey: string;
  /** Acts as the human maintainer alice (write permission) through the REST API, as GitHub would see her. */
  asAlice(method: string, path: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * `options.pushAs`: a GitHub App (its login) whose token the workflow passes as HYDRAFLOW_PUSH_TOKEN; HydraFlow's
 * pushes are then that App's, and so are the events they cause (which start workflows, unlike GITHUB_TOKEN's).
 */
export async function lifecycleWorld(
  script: Script,
  env: Record<string, string> = {},
  options: {
    pushAs?: string;
    /** The sample repository's own files and workflow (createSampleRepo's options). */
    sample?: Parameters<typeof createSampleRepo>[1];
    /** The runner machines' environment (the simulator's machineEnv). */
    machineEnv?: Record<string, string>;
    /** Another checkout of HydraFlow to run (its action.yml files and dist/), e.g. an older version. */
    actionRoot?: string;
    /**
     * A state key and model key of this world's own, instead of the testkit's shared ones: an attack that scans every
     * process on the machine must not mistake another test world's (vitest runs files in parallel) for this one's.
     */
    ownSecrets?: boolean;
    /** A simulated clock for the emulator and every HydraFlow step (its waits advance it; listen() it first). */
    clock?: SimulatedClock;
    /** Jobs whose steps run as another user of this machine (the simulator's runAs). */
    runAs?: { jobs: readonly string[]; user: string };
    /** The emulator's primary rate limit per token per hour (default 1000, like GITHUB_TOKEN). */
    rateLimit?: number;
    /** Jobs before the simulator calls it a loop (default 50). */
    maxJobs?: number;
    /** Check every request and answer against GitHub's OpenAPI description (default true; the bench's backlog: off). */
    validate?: boolean;
    /** The scripted model server's own options (the bench's no-caching baseline: anthropicMinCacheTokens). */
    models?: Omit<ModelServerOptions, 'script'>;
  } = {},
): Promise<LifecycleWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'hydraflow-scenario-'));
  const own = options.ownSecrets ? `-${randomBytes(8).toString('hex')}` : '';
  const secrets = { stateKey: `${TEST_STATE_KEY}${own}`, modelKey: `${MODEL_API_KEY}${own}` };
  const sample = createSampleRepo(join(dir, 'sample'), options.sample);
  // HydraFlow derives the git URL from GITHUB_SERVER_URL/owner/repo (never from .git/config): serve the bare repo there.
  mkdirSync(join(dir, 'server/acme'), { recursive: true });
  symlinkSync(sample.bareRepo, join(dir, 'server/acme/widgets.git'));
  const clock = options.clock;
  const gh = await startGitHubEmulator({
    owner: 'acme',
    repo: 'widgets',
    git: { bareRepo: sample.bareRepo },
    ...(clock ? { clock: () => clock.now() } : {}),
    ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
    ...(options.validate === false ? { validate: false } : {}),
  });
  const alice = gh.addUser({ login: 'alice', permission: 'write' });
  const models = await startModelServer({ ...options.models, script });
  const app = options.pushAs ? gh.addApp({ login: options.pushAs }) : undefined;
  const lc = await createLifecycle({
    gh,
    models,
    workflowsDir: sample.workflowsDir,
    repoDir: sample.bareRepo,
    secrets: {
      ANTHROPIC_API_KEY: secrets.modelKey,
      HYDRAFLOW_STATE_KEY: secrets.stateKey,
      ...(app ? { HYDRAFLOW_PUSH_TOKEN: app.token } : {}),
    },
    actionEnv: {
      HYDRAFLOW_BASE_URL: models.anthropicBaseUrl,
      GITHUB_SERVER_URL: `file://${join(dir, 'server')}`,
      // the App is one of HydraFlow's identities: its pushes and pull requests are HydraFlow's own
      ...(app ? { HYDRAFLOW_BOT_LOGINS: `${BOT_LOGIN},${app.login}` } : {}),
      ...env,
    },
    ...(app ? { pusher: () => ({ actor: app.login, viaToken: 'app' as const }) } : {}),
    ...(options.machineEnv ? { machineEnv: options.machineEnv } : {}),
    ...(options.actionRoot ? { actionRoot: options.actionRoot } : {}),
    ...(clock ? { clock } : {}),
    ...(options.maxJobs !== undefined ? { maxJobs: options.maxJobs } : {}),
    ...(options.runAs ? { runAs: options.runAs } : {}),
  });
  return {
    gh,
    models,
    sample,
    lc,
    ...secrets,
    async asAlice(method, path, body) {
      const response = await fetch(`${gh.url}${path}`, {
        method,
        headers: {
          authorization: `token ${alice.token}`,
          'content-type': 'application/json',
          accept: 'application/vnd.github+json',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? undefined : response.json();
    },
    async close() {
      lc.close();
      await Promise.all([gh.close(), models.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const scores = (n: number) => ({
  correctness: n,
  completeness: n,
  scope: n,
  testability: n,
  risk_handling: n,
  conventions: n,
  clarity: n,
});

export const AVERAGE_ISSUE = {
  title: 'Add average(numbers) to the number helpers',
  body: 'We need `average(numbers)` next to `sum` in src/numbers.js: the arithmetic mean of a list, and 0 for an empty list. Export it from src/index.js and add tests.',
};

export const triageClear = {
  json: {
    clarity_score: 9,
    complexity_score: 2,
    needs_discovery: false,
    enrichment: 'src/numbers.js next to sum; tests in test/numbers.test.js.',
    reasons: ['Precise expected behaviour, including the empty case.', 'One function.'],
  },
};

export const averagePlan = {
  json: {
    summary: 'Add average(numbers) to src/numbers.js, export it, and test it.',
    goal: 'average(numbers) returns the arithmetic mean, 0 for an empty list.',
    approach: 'Implement average with sum; export from src/index.js; add tests in test/numbers.test.js.',
    files_to_touch: [
      { path: 'src/numbers.js', action: 'modify', change: 'Add average().' },
      { path: 'src/index.js', action: 'modify', change: 'Export average.' },
      { path: 'test/numbers.test.js', action: 'modify', change: 'Tests for average.' },
    ],
    test_plan: ['average([1, 2, 3]) is 2', 'average([]) is 0'],
    risks: [{ risk: 'Division by zero on an empty list', mitigation: 'Return 0 for an empty list' }],
    acceptance_criteria: ['average is exported', 'the tests pass'],
  },
};

export const planAccepted = { json: { scores: scores(8), issues: [], verdict: 'accept' } };

const NUMBERS_SUM = `/** The total of a list of numbers (0 for an empty list). */
export function sum(numbers) {
  return numbers.reduce((total, n) => total + n, 0);
}
`;

/** The implement agent's recorded session: read, edit the code and the tests, run the tests, finish. */
export function implementAverage(body: string): Script[string] {
  return [
    { toolCalls: [{ name: 'read_file', input: { path: 'src/numbers.js' } }] },
    {
      toolCalls: [
        {
          name: 'edit_file',
          input: { path: 'src/numbers.js', old_string: NUMBERS_SUM, new_string: `${NUMBERS_SUM}\n${body}` },
        },
        {
          name: 'edit_file',
          input: {
            path: 'src/index.js',
            old_string: "export { clamp, sum } from './numbers.js';",
            new_string: "export { clamp, sum, average } from './numbers.js';",
          },
        },
        {
          name: 'write_file',
          input: {
            path: 'test/average.test.js',
            content:
              "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { average } from '../src/index.js';\n\ntest('average is the mean, 0 for an empty list', () => {\n  assert.equal(average([1, 2, 3]), 2);\n  assert.equal(average([]), 0);\n});\n",
          },
        },
      ],
    },
    { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
    { text: 'Added average(numbers) to src/numbers.js (0 for an empty list), exported it, and tested it.' },
  ];
}

export const AVERAGE_GOOD = `/** The arithmetic mean of a list of numbers (0 for an empty list). */
export function average(numbers) {
  return numbers.length === 0 ? 0 : sum(numbers) / numbers.length;
}
`;

export const reviewClean = { json: { summary: 'Small, tested, matches the plan.', findings: [] } };

/** Every recorded answer of the clear issue's lifecycle: triage, plan accepted at once, a good implementation, a clean review. */
export function clearIssueScript(): Script {
  return {
    triage: triageClear,
    plan: averagePlan,
    plan_review: planAccepted,
    implement: implementAverage(AVERAGE_GOOD),
    review: reviewClean,
  };
}

/** A first version that forgets the empty list (NaN), with a test that does not notice. */
export const AVERAGE_NAN = `/** The arithmetic mean of a list of numbers. */
export function average(numbers) {
  return sum(numbers) / numbers.length;
}
`;

/** The refiner's recorded session: fix the empty case the reviewer flagged and test it. */
export const refineAverage: Script[string] = [
  {
    toolCalls: [
      {
        name: 'edit_file',
        input: {
          path: 'src/numbers.js',
          old_string: '  return sum(numbers) / numbers.length;',
          new_string: '  return numbers.length === 0 ? 0 : sum(numbers) / numbers.length;',
        },
      },
      {
        name: 'edit_file',
        input: {
          path: 'test/average.test.js',
          old_string: '  assert.equal(average([1, 2, 3]), 2);',
          new_string: '  assert.equal(average([1, 2, 3]), 2);\n  assert.equal(average([]), 0);',
        },
      },
    ],
  },
  { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
  { text: 'average([]) now returns 0, with a test.' },
];

/** The implement session for AVERAGE_NAN: its test checks only the non-empty case. */
export function implementAverageNaN(): Script[string] {
  const session = implementAverage(AVERAGE_NAN) as { toolCalls?: { name: string; input: Record<string, unknown> }[] }[];
  return session.map((turn) => ({
    ...turn,
    ...(turn.toolCalls
      ? {
          toolCalls: turn.toolCalls.map((call) =>
            call.name === 'write_file'
              ? {
                  ...call,
                  input: {
                    ...call.input,
                    content: String(call.input.content).replace('  assert.equal(average([]), 0);\n', ''),
                  },
                }
              : call,
          ),
        }
      : {}),
  })) as Script[string];
}

export const reviewCriticalNaN = {
  json: {
    summary: 'average() divides by zero on an empty list.',
    findings: [
      {
        severity: 'critical',
        path: 'src/numbers.js',
        line: 14,
        title: 'average([]) returns NaN',
        recommendation: 'Return 0 for an empty list, as the issue requires, and test it.',
        needs_human_decision: false,
      },
    ],
  },
};

/**
 * The refine lifecycle's recorded answers: the first session forgets the empty list, the review finds it (critical),
 * the refiner (dispatched: the publish step cannot run the agent) fixes it, the second round approves.
 */
export function refineIssueScript(): Script {
  return {
    triage: triageClear,
    plan: averagePlan,
    plan_review: planAccepted,
    implement: [...(implementAverageNaN() as unknown[]), ...(refineAverage as unknown[])] as never,
    review: [reviewCriticalNaN, reviewClean],
  };
}
