import { describe, expect, it } from 'vitest';
import { diagnose, renderDiagnosis, type SetupFacts } from '../src/index';

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
});
