/**
 * ComplexityGate (ADR-0064): is an issue `trivial` (no adversarial stage runs, zero extra model calls) or
 * `load_bearing` (every stage of its track runs)? Pure, deterministic, no model call: each decision comes with the
 * signals that made it, which the state records (codes) and the progress comment shows (details).
 *
 * The rule (docs/adr/0018-adversarial-layer.md): **trivial must be earned** — it needs a triage verdict, and every
 * signal must point that way; one load-bearing signal, or a missing verdict, makes it load-bearing. The signals:
 *
 * - triage's scores: needs discovery or routed to discover (product intent: dissent pays most there), clarity below
 *   `clarityThreshold`, complexity at or above `complexityThreshold`;
 * - triage's reasons: a word of risk in them (security, migration, breaking, data loss, concurrency, ...);
 * - the plan, once there is one: more than `maxTrivialFiles` files, a deleted source file, more than `maxTrivialRisks`
 *   risks;
 * - paths the plan or the diff touch that carry load whatever their size (CI workflows, dependency manifests and
 *   lockfiles, migrations and schemas, auth and crypto, infrastructure, the repository's own HydraFlow config).
 *
 * A human's label overrides it: `hydraflow-adv-force` (load-bearing) or `hydraflow-adv-skip` (trivial), force winning
 * if both are set (labels.ts). Without a label, a decision never goes back from load-bearing to trivial within an
 * issue (`previous`): the plan's signals arrive after discover's stages ran, and forwarded concerns must not be
 * orphaned by a later, rosier reading.
 */
import type { TriageVerdict } from '../triage/verdict';
import { GATE_REASON_CODES, type GateDecision, type GateReasonCode } from './gate-reasons';
import { ADV_FORCE_LABEL, ADV_SKIP_LABEL } from './labels';
import type { GateRecord } from './record';

export interface GateSignals {
  /** The labels now. */
  labels: readonly string[];
  /** Triage's verdict: scores always; reasons when the caller has them (the visible comment, not the state). */
  triage?: Pick<TriageVerdict, 'clarity_score' | 'complexity_score' | 'needs_discovery'> & {
    route?: 'discover' | 'groom' | 'plan';
    reasons?: readonly string[];
  };
  /** The accepted plan's files and risks, once planned. */
  plan?: {
    files: readonly { path: string; action: 'create' | 'modify' | 'delete' }[];
    risks: readonly unknown[];
  };
  /** Paths a pull request touches, when there is one. */
  paths?: readonly string[];
  /** The issue took the product track (a direction chosen in shape). */
  productTrack?: boolean;
}

export interface GateOptions {
  clarityThreshold: number;
  complexityThreshold: number;
  maxTrivialFiles: number;
  maxTrivialRisks: number;
}

export const DEFAULT_GATE_OPTIONS: GateOptions = {
  clarityThreshold: 7,
  complexityThreshold: 4,
  maxTrivialFiles: 3,
  maxTrivialRisks: 1,
};

export interface GateReason {
  code: GateReasonCode;
  /** One line for humans (may name a path from the plan: shown in comments, never kept in the state). */
  detail: string;
}

export interface GateResult {
  decision: GateDecision;
  source: 'signals' | 'label';
  /** For load_bearing: every signal pointing that way; for trivial: the signals that earned it. */
  reasons: GateReason[];
}

/** Paths that carry load whatever the size of the change. */
const LOAD_BEARING_PATHS: readonly [RegExp, string][] = [
  [/(^|\/)\.github\/(workflows|actions)\//, 'CI workflow or action'],
  [
    /(^|\/)(package\.json|pnpm-lock\.yaml|package-lock\.json|yarn\.lock|go\.(mod|sum)|Cargo\.(toml|lock)|requirements[^/]*\.txt|poetry\.lock|pyproject\.toml|Gemfile(\.lock)?)$/i,
    'dependency manifest or lockfile',
  ],
  [/(^|\/)(migrations?|migrate)\/|\.sql$/i, 'database migration'],
  [/(^|\/)[^/]*schema[^/]*$/i, 'schema'],
  [/(^|\/)(auth|authn|authz|security|crypto|secrets?|permissions?)(\/|\.|[-_])/i, 'auth, security or crypto'],
  [/(^|\/)(Dockerfile|docker-compose[^/]*|terraform\/|infra\/|k8s\/|helm\/|\.tf$)/i, 'infrastructure'],
  [/(^|\/)\.hydraflow(\.ya?ml|\/)/i, "HydraFlow's own configuration"],
];

const RISK_WORDS =
  /\b(security|secur\w*|auth\w*|permission\w*|migrat\w*|breaking|backward\w*|compat\w*|data[- ]loss|corrupt\w*|concurren\w*|race|deadlock|public api|schema|billing|payment\w*|privacy|personal data|production|outage)\b/i;

const DOC_PATH = /(^|\/)(docs?\/|README|CHANGELOG|LICENSE)|\.(md|mdx|txt|rst)$/i;

/** The gate's decision for `signals`; `previous` is the decision recorded earlier for the issue, if any. */
export function decideComplexity(
  signals: GateSignals,
  options: Partial<GateOptions> = {},
  previous?: Pick<GateRecord, 'decision' | 'source'>,
): GateResult {
  const o = { ...DEFAULT_GATE_OPTIONS, ...options };
  const labels = new Set(signals.labels);
  if (labels.has(ADV_FORCE_LABEL.name)) {
    const both = labels.has(ADV_SKIP_LABEL.name) ? ` (${ADV_SKIP_LABEL.name} is set too: force wins)` : '';
    return {
      decision: 'load_bearing',
      source: 'label',
      reasons: [{ code: 'label-force', detail: `a human set ${ADV_FORCE_LABEL.name}${both}` }],
    };
  }
  if (labels.has(ADV_SKIP_LABEL.name)) {
    return {
      decision: 'trivial',
      source: 'label',
      reasons: [{ code: 'label-skip', detail: `a human set ${ADV_SKIP_LABEL.name}` }],
    };
  }

  const heavy: GateReason[] = [];
  const light: GateReason[] = [];
  const t = signals.triage;
  if (!t) heavy.push({ code: 'no-triage', detail: 'no triage verdict: nothing shows the issue is trivial' });
  else {
    if (!(t.clarity_score >= o.clarityThreshold))
      heavy.push({ code: 'unclear', detail: `clarity ${t.clarity_score}/10 (below ${o.clarityThreshold})` });
    else light.push({ code: 'clear', detail: `clarity ${t.clarity_score}/10` });
    if (!(t.complexity_score < o.complexityThreshold))
      heavy.push({ code: 'complex', detail: `complexity ${t.complexity_score}/10 (${o.complexityThreshold} or more)` });
    else light.push({ code: 'simple', detail: `complexity ${t.complexity_score}/10` });
    const risky = (t.reasons ?? []).map((r) => RISK_WORDS.exec(r)?.[0]).filter((w): w is string => w !== undefined);
    if (risky.length > 0)
      heavy.push({
        code: 'triage-risk-words',
        detail: `triage's reasons mention ${[...new Set(risky.map((w) => w.toLowerCase()))].slice(0, 3).join(', ')}`,
      });
  }
  if (signals.productTrack || t?.needs_discovery || t?.route === 'discover')
    heavy.push({
      code: 'product-track',
      detail: 'product intent (discover, shape): framing is where dissent pays most',
    });

  const plan = signals.plan;
  if (plan) {
    if (plan.files.length > o.maxTrivialFiles)
      heavy.push({
        code: 'many-files',
        detail: `the plan touches ${plan.files.length} files (more than ${o.maxTrivialFiles})`,
      });
    const deleted = plan.files.filter((f) => f.action === 'delete' && !DOC_PATH.test(f.path));
    if (deleted.length > 0) heavy.push({ code: 'deletes-code', detail: `the plan deletes ${deleted[0]!.path}` });
    if (plan.risks.length > o.maxTrivialRisks)
      heavy.push({
        code: 'risks',
        detail: `the plan names ${plan.risks.length} risks (more than ${o.maxTrivialRisks})`,
      });
    if (plan.files.length <= o.maxTrivialFiles && plan.risks.length <= o.maxTrivialRisks && deleted.length === 0)
      light.push({ code: 'small-change', detail: `${plan.files.length} file(s), ${plan.risks.length} risk(s)` });
  }
  const paths = [...(plan?.files.map((f) => f.path) ?? []), ...(signals.paths ?? [])];
  const sensitive = new Map<string, string>();
  for (const path of paths) {
    const hit = LOAD_BEARING_PATHS.find(([re]) => re.test(path));
    if (hit && !sensitive.has(hit[1])) sensitive.set(hit[1], path);
  }
  for (const [what, path] of sensitive) heavy.push({ code: 'sensitive-path', detail: `${path} (${what})` });

  if (heavy.length === 0 && previous?.decision === 'load_bearing' && previous.source === 'signals')
    heavy.push({ code: 'earlier-load-bearing', detail: 'judged load-bearing earlier in this issue; it stays so' });
  if (heavy.length > 0) return { decision: 'load_bearing', source: 'signals', reasons: heavy };
  return { decision: 'trivial', source: 'signals', reasons: light };
}

/** The event that records a decision (reason codes in GATE_REASON_CODES order, each once). */
export function gateEvent(result: GateResult, at: string) {
  const codes = new Set(result.reasons.map((r) => r.code));
  return {
    type: 'ComplexityGateRouted' as const,
    at,
    decision: result.decision,
    source: result.source,
    reasons: GATE_REASON_CODES.filter((c) => codes.has(c)),
  };
}

/** ADR-0064's ComplexityGate under its name. */
export const ComplexityGate = { decide: decideComplexity, event: gateEvent } as const;
