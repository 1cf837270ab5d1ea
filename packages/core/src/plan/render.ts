/**
 * The plan comment: one per issue (marker `<!-- hydraflow:plan -->`), updated in place. It shows the plan and its
 * review to humans, and carries the plan as data for the later phases in a hidden block whose sha256 is kept in the
 * signed state — so the implementer reads exactly the plan that was accepted, and an edited block is refused:
 *
 *     <!-- hydraflow:plan-data sha256=<hex> <json, escaped like the state block> -->
 *
 * Model text is neutralised before it is shown: it cannot open or close an HTML comment, fake a HydraFlow marker,
 * @mention anyone, carry a closing keyword or link to another host (text/neutralize.ts).
 */
import { createHash } from 'node:crypto';
import { canonicalJson, escapeForComment } from '../state/codec';
import { neutralizeText } from '../state/progress';
import { meanScore } from './gate';
import { PLAN_DIMENSIONS, planSchema, type Plan, type PlanReview } from './schema';

export const PLAN_MARKER = '<!-- hydraflow:plan -->';
const DATA_KIND = 'plan-data';
/** Stay well below GitHub's 65,536-character comment limit. */
const MAX_BODY = 60_000;

/** neutralizeText with no trusted link at all, plus no HydraFlow marker of any kind (plan, plan-data, review, ...). */
export function neutralizeModelText(text: string): string {
  return neutralizeText(text).replace(/hydraflow(?=:)/gi, (m) => `${m}\u200b`);
}

/** One line for a table cell or a list item. */
function cell(text: string, max = 400): string {
  const flat = neutralizeModelText(text).replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function code(path: string): string {
  return `\`${neutralizeModelText(path).replace(/`/g, "'").replace(/\s+/g, ' ').slice(0, 200)}\``;
}

/** sha256 hex of the plan's canonical JSON: what the state keeps to recognise the accepted plan. */
export function planHash(plan: Plan): string {
  return createHash('sha256').update(canonicalJson(plan)).digest('hex');
}

/**
 * A hidden data block `<!-- hydraflow:<kind> sha256=<hex> <json> -->` (the plan's, grooming's verdicts): the value's
 * canonical JSON, escaped like the state block so it cannot end the comment, and its sha256 for the signed state.
 */
export function renderDataBlock(kind: string, value: unknown): { block: string; hash: string } {
  const canonical = canonicalJson(value);
  const hash = createHash('sha256').update(canonical).digest('hex');
  return { block: `<!-- hydraflow:${kind} sha256=${hash} ${escapeForComment(canonical)} -->`, hash };
}

/**
 * The JSON of the first `kind` data block in `body` and the hash it declares; undefined when absent or malformed.
 * The caller validates the value and checks the declared hash against it and against the signed state.
 */
export function readDataBlock(
  body: string | null | undefined,
  kind: string,
): { hash: string; value: unknown } | undefined {
  if (typeof body !== 'string') return undefined;
  const marker = `<!-- hydraflow:${kind}`;
  const start = body.indexOf(marker);
  if (start < 0) return undefined;
  const end = body.indexOf('-->', start + marker.length);
  if (end < 0) return undefined;
  // An object (the plan, grooming's verdicts) or an array (shape's directions: shape/direction.ts).
  const m = /^ sha256=([0-9a-f]{64}) (\{[\x20-\x7e]*\}|\[[\x20-\x7e]*\]) $/.exec(
    body.slice(start + marker.length, end),
  );
  if (!m) return undefined;
  try {
    return { hash: m[1]!, value: JSON.parse(m[2]!) };
  } catch {
    return undefined;
  }
}

export interface PlanCommentMeta {
  /** accepted, or rejected (still short after the last revision: a human decides). */
  status: 'accepted' | 'rejected';
  /** Revisions after the first draft. */
  revisions: number;
  maxRevisions: number;
  /** HydraFlow's reasons the plan fell short (when rejected). */
  shortfalls?: readonly string[];
  /** HydraFlow's deterministic problems with the plan. */
  problems?: readonly string[];
}

function reviewSection(review: PlanReview, meta: PlanCommentMeta): string[] {
  const lines = [
    `<details><summary>Plan review: mean ${meanScore(review)}/10, verdict ${review.verdict} (${meta.revisions} revision${meta.revisions === 1 ? '' : 's'})</summary>`,
    '',
    '| Dimension | Score |',
    '|---|---|',
    ...PLAN_DIMENSIONS.map((d) => `| ${d.replace('_', ' ')} | ${review.scores[d]}/10 |`),
  ];
  if (review.issues.length > 0) {
    lines.push('', '**Shortcomings the reviewer named**', '');
    for (const i of review.issues)
      lines.push(`- _${i.dimension.replace('_', ' ')}_: ${cell(i.problem)} — ${cell(i.fix)}`);
  }
  if (meta.problems && meta.problems.length > 0) {
    lines.push('', "**HydraFlow's checks**", '', ...meta.problems.map((p) => `- ${cell(p)}`));
  }
  lines.push('', '</details>');
  return lines;
}

function render(plan: Plan, review: PlanReview, meta: PlanCommentMeta, compact: boolean): string {
  const head =
    meta.status === 'accepted' ? '### HydraFlow · plan' : '### HydraFlow · plan (not accepted: a human decides)';
  const lines: string[] = [PLAN_MARKER, head, '', `**${cell(plan.summary, 300)}**`, ''];
  if (meta.status === 'rejected' && meta.shortfalls?.length) {
    lines.push(
      `> [!WARNING]`,
      `> After ${meta.revisions} revision${meta.revisions === 1 ? '' : 's'} (at most ${meta.maxRevisions}) the plan still falls short: ${cell(meta.shortfalls.join('; '), 600)}.`,
      '',
    );
  }
  lines.push('#### Goal', '', neutralizeModelText(plan.goal), '');
  if (!compact) lines.push('#### Approach', '', neutralizeModelText(plan.approach), '');
  lines.push('#### Files', '', '| File | Action | Change |', '|---|---|---|');
  for (const f of plan.files_to_touch)
    lines.push(`| ${code(f.path)} | ${f.action} | ${compact ? '' : cell(f.change)} |`);
  lines.push('', '#### Test plan', '', ...plan.test_plan.map((t) => `- ${cell(t, compact ? 120 : 300)}`));
  lines.push(
    '',
    '#### Acceptance criteria',
    '',
    ...plan.acceptance_criteria.map((a) => `- [ ] ${cell(a, compact ? 120 : 300)}`),
  );
  if (plan.risks.length > 0 && !compact) {
    lines.push(
      '',
      '#### Risks',
      '',
      ...plan.risks.map((r) => `- ${cell(r.risk)} — _mitigation:_ ${cell(r.mitigation)}`),
    );
  }
  lines.push('', ...reviewSection(review, meta), '', dataBlock(plan));
  return lines.join('\n');
}

function dataBlock(plan: Plan): string {
  return renderDataBlock(DATA_KIND, plan).block;
}

/** The plan comment's body: the visible plan and review, then the data block. Always under 60,000 characters. */
export function renderPlanComment(plan: Plan, review: PlanReview, meta: PlanCommentMeta): string {
  const full = render(plan, review, meta, false);
  return full.length <= MAX_BODY ? full : render(plan, review, meta, true);
}

/**
 * The plan carried by a plan comment, if its data block is intact and (when given) its hash is `expectedHash` — the
 * hash in the signed state. Anything else (no block, edited, another plan) is undefined: never obeyed.
 */
export function readPlanComment(body: string | null | undefined, expectedHash?: string): Plan | undefined {
  const found = readDataBlock(body, DATA_KIND);
  if (!found || (expectedHash !== undefined && found.hash !== expectedHash)) return undefined;
  const parsed = planSchema.safeParse(found.value);
  if (!parsed.success || planHash(parsed.data) !== found.hash) return undefined;
  return parsed.data;
}

/** The plan as the implementer's prompt shows it (model text: sanitise before use in a prompt if needed). */
export function planAsMarkdown(plan: Plan): string {
  return [
    `Summary: ${plan.summary}`,
    `Goal: ${plan.goal}`,
    `Approach:\n${plan.approach}`,
    `Files:\n${plan.files_to_touch.map((f) => `- ${f.action} ${f.path}: ${f.change}`).join('\n')}`,
    `Test plan:\n${plan.test_plan.map((t) => `- ${t}`).join('\n')}`,
    `Acceptance criteria:\n${plan.acceptance_criteria.map((a) => `- ${a}`).join('\n')}`,
    ...(plan.risks.length
      ? [`Risks:\n${plan.risks.map((r) => `- ${r.risk} (mitigation: ${r.mitigation})`).join('\n')}`]
      : []),
  ].join('\n\n');
}
