/**
 * `doctor`: what HydraFlow can check of a repository's setup through the API, as facts in and findings out (pure; the
 * adapter in src/phases/doctor.ts reads the facts). Each finding says what is wrong and how to fix it, so a new user
 * reads one list instead of meeting each mistake as a failed run.
 */
import type { HydraflowConfig } from '../config/schema';
import { PIPELINE_STAGES } from '../pipeline/labels';
import { DEPENDENCY_LOCKFILES, installsItself } from './agent-setup';
import type { TemplateWire } from './template-wiring';

/** How a runner's user can become root, and how the doctor says it. */
const ROOT_REACH = { root: 'it is root', sudo: 'passwordless sudo', docker: 'the Docker socket' } as const;
export type RootReach = keyof typeof ROOT_REACH;

/**
 * Why the agent job would keep root on a runner like this one, or undefined when it gives it up (passwordless sudo
 * and `implement.runner_root: drop`: src/runner/drop-root.ts) or has none to give up.
 */
function runnerRootNote(reach: readonly RootReach[], setting: 'drop' | 'keep'): string | undefined {
  if (reach.length === 0) return undefined;
  if (reach.includes('root')) return 'and the agent job would run as root, which HydraFlow cannot give up';
  if (setting === 'keep') return 'and `implement.runner_root: keep` lets the agent keep it';
  return reach.includes('sudo') ? undefined : 'without the passwordless sudo HydraFlow would need to give that up';
}

/** What the doctor could read; `undefined` where GitHub did not say (no permission, an error). */
export interface SetupFacts {
  /** The workflow file this run came from (`.github/workflows/x.yml`), and whether it is on the default branch. */
  workflowFile: string | undefined;
  workflowOnDefaultBranch: boolean | undefined;
  defaultBranch: string;
  /** Settings → Actions → General: "Allow GitHub Actions to create and approve pull requests". */
  actionsMayCreatePullRequests: boolean | undefined;
  defaultWorkflowPermissions: 'read' | 'write' | undefined;
  /** Label names that exist in the repository. */
  labels: string[] | undefined;
  stateKey: boolean;
  modelKey: boolean;
  pushToken: boolean;
  /**
   * The user's setup steps in the workflow's agent job (agent-setup.ts, agentSetupSteps); undefined when the workflow
   * could not be read or has no job that uses actions/agent.
   */
  agentSetupSteps?: number | undefined;
  /**
   * What the template hands between its jobs that the workflow does not (template-wiring.ts, missingWiring); undefined
   * when the workflow could not be read.
   */
  missingWiring?: TemplateWire[] | undefined;
  /**
   * How the runner's user can become root (root already, passwordless sudo, the Docker socket): the agent job's code
   * could then read the model key from its proxy's memory. Empty: it cannot; undefined: not checked.
   */
  runnerRoot?: readonly RootReach[] | undefined;
  /** The names at the root of the default branch; undefined when they could not be read. */
  rootFiles?: string[] | undefined;
  /** The default branch's protection: null when it has none. */
  protection:
    | {
        requiredApprovals: number;
        dismissStaleReviews: boolean;
        requiredChecks: string[];
      }
    | null
    | undefined;
}

export interface DoctorFinding {
  level: 'problem' | 'note' | 'ok';
  what: string;
  fix?: string;
}

export function diagnose(
  facts: SetupFacts,
  config: Pick<HydraflowConfig, 'merge' | 'provider'> & {
    implement?: Partial<Pick<HydraflowConfig['implement'], 'commands' | 'runner_root'>>;
  },
): DoctorFinding[] {
  const out: DoctorFinding[] = [];
  const file = facts.workflowFile ?? 'the HydraFlow workflow';
  if (facts.workflowOnDefaultBranch === false)
    out.push({
      level: 'problem',
      what: `${file} is not on the default branch \`${facts.defaultBranch}\`: GitHub starts issue events and dispatches only from there`,
      fix: `merge ${file} into \`${facts.defaultBranch}\``,
    });
  else if (facts.workflowOnDefaultBranch) out.push({ level: 'ok', what: `${file} is on \`${facts.defaultBranch}\`` });

  if (facts.actionsMayCreatePullRequests === false && !facts.pushToken)
    out.push({
      level: 'problem',
      what: 'GitHub Actions may not create pull requests in this repository, and no push token is set: HydraFlow cannot open its pull requests',
      fix: 'Settings → Actions → General → Workflow permissions: tick "Allow GitHub Actions to create and approve pull requests" (or set up a GitHub App / push token, README step 3)',
    });
  else if (facts.actionsMayCreatePullRequests !== undefined)
    out.push({ level: 'ok', what: 'HydraFlow can open pull requests' });
  else
    out.push({
      level: 'note',
      what: 'could not read the Actions settings with this token (they need the Administration: read permission, which GITHUB_TOKEN never has)',
      fix: 'check Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests" by hand, or give the push App Administration: read',
    });
  if (!facts.pushToken)
    out.push({
      level: 'note',
      what: 'no push identity: your CI does not run on HydraFlow’s pull requests and its merges start no push workflow',
      fix: 'a GitHub App (variable HYDRAFLOW_APP_ID, secret HYDRAFLOW_APP_PRIVATE_KEY) or a fine-grained PAT (secret HYDRAFLOW_PUSH_TOKEN), README step 3',
    });
  if (facts.defaultWorkflowPermissions === 'write')
    out.push({
      level: 'note',
      what: 'the default workflow permissions are read and write: other workflows get a writing token unless they say otherwise',
      fix: 'Settings → Actions → General → Workflow permissions: "Read repository contents" (HydraFlow’s template declares what each job needs)',
    });

  const test = config.implement?.commands?.test;
  const lockfiles = (facts.rootFiles ?? []).filter((name) => Object.hasOwn(DEPENDENCY_LOCKFILES, name));
  if (facts.agentSetupSteps === 0 && lockfiles.length > 0 && !(test && installsItself(test)))
    out.push({
      level: 'problem',
      what: `the workflow's agent job installs nothing before the coding agent runs its tests, but the repository has ${lockfiles.map((f) => `\`${f}\``).join(', ')}: ${test ? `\`${test}\`` : 'the test command'} will not find its dependencies there, and each issue ends at hydraflow-hitl`,
      fix: `add your setup where the agent job says YOUR SETUP GOES HERE, e.g. \`- run: ${DEPENDENCY_LOCKFILES[lockfiles[0]!]}\` after the toolchain's setup action (README step 4)`,
    });
  else if (facts.agentSetupSteps !== undefined && facts.agentSetupSteps > 0)
    out.push({
      level: 'ok',
      what: `the agent job runs ${facts.agentSetupSteps} setup step${facts.agentSetupSteps === 1 ? '' : 's'} of yours before the coding agent`,
    });

  for (const wire of facts.missingWiring ?? [])
    out.push({
      level: 'problem',
      what: `${file} does not give actions/${wire.action} its input \`${wire.input}\` (it was copied from an older template): ${wire.without}`,
      fix: `add \`${wire.input}: ${wire.value}\` to the step that uses actions/${wire.action}, as workflows-templates/hydraflow.yml does`,
    });

  const rootNote = runnerRootNote(facts.runnerRoot ?? [], config.implement?.runner_root ?? 'drop');
  if (rootNote)
    out.push({
      level: 'note',
      what: `this runner's user can become root (${facts.runnerRoot!.map((r) => ROOT_REACH[r]).join(', ')}) ${rootNote}: if the agent job's runner is the same kind, code the agent's tests run can read the model key from another process's memory (docs/adr/0023-the-agent-job-gives-up-root.md)`,
      fix: 'give HydraFlow a model key of its own with a spending limit, and rotate it if an agent job ever looks wrong; or run the agent job on a runner whose user cannot become root',
    });

  if (!facts.modelKey)
    out.push({
      level: 'problem',
      what: `no model key for the provider \`${config.provider}\``,
      fix: config.provider === 'anthropic' ? 'add the secret ANTHROPIC_API_KEY' : 'add the secret OPENAI_API_KEY',
    });
  if (!facts.stateKey)
    out.push({
      level: 'problem',
      what: 'no state key: HydraFlow’s hidden state is trusted by author identity only, and anyone who can edit its comments can change it',
      fix: 'add the secret HYDRAFLOW_STATE_KEY (e.g. `openssl rand -hex 32`)',
    });
  else out.push({ level: 'ok', what: 'the state key is set' });

  if (facts.labels) {
    const missing = PIPELINE_STAGES.map((s) => s.label).filter((l) => !facts.labels!.includes(l));
    out.push(
      missing.length === 0
        ? { level: 'ok', what: 'every pipeline label exists' }
        : {
            level: 'note',
            what: `${missing.length} pipeline labels do not exist yet (HydraFlow creates each on first use)`,
          },
    );
  }

  const p = facts.protection;
  if (p === undefined)
    out.push({
      level: 'note',
      what: `could not read the protection of \`${facts.defaultBranch}\` with this token (it needs Administration: read)`,
      fix: 'compare Settings → Branches with merge.policy and merge.required_checks by hand, or give the push App Administration: read',
    });
  else if (p === null)
    out.push({
      level: 'note',
      what: `\`${facts.defaultBranch}\` is not protected: HydraFlow’s merge gate (merge.policy ${config.merge.policy}) is the only gate`,
      fix: 'a branch protection rule or ruleset that requires your CI checks',
    });
  else if (p) {
    if (config.merge.policy === 'auto' && p.requiredApprovals > 0)
      out.push({
        level: 'problem',
        what: `merge.policy auto, but \`${facts.defaultBranch}\` requires ${p.requiredApprovals} approving review(s): GitHub refuses HydraFlow’s merges until a human approves`,
        fix: 'merge.policy: human (HydraFlow then waits for the approval), or drop the required reviews',
      });
    const unnamed = p.requiredChecks.filter((c) => !config.merge.required_checks.includes(c));
    if (unnamed.length > 0)
      out.push({
        level: 'note',
        what: `required checks that merge.required_checks does not name: ${unnamed.join(', ')} (the merge gate does not wait for a check that has not reported yet)`,
        fix: `merge.required_checks: [${unnamed.map((c) => JSON.stringify(c)).join(', ')}]`,
      });
    if (p.requiredApprovals > 0 && !p.dismissStaleReviews)
      out.push({
        level: 'note',
        what: 'an approval survives later pushes: a human may approve one version and HydraFlow push another before the merge',
        fix: 'branch protection: "Dismiss stale pull request approvals when new commits are pushed"',
      });
  }
  return out;
}

/** The findings as the job summary and the /doctor reply show them. */
export function renderDiagnosis(findings: readonly DoctorFinding[]): string {
  const mark = { problem: '❌', note: '⚠️', ok: '✅' } as const;
  const problems = findings.filter((f) => f.level === 'problem').length;
  return [
    `### HydraFlow doctor: ${problems === 0 ? 'no problems found' : `${problems} problem${problems === 1 ? '' : 's'} to fix`}`,
    '',
    ...[...findings]
      .sort((a, b) => ['problem', 'note', 'ok'].indexOf(a.level) - ['problem', 'note', 'ok'].indexOf(b.level))
      .map((f) => `- ${mark[f.level]} ${f.what}${f.fix ? `\n  Fix: ${f.fix}` : ''}`),
  ].join('\n');
}
