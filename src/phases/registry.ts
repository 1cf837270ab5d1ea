import type { PhaseContext, PhaseOutcome } from './phase-context';
import { runPlan } from './plan';
import { runTriage } from './triage';

export type PhaseRunner = (ctx: PhaseContext) => Promise<PhaseOutcome>;

/** The phases this version implements. Others (plan, implement, ...) are added by the engineering track. */
export const PHASES: Readonly<Record<string, PhaseRunner>> = {
  triage: runTriage,
  plan: runPlan,
};
