/**
 * What the progress comment and the job summary say about the adversarial layer (ADR-0064: concerns open, resolved,
 * carried). Only HydraFlow's own words — stage names, outcomes, counts, the gate's reason codes in plain English — so
 * it is safe anywhere; the concerns' text is shown by the stage's own comment (data.ts), not here.
 */
import type { GateReasonCode } from './gate-reasons';
import type { AdversarialState } from './record';
import { ADVERSARIAL_STAGE_NAMES } from './stages';

/** A gate reason code in words (the comment that recorded the decision has the details). */
export const GATE_REASON_TEXT: Readonly<Record<GateReasonCode, string>> = {
  'label-force': 'a human set hydraflow-adv-force',
  'label-skip': 'a human set hydraflow-adv-skip',
  'no-triage': 'no triage verdict',
  'product-track': 'product intent',
  unclear: 'unclear',
  complex: 'complex',
  'triage-risk-words': 'triage named a risk',
  'many-files': 'many files',
  'sensitive-path': 'a load-bearing path',
  risks: 'several risks',
  'deletes-code': 'deletes code',
  'earlier-load-bearing': 'load-bearing earlier',
  simple: 'simple',
  clear: 'clear',
  'small-change': 'small change',
};

/** Markdown lines for the progress comment's details and the job summary; [] when the layer has not run. */
export function adversarialSummaryLines(state: AdversarialState): string[] {
  const gate = state.gate;
  if (!gate) return [];
  const why = gate.reasons.map((r) => GATE_REASON_TEXT[r]).join(', ');
  const lines = [
    `**Adversarial review:** ${gate.decision === 'trivial' ? 'skipped, trivial' : 'load-bearing'}${why ? ` (${why})` : ''}.`,
  ];
  const stages = ADVERSARIAL_STAGE_NAMES.filter((n) => state.stages[n]);
  if (stages.length > 0) {
    lines.push('', '| Stage | Outcome | Rounds | Retries | Model calls |', '| --- | --- | --- | --- | --- |');
    for (const name of stages) {
      const s = state.stages[name]!;
      const outcome = s.status === 'running' ? `running (next: ${s.next === 'agent' ? 'revision' : 'vote'})` : s.status;
      lines.push(`| ${name} | ${outcome} | ${s.rounds.length} | ${s.retries} | ${s.calls} |`);
    }
  }
  const c = state.counters;
  const forPlan = state.pending.filter((p) => p.must_address_by === 'plan-review').length;
  const forCode = state.pending.length - forPlan;
  const open = state.pending.length
    ? `${state.pending.length} open (${[forPlan ? `${forPlan} for plan review` : '', forCode ? `${forCode} for code review` : ''].filter(Boolean).join(', ')})`
    : 'none open';
  lines.push(
    '',
    `Concerns: ${open}, ${c.resolved} resolved in the loop, ${c.addressed} addressed later, ${c.carried} carried on; ${c.calls} model call${c.calls === 1 ? '' : 's'}.`,
  );
  if (c.shippedWithKnownGap > 0) {
    const prs = state.shipped.map((s) => `#${s.pr}`).join(', ');
    lines.push(`Shipped with known gaps: ${prs} (kept as low-confidence knowledge in memory).`);
  }
  return lines;
}
