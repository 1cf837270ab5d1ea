/**
 * What the template (workflows-templates/hydraflow.yml) hands from one of its jobs to the next, which a workflow copied
 * from an older template lacks: each entry is an input of one of HydraFlow's composite actions, and what is lost
 * without it. The doctor reports each one missing; packages/core/tests/doctor.test.ts holds the template to this table.
 */
import { usesAction, workflowJobs } from './workflow-steps';

export interface TemplateWire {
  /** The composite action under actions/. */
  action: string;
  input: string;
  /** What goes wrong without it. */
  without: string;
  /** The value the template gives it. */
  value: string;
}

export const TEMPLATE_WIRING: readonly TemplateWire[] = [
  {
    action: 'model-proxy',
    input: 'task-artifact-id',
    without:
      'the model proxy gets no limits (it forwards any model call of the agent job, whatever it costs) and the agent’s first turn starts only with the agent',
    value: '${{ needs.hydraflow.outputs.task-artifact-id }}',
  },
  {
    action: 'agent',
    input: 'job-status',
    without:
      'when a setup step of the agent job fails or the run is cancelled during setup, the model call its proxy already made (the agent’s first turn, billed) stays out of the issue’s ledger; the template runs this step with `if: always()` and this input (docs/adr/0024-a-cancelled-agent-job-hands-on-what-it-spent.md)',
    value: '${{ job.status }}',
  },
  {
    action: 'publish',
    input: 'meter-key',
    without:
      'the issue’s ledger takes the agent job’s result for what it spent, which the code its tests run can rewrite (docs/adr/0022-the-model-proxy-meters-the-agent.md)',
    value: '${{ needs.agent.outputs.meter-key }}',
  },
  {
    action: 'publish',
    input: 'agent-result',
    without: 'an agent job that handed on nothing is reported without saying why',
    value: '${{ needs.agent.result }}',
  },
];

/**
 * The wires a workflow's steps lack (for each of HydraFlow's actions it uses); undefined when the text is not a
 * workflow, which the doctor then does not judge.
 */
export function missingWiring(workflowText: string): TemplateWire[] | undefined {
  const jobs = workflowJobs(workflowText);
  if (!jobs) return undefined;
  const steps = jobs.flat();
  return TEMPLATE_WIRING.filter((wire) =>
    steps.some((s) => usesAction(s.uses, wire.action) && !s.inputs.includes(wire.input)),
  );
}
