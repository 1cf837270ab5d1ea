/**
 * The pipeline state machine (docs/adr/0008-labels-are-the-state-machine.md, with the product track of
 * docs/adr/0012-product-track.md and grooming's stages of docs/adr/0011-grooming.md): one label per stage, exactly one on an
 * issue at a time. This table is the single source that code, docs (docs/state-machine.md) and the drift test read.
 *
 * Grooming (docs/grooming.md) adds two stages the seeds leave to us: `groom` (PM, engineer, QA and research agents
 * judge whether the issue is ready to plan; the issue waits here while questions are open) and `epic` (grooming split
 * the work into phase sub-issues; the parent tracks them and is done when they all are).
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
    stage: 'groom',
    label: 'hydraflow-groom',
    color: 'fbca04',
    description: 'HydraFlow: grooming (product, engineering, QA and research review)',
    track: 'junction',
  },
  {
    stage: 'epic',
    label: 'hydraflow-epic',
    color: 'c2e0c6',
    description: 'HydraFlow: split into phase sub-issues; tracks them',
    track: 'junction',
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

/**
 * Not a pipeline label: marks an issue that passed grooming (the seed's `groomed` label). It stays when the issue moves
 * on, and HydraFlow creates it with this colour and description when the repository lacks it.
 */
export const GROOMED_LABEL = {
  name: 'groomed',
  color: '0e8a16',
  description: 'HydraFlow: groomed, ready to plan',
} as const;

export function isPipelineLabel(label: string): label is PipelineLabel {
  return byLabel.has(label);
}

export function stageInfo(stage: PipelineStage): PipelineStageInfo {
  return byStage.get(stage)!;
}
