/**
 * Versioned state: every stored block carries its version, and `migrateState` lifts older shapes step by step to the
 * current one. A version newer than this build knows is refused (never obeyed on a best-effort basis).
 */
import { HydraflowError } from '../errors';
import { stageOf } from '../pipeline/labels';
import { STATE_VERSION, issueStateSchema, type IssueState } from './schema';

export type StateRejectReason =
  | 'malformed'
  | 'unknown-version'
  | 'schema'
  | 'bad-signature'
  | 'missing-signature'
  | 'unknown-key'
  | 'wrong-issue'
  | 'wrong-repository'
  | 'untrusted-author'
  | 'multiple-blocks';

/** A state block that must not be used. `reason` is a stable code, the message says what was wrong. */
export class StateRejectedError extends HydraflowError {
  override name = 'StateRejectedError';
  constructor(
    readonly reason: StateRejectReason,
    message: string,
  ) {
    super(message);
  }
}

/** What a block does not say about itself but its reader knows: the repository it was read in. */
export interface MigrationContext {
  /** The repository's id (GITHUB_REPOSITORY_ID). */
  repo?: number;
}

type Migration = (raw: Record<string, unknown>, context: MigrationContext) => Record<string, unknown>;

/**
 * v0 (the pre-release format): `{ version: 0, issue, label: 'hydraflow-plan', verdict?: { clarity, complexity,
 * discovery, route }, updated_at? }`. Only the stage and the triage scores carry over; v0 had no ledger or history.
 */
const v0ToV1: Migration = (raw) => {
  const label = typeof raw.label === 'string' ? raw.label : undefined;
  const stage = label === undefined ? undefined : stageOf(label);
  if (label !== undefined && stage === undefined) {
    throw new StateRejectedError('schema', `state v0: "${label.slice(0, 40)}" is not a pipeline label`);
  }
  const out: Record<string, unknown> = { v: 1, issue: raw.issue, ledger: [], history: [] };
  if (stage !== undefined) out.stage = stage;
  const verdict = raw.verdict as Record<string, unknown> | undefined;
  if (
    verdict &&
    typeof verdict === 'object' &&
    typeof raw.updated_at === 'string' &&
    typeof raw.body_sha === 'string'
  ) {
    const clarity = Number(verdict.clarity);
    const complexity = Number(verdict.complexity);
    const needsDiscovery = Boolean(verdict.discovery);
    out.triage = {
      clarity_score: clarity,
      complexity_score: complexity,
      needs_discovery: needsDiscovery,
      route:
        verdict.route === 'discover' || verdict.route === 'plan' ? verdict.route : needsDiscovery ? 'discover' : 'plan',
      at: raw.updated_at,
      bodyHash: raw.body_sha,
    };
  }
  return out;
};

/**
 * v1 (the first release): no repository, no sequence number, signed without them. It is read in the repository it was
 * found in, as the oldest block HydraFlow knows (sequence 0); HydraFlow's next write signs it as v2.
 */
const v1ToV2: Migration = (raw, context) => ({ ...raw, v: 2, repo: context.repo, seq: 0 });

/** MIGRATIONS[n] lifts version n to n + 1. */
const MIGRATIONS: Readonly<Record<number, Migration>> = { 0: v0ToV1, 1: v1ToV2 };

/** The version a raw state object declares: `v` (v1+) or `version` (v0). */
export function stateVersionOf(raw: unknown): number | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const v = r.v ?? r.version;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Lift any known older state to the current version and validate it. Throws StateRejectedError: `unknown-version` for a
 * missing or newer version, `schema` when the (migrated) object does not match the current schema.
 */
export function migrateState(raw: unknown, context: MigrationContext = {}): IssueState {
  const version = stateVersionOf(raw);
  if (version === undefined) {
    throw new StateRejectedError('unknown-version', 'state has no version field (`v`)');
  }
  if (version > STATE_VERSION) {
    throw new StateRejectedError(
      'unknown-version',
      `state version ${version} is newer than this HydraFlow understands (${STATE_VERSION}); upgrade HydraFlow`,
    );
  }
  let current = raw as Record<string, unknown>;
  for (let v = version; v < STATE_VERSION; v++) {
    const step = MIGRATIONS[v];
    if (!step) throw new StateRejectedError('unknown-version', `no migration from state version ${v}`);
    current = step(current, context);
  }
  const parsed = issueStateSchema.safeParse(current);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first?.path.length ? first.path.join('.') : '(root)';
    throw new StateRejectedError(
      'schema',
      `state does not match schema v${STATE_VERSION}: ${where}: ${first?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
