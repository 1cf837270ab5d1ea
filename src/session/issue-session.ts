import {
  hasLogin,
  type Claim,
  type IssueState,
  type PipelineStage,
  type LedgerEntry,
  type Witness,
  emptyState,
  findStateComment,
  isHeld,
  isTrustedAuthor,
  judgeState,
  renderProgressComment,
  restartAfterIncident,
  labelFor,
  labelsToRemoveAfterAdd,
  pipelineLabelsOf,
  recordTransition,
  recordDispatch,
  untakenDispatches,
  appendLedger,
  releaseClaim,
  claimIssue,
  PROGRESS_MARKER,
  previousDetails,
  stageOf,
  stageInfo,
  isPipelineLabel,
  lastLabelEvent,
} from '@hydraflow/core';
import type { IssueComment, IssuesPort } from '@hydraflow/github';

export interface SessionOptions {
  issue: number;
  /** The repository's id (GITHUB_REPOSITORY_ID): the signed state binds it. */
  repo: number;
  phase: string;
  runId: string;
  runAttempt: number;
  /** Logins HydraFlow writes as; only their state blocks are trusted. */
  botLogins: readonly string[];
  stateKey: string | undefined;
  /** HYDRAFLOW_STATE_KEY_PREVIOUS during a key rotation: verifies, never signs. */
  previousStateKey?: string | undefined;
  /** What GitHub sent with an edit or deletion of HydraFlow's comment, when this run's event is one (trust.ts). */
  witnesses?: readonly Witness[];
  /** Labels on the issue when the run started (from the event, or fetched). */
  labelsAtStart: readonly string[];
  now: () => Date;
  /** Set when this run was started by another phase's workflow_dispatch: it inherits that phase's lock. */
  dispatched?: boolean;
  claimTtlMs?: number;
  /**
   * The repository's web URL (`https://github.com/acme/widgets`): HydraFlow's own links there (its pull request, its
   * comments) stay links in the progress comment; every other link in it is neutralized.
   */
  repositoryUrl?: string;
  /**
   * Whether a person may move the issue by label (commands.min_permission: handlers/may-steer.ts). A pipeline label
   * set while the run worked by someone who may not is no move to honour (moveTo). Absent: every human's is honoured.
   */
  maySteer?: (login: string) => Promise<boolean>;
}

export interface Progress {
  headline: string;
  next: string;
  error?: string;
  details?: string;
  /** A hidden data block of HydraFlow's own (see ProgressInput.dataBlock). */
  dataBlock?: string;
}

export type AcquireResult = { ok: true } | { ok: false; reason: string };

/**
 * The state this run read before it took the lock was written over meanwhile (by a run that held the lock between the
 * read and the take): what the run decided from it may be wrong. The lock is freed; the run starts its handling over
 * from a fresh read (execute.ts).
 */
export class StateChangedError extends Error {
  constructor(issue: number) {
    super(`issue #${issue}: HydraFlow's state changed between this run's reading of it and its taking the lock`);
    this.name = 'StateChangedError';
  }
}

/** Hand-off claims mark a lock passed to the next phase along with its workflow_dispatch. */
const HANDOFF = 'handoff:';
const DEFAULT_TTL_MS = 30 * 60 * 1000;
/** How long a lock nobody claimed is kept: past it, any run may take it over (tryAcquire). */
export const LOCK_TTL_MS = DEFAULT_TTL_MS;

/**
 * One run's view of one issue: the hidden state (from HydraFlow's single progress comment), the per-issue lock, the
 * pipeline label, and the ledger. Phases call it; it talks to GitHub only through IssuesPort.
 *
 * The lock is the bot's 👀 reaction on the issue: GitHub answers 201 to the first and 200 to a repeat, a real
 * test-and-set (comments are not). It also tells humans HydraFlow is working. The claim in state says who holds it,
 * so a re-run of the same run (same run id) and the phase a lock was handed to may proceed, and a stale lock expires.
 */
export class IssueSession {
  state: IssueState;
  /** Untrusted or invalid state blocks found on the issue, with why they were ignored. */
  readonly ignored: { commentId: number; author: string; reason: string }[];
  /** Newer copies of HydraFlow's state comment (left by a run that raced an older one): deleted on publish. */
  private duplicates: number[];
  private comment: IssueComment | undefined;
  private lockReaction: number | undefined;
  /**
   * The 👀 this run put on the issue before it read the state (`open` with `locked`), not yet used by `acquire`. A 201
   * means the state was read under this run's lock: nothing can have written it since (see readAgainUnderLock).
   */
  private lockedFirst: { id: number; created: boolean; createdAt: string } | undefined;
  private stage: PipelineStage | null;
  private readonly ledgerEntries: LedgerEntry[] = [];
  private known: IssueComment[];
  /** Dispatches recorded by `dispatch`, sent by `sendDispatches`. */
  private pending: { workflow: string; ref: string; phase: string; actor: string | undefined }[] = [];
  /** This run found HydraFlow's state changed by someone else (state/trust.ts); nothing says so on the issue yet. */
  foundIncident: boolean;
  /** The state read holds spend taken in from the text GitHub sent (state/trust.ts); not written yet. */
  amended: boolean;
  private changedAt: string | undefined;
  /** A label move whose removals wait for finishMove. */
  private unfinishedMove: { described: Promise<void>; removals: string[] } | undefined;

  private constructor(
    private readonly port: IssuesPort,
    readonly options: SessionOptions,
    read: {
      state: IssueState;
      comment?: IssueComment | undefined;
      ignored?: IssueSession['ignored'];
      duplicates?: readonly IssueComment[];
      /** This run found the state changed by someone else (not yet said on the issue): see holdForHuman. */
      foundIncident?: boolean;
      /** Spend the text GitHub sent showed was taken into the state (after an incident): it is to be written. */
      amended?: boolean;
      /** When someone else last changed HydraFlow's comment (GitHub's clock), if this run found it changed. */
      changedAt?: string | undefined;
    },
    comments: readonly IssueComment[],
  ) {
    this.known = [...comments];
    this.comment = read.comment;
    this.state = read.state;
    this.ignored = read.ignored ?? [];
    this.duplicates = (read.duplicates ?? []).map((c) => c.id);
    this.foundIncident = read.foundIncident ?? false;
    this.amended = read.amended ?? false;
    this.changedAt = read.changedAt;
    const labels = pipelineLabelsOf(options.labelsAtStart);
    this.stage = labels.length === 1 ? (stageOf(labels[0]!) ?? null) : (this.state.stage ?? null);
  }

  /**
   * Reads every comment once (or takes them, already being read) and judges HydraFlow's state (state/trust.ts): the
   * state HydraFlow wrote last, a fresh one, or — when someone else changed it — the state kept while the issue waits.
   */
  static async open(
    port: IssuesPort,
    options: SessionOptions,
    reading?: Promise<IssueComment[]>,
    /**
     * The lock, taken first: the 👀 reaction's answer, which `reading` (if given) was started after. For a run that
     * takes the lock whatever it finds (IssueSession.lockFirst): its state is then read under its lock.
     */
    locked?: Promise<{ id: number; created: boolean; createdAt: string } | undefined>,
  ): Promise<IssueSession> {
    const keys = { key: options.stateKey, previousKey: options.previousStateKey };
    const place = { issue: options.issue, repo: options.repo };
    const lockedFirst = locked ? await locked : undefined;
    // the text and who edited it last from one answer: an edit landing between two reads would pass for HydraFlow's own
    const comments = await (reading ?? port.readComments(options.issue));
    const lookup = findStateComment(comments, { botLogins: options.botLogins, ...keys, ...place });
    const editor = lookup.comment ? foreignEditor(lookup.comment, options.botLogins) : undefined;
    const judged = judgeState({
      lookup,
      editor,
      ...(options.witnesses ? { witnesses: options.witnesses } : {}),
      keys,
      place,
      now: options.now(),
    });
    const state =
      judged.kind === 'trusted'
        ? judged.state
        : judged.kind === 'incident'
          ? judged.held
          : emptyState(options.issue, options.repo);
    const ignored = lookup.rejected.map((r) => ({
      commentId: r.commentId,
      author: r.author ?? 'a deleted user',
      reason: r.detail,
    }));
    const session = new IssueSession(
      port,
      options,
      {
        state,
        comment: lookup.comment,
        ignored,
        duplicates: lookup.duplicates,
        foundIncident: judged.kind === 'incident',
        amended: judged.kind === 'trusted' && judged.amended === true,
        changedAt: judged.kind === 'incident' ? changedAt(editor, lookup.comment, options.witnesses) : undefined,
      },
      comments,
    );
    session.lockedFirst = lockedFirst;
    return session;
  }

  /**
   * Frees the 👀 taken before the state was read (`open` with `locked`) when no `acquire` used it: the run found
   * nothing to do. Call when the run's handling ends. A re-run's 👀 that was there already, with no claim naming a
   * holder, is the one its dead attempt put on (`tryAcquire` would take it over for the same reason): freed too
   * (property test tests/property/pipeline-histories, seed 1630553918: a dispatched shape run died after its 👀 and
   * its re-run, finding the directions posted, left it).
   */
  async releaseUnusedLock(): Promise<void> {
    const first = this.lockedFirst;
    this.lockedFirst = undefined;
    const leftByDeadAttempt = this.options.runAttempt > 1 && this.state.claim === undefined;
    if (first?.created || (first && leftByDeadAttempt))
      await this.port.removeIssueReaction(this.options.issue, first.id);
  }

  /**
   * The claim an earlier attempt of this very run left (a re-run: attempt > 1): it published a phase's state and then
   * died, in that phase or in the next one of its chain, which the claim names. Undefined otherwise.
   */
  get earlierAttemptsClaim(): Claim | undefined {
    const { claim } = this.state;
    return this.options.runAttempt > 1 && claim?.runId === this.options.runId ? claim : undefined;
  }

  /** The issue waits for a human after an incident (found by this run or before): HydraFlow does no work on it. */
  get held(): boolean {
    return isHeld(this.state);
  }

  /** A permitted human's go on an issue held after an incident: it starts over, the spend kept (ADR 0007). */
  restart(actor: string): void {
    this.state = restartAfterIncident(this.state, { actor, now: this.options.now() });
  }

  /**
   * Every comment on the issue when the session opened, oldest first (grooming reads the humans' answers), with the
   * ones this run wrote since (`noteWritten`): HydraFlow's later reads in the run need no new listing.
   */
  get comments(): readonly IssueComment[] {
    return this.known;
  }

  /** A comment this run created or updated (outside the progress comment), as GitHub answered it. */
  noteWritten(comment: IssueComment): void {
    const at = this.known.findIndex((c) => c.id === comment.id);
    if (at >= 0) this.known[at] = comment;
    else this.known.push(comment);
  }

  get currentStage(): PipelineStage | null {
    return this.stage;
  }

  /**
   * The stage the state records, not the label's when the run started: for a write that changes nothing else (the
   * spend a late edit's text shows). A run that waited for the lock read the labels long before; writing their stage
   * would record a move nobody made (property test tests/property/pull-histories: the state said review on an issue
   * held at hydraflow-hitl).
   */
  keepRecordedStage(): void {
    this.stage = this.state.stage ?? null;
  }

  /**
   * Takes the per-issue lock. `takeOver` (a human's override) may take a lock that was only handed to a phase not yet
   * started. `waitMs` waits, re-reading the state, for another run to finish.
   */
  async acquire(
    opts: { takeOver?: boolean; waitMs?: number; sleep?: (ms: number) => Promise<void> } = {},
  ): Promise<AcquireResult> {
    const deadline = this.options.now().getTime() + (opts.waitMs ?? 0);
    for (let delay = 500; ; delay = Math.min(delay * 2, 8_000)) {
      const result = await this.tryAcquire(opts.takeOver ?? false);
      if (result.ok || this.options.now().getTime() + delay > deadline) return result;
      await (opts.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms))))(delay);
      await this.reload();
    }
  }

  private async tryAcquire(takeOver: boolean): Promise<AcquireResult> {
    const { issue, phase, runId, runAttempt } = this.options;
    const now = this.options.now();
    // Held by this very process (the previous phase continued in this run): nothing to ask GitHub.
    if (this.lockReaction !== undefined && this.state.claim?.runId === runId && this.state.claim.phase === phase) {
      return { ok: true };
    }
    // the 👀 taken before the state was read, once; afterwards (a wait, a retry) the lock is asked again
    const first = this.lockedFirst;
    this.lockedFirst = undefined;
    let reaction = first ?? (await this.port.reactToIssue(issue, 'eyes'));
    const claim = this.state.claim;
    // Whether the lock was held, from this read on, by no run that may have written: this run's (taken before the read,
    // or held by an earlier attempt or job of this run), or the hand-off reaction the state names, which this run
    // replaces (below).
    let heldThroughout = (first?.created ?? false) || (!reaction.created && claim?.runId === runId);
    const ttl = this.options.claimTtlMs ?? DEFAULT_TTL_MS;
    const handoff = claim?.runId.startsWith(HANDOFF) === true;
    // A state this run found changed by someone else says nothing true of who holds the 👀: a lock taken before the
    // change is nobody's to keep now (the issue waits for a human: reportIncident takes it, then frees it). One taken
    // since belongs to a run beside this one that found the change too: wait for it, as for any other.
    const heldSinceChange =
      this.changedAt !== undefined && Date.parse(reaction.createdAt) >= Date.parse(this.changedAt);
    const mayTakeOver =
      (this.foundIncident && !heldSinceChange) ||
      (handoff && (takeOver || (this.options.dispatched === true && claim!.phase === phase))) ||
      (claim !== undefined && Date.parse(claim.expiresAt) <= now.getTime()) ||
      (claim === undefined && (runAttempt > 1 || now.getTime() - Date.parse(reaction.createdAt) > ttl)) ||
      // the 👀 of a run that published the release of its claim and died before taking it off (schema: `released`)
      (claim === undefined && this.state.released === reaction.id);
    if (!reaction.created && claim?.runId !== runId) {
      if (!mayTakeOver) {
        const holder = claim ? `${claim.phase} (run ${claim.runId.replace(HANDOFF, 'handed off by ')})` : 'another run';
        return { ok: false, reason: `issue #${issue} is being worked on by ${holder}` };
      }
      // Taking a lock over is a compare-and-swap on the reaction's id: of two runs that both read this claim, only the
      // one whose delete finds the reaction gets to react again (and must get a fresh 201).
      let replaced = await this.port.removeIssueReaction(issue, claim?.reaction ?? reaction.id);
      heldThroughout = replaced && handoff && claim?.reaction !== undefined;
      // A re-run finds the 👀 its own crashed attempt took after deleting the claimed one: that one is ours to replace.
      if (!replaced && runAttempt > 1 && claim?.reaction !== undefined && claim.reaction !== reaction.id) {
        replaced = await this.port.removeIssueReaction(issue, reaction.id);
      }
      reaction = replaced ? await this.port.reactToIssue(issue, 'eyes') : reaction;
      if (!replaced || !reaction.created) {
        return { ok: false, reason: `issue #${issue} was taken over by another run at the same moment` };
      }
    }
    this.lockReaction = reaction.id;
    // A lock free when taken, or taken from a run that may have written: the state read before may be stale (found
    // by the property tests: a run that published between another's read and lock had its write undone).
    if (!heldThroughout) await this.readAgainUnderLock();
    const claimed = claimIssue({ ...this.state, claim: undefined }, { runId, phase, now, ttlMs: ttl })!;
    this.state = { ...claimed, claim: { ...claimed.claim!, reaction: reaction.id } };
    return { ok: true };
  }

  /**
   * Reads the state again now that this run holds the lock. Unchanged (the same comment, text and judgement): the run
   * goes on. Changed: the lock is freed and StateChangedError thrown, for the run to start over from the fresh state.
   */
  private async readAgainUnderLock(): Promise<void> {
    const fresh = await IssueSession.open(this.port, this.options);
    const same =
      fresh.comment?.id === this.comment?.id &&
      fresh.comment?.body === this.comment?.body &&
      fresh.foundIncident === this.foundIncident;
    if (same) return;
    await this.port.removeIssueReaction(this.options.issue, this.lockReaction!);
    this.lockReaction = undefined;
    throw new StateChangedError(this.options.issue);
  }

  private async reload(): Promise<void> {
    const fresh = await IssueSession.open(this.port, this.options);
    this.state = fresh.state;
    this.comment = fresh.comment;
    this.foundIncident = fresh.foundIncident;
    this.amended = fresh.amended;
    this.changedAt = fresh.changedAt;
  }

  /**
   * Moves the issue to `target` (null: out of the pipeline), add-first so it is never left without a label. A
   * pipeline label that a human set while this run worked wins over ours: we take ours back and record the override —
   * unless the move records what already happened (`happened`: a merged pull request is fixed whatever a label says;
   * property test tests/property/pull-histories found a merged, closed issue left with the hydraflow-hitl a human set
   * during the merge and no hydraflow-fixed).
   */
  async moveTo(
    target: PipelineStage | null,
    reason: string,
    options: {
      happened?: boolean;
      /**
       * Leave the removal of the other pipeline labels to `finishMove`, after the state is published: a run cut short
       * in between (GitHub's rate limit) leaves the old label beside the new one, which the next run repairs, and
       * never a label with no state behind it (triage: ADR 0014).
       */
      removeLater?: boolean;
    } = {},
  ): Promise<PipelineStage | null> {
    const { issue } = this.options;
    const startPipeline = new Set(pipelineLabelsOf(this.options.labelsAtStart));
    // History records `from` as the state's stage: the labels, not our memory, say where the issue is.
    this.state = { ...this.state, stage: this.stage };
    let after: string[];
    // The new label's colour and description go while the other labels are removed: nothing depends on them.
    let described: Promise<void> = Promise.resolve();
    if (target === null) {
      after = [...this.options.labelsAtStart];
    } else {
      const added = await this.port.addLabels(issue, [labelFor(target)]);
      after = added.map((l) => l.name);
      described = this.describeStageLabel(added, target);
    }
    const others = pipelineLabelsOf(after).filter((l) => l !== (target && labelFor(target)));
    const humanMove = options.happened
      ? undefined
      : await this.steeringLabel(
          others.filter((l) => !startPipeline.has(l)),
          // an escalation is where a human decides anyway (and the one for conflicting labels must not pick one)
          target === 'hitl' ? [] : this.besideSinceStart(others),
        );
    const now = this.options.now();
    if (humanMove) {
      const humanStage = stageOf(humanMove)!;
      const withdrawn = [...(target !== null ? [labelFor(target)] : []), ...labelsToRemoveAfterAdd(after, humanStage)];
      await Promise.all([described, ...withdrawn.map((label) => this.port.removeLabel(issue, label))]);
      this.stage = humanStage;
      this.state = recordTransition(this.state, {
        to: humanStage,
        by: 'human',
        reason: `moved by a human while ${this.options.phase} ran; HydraFlow's move to ${target ?? 'none'} withdrawn`,
        now,
      });
      return humanStage;
    }
    const removals = labelsToRemoveAfterAdd(after, target);
    if (options.removeLater) {
      described.catch(() => undefined); // awaited by finishMove
      this.unfinishedMove = { described, removals };
    } else await Promise.all([described, ...removals.map((label) => this.port.removeLabel(issue, label))]);
    this.stage = target;
    this.state = recordTransition(this.state, { to: target, by: 'hydraflow', reason, now });
    return target;
  }

  /** Removes the labels a `moveTo(…, { removeLater: true })` left beside the new one. */
  async finishMove(): Promise<void> {
    const move = this.unfinishedMove;
    if (!move) return;
    this.unfinishedMove = undefined;
    await Promise.all([
      move.described,
      ...move.removals.map((label) => this.port.removeLabel(this.options.issue, label)),
    ]);
  }

  /** A label GitHub created on the fly has no colour or description yet: give it the stage's (once per repository). */
  private async describeStageLabel(
    labels: readonly { name: string; description: string | null }[],
    target: PipelineStage,
  ): Promise<void> {
    const mine = labels.find((l) => l.name === labelFor(target));
    if (mine && mine.description !== stageInfo(target).description) {
      await this.port.describeLabels([{ name: mine.name, ...pick(stageInfo(target)) }]);
    }
  }

  /**
   * Like moveTo, but the label change rides on one write that replaces the whole label set together with other changes
   * (grooming sets the body and the labels in one PATCH). `fresh` is the issue's labels read just before; `write`
   * performs the write with the labels to set (undefined: leave the labels alone) and returns the labels afterwards.
   * A human who moved the issue since the run started wins: the labels are left as they are and their stage returned.
   * `extra` labels (e.g. `groomed`) are added along with the stage's label.
   */
  async moveWithEdit(
    target: PipelineStage,
    reason: string,
    fresh: readonly string[],
    extra: readonly string[],
    write: (labels: string[] | undefined) => Promise<{ name: string; description: string }[]>,
  ): Promise<PipelineStage | null> {
    const startPipeline = pipelineLabelsOf(this.options.labelsAtStart);
    const freshPipeline = pipelineLabelsOf(fresh);
    this.state = { ...this.state, stage: this.stage };
    const now = this.options.now();
    const removed = startPipeline.some((l) => !freshPipeline.includes(l));
    const human = removed
      ? undefined
      : await this.steeringLabel(
          freshPipeline.filter((l) => !startPipeline.includes(l)),
          this.besideSinceStart(freshPipeline.filter((l) => l !== labelFor(target))),
        );
    if (removed || human !== undefined) {
      // the human's label stands alone (their own event may never come: it gave up on a dead run's lock)
      const alone = human !== undefined && freshPipeline.length > 1;
      await write(alone ? [...new Set([...fresh.filter((l) => !isPipelineLabel(l)), human, ...extra])] : undefined);
      const chosen = human ?? (freshPipeline.length === 1 ? freshPipeline[0]! : undefined);
      const humanStage = chosen === undefined ? null : (stageOf(chosen) ?? null);
      this.stage = humanStage;
      this.state = recordTransition(this.state, {
        to: humanStage,
        by: 'human',
        reason: `moved by a human while ${this.options.phase} ran; HydraFlow's move to ${target} withdrawn`,
        now,
      });
      return humanStage;
    }
    const labels = [...new Set([...fresh.filter((l) => !isPipelineLabel(l)), labelFor(target), ...extra])];
    await this.describeStageLabel(await write(labels), target);
    this.stage = target;
    this.state = recordTransition(this.state, { to: target, by: 'hydraflow', reason, now });
    return target;
  }

  /**
   * The first of `arrived` (pipeline labels set while this run worked) that is a move to honour: labels are steering
   * (handlers/label-steering.ts), so one set by someone who may not steer is not — HydraFlow's own move goes on and
   * takes it off with the other pipeline labels, and that person's label event gets the note (property test
   * tests/property/pipeline-histories, seed -764385732: triage honoured a triage-role user's hydraflow-find, its
   * event's run undid it, and the issue was left with no label). A setter not known (the events unreadable) is
   * honoured, as without the check: that label event's run asks again. `before`: labels beside the stage since before
   * the run, honoured only when a human who may steer is known to have set them.
   */
  private async steeringLabel(arrived: readonly string[], before: readonly string[]): Promise<string | undefined> {
    const maySteer = this.options.maySteer;
    if (!maySteer) return arrived[0];
    if (arrived.length === 0 && before.length === 0) return undefined;
    const events = await this.port.labelEvents(this.options.issue).catch(() => undefined);
    for (const label of arrived) {
      const actor = events && lastLabelEvent(events, label, 'labeled')?.actor;
      if (!actor || (await maySteer(actor).catch(() => true))) return label;
    }
    // A label from before the run counts only when its setter is known to be a human who may steer: it may as well be
    // a dead run's unpublished move (HydraFlow's own), or a stranger's that label steering undoes. Of several, the one
    // set last is the human's latest word.
    let latest: { label: string; index: number } | undefined;
    for (const label of before) {
      const set = events && lastLabelEvent(events, label, 'labeled');
      const actor = set?.actor;
      if (!set || !actor || hasLogin(this.options.botLogins, actor)) continue;
      if ((latest === undefined || set.index > latest.index) && (await maySteer(actor).catch(() => false)))
        latest = { label, index: set.index };
    }
    return latest?.label;
  }

  /**
   * Pipeline labels among `labels` that were beside the stage when this run began: one that a human who may steer set
   * is their move though its own event has not moved the issue (its run waits behind this one in the issue's queue, or
   * gave up on a dead run's lock), so a move of HydraFlow's gives way to it as to one set while the run worked
   * (tests/property/end-state.ts, check 4b). hydraflow-find asks for the triage this run is, when it is one.
   */
  private besideSinceStart(labels: readonly string[]): string[] {
    const start = new Set(pipelineLabelsOf(this.options.labelsAtStart));
    const stageLabel = this.stage === null ? undefined : labelFor(this.stage);
    const find = this.options.phase === 'triage' ? labelFor('find') : undefined;
    return labels.filter((l) => start.has(l) && l !== stageLabel && l !== find);
  }

  /** A human's label choice: keep theirs, remove every other pipeline label, and record who moved the issue. */
  async moveToByHuman(
    target: PipelineStage | null,
    /** Who moved it, when known (a label set while the lock was held was refused, and its author is not known). */
    actor: string | undefined,
    labels: readonly string[] = this.options.labelsAtStart,
  ): Promise<PipelineStage | null> {
    this.state = { ...this.state, stage: this.stage };
    for (const label of labelsToRemoveAfterAdd(labels, target)) {
      await this.port.removeLabel(this.options.issue, label);
    }
    this.stage = target;
    this.state = recordTransition(this.state, {
      to: target,
      by: 'human',
      ...(actor ? { actor } : {}),
      reason: target === null ? 'pipeline label removed' : `label ${labelFor(target)} set`,
      now: this.options.now(),
    });
    return target;
  }

  record(entries: readonly LedgerEntry[]): void {
    for (const entry of entries) {
      this.ledgerEntries.push(entry);
      this.state = appendLedger(this.state, entry);
    }
  }

  /** Ledger entries written by this run. */
  get runLedger(): readonly LedgerEntry[] {
    return this.ledgerEntries;
  }

  update(mutate: (state: IssueState) => IssueState): void {
    this.state = mutate(this.state);
  }

  /**
   * Starts the next phase in a new workflow run and hands it this run's lock — or, with `handOff: false`, leaves the
   * lock for the caller to release (for a phase that is idempotent and checks its stage, so a run slipping in between
   * does no harm: the next run then takes a free lock in one request instead of a compare-and-swap in three). The
   * dispatch is recorded in the state now and sent by `sendDispatches`, the run's last act, once the state that records
   * it is published and the lock handed on or freed: the run it starts finds everything in place, and a re-run of a run
   * that died before sending it knows to send it.
   */
  dispatch(
    workflow: string,
    ref: string,
    phase: string,
    actor: string | undefined,
    options: { handOff?: boolean } = {},
  ) {
    this.state = recordDispatch(this.state, { phase, runId: this.options.runId, now: this.options.now() });
    this.pending.push({ workflow, ref, phase, actor });
    if (options.handOff === false) this.releaseClaim();
    else this.handOff(phase);
  }

  /**
   * Sends the dispatches this run recorded; with `resend`, a re-run's, also those an earlier attempt of it recorded that
   * no run took (GitHub may or may not have performed them: the first run of the phase to start takes the dispatch, any
   * other does nothing — handlers/phase.ts). Call after the final publish and unlock.
   */
  async sendDispatches(
    next: { workflow: string; ref: string },
    options: { resend: boolean; actor: string | undefined },
  ) {
    const sends = [...this.pending];
    this.pending = [];
    if (options.resend) {
      for (const d of untakenDispatches(this.state, this.options.runId)) {
        if (!sends.some((s) => s.phase === d.phase)) sends.push({ ...next, phase: d.phase, actor: options.actor });
      }
    }
    for (const { workflow, ref, phase, actor } of sends) {
      await this.port.dispatchWorkflow(workflow, ref, {
        issue: String(this.options.issue),
        phase,
        ...(actor ? { actor } : {}),
      });
    }
  }

  /**
   * The next phase runs in this run, after this one (no dispatch): the lock stays held and the claim names `phase`, so
   * a re-run of this run after a crash knows where the chain stood. Call before the final publish, then `continueAs`.
   */
  continueWith(phase: string): void {
    const claim = this.state.claim;
    if (this.lockReaction === undefined || claim?.runId !== this.options.runId) {
      throw new Error(`continueWith(${phase}): this run does not hold the lock of issue #${this.options.issue}`);
    }
    this.state = { ...this.state, claim: { ...claim, phase } };
  }

  /**
   * The session of the phase this run continues with: the same state, progress comment, lock and run ledger, with the
   * issue's labels as read just now (`labels`), so a human's move since is seen as one.
   */
  continueAs(phase: string, labels: readonly string[]): IssueSession {
    // A lock taken before the read that no acquire used (a re-run resuming where its dead attempt had gone on to):
    // the next phase holds it; left here, the end of the run would free it under that phase.
    if (this.lockedFirst?.created) this.lockReaction ??= this.lockedFirst.id;
    this.lockedFirst = undefined;
    const next = new IssueSession(
      this.port,
      { ...this.options, phase, labelsAtStart: labels, dispatched: true },
      { state: this.state, comment: this.comment },
      this.known,
    );
    next.lockReaction = this.lockReaction;
    next.ledgerEntries.push(...this.ledgerEntries);
    next.pending = this.pending;
    this.lockReaction = undefined; // moved to the next phase's session
    return next;
  }

  /**
   * Keeps the 👀 lock for `phase`, which a later run takes over (a dispatched run, or an event's: an epic keeps its
   * lock while its phases run, and the run a finished phase starts takes it).
   */
  handOff(phase: string): void {
    const now = this.options.now();
    const { released: _superseded, ...state } = this.state;
    this.state = {
      ...state,
      claim: {
        runId: `${HANDOFF}${this.options.runId}`.slice(0, 64),
        phase,
        at: now.toISOString(),
        expiresAt: new Date(now.getTime() + (this.options.claimTtlMs ?? DEFAULT_TTL_MS)).toISOString(),
        ...(this.lockReaction !== undefined ? { reaction: this.lockReaction } : {}),
      },
    };
    this.lockReaction = undefined; // handed over, not released
  }

  /** Writes the progress comment (creating it once) with the state block inside. */
  async publish(progress: Progress): Promise<IssueComment> {
    // every write gets the next sequence number: an older block put back is then one a later read can tell (trust.ts)
    this.state = { ...this.state, stage: this.stage, seq: this.state.seq + 1 };
    // Forged or damaged state is never obeyed, and never silently: say what was ignored and why.
    const ignored = this.ignored.map(
      (i) => `- Ignored a state block in comment ${i.commentId} by \`${i.author}\`: ${i.reason}`,
    );
    // Keep what an earlier phase said (e.g. the triage verdict) unless this one has its own details.
    const carried = previousDetails(this.comment?.body)?.replace(/(^|\n\n)\*\*Untrusted state ignored\*\*[\s\S]*$/, '');
    const details = [
      progress.details ?? carried,
      ignored.length ? `**Untrusted state ignored**\n\n${ignored.join('\n')}` : undefined,
    ]
      .filter((d): d is string => d !== undefined && d !== '')
      .join('\n\n');
    const body = renderProgressComment(
      {
        state: this.state,
        stage: this.stage,
        headline: progress.headline,
        next: progress.next,
        ...(progress.error !== undefined ? { error: { phase: this.options.phase, message: progress.error } } : {}),
        ...(details ? { details } : {}),
        ...(progress.dataBlock ? { dataBlock: progress.dataBlock } : {}),
        ...(this.options.repositoryUrl ? { trustedLinkPrefixes: [`${this.options.repositoryUrl}/`] } : {}),
        ...(this.options.stateKey ? {} : { unsigned: true }),
      },
      { key: this.options.stateKey },
    );
    this.comment =
      (this.comment && (await this.updateUnlessDeleted(this.comment.id, body))) ??
      (await this.port.createComment(this.options.issue, body, PROGRESS_MARKER));
    this.foundIncident = false; // said on the issue now
    this.amended = false;
    for (const id of this.duplicates) await this.port.deleteComment(id);
    this.duplicates = [];
    return this.comment;
  }

  /**
   * Someone may delete HydraFlow's comment while a run works (its deletion's own event then runs: state/trust.ts): the
   * state this run holds is HydraFlow's own, so it is written in a new comment. GitHub answers 404 for a deleted one.
   */
  private async updateUnlessDeleted(id: number, body: string): Promise<IssueComment | undefined> {
    try {
      return await this.port.updateComment(id, body);
    } catch (error) {
      if ((error as { status?: unknown } | null)?.status === 404) return undefined;
      throw error;
    }
  }

  /** Drops this run's claim from the state to be published next. */
  releaseClaim(): void {
    this.state = releaseClaim(this.state, this.options.runId, this.options.now(), this.lockReaction);
  }

  /**
   * Removes the 👀 lock unless it was handed to the next phase. A dispatched run that found nothing to do and never took
   * the lock handed to it frees that one: else it would block the issue until the claim expires. Call after the final
   * publish.
   */
  async unlock(): Promise<void> {
    const claim = this.state.claim;
    const handedHere =
      this.options.dispatched === true &&
      claim?.runId.startsWith(HANDOFF) === true &&
      claim.phase === this.options.phase;
    const reaction = this.lockReaction ?? (handedHere ? claim!.reaction : undefined);
    if (reaction === undefined) return;
    await this.port.removeIssueReaction(this.options.issue, reaction);
    this.lockReaction = undefined;
  }

  /**
   * A re-run (attempt > 1) that finds nothing to do frees the 👀 its dead attempt may have left (no claim is published
   * before a run's end), unless that attempt handed the lock to the next phase.
   */
  async freeDeadAttemptsLock(): Promise<void> {
    if (this.options.runAttempt > 1 && !this.state.claim?.runId.startsWith('handoff:')) await this.dropLock();
  }

  /**
   * Removes the bot's 👀 lock whoever holds it, including a lock handed to a phase not started yet: for an issue that
   * left the pipeline (closed), where nothing may wait on it any more.
   */
  async dropLock(): Promise<void> {
    this.lockedFirst = undefined; // the same 👀, if this run put it on: freed here, not again at the run's end
    const reaction = await this.port.reactToIssue(this.options.issue, 'eyes');
    await this.port.removeIssueReaction(this.options.issue, reaction.id);
    this.lockReaction = undefined;
  }

  /** The progress comment's body as read or last written (grooming reads its data block back). */
  get progressBody(): string | undefined {
    return this.comment?.body;
  }

  get progressUrl(): string | undefined {
    return this.comment?.htmlUrl;
  }
}

function pick(info: { color: string; description: string }): { color: string; description: string } {
  return { color: info.color, description: info.description };
}

/**
 * The login of whoever edited HydraFlow's comment last, when GitHub says it is not one of HydraFlow's identities. Read
 * with the comment's text (IssuesPort.readComments) every time: REST's timestamps have whole seconds, so an edit in the
 * second the comment was written leaves `updated_at` equal to `created_at`.
 */
function foreignEditor(comment: IssueComment, botLogins: readonly string[]): string | undefined {
  if (comment.editor === undefined) throw new Error(`comment ${comment.id} was read without its last editor`);
  const editor = comment.editor;
  if (!editor || isTrustedAuthor({ id: comment.id, user: editor }, botLogins)) return undefined;
  return editor.login;
}

/**
 * When someone else changed HydraFlow's comment, on GitHub's clock (whole seconds): an edit's time is the comment's
 * `updated_at`; a deletion came after the comment's last write (the deleted comment's `updated_at`), and, as nothing
 * reacts within the second it sees a write in, no sooner than the next second. Undefined when not known.
 */
function changedAt(
  editor: string | undefined,
  comment: IssueComment | undefined,
  witnesses: readonly Witness[] | undefined,
): string | undefined {
  if (editor !== undefined) return comment?.updatedAt;
  const deletion = witnesses?.find((w) => w.deleted)?.at;
  return deletion === undefined ? undefined : new Date(Date.parse(deletion) + 1_000).toISOString();
}
