import type { PhaseContext, PhaseOutcome } from './phase-context';
import { prepareImplement } from './implement';
import { runPlan } from './plan';
import { runMergeGate, runReviewPhase } from './review-gate';
import { publishImplement } from './publish';
import { runTriage } from './triage';
import { runEpic } from './epic';
import { runFeedback } from './feedback';

export type PhaseRunner = (ctx: PhaseContext) => Promise<PhaseOutcome>;

/** The phases that call a model themselves (implement's model calls are its agent step's). */
export const MODEL_PHASES: ReadonlySet<string> = new Set(['triage', 'groom', 'plan', 'review']);

/** The phases this version implements, by the name the router and workflow_dispatch use. */
export const PHASES: Readonly<Record<string, PhaseRunner>> = {
  triage: runTriage,
  // Loaded on demand: most runs (triage, the engineering phases) never need grooming's code.
  groom: async (ctx) => (await import('./groom')).runGroom(ctx),
  epic: runEpic,
  plan: runPlan,
  review: (ctx) => runReviewPhase(ctx),
  merge: (ctx) => runMergeGate(ctx),
  implement: prepareImplement,
  publish: publishImplement,
  feedback: (ctx) => runFeedback(ctx),
};
