import type { PhaseContext, PhaseOutcome } from './phase-context';

export type PhaseRunner = (ctx: PhaseContext) => Promise<PhaseOutcome>;

/**
 * The phases this version implements, by the name the router and workflow_dispatch use. Each is loaded on demand (a
 * chunk of its own in dist/): a run parses only the phase it runs, which is most of a cold start.
 */
export const PHASES: Readonly<Record<string, PhaseRunner>> = {
  triage: async (ctx) => (await import('./triage')).runTriage(ctx),
  groom: async (ctx) => (await import('./groom')).runGroom(ctx),
  epic: async (ctx) => (await import('./epic')).runEpic(ctx),
  plan: async (ctx) => (await import('./plan')).runPlan(ctx),
  review: async (ctx) => (await import('./review-gate')).runReviewPhase(ctx),
  merge: async (ctx) => (await import('./review-gate')).runMergeGate(ctx),
  implement: async (ctx) => (await import('./implement')).prepareImplement(ctx),
  publish: async (ctx) => (await import('./publish')).publishImplement(ctx),
};
