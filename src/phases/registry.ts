import type { PhaseContext, PhaseOutcome } from './phase-context';
import { prepareImplement } from './implement';
import { runPlan } from './plan';
import { runMergeGate, runReviewPhase } from './review-gate';
import { publishImplement } from './publish';
import { runTriage } from './triage';
import { runGroom } from './groom';
import { runEpic } from './epic';

export type PhaseRunner = (ctx: PhaseContext) => Promise<PhaseOutcome>;

/** The phases this version implements, by the name the router and workflow_dispatch use. */
export const PHASES: Readonly<Record<string, PhaseRunner>> = {
  triage: runTriage,
  groom: runGroom,
  epic: runEpic,
  plan: runPlan,
  review: (ctx) => runReviewPhase(ctx),
  merge: (ctx) => runMergeGate(ctx),
  implement: prepareImplement,
  publish: publishImplement,
};
