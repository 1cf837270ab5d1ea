/**
 * The phases, in one table (docs/adr/0013-one-phase-table.md): each phase's facts, from which the rest is derived —
 * the runner registry (src/phases/registry.ts asks for one runner per built phase, the compiler checks it), the model
 * phases, the stage a dispatched phase expects, the phase /retry runs at a stage, the router's list of phases a
 * workflow_dispatch may name, the phase table of docs/state-machine.md (doc.ts) and the action-metadata test (one
 * composite action per `action`). Adding a phase is one entry here plus its code.
 *
 * Tracks are ADR-0031's (docs/adr/0012-product-track.md): `junction` (where the tracks meet), `product` (discover,
 * shape: scope narrowing), `engineering` (code delivery).
 */
import type { PipelineStage } from './labels';

export type PhaseTrack = 'junction' | 'product' | 'engineering';

/** The job of the workflow template (workflows-templates/hydraflow.yml) whose step runs the phase. */
export type PhaseJob = 'routing' | 'agent' | 'publish';

export interface PhaseFacts {
  /** What it does, in a few words (docs). */
  does: string;
  track: PhaseTrack;
  job: PhaseJob;
  /**
   * `phase`: runs on one issue, through the registry (src/phases/registry.ts) and the issue's session. `step`: a step
   * of the implement jobs that works on a hand-off artifact, not on an issue's state (src/run.ts, src/main.ts).
   */
  kind: 'phase' | 'step';
  /** The model role it calls itself (`models.<role>` in the config), or null. */
  model: string | null;
  /**
   * The stage label the phase works at. A dispatched or continued run of it first checks that the issue still
   * carries it (a human who moved the issue meanwhile wins); null: the phase checks its own preconditions (a pull
   * request of HydraFlow's, a task artifact).
   */
  stage: PipelineStage | null;
  /** Its composite action, `actions/<action>/action.yml`; null: reached through the root action only. */
  action: string | null;
  /** The events that start it, besides commands (commands name their phase in router/commands.ts): for docs. */
  events: readonly string[];
  /**
   * Its run needs the repository's files in the routing job: the phase reads them (plan, discover, grooming,
   * implement's hand-off), or goes on into one that does in the same run (triage into plan, a human's review into a
   * refine round). A job with no checkout begins fetching them as soon as such a run is decided
   * (src/runner/working-tree.ts); any phase that reads them waits for them, so this only says how early.
   */
  workingTree: boolean;
  /**
   * Always started in a workflow run of its own (dispatched), never continued in the run that hands the issue on
   * (src/phases/next-phase.ts): grooming's five agents take long and their log and job summary are their own; shape
   * mostly answers a human's reply, in that comment's run. Discovery goes on in the run that triaged the issue, as
   * planning does (docs/adr/0025-discovery-goes-on-in-the-triage-run.md).
   */
  ownRun: boolean;
  /** Built in this version. A phase that is not says so on the issue and leaves it at its stage. */
  built: boolean;
}

export const PHASE_TABLE = {
  triage: {
    does: 'scores the issue and routes it by label',
    track: 'junction',
    job: 'routing',
    kind: 'phase',
    model: 'triage',
    stage: 'find',
    action: 'triage',
    events: ['issues.opened', 'issues.labeled `hydraflow-find`', 'workflow_dispatch'],
    workingTree: true,
    ownRun: false,
    built: true,
  },
  discover: {
    does: 'product research: a structured brief',
    track: 'product',
    job: 'routing',
    kind: 'phase',
    model: 'discover',
    stage: 'discover',
    action: 'discover',
    events: ['workflow_dispatch'],
    workingTree: true,
    ownRun: false,
    built: true,
  },
  shape: {
    does: 'product directions; a human picks one',
    track: 'product',
    job: 'routing',
    kind: 'phase',
    model: 'shape',
    stage: 'shape',
    action: 'shape',
    events: ['workflow_dispatch', 'issue_comment.created (a reply at `hydraflow-shape`)', 'schedule (the timeout)'],
    workingTree: false,
    ownRun: true,
    built: true,
  },
  groom: {
    does: 'PM, engineer, QA and research agents judge readiness',
    track: 'junction',
    job: 'routing',
    kind: 'phase',
    model: 'groom',
    stage: 'groom',
    action: 'groom',
    events: ['issues.edited', 'issue_comment.created (an answer)', 'workflow_dispatch'],
    workingTree: true,
    ownRun: true,
    built: true,
  },
  epic: {
    does: 'advances the phase sub-issues one at a time',
    track: 'junction',
    job: 'routing',
    kind: 'phase',
    model: null,
    stage: 'epic',
    action: null,
    events: ['workflow_dispatch'],
    workingTree: false,
    ownRun: false,
    built: true,
  },
  plan: {
    does: 'writes and reviews the plan comment',
    track: 'junction',
    job: 'routing',
    kind: 'phase',
    model: 'plan',
    stage: 'plan',
    action: 'plan',
    events: ['workflow_dispatch'],
    workingTree: true,
    ownRun: false,
    built: true,
  },
  implement: {
    does: "writes the coding agent's task",
    track: 'engineering',
    job: 'routing',
    kind: 'phase',
    model: null,
    stage: 'ready',
    action: null,
    events: ['workflow_dispatch'],
    workingTree: true,
    ownRun: false,
    built: true,
  },
  'model-proxy': {
    does: 'holds the model key in a local proxy',
    track: 'engineering',
    job: 'agent',
    kind: 'step',
    model: null,
    stage: null,
    action: 'model-proxy',
    events: [],
    workingTree: false,
    ownRun: false,
    built: true,
  },
  agent: {
    does: 'the coding agent, without a GitHub token',
    track: 'engineering',
    job: 'agent',
    kind: 'step',
    model: 'implement',
    stage: null,
    action: 'agent',
    events: [],
    workingTree: false,
    ownRun: false,
    built: true,
  },
  publish: {
    does: "validates the agent's patch, pushes, opens the pull request",
    track: 'engineering',
    job: 'publish',
    kind: 'phase',
    model: null,
    stage: null,
    action: 'publish',
    events: [],
    workingTree: false,
    ownRun: false,
    built: true,
  },
  review: {
    does: 'reviews the pull request; refine rounds',
    track: 'engineering',
    job: 'routing',
    kind: 'phase',
    model: 'review',
    stage: 'review',
    action: 'review',
    events: ['pull_request.synchronize', 'workflow_dispatch'],
    workingTree: false,
    ownRun: false,
    built: true,
  },
  feedback: {
    does: "a refine round for a human's review",
    track: 'engineering',
    job: 'routing',
    kind: 'phase',
    model: null,
    stage: null,
    action: null,
    events: ['pull_request_review.submitted (changes requested, commented)'],
    workingTree: true,
    ownRun: false,
    built: true,
  },
  merge: {
    does: 'the merge gate',
    track: 'engineering',
    job: 'routing',
    kind: 'phase',
    model: null,
    stage: null,
    action: 'merge',
    events: [
      'pull_request_review.submitted (approved)',
      'workflow_run.completed',
      'check_suite.completed',
      'status',
      '`/ship-it` on the pull request',
    ],
    workingTree: false,
    ownRun: false,
    built: true,
  },
} as const satisfies Readonly<Record<string, PhaseFacts>>;

type Table = typeof PHASE_TABLE;

/** A phase's name, as the router, workflow_dispatch and `INPUT_PHASE` spell it. */
export type PhaseName = keyof Table;

/** A phase that runs on one issue through the registry (not an implement job's step). */
export type IssuePhase = { [P in PhaseName]: Table[P]['kind'] extends 'phase' ? P : never }[PhaseName];

/** An issue phase this version runs: src/phases/registry.ts must give each one a runner. */
export type BuiltPhase = {
  [P in PhaseName]: Table[P] extends { kind: 'phase'; built: true } ? P : never;
}[PhaseName];

export const PHASE_NAMES: readonly PhaseName[] = Object.keys(PHASE_TABLE) as PhaseName[];

export function isPhaseName(name: string): name is PhaseName {
  return Object.hasOwn(PHASE_TABLE, name);
}

export function phaseFacts(phase: PhaseName): PhaseFacts {
  return PHASE_TABLE[phase];
}

/** The issue phases (what a workflow_dispatch may name), in table order. */
export const ISSUE_PHASES: readonly IssuePhase[] = PHASE_NAMES.filter(
  (p): p is IssuePhase => PHASE_TABLE[p].kind === 'phase',
);

export function isIssuePhase(name: string): name is IssuePhase {
  return isPhaseName(name) && PHASE_TABLE[name].kind === 'phase';
}

/** A name of an issue phase this version runs (not a step, not a phase still to build). */
export function isBuiltPhase(name: string): name is BuiltPhase {
  return isPhaseName(name) && PHASE_TABLE[name].kind === 'phase' && PHASE_TABLE[name].built;
}

/** The built phases that call a model themselves: the routing step loads that model's SDK while GitHub answers. */
export const MODEL_PHASES: ReadonlySet<string> = new Set(
  PHASE_NAMES.filter((p) => isBuiltPhase(p) && PHASE_TABLE[p].model !== null),
);

/** The stage a dispatched or continued run of `phase` expects its issue in (undefined: the phase checks itself). */
export function dispatchStage(phase: string): PipelineStage | undefined {
  return isPhaseName(phase) ? (PHASE_TABLE[phase].stage ?? undefined) : undefined;
}

/** The phase that works on an issue waiting at `stage`, if any (hitl has none: a human decides). */
export function phaseAtStage(stage: PipelineStage): PhaseName | undefined {
  return PHASE_NAMES.find((p) => PHASE_TABLE[p].stage === stage);
}
