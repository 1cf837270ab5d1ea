/**
 * The pipeline state machine (ADR-0002, extended by ADR-0031): one label per stage, exactly one on an issue at a time.
 * This table is the single source that code, docs (docs/state-machine.md) and the drift test read.
 */
export const PIPELINE_STAGES = [
  {
    stage: 'find',
    label: 'hydraflow-find',
    color: 'c5def5',
    description: 'HydraFlow: waiting for triage',
    track: 'junction',
  },
  {
    stage: 'discover',
    label: 'hydraflow-discover',
    color: 'd4c5f9',
    description: 'HydraFlow: product research (discover)',
    track: 'product',
  },
  {
    stage: 'shape',
    label: 'hydraflow-shape',
    color: 'bfd4f2',
    description: 'HydraFlow: awaiting a product direction (shape)',
    track: 'product',
  },
  {
    stage: 'plan',
    label: 'hydraflow-plan',
    color: 'fef2c0',
    description: 'HydraFlow: needs a plan',
    track: 'junction',
  },
  {
    stage: 'ready',
    label: 'hydraflow-ready',
    color: '0e8a16',
    description: 'HydraFlow: planned, ready for implementation',
    track: 'engineering',
  },
  {
    stage: 'review',
    label: 'hydraflow-review',
    color: '1d76db',
    description: 'HydraFlow: pull request open, under review',
    track: 'engineering',
  },
  {
    stage: 'hitl',
    label: 'hydraflow-hitl',
    color: 'd93f0b',
    description: 'HydraFlow: needs a human (escalated)',
    track: 'escalation',
  },
  {
    stage: 'fixed',
    label: 'hydraflow-fixed',
    color: '5319e7',
    description: 'HydraFlow: merged, done',
    track: 'engineering',
  },
] as const;

export type PipelineStage = (typeof PIPELINE_STAGES)[number]['stage'];
export type PipelineLabel = (typeof PIPELINE_STAGES)[number]['label'];
export type PipelineStageInfo = (typeof PIPELINE_STAGES)[number];

export const PIPELINE_LABELS: readonly PipelineLabel[] = PIPELINE_STAGES.map((s) => s.label);

const byStage = new Map<string, PipelineStageInfo>(PIPELINE_STAGES.map((s) => [s.stage, s]));
const byLabel = new Map<string, PipelineStageInfo>(PIPELINE_STAGES.map((s) => [s.label, s]));

export function labelFor(stage: PipelineStage): PipelineLabel {
  return byStage.get(stage)!.label;
}

export function stageOf(label: string): PipelineStage | undefined {
  return byLabel.get(label)?.stage;
}

export function isPipelineLabel(label: string): label is PipelineLabel {
  return byLabel.has(label);
}

export function stageInfo(stage: PipelineStage): PipelineStageInfo {
  return byStage.get(stage)!;
}
