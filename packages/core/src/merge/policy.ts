/**
 * When HydraFlow merges. The default is `human`: HydraFlow's own approval is not enough, a person must approve the pull
 * request or say `/ship-it` — a careful team does not let a bot merge its own code unseen. `auto` merges as soon as the
 * pipeline approved and the required checks are green.
 */
export type MergePolicy = 'human' | 'auto';

export interface MergeInputs {
  policy: MergePolicy;
  /** HydraFlow's reviewer approved (no unresolved critical finding, score at threshold). */
  pipelineApproved: boolean;
  /** A human with write access approved the PR or commented /ship-it. */
  humanApproved: boolean;
  checks: 'success' | 'failure' | 'pending';
  /** GitHub's mergeability: false = conflict; null = still computing. */
  mergeable: boolean | null;
  /** Fix attempts already made for red checks or a conflict. */
  fixAttempts: number;
}

export type MergeDecision =
  | { action: 'merge' }
  | { action: 'wait'; reason: string }
  | { action: 'fix'; reason: string }
  | { action: 'escalate'; reason: string };

/** One fix attempt for red checks or a conflict, then a human (field notes: no blind retries). */
export const MAX_FIX_ATTEMPTS = 1;

export function decideMerge(input: MergeInputs): MergeDecision {
  if (!input.pipelineApproved) return { action: 'wait', reason: 'HydraFlow’s review has not approved yet' };
  if (input.policy === 'human' && !input.humanApproved) {
    return { action: 'wait', reason: 'waiting for a human to approve the pull request or comment /ship-it' };
  }
  if (input.mergeable === false) {
    return input.fixAttempts < MAX_FIX_ATTEMPTS
      ? { action: 'fix', reason: 'the branch conflicts with the base branch' }
      : { action: 'escalate', reason: 'the branch still conflicts with the base branch after a fix attempt' };
  }
  if (input.checks === 'failure') {
    return input.fixAttempts < MAX_FIX_ATTEMPTS
      ? { action: 'fix', reason: 'required checks failed' }
      : { action: 'escalate', reason: 'required checks still fail after a fix attempt' };
  }
  if (input.checks === 'pending' || input.mergeable === null) {
    return { action: 'wait', reason: 'waiting for the required checks to finish' };
  }
  return { action: 'merge' };
}
