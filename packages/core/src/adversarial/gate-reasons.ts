/**
 * The complexity gate's vocabulary (gate.ts), apart so that the state's record (record.ts) can name it without the
 * gate's logic. The state keeps the codes; the human-readable detail of each reason goes to the progress comment.
 */
export const GATE_DECISIONS = ['trivial', 'load_bearing'] as const;
export type GateDecision = (typeof GATE_DECISIONS)[number];

export const GATE_REASON_CODES = [
  // a human decided
  'label-force',
  'label-skip',
  // toward load_bearing
  'no-triage',
  'product-track',
  'unclear',
  'complex',
  'triage-risk-words',
  'many-files',
  'sensitive-path',
  'risks',
  'deletes-code',
  'earlier-load-bearing',
  // toward trivial (every one of these must hold)
  'simple',
  'clear',
  'small-change',
] as const;
export type GateReasonCode = (typeof GATE_REASON_CODES)[number];
