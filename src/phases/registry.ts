import { isBuiltPhase, type BuiltPhase } from '@hydraflow/core';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { prepareImplement } from './implement';
import { runPlan } from './plan';
import { runMergeGate, runReviewPhase } from './review-gate';
import { publishImplement } from './publish';
import { runTriage } from './triage';
import { runEpic } from './epic';
import { runFeedback } from './feedback';

export { MODEL_PHASES } from '@hydraflow/core';

export type PhaseRunner = (ctx: PhaseContext) => Promise<PhaseOutcome>;

/**
 * Each built phase's code, by the name the router and workflow_dispatch use. The phases and their facts are the table
 * in packages/core/src/pipeline/phases.ts; the compiler asks here for one runner per phase it marks built.
 */
const RUNNERS: { readonly [P in BuiltPhase]: PhaseRunner } = {
  triage: runTriage,
  // Loaded on demand: most runs (triage, the engineering phases) never need grooming's code.
  groom: async (ctx) => (await import('./groom')).runGroom(ctx),
  // Loaded on demand, like grooming: only product-track issues need it.
  discover: async (ctx) => (await import('./discover')).runDiscover(ctx),
  shape: async (ctx) => (await import('./shape')).runShape(ctx),
  epic: runEpic,
  plan: runPlan,
  review: (ctx) => runReviewPhase(ctx),
  merge: (ctx) => runMergeGate(ctx),
  implement: prepareImplement,
  publish: publishImplement,
  feedback: (ctx) => runFeedback(ctx),
};

/** The runner of a phase this version runs; undefined for any other name (a phase still to build, a step). */
export function runnerOf(phase: string): PhaseRunner | undefined {
  return isBuiltPhase(phase) ? RUNNERS[phase] : undefined;
}
