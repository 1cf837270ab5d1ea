/**
 * What the adversarial layer can cost, in model calls, by the loop's own rules (loop.ts) and the stage table
 * (stages.ts). ADR-0064 puts the ceiling for a load-bearing issue at about 30 calls; packages/core/tests/adversarial-table.test.ts
 * holds the table to it, and a trivial issue to 0.
 *
 * A stage's worst case is the most any sequence of answers can make it spend: its first round (every voter, plus the
 * agent's first run when the layer makes it), then retries — one agent run and the voters that blocked the round
 * before — while retries remain and the next one fits the stage's budget. Oscillation only ever ends a stage sooner,
 * so the worst case ignores it.
 */
import type { GateDecision } from './gate-reasons';
import { retryCost } from './loop';
import { ADVERSARIAL_STAGE_NAMES, stageSpec, type AdversarialPhase, type AdversarialStageSpec } from './stages';

/** The ADR's ceiling for one load-bearing issue. */
export const ADVERSARIAL_CALL_CEILING = 30;

/** Calls of a stage's first round: every voter, and the agent's first run when the layer makes it. */
export function firstRoundCalls(spec: AdversarialStageSpec): number {
  return (spec.agentFirstRun ? 1 : 0) + spec.voters.length;
}

/** Calls per round × rounds, without the budget: every voter blocks every round until the retries run out. */
export function uncappedStageCalls(spec: AdversarialStageSpec): number {
  return firstRoundCalls(spec) + spec.maxRetries * retryCost(spec.voters.length);
}

/** The most calls the stage can spend on one issue (see the file's comment). */
export function worstCaseStageCalls(spec: AdversarialStageSpec): number {
  const go = (spent: number, asked: number, retries: number): number => {
    let most = spent;
    if (retries >= spec.maxRetries) return most;
    for (let blockers = 1; blockers <= asked; blockers++) {
      const next = spent + retryCost(blockers);
      if (next <= spec.budget) most = Math.max(most, go(next, blockers, retries + 1));
    }
    return most;
  };
  return go(firstRoundCalls(spec), spec.voters.length, 0);
}

/** Calls when the stage converges after one revision (one voter blocks, the revision fixes it). */
export function typicalStageCalls(spec: AdversarialStageSpec): number {
  const first = firstRoundCalls(spec);
  return spec.maxRetries >= 1 && first + retryCost(1) <= spec.budget ? first + retryCost(1) : first;
}

/** The phases an issue's adversarial stages run in: the engineering track plans; the product track also discovers and shapes. */
export function adversarialPhasesOf(track: 'engineering' | 'product'): AdversarialPhase[] {
  return track === 'product' ? ['discover', 'shape', 'plan'] : ['plan'];
}

function stagesOn(track: 'engineering' | 'product'): AdversarialStageSpec[] {
  const phases = new Set(adversarialPhasesOf(track));
  return ADVERSARIAL_STAGE_NAMES.map(stageSpec).filter((s) => phases.has(s.phase));
}

/** An issue's worst case over the stages of its track; 0 for a trivial one (no stage runs). */
export function worstCaseIssueCalls(decision: GateDecision, track: 'engineering' | 'product'): number {
  if (decision === 'trivial') return 0;
  return stagesOn(track).reduce((sum, s) => sum + worstCaseStageCalls(s), 0);
}

/** An issue's calls when every stage converges after one revision; 0 for a trivial one. */
export function typicalIssueCalls(decision: GateDecision, track: 'engineering' | 'product'): number {
  if (decision === 'trivial') return 0;
  return stagesOn(track).reduce((sum, s) => sum + typicalStageCalls(s), 0);
}
