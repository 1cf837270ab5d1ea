import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentSetupSteps, diagnose, missingWiring, renderDiagnosis, type SetupFacts } from '../src/index';

const healthy: SetupFacts = {
  workflowFile: '.github/workflows/hydraflow.yml',
  workflowOnDefaultBranch: true,
  defaultBranch: 'main',
  actionsMayCreatePullRequests: true,
  defaultWorkflowPermissions: 'read',
  labels: [
    'hydraflow-find',
    'hydraflow-discover',
    'hydraflow-shape',
    'hydraflow-groom',
    'hydraflow-epic',
    'hydraflow-plan',
    'hydraflow-ready',
    'hydraflow-review',
    'hydraflow-hitl',
    'hydraflow-fixed',
  ],
  stateKey: true,
  modelKey: true,
  pushToken: true,
  protection: { requiredApprovals: 1, dismissStaleReviews: true, requiredChecks: ['test'] },
};
const config = {
  provider: 'anthropic' as const,
  merge: { policy: 'human' as const, method: 'squash' as const, required_checks: ['test'], required_approvals: 1 },
};
const problems = (facts: SetupFacts, c = config) => diagnose(facts, c).filter((f) => f.level === 'problem');

describe('doctor', () => {
  it('finds nothing wrong with a healthy setup', () => {
    expect(problems(healthy)).toEqual([]);
    expect(renderDiagnosis(diagnose(healthy, config))).toMatch(/^### HydraFlow doctor: no problems found/);
  });

  it('names each problem with its fix', () => {
    const found = problems({
      ...healthy,
      workflowOnDefaultBranch: false,
      actionsMayCreatePullRequests: false,
      pushToken: false,
      stateKey: false,
      modelKey: false,
    });
    expect(found.map((f) => f.fix)).toEqual([
      'merge .github/workflows/hydraflow.yml into `main`',
      expect.stringContaining('Allow GitHub Actions to create and approve pull requests'),
      'add the secret ANTHROPIC_API_KEY',
      expect.stringContaining('HYDRAFLOW_STATE_KEY'),
    ]);
    expect(renderDiagnosis(diagnose({ ...healthy, stateKey: false }, config))).toMatch(/1 problem to fix/);
  });

  it('sees branch protection that merge.policy auto cannot pass, required checks it does not wait for, stale approvals', () => {
    const auto = { ...config, merge: { ...config.merge, policy: 'auto' as const, required_checks: [] } };
    const facts = {
      ...healthy,
      protection: { requiredApprovals: 2, dismissStaleReviews: false, requiredChecks: ['test', 'lint'] },
    };
    const all = diagnose(facts, auto);
    expect(all.find((f) => f.level === 'problem')?.what).toMatch(/requires 2 approving review/);
    expect(all.find((f) => f.what.startsWith('required checks'))?.fix).toBe('merge.required_checks: ["test", "lint"]');
    expect(all.some((f) => f.fix?.includes('Dismiss stale pull request approvals'))).toBe(true);
    expect(diagnose({ ...healthy, protection: null }, config).find((f) => f.level === 'note')?.what).toMatch(
      /not protected/,
    );
  });

  it('says what it could not read instead of guessing', () => {
    const unknown = {
      ...healthy,
      workflowOnDefaultBranch: undefined,
      actionsMayCreatePullRequests: undefined,
      labels: undefined,
      protection: undefined,
    };
    expect(problems(unknown)).toEqual([]);
    expect(
      diagnose(unknown, config)
        .map((f) => f.what)
        .join('\n'),
    ).not.toMatch(/pull requests|protected|labels/);
  });

  it('a project with a lockfile whose agent job installs nothing: the agent’s tests cannot find its dependencies', () => {
    const bare = {
      ...healthy,
      agentSetupSteps: 0,
      rootFiles: ['README.md', 'package.json', 'package-lock.json', 'src'],
    };
    const withTest = (test: string) => ({ ...config, implement: { commands: { test } } });
    const [found] = problems(bare, withTest('npm test'));
    expect(found?.what).toBe(
      "the workflow's agent job installs nothing before the coding agent runs its tests, but the repository has `package-lock.json`: `npm test` will not find its dependencies there, and each issue ends at hydraflow-hitl",
    );
    expect(found?.fix).toContain('`- run: npm ci`');
    expect(problems({ ...bare, rootFiles: ['poetry.lock'] })[0]?.fix).toContain('`- run: poetry install`');
    // a test command that installs first, a project without a lockfile, a workflow it could not judge: nothing to say
    expect(problems(bare, withTest('npm ci && npm test'))).toEqual([]);
    expect(problems({ ...bare, rootFiles: ['go.mod', 'go.sum'] })).toEqual([]);
    expect(problems({ ...bare, agentSetupSteps: undefined })).toEqual([]);
    expect(problems({ ...bare, rootFiles: undefined })).toEqual([]);
    expect(diagnose({ ...bare, agentSetupSteps: 2 }, config).map((f) => f.what)).toContain(
      'the agent job runs 2 setup steps of yours before the coding agent',
    );
  });

  it('counts the setup steps of the template’s agent job: none as copied, the user’s once added', () => {
    const template = readFileSync(join(__dirname, '../../../workflows-templates/hydraflow.yml'), 'utf8');
    expect(agentSetupSteps(template)).toBe(0);
    const marker = '      # YOUR SETUP GOES HERE';
    expect(template).toContain(marker);
    const setUp = template.replace(marker, `      - uses: actions/setup-node@v5\n      - run: npm ci\n${marker}`);
    expect(agentSetupSteps(setUp)).toBe(2);
    expect(agentSetupSteps('name: CI\non: push\njobs:\n  test:\n    steps:\n      - run: npm test\n')).toBeUndefined();
    expect(agentSetupSteps('jobs: [unclosed')).toBeUndefined();
    expect(agentSetupSteps('')).toBeUndefined();
  });

  it('finds what a workflow copied from an older template does not hand between its jobs, with the line to add', () => {
    const template = readFileSync(join(__dirname, '../../../workflows-templates/hydraflow.yml'), 'utf8');
    expect(missingWiring(template)).toEqual([]);
    const older = template
      .replace(/^ +meter-key: \$\{\{ needs\.agent\.outputs\.meter-key \}\}\n/m, '')
      .replace(/^ +agent-result: .*\n/m, '');
    expect(older).not.toBe(template);
    const missing = missingWiring(older)!;
    expect(missing.map((w) => `${w.action}:${w.input}`)).toEqual(['publish:meter-key', 'publish:agent-result']);
    // a copy from before the agent step ran under always(): the spend of an agent that never started is named
    const beforeAlways = template.replace(/^ +job-status: \$\{\{ job\.status \}\}\n/m, '');
    expect(missingWiring(beforeAlways)!.map((w) => `${w.action}:${w.input}`)).toEqual(['agent:job-status']);
    const found = diagnose({ ...healthy, missingWiring: missing }, config).filter((f) => f.level === 'problem');
    expect(found[0]).toEqual({
      level: 'problem',
      what: expect.stringMatching(
        /does not give actions\/publish its input `meter-key`.*ledger takes the agent job’s result/,
      ),
      fix: 'add `meter-key: ${{ needs.agent.outputs.meter-key }}` to the step that uses actions/publish, as workflows-templates/hydraflow.yml does',
    });
    expect(missingWiring('jobs: [unclosed')).toBeUndefined();
    expect(missingWiring('name: CI\non: push\njobs:\n  test:\n    steps:\n      - run: npm test\n')).toEqual([]);
  });

  it('notes a runner whose user can become root where the agent job would keep it: the agent’s code could read the model key there', () => {
    const keep = { ...config, implement: { runner_root: 'keep' as const } };
    const notes = (runnerRoot: SetupFacts['runnerRoot'], withConfig: Parameters<typeof diagnose>[1] = config) =>
      diagnose({ ...healthy, runnerRoot }, withConfig).filter((f) => /can become root/.test(f.what));
    expect(notes([])).toEqual([]);
    expect(notes(undefined)).toEqual([]);
    expect(notes(['sudo', 'docker'])).toEqual([]); // the agent job gives it up (implement.runner_root: drop)
    const [kept] = notes(['sudo', 'docker'], keep);
    expect(kept).toMatchObject({
      level: 'note',
      fix: expect.stringContaining('a model key of its own with a spending limit'),
    });
    expect(kept!.what).toContain('(passwordless sudo, the Docker socket) and `implement.runner_root: keep`');
    expect(notes(['docker'])[0]!.what).toContain('without the passwordless sudo');
    expect(notes(['root'])[0]!.what).toContain('would run as root, which HydraFlow cannot give up');
    expect(problems({ ...healthy, runnerRoot: ['root'] })).toEqual([]); // a note, not a problem to fix
  });
});
