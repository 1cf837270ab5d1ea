/**
 * Pure helpers that return a new IssueState. They keep every list within STATE_LIMITS so the encoded block stays small.
 */
import type { PipelineStage } from '../pipeline/labels';
import {
  STATE_LIMITS,
  type Claim,
  type DispatchRecord,
  type HistoryEntry,
  type IssueState,
  type LedgerEntry,
} from './schema';

// ---------------------------------------------------------------------------------------------------------------
// Claim: a per-issue lease. It is a second line of defence behind the workflow's `concurrency:` group — a comment is
// not a compare-and-swap primitive — so a phase claims, re-reads, and backs off when another run's claim won.

export type ClaimStatus = 'none' | 'ours' | 'expired' | 'held';

export function claimStatus(state: Pick<IssueState, 'claim'>, now: Date, runId: string): ClaimStatus {
  const c = state.claim;
  if (!c) return 'none';
  if (c.runId === runId) return 'ours';
  return Date.parse(c.expiresAt) <= now.getTime() ? 'expired' : 'held';
}

/**
 * True when ANOTHER run holds an unexpired claim, i.e. `runId` must not work on the issue now. A claim with the same
 * runId is ours (a GitHub re-run keeps its run_id), so it does not block.
 */
export function isClaimActive(state: Pick<IssueState, 'claim'>, now: Date, runId: string): boolean {
  return claimStatus(state, now, runId) === 'held';
}

export const DEFAULT_CLAIM_TTL_MS = 30 * 60 * 1000;

/** Take (or renew) the claim. Returns null when another run holds an active claim. */
export function claimIssue(
  state: IssueState,
  args: { runId: string; phase: string; now: Date; ttlMs?: number },
): IssueState | null {
  if (isClaimActive(state, args.now, args.runId)) return null;
  const claim: Claim = {
    runId: args.runId,
    phase: args.phase,
    at: args.now.toISOString(),
    expiresAt: new Date(args.now.getTime() + (args.ttlMs ?? DEFAULT_CLAIM_TTL_MS)).toISOString(),
  };
  const { released: _superseded, ...rest } = state;
  return { ...rest, claim };
}

/**
 * Drop the claim if it is ours (or expired); another run's active claim is left alone. `held`: the 👀 the releasing run
 * still holds and removes after publishing (recorded as `released`, so a run finding it later knows it for a leftover).
 */
export function releaseClaim(state: IssueState, runId: string, now: Date, held?: number): IssueState {
  const status = claimStatus(state, now, runId);
  if (status === 'ours' || status === 'expired') {
    const { claim: _drop, released: _earlier, ...rest } = state;
    return held === undefined ? rest : { ...rest, released: held };
  }
  return state;
}

// ---------------------------------------------------------------------------------------------------------------
// History, handled ids, dispatches

export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}

export function appendHistory(state: IssueState, entry: HistoryEntry): IssueState {
  const e = { ...entry, reason: truncate(entry.reason, STATE_LIMITS.reason) };
  return { ...state, history: [...state.history, e].slice(-STATE_LIMITS.history) };
}

/** Record a stage change made by HydraFlow or observed from a human, updating `stage` and `history`. */
export function recordTransition(
  state: IssueState,
  args: { to: PipelineStage | null; by: 'hydraflow' | 'human'; actor?: string; reason: string; now: Date },
): IssueState {
  const entry: HistoryEntry = {
    at: args.now.toISOString(),
    from: state.stage ?? null,
    to: args.to,
    by: args.by,
    reason: args.reason,
    ...(args.actor ? { actor: args.actor } : {}),
  };
  return { ...appendHistory(state, entry), stage: args.to };
}

export function hasHandled(state: Pick<IssueState, 'handled'>, id: string): boolean {
  return (state.handled ?? []).includes(id);
}

export function markHandled(state: IssueState, id: string): IssueState {
  if (hasHandled(state, id)) return state;
  return { ...state, handled: [...(state.handled ?? []), id].slice(-STATE_LIMITS.handled) };
}

/**
 * Records a dispatch of `phase` from `runId`. One dispatch of a phase waits for its run at a time: a send while one
 * waits is the same request again, so the sends start one run of the phase that does the work (the first to start
 * takes the dispatch; any other finds it taken and does nothing). A re-run that dispatches again while no run took its
 * earlier attempt's dispatch; the hourly sweep resuming a hand-off whose run GitHub starts late (handlers/sweep.ts):
 * with two records, the later of the two runs took the second and ran the phase again on an issue that had moved on
 * (tests/sweep-handoff.e2e). The waiting dispatch becomes this run's: the one to send it again on a re-run.
 */
export function recordDispatch(state: IssueState, args: { phase: string; runId: string; now: Date }): IssueState {
  const list = state.dispatches ?? [];
  const waiting = list.findIndex((d) => d.phase === args.phase && d.takenBy === undefined);
  if (waiting >= 0 && list[waiting]!.runId === args.runId) return state;
  const d = { phase: args.phase, runId: args.runId, at: args.now.toISOString() };
  if (waiting >= 0) return { ...state, dispatches: list.map((old, i) => (i === waiting ? d : old)) };
  return { ...state, dispatches: [...list, d].slice(-STATE_LIMITS.dispatches) };
}

/** What a run started by HydraFlow's workflow_dispatch of `phase` finds in the state about that dispatch. */
export type DispatchTaking =
  /** It takes the oldest dispatch of `phase` no run took yet (the new state records it as the taker). */
  | { kind: 'taken'; state: IssueState }
  /** It took one before: this is a re-run of that run. */
  | { kind: 'ours' }
  /** Another run took every dispatch of `phase`: GitHub started this run for a dispatch already acted on. */
  | { kind: 'duplicate'; by: string }
  /** No dispatch of `phase` is recorded: one for another issue's sake (an epic's), or from an older version. */
  | { kind: 'unknown' };

export function takeDispatch(state: IssueState, phase: string, runId: string): DispatchTaking {
  const list = state.dispatches ?? [];
  const ofPhase = list.filter((d) => d.phase === phase);
  if (ofPhase.length === 0) return { kind: 'unknown' };
  if (ofPhase.some((d) => d.takenBy === runId)) return { kind: 'ours' };
  const open = list.findIndex((d) => d.phase === phase && d.takenBy === undefined);
  if (open < 0) return { kind: 'duplicate', by: ofPhase[ofPhase.length - 1]!.takenBy! };
  const dispatches = list.map((d, i) => (i === open ? { ...d, takenBy: runId } : d));
  return { kind: 'taken', state: { ...state, dispatches } };
}

/** The dispatches `runId` recorded that no run has taken: GitHub may not have performed them (a re-run sends them). */
export function untakenDispatches(state: Pick<IssueState, 'dispatches'>, runId: string): DispatchRecord[] {
  return (state.dispatches ?? []).filter((d) => d.runId === runId && d.takenBy === undefined);
}

export function recordError(state: IssueState, args: { phase: string; message: string; now: Date }): IssueState {
  return {
    ...state,
    lastError: {
      phase: args.phase,
      message: truncate(args.message, STATE_LIMITS.errorMessage),
      at: args.now.toISOString(),
    },
  };
}

export function clearError(state: IssueState): IssueState {
  const { lastError: _drop, ...rest } = state;
  return rest;
}

// ---------------------------------------------------------------------------------------------------------------
// Ledger

export const ROLLUP_RUN_ID = 'rollup';

function mergeEntries(entries: readonly LedgerEntry[], runId: string): LedgerEntry {
  const last = entries[entries.length - 1]!;
  const same = <K extends 'phase' | 'role' | 'provider' | 'model'>(k: K, fallback: string) =>
    entries.every((e) => e[k] === entries[0]![k]) ? entries[0]![k] : fallback;
  const priced = entries.every((e) => e.priced !== false);
  return {
    at: last.at,
    runId,
    phase: same('phase', 'rollup'),
    role: same('role', 'rollup'),
    provider: same('provider', 'mixed'),
    model: same('model', '*'),
    inputTokens: sum(entries, 'inputTokens'),
    cachedInputTokens: sum(entries, 'cachedInputTokens'),
    cacheWriteTokens: sum(entries, 'cacheWriteTokens'),
    outputTokens: sum(entries, 'outputTokens'),
    costUsd: roundUsd(entries.reduce((a, e) => a + e.costUsd, 0)),
    calls: entries.reduce((a, e) => a + (e.calls ?? 1), 0),
    ...(priced ? {} : { priced: false }),
  };
}

function sum(
  entries: readonly LedgerEntry[],
  k: 'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens' | 'outputTokens',
) {
  return entries.reduce((a, e) => a + e[k], 0);
}

export function roundUsd(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/**
 * Keep the ledger within `max` entries without losing money: first the oldest run with several entries is collapsed
 * into one entry (its runId kept, so per-run totals stay exact), then the two oldest entries are merged into a
 * `rollup` entry. Issue totals are always exact.
 */
export function compactLedger(ledger: readonly LedgerEntry[], max: number = STATE_LIMITS.ledger): LedgerEntry[] {
  let out = [...ledger];
  while (out.length > max && max >= 1) {
    const counts = new Map<string, number>();
    for (const e of out) counts.set(e.runId, (counts.get(e.runId) ?? 0) + 1);
    const victim = out.find((e) => (counts.get(e.runId) ?? 0) > 1)?.runId;
    if (victim !== undefined) {
      const group = out.filter((e) => e.runId === victim);
      const lastIndex = out.lastIndexOf(group[group.length - 1]!);
      const merged = mergeEntries(group, victim);
      out = out.flatMap((e, i) => (i === lastIndex ? [merged] : e.runId === victim ? [] : [e]));
    } else {
      out = [mergeEntries(out.slice(0, 2), ROLLUP_RUN_ID), ...out.slice(2)];
    }
  }
  return out;
}

export function appendLedger(state: IssueState, entry: LedgerEntry): IssueState {
  return { ...state, ledger: compactLedger([...state.ledger, entry]) };
}

/** An entry's identity: two ledgers that share a history hold the same entries for it. */
function entryKey(e: LedgerEntry): string {
  return [
    e.at,
    e.runId,
    e.phase,
    e.role,
    e.provider,
    e.model,
    e.inputTokens,
    e.outputTokens,
    e.costUsd,
    e.calls ?? 1,
  ].join('|');
}

/**
 * Every entry of two ledgers that share a history, each once, in time order: never less spend than either (entries
 * rolled up differently by compaction may count twice, which errs on the side of the budget).
 */
export function unionLedger(a: readonly LedgerEntry[], b: readonly LedgerEntry[]): LedgerEntry[] {
  const seen = new Set<string>();
  const all = [...a, ...b].filter((e) => {
    const key = entryKey(e);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return compactLedger(all.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0)));
}
