/**
 * Which state HydraFlow may act on (ADR 0007): only what it wrote last. A signature proves a block is HydraFlow's, not
 * that it is HydraFlow's newest — anyone with write access can paste an older genuine block back into the progress
 * comment (its edit history shows every one), edit around it, or delete the comment. So two records that GitHub keeps
 * and nobody else can write decide:
 *
 * - the comment's last editor (GraphQL `editor`): a comment someone other than HydraFlow edited last does not hold
 *   HydraFlow's word, whatever its block says;
 * - the text GitHub sends with an edit or a deletion of HydraFlow's comment (`issue_comment.edited`'s
 *   `changes.body.from`, `issue_comment.deleted`'s `comment.body`): HydraFlow's newest block, usually, which names the
 *   sequence number an older block falls short of (a rollback) and the spend to keep.
 *
 * A state HydraFlow cannot trust is never acted on: the issue waits for a human, with the spend of the newest genuine
 * block HydraFlow could find (never less than it can prove; nothing when none verifies, and it says so).
 */
import {
  decodeStateBlock,
  hasStateBlock,
  type BlockPlace,
  type StateCommentLookup,
  type StateKeyOptions,
} from './codec';
import type { StateRejectReason } from './migrate';
import { unionLedger } from './ops';
import {
  STATE_LIMITS,
  emptyState,
  type Incident,
  type IncidentReason,
  type IssueState,
  type LedgerEntry,
} from './schema';

/** A text GitHub sent with an edit (the body before it) or a deletion (the body deleted) of HydraFlow's comment. */
export interface Witness {
  body: string;
  /** Who edited or deleted the comment (the event's sender). */
  by: string;
  deleted: boolean;
  /** The comment it was the text of. */
  commentId: number;
  /** When that comment was last changed before (GitHub's `updated_at` in the event). */
  at?: string;
}

export type StateJudgement =
  /** HydraFlow has no state on the issue (a new issue). */
  | { kind: 'fresh' }
  /**
   * The state HydraFlow wrote last; `amended` when spend GitHub's text showed was taken in (after an incident), which
   * HydraFlow then writes.
   */
  | { kind: 'trusted'; state: IssueState; amended?: true }
  /** A state HydraFlow did not write last: `held` is what it keeps (heldState), the issue waits for a human. */
  | { kind: 'incident'; held: IssueState };

/**
 * Judge what findStateComment found. `editor`: the last editor of `lookup.comment` when GitHub says it is someone
 * other than HydraFlow (undefined when HydraFlow edited it last or nobody edited it).
 */
export function judgeState(args: {
  lookup: Pick<StateCommentLookup, 'comment' | 'state' | 'refused'>;
  editor?: string | undefined;
  witnesses?: readonly Witness[];
  keys: StateKeyOptions;
  place: Required<BlockPlace>;
  now: Date;
}): StateJudgement {
  const { lookup, editor, place, now } = args;
  const sent = newestWitness(args.witnesses ?? [], args.keys, place);
  // GitHub's text of HydraFlow's changed state comment, whether its block verifies or not (a broken block deleted):
  // the comment was HydraFlow's, so finding none now is no new issue.
  const changed = (args.witnesses ?? []).find((w) => hasStateBlock(w.body));
  const hold = (
    incident: Omit<Incident, 'at'>,
    candidates: (IssueState | undefined)[],
    own?: IssueState,
  ): StateJudgement => ({
    kind: 'incident',
    held: heldState({ incident, candidates, place, now, ...(own ? { own } : {}) }),
  });
  const current = lookup.state;
  if (current && editor === undefined) {
    // After an incident HydraFlow knows of, sequence numbers say little (it could not know the newest one): what GitHub
    // sent (the edit's own event, run late) only adds the spend it shows.
    if (current.incident) {
      if (!sent) return { kind: 'trusted', state: current };
      const state = withSpendOf(current, sent.state);
      return state === current ? { kind: 'trusted', state } : { kind: 'trusted', state, amended: true };
    }
    // The comment GitHub sent the text of is not the one read: it was deleted, and HydraFlow wrote this one afresh
    // since, without what the deleted one held (its sequence numbers started over, so they compare with nothing). An
    // edit's text counts as much as a deletion's: the edit's event may run after a run that found no comment (property
    // test tests/property/pipeline-histories, fast-check seed -1055792285: a block broken, then the comment deleted,
    // both events late). In both this and a rollback below, the comment's block is HydraFlow's own (it wrote it last):
    // its claim says who holds the lock.
    const gone = [sent, changed].find((w) => w !== undefined && w.commentId !== lookup.comment?.id);
    if (gone)
      return hold({ reason: gone.deleted ? 'deleted' : 'edited', by: gone.by }, [current, sent?.state], current);
    if (!sent || sent.state.seq <= current.seq) return { kind: 'trusted', state: current };
    // GitHub sent a genuine block newer than the one HydraFlow last wrote: HydraFlow wrote over its newest word.
    return hold({ reason: 'rollback', by: sent.by, found: current.seq }, [current, sent.state], current);
  }
  if (editor !== undefined || lookup.refused) {
    const reason: IncidentReason = lookup.refused
      ? incidentReasonOf(lookup.refused.reason)
      : current && sent && sent.state.seq > current.seq
        ? 'rollback'
        : 'edited';
    return hold({ reason, ...(editor ? { by: editor } : {}), ...(current ? { found: current.seq } : {}) }, [
      current,
      sent?.state,
    ]);
  }
  if (sent) return hold({ reason: sent.deleted ? 'deleted' : 'edited', by: sent.by }, [sent.state]);
  // No genuine block anywhere (the deleted comment's block had been broken first): held, with no spend it can prove
  // (the note says so); the edit's own event, if it runs later, adds what its text shows (property test
  // tests/property/pipeline-histories, fast-check seed -1055792285: the issue was taken for a new one, spend lost).
  if (changed) return hold({ reason: changed.deleted ? 'deleted' : 'edited', by: changed.by }, []);
  return { kind: 'fresh' };
}

/** A refused block in HydraFlow's own comment, as an incident (a block is never refused there for its author). */
function incidentReasonOf(reason: StateRejectReason): IncidentReason {
  return reason === 'untrusted-author' ? 'edited' : reason;
}

/** The newest genuine block among the texts GitHub sent. */
function newestWitness(
  witnesses: readonly Witness[],
  keys: StateKeyOptions,
  place: Required<BlockPlace>,
): (Omit<Witness, 'body'> & { state: IssueState }) | undefined {
  let newest: (Omit<Witness, 'body'> & { state: IssueState }) | undefined;
  for (const { body, ...w } of witnesses) {
    const decoded = decodeStateBlock(body, { ...keys, ...place });
    if (decoded.status !== 'valid') continue;
    if (!newest || decoded.state.seq > newest.state.seq) newest = { ...w, state: decoded.state };
  }
  return newest;
}

/**
 * The state HydraFlow keeps when it cannot trust the one it found: nothing to act on, only the spend and handled
 * command ids of the genuine blocks among `candidates` (none: an empty ledger, which the progress comment says is not
 * verified), the newest one's history, and a sequence number no lower than any genuine one seen.
 */
export function heldState(args: {
  incident: Omit<Incident, 'at'>;
  candidates: readonly (IssueState | undefined)[];
  place: Required<BlockPlace>;
  now: Date;
  /**
   * The block in the comment, when HydraFlow wrote it last: its claim stays, so the run that holds the issue can tell a
   * lock handed to a phase not started yet (it may take that over) from a run at work (property test
   * tests/property/pipeline-histories: a deletion's run waited for a hand-off lock and gave up, its spend uncounted).
   */
  own?: IssueState;
}): IssueState {
  const genuine = args.candidates.filter((s): s is IssueState => s !== undefined);
  const newest = genuine.reduce<IssueState | undefined>((best, s) => (!best || s.seq > best.seq ? s : best), undefined);
  const handled = [...new Set(genuine.flatMap((s) => s.handled ?? []))].slice(-STATE_LIMITS.handled);
  return {
    ...emptyState(args.place.issue, args.place.repo),
    seq: newest?.seq ?? 0,
    ledger: genuine.reduce<LedgerEntry[]>((ledger, s) => unionLedger(ledger, s.ledger), []),
    history: newest?.history ?? [],
    ...(handled.length > 0 ? { handled } : {}),
    ...(args.own?.claim ? { claim: args.own.claim } : {}),
    incident: {
      ...args.incident,
      ...(newest ? { spendFrom: newest.seq } : {}),
      at: args.now.toISOString(),
    },
  };
}

/** A genuine block GitHub sent after an incident HydraFlow knows of: the spend it shows is counted too. */
function withSpendOf(state: IssueState, sent: IssueState): IssueState {
  const ledger = unionLedger(state.ledger, sent.ledger);
  const total = (l: readonly LedgerEntry[]) => l.reduce((a, e) => a + e.costUsd, 0);
  if (total(ledger) <= total(state.ledger)) return state;
  return {
    ...state,
    seq: Math.max(state.seq, sent.seq),
    ledger,
    incident: { ...state.incident!, spendFrom: Math.max(state.incident!.spendFrom ?? 0, sent.seq) },
  };
}

/** Is the issue waiting for a human after an incident (found now or before)? */
export function isHeld(state: Pick<IssueState, 'incident'>): boolean {
  return state.incident !== undefined && state.incident.restartedBy === undefined;
}

/** A permitted human starts the issue over after an incident: the record stays, saying who and when. */
export function restartAfterIncident(state: IssueState, args: { actor: string; now: Date }): IssueState {
  if (!state.incident) return state;
  return { ...state, incident: { ...state.incident, restartedBy: args.actor, restartedAt: args.now.toISOString() } };
}
