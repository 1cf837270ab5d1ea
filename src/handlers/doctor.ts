import { agentSetupSteps, diagnose, missingWiring, renderDiagnosis, type SetupFacts } from '@hydraflow/core';
import type { App } from '../app';
import { rootReach } from '../runner/root-reach';
import type { PhaseOutcome } from '../phases/phase-context';

/**
 * `doctor` (a workflow_dispatch of phase doctor, or `/doctor` on an issue): reads what it can of the repository's
 * setup and reports each problem with its fix (packages/core/src/doctor/checks.ts) in the job summary, and as a reply
 * when a comment asked. It changes nothing.
 */
export async function handleDoctor(app: App, reply?: (text: string) => Promise<void>): Promise<PhaseOutcome> {
  const { setup } = app;
  const branch = app.runner.defaultBranch;
  const file = app.runner.workflowFile ?? `.github/workflows/${app.workflow}`;
  const [workflow, permissions, labels, protection, rootFiles] = await Promise.all([
    setup.fileText(file, branch),
    setup.workflowPermissions(),
    setup.labelNames(),
    setup.protection(branch),
    setup.rootNames(branch),
  ]);
  const key = app.config.provider === 'anthropic' ? app.inputs.anthropicApiKey : app.inputs.openaiApiKey;
  const facts: SetupFacts = {
    workflowFile: file,
    workflowOnDefaultBranch: workflow === undefined ? undefined : workflow !== null,
    agentSetupSteps: workflow ? agentSetupSteps(workflow) : undefined,
    missingWiring: workflow ? missingWiring(workflow) : undefined,
    runnerRoot: rootReach(),
    rootFiles,
    defaultBranch: branch,
    actionsMayCreatePullRequests: permissions?.canCreatePullRequests,
    defaultWorkflowPermissions: permissions?.defaults,
    labels,
    stateKey: Boolean(app.inputs.stateKey),
    modelKey: Boolean(key),
    pushToken: Boolean(app.inputs.pushToken),
    protection,
  };
  const findings = diagnose(facts, app.config);
  const report = renderDiagnosis(findings);
  if (reply) await reply(report);
  const problems = findings.filter((f) => f.level === 'problem').length;
  return {
    summary: problems === 0 ? 'doctor: no problems found' : `doctor: ${problems} problem(s) to fix`,
    stage: null,
    details: report,
  };
}
