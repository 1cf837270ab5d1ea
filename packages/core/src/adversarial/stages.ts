/**
 * The adversarial stages and their voters, in one table (docs/adr/0018-adversarial-layer.md; the seed is ADR-0064):
 * where each stage runs, who votes, which agent the loop re-runs with the blocking concerns, its transient label, its
 * retry cap, its model-call budget, and which later stage must answer what it could not settle. The compiler checks a
 * row's phase against the phase table (pipeline/phases.ts) and its label against its phase; cost.ts and
 * packages/core/tests/adversarial-table.test.ts check the budgets against the ADR's ceiling of 30 calls.
 *
 * This file imports only types: adversarial/record.ts (imported by state/schema.ts) reads its names.
 */
import type { PhaseName } from '../pipeline/phases';

/** The contract's hard cap (ADR-0064 "three-retry budget"): no row may allow more revisions than this. */
export const MAX_ADVERSARIAL_RETRIES = 3;
export type AdversarialRetries = 0 | 1 | 2 | 3;

/** The phases that host an adversarial stage: each has its transient label. */
export const ADVERSARIAL_PHASES = ['discover', 'shape', 'plan'] as const satisfies readonly PhaseName[];
export type AdversarialPhase = (typeof ADVERSARIAL_PHASES)[number];

/** The transient label a phase carries while one of its adversarial stages runs (never a pipeline label: labels.ts). */
export type AdversarialRunningLabel<P extends AdversarialPhase = AdversarialPhase> = `hydraflow-adv-${P}-running`;

/**
 * Who must answer a concern a stage forwards (ADR-0064's wide loop): the plan reviewer (src/phases/plan.ts) or
 * HydraFlow's code review (src/phases/review.ts). Each either addresses it or explicitly carries it on; code review
 * carries to `merge`, where what is still open becomes knowledge (carryover.ts).
 */
export const CONCERN_CONSUMERS = ['plan-review', 'code-review'] as const;
export type ConcernConsumer = (typeof CONCERN_CONSUMERS)[number];

/** The voters: a persona each, with the angle it argues from (prompts.ts turns these into its instructions). */
export const ADVERSARIAL_VOTERS = {
  'assumption-surfacer': {
    title: 'Assumption Surfacer',
    stance:
      'List the assumptions the text rests on that nobody checked: about users, the code, the data, other systems. Give each a concrete way to check it.',
  },
  'problem-sharpener': {
    title: 'Problem-Sharpener',
    stance:
      'Argue that the problem is framed wrongly or too vaguely: whose problem, what exactly fails today, how we would know it is solved.',
  },
  'existing-solution-hunter': {
    title: 'Existing-Solution-Hunter',
    stance:
      'Argue that this is already solved: in the repository, in a library, in a product users already have. Name it.',
  },
  'cheapest-test-advocate': {
    title: 'Cheapest-Test-Advocate',
    stance:
      'Argue for the cheapest experiment that would prove or kill the idea before anyone builds it; object to anything built before that test.',
  },
  builder: {
    title: 'Builder',
    stance:
      'Argue that the plan will not build as written: missing files, wrong order, an API that does not exist, a step nobody could follow.',
  },
  tester: {
    title: 'Tester',
    stance:
      'Argue that the plan cannot be proven: acceptance criteria no test checks, tests that would pass on a broken change, missing edge cases.',
  },
  'risk-skeptic': {
    title: 'Risk-Skeptic',
    stance:
      'Argue that the plan breaks something: a load-bearing convention, compatibility, data, security, concurrency, cost. Assume the worst plausible failure.',
  },
  'spec-judge': {
    title: 'Spec Judge',
    stance:
      'Judge whether the acceptance criteria are consistent with the spec and with each other: contradictions, criteria the spec does not support, spec promises no criterion covers.',
  },
  challenger: {
    title: 'Challenger',
    stance:
      'Argue against every proposed direction: the one everyone will pick most of all. What does it get wrong about the problem or the user?',
  },
  'expert-council': {
    title: 'Expert Council',
    stance:
      'Speak as the domain experts the directions ignore (operations, security, accessibility, support): what would each refuse to sign off?',
  },
} as const satisfies Record<string, { title: string; stance: string }>;
export type VoterName = keyof typeof ADVERSARIAL_VOTERS;
export const VOTER_NAMES = Object.keys(ADVERSARIAL_VOTERS) as VoterName[];

/** The agent the loop re-runs with a round's blocking concerns attached (ADR-0064's "surfaced agent"). */
export type SurfacedAgent = 'discover' | 'shape' | 'planner' | 'spec-ac-generator';

/** What voters read (prompts.ts): the artifact of the surfaced agent. */
export type AdversarialSubject = 'brief' | 'directions' | 'plan' | 'acceptance-criteria';

interface StageRow<P extends AdversarialPhase> {
  /** What it is for, in a few words (docs). */
  does: string;
  phase: P;
  /** When in its phase it runs (docs; the wiring follows it). */
  runs: string;
  voters: readonly VoterName[];
  /** The agent re-run with the blocking concerns attached. */
  agent: SurfacedAgent;
  /**
   * True when the layer itself makes the agent's first run (the SpecACGenerator's criteria exist only for the judge):
   * that run is a model call of the stage. False when the agent's first run is the phase's own (the plan, the brief).
   */
  agentFirstRun: boolean;
  subject: AdversarialSubject;
  label: AdversarialRunningLabel<P>;
  /** Revisions after the first vote, at most; 0: blocking concerns are forwarded at once. */
  maxRetries: AdversarialRetries;
  /** Model calls the stage may spend on one issue (voters and the agent's revisions); loop.ts stops before it. */
  budget: number;
  /** Who must answer what the stage forwards. */
  forwardTo: ConcernConsumer;
}

type AnyStageRow = StageRow<'discover'> | StageRow<'shape'> | StageRow<'plan'>;

export const ADVERSARIAL_STAGES = {
  'assumptions-discover': {
    does: 'lists the assumptions the research brief rests on, each with how to check it',
    phase: 'discover',
    runs: 'after the brief is written, before the council',
    voters: ['assumption-surfacer'],
    agent: 'discover',
    agentFirstRun: false,
    subject: 'brief',
    label: 'hydraflow-adv-discover-running',
    maxRetries: 0,
    budget: 1,
    forwardTo: 'plan-review',
  },
  'discovery-council': {
    does: 'argues the brief frames the wrong problem, re-solves a solved one, or skips the cheapest test',
    phase: 'discover',
    runs: 'after the assumption surfacer, before shape',
    voters: ['problem-sharpener', 'existing-solution-hunter', 'cheapest-test-advocate'],
    agent: 'discover',
    agentFirstRun: false,
    subject: 'brief',
    label: 'hydraflow-adv-discover-running',
    maxRetries: 2,
    budget: 7,
    forwardTo: 'plan-review',
  },
  'shape-council': {
    does: 'challenges the proposed directions before a human picks one',
    phase: 'shape',
    runs: 'after the shape agent proposes directions, before they are posted',
    voters: ['challenger', 'expert-council'],
    agent: 'shape',
    agentFirstRun: false,
    subject: 'directions',
    label: 'hydraflow-adv-shape-running',
    maxRetries: 2,
    budget: 6,
    forwardTo: 'plan-review',
  },
  'assumptions-plan': {
    does: 'lists the assumptions the plan rests on, each with how to check it',
    phase: 'plan',
    runs: 'after the planner, before the plan council',
    voters: ['assumption-surfacer'],
    agent: 'planner',
    agentFirstRun: false,
    subject: 'plan',
    label: 'hydraflow-adv-plan-running',
    maxRetries: 0,
    budget: 1,
    forwardTo: 'plan-review',
  },
  'plan-council': {
    does: 'argues the plan will not build, cannot be proven, or breaks something',
    phase: 'plan',
    runs: 'after the assumption surfacer, before the plan reviewer',
    voters: ['builder', 'tester', 'risk-skeptic'],
    agent: 'planner',
    agentFirstRun: false,
    subject: 'plan',
    label: 'hydraflow-adv-plan-running',
    maxRetries: 2,
    budget: 7,
    forwardTo: 'plan-review',
  },
  'spec-judge': {
    does: 'generates acceptance criteria from the accepted plan and judges them for consistency',
    phase: 'plan',
    runs: 'after the plan reviewer accepts, before implement',
    voters: ['spec-judge'],
    agent: 'spec-ac-generator',
    agentFirstRun: true,
    subject: 'acceptance-criteria',
    label: 'hydraflow-adv-plan-running',
    maxRetries: 2,
    budget: 6,
    forwardTo: 'code-review',
  },
} as const satisfies Record<string, AnyStageRow>;

export type AdversarialStageName = keyof typeof ADVERSARIAL_STAGES;
/** A row as code reads it (tests build their own rows of this type, e.g. with three retries). */
export type AdversarialStageSpec = AnyStageRow & { name: AdversarialStageName };

export const ADVERSARIAL_STAGE_NAMES = Object.keys(ADVERSARIAL_STAGES) as AdversarialStageName[];

export function isAdversarialStageName(name: string): name is AdversarialStageName {
  return Object.prototype.hasOwnProperty.call(ADVERSARIAL_STAGES, name);
}

export function isVoterName(name: string): name is VoterName {
  return Object.prototype.hasOwnProperty.call(ADVERSARIAL_VOTERS, name);
}

export function stageSpec(name: AdversarialStageName): AdversarialStageSpec {
  return { name, ...(ADVERSARIAL_STAGES[name] as AnyStageRow) };
}

/** The stages a phase runs, in table order (the order they run in). */
export function stagesOfPhase(phase: AdversarialPhase): AdversarialStageSpec[] {
  return ADVERSARIAL_STAGE_NAMES.map(stageSpec).filter((s) => s.phase === phase);
}
