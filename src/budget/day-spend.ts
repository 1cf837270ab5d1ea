import {
  applyDelta,
  checkAuthorStarts,
  checkDaySpend,
  dayTotals,
  DailyLimitError,
  decodeDayLedger,
  emptyDayLedger,
  emptyDelta,
  encodeDayLedger,
  isEmptyDelta,
  ledgerAt,
  pausesToResume,
  renderDaySummary,
  utcDay,
  type DayLedger,
  type HydraflowConfig,
  type LedgerEntry,
  type PausedIssue,
  type PauseReason,
  UserError,
} from '@hydraflow/core';
import type { DayGuard } from '../agents/model-gateway';
import { SPEND_BRANCH, SPEND_FILE, type SpendSnapshot, type SpendWrite } from '@hydraflow/github';

/** Where the ledger lives (SpendLedgerBranch on GitHub). */
export interface SpendStore {
  read(): Promise<SpendSnapshot>;
  write(expectedHead: string | null, text: string, headline: string): Promise<SpendWrite>;
}

/** The ledger as read, for the day GitHub's clock says it is. */
interface Read {
  head: string | null;
  today: string;
  /** GitHub's time when the ledger was read (its Date header). */
  now: Date;
  ledger: DayLedger;
}

/** Less than this left for the day, and a coding agent is not started (it could not finish a turn). */
const MIN_AGENT_ALLOWANCE = 0.01;

/**
 * How long a coding agent's reservation outlives the agent's own time (implement.max_minutes): the agent job may wait
 * for a runner, and the publish job that settles it follows. Past that its run is taken for dead (cancelled, its runner
 * lost) and the reservation stops counting, rather than holding the day's budget until midnight.
 */
const RESERVATION_MARGIN_MINUTES = 60;

/** Writers that kept moving the branch between our read and our write: give up after this many tries. */
const WRITE_ATTEMPTS = 6;

/**
 * One step's view of the repository's day (budgets.per_day; ADR 0005). The ledger is read once, when first needed;
 * everything this step adds (spend, reservations, issues started, pauses) collects in a delta that `flush` applies to
 * the ledger current at the end of the step, with a compare-and-swap on the branch, re-reading when another run wrote
 * first. The race it accepts: runs at the same moment see each other's spend only once the other has flushed, so the
 * day can pass its limit by what concurrent steps spend (a coding agent's session never: it is reserved first).
 */
export class DaySpend {
  private reading: Promise<Read> | undefined;
  private readonly delta = emptyDelta();

  constructor(
    private readonly store: SpendStore,
    private readonly options: {
      repository: string;
      key: string | undefined;
      /** HYDRAFLOW_STATE_KEY_PREVIOUS during a key rotation: verifies the ledger, never signs. */
      previousKey: string | undefined;
      limits: HydraflowConfig['budgets']['per_day'];
      runId: string;
    },
  ) {}

  /** Starts reading the ledger (once per step); every check awaits the same read. */
  load(): Promise<Read> {
    this.reading ??= this.store.read().then((snapshot) => this.decode(snapshot));
    return this.reading;
  }

  private decode(snapshot: SpendSnapshot): Read {
    const now = snapshot.serverTime;
    const today = utcDay(now);
    const fresh = emptyDayLedger(this.options.repository, today);
    if (snapshot.head === null) return { head: null, today, now, ledger: fresh };
    const decoded =
      snapshot.text === null
        ? { status: 'rejected' as const, detail: `${SPEND_FILE} is missing or unreadable` }
        : decodeDayLedger(snapshot.text, {
            key: this.options.key,
            previousKey: this.options.previousKey,
            repository: this.options.repository,
            parent: snapshot.parent,
          });
    if (decoded.status === 'valid') return { head: snapshot.head, today, now, ledger: ledgerAt(decoded.ledger, now) };
    // Nothing in it can be trusted, today's spend least of all: the day is closed, and says why.
    const closed = `its spend ledger (branch ${SPEND_BRANCH} at ${snapshot.head.slice(0, 12)}) holds a commit HydraFlow did not make: ${decoded.detail}`;
    return { head: snapshot.head, today, now, ledger: { ...fresh, closed } };
  }

  /** The day as this step sees it: the ledger read, with what this step added since. */
  async view(): Promise<DayLedger> {
    return applyDelta((await this.load()).ledger, this.delta);
  }

  /**
   * Before a model call for `issue`: throws DailyLimitError when the call (estimated at `estimate` USD) would take the
   * day past budgets.per_day.usd, or the day is closed. A paused issue that gets this far has resumed.
   */
  async assertRoom(issue: number, estimate: number): Promise<void> {
    const ledger = await this.view();
    const check = checkDaySpend({ ledger, usd: this.options.limits.usd, estimate });
    if (!check.ok) throw new DailyLimitError(check.message, check.reason, { usd: this.options.limits.usd });
    if (ledger.paused.some((p) => p.issue === issue)) this.delta.resume.push(issue);
  }

  /** The day as the model calls for `issue` see it (ModelGateway). */
  guard(issue: number): DayGuard {
    return {
      assertRoom: (usd) => this.assertRoom(issue, usd),
      spent: (entries) => this.spent(issue, entries),
    };
  }

  /** Before `issue` is started (triaged): throws DailyLimitError when its author has had their issues for today. */
  async assertAuthorMayStart(issue: number, author: string | undefined): Promise<void> {
    if (author === undefined) return;
    const check = checkAuthorStarts({
      ledger: await this.view(),
      cap: this.options.limits.issues_per_author,
      author,
      issue,
    });
    if (!check.ok) throw new DailyLimitError(check.message, check.reason);
  }

  started(issue: number, author: string | undefined): void {
    if (author !== undefined) this.delta.started.push({ issue, author });
  }

  /** Calls made for `issue` (ledger entries: their phase and cost). */
  spent(issue: number, entries: readonly LedgerEntry[]): void {
    for (const e of entries) this.delta.spent.push({ issue, phase: e.phase, usd: e.costUsd, calls: e.calls ?? 1 });
  }

  /**
   * What the day has left for `issue`'s coding agent, reserved for it until its run settles (`settle`); throws
   * DailyLimitError when nothing is left. `upTo`: the most the agent may spend anyway (what the run budget leaves);
   * `minutes`: the agent's time (implement.max_minutes). Undefined without a daily USD limit.
   */
  async reserveForAgent(issue: number, upTo: number, minutes: number): Promise<number | undefined> {
    const { now } = await this.load();
    const ledger = await this.view();
    const check = checkDaySpend({ ledger, usd: this.options.limits.usd, estimate: MIN_AGENT_ALLOWANCE });
    if (!check.ok) throw new DailyLimitError(check.message, check.reason, { usd: this.options.limits.usd });
    if (this.options.limits.usd === undefined) return undefined;
    const usd = Math.max(0, Math.min(upTo, this.options.limits.usd - dayTotals(ledger).committed));
    const until = new Date(now.getTime() + (minutes + RESERVATION_MARGIN_MINUTES) * 60_000).toISOString();
    this.delta.reserve.push({ issue, run: this.options.runId, usd: Math.round(usd * 1e6) / 1e6, until });
    if (ledger.paused.some((p) => p.issue === issue)) this.delta.resume.push(issue);
    return usd;
  }

  /** The coding agent of `issue` in this run finished: its reservation gives way to what it spent. */
  settle(issue: number, entries: readonly LedgerEntry[]): void {
    this.spent(issue, entries);
    this.delta.release.push({ issue, run: this.options.runId });
  }

  /** `issue` waits for the next UTC day, to resume at `phase`. Returns the day's summary for its note. */
  async pause(issue: number, phase: string, reason: PauseReason): Promise<string> {
    const { today, ledger } = await this.load();
    this.delta.pause.push({ issue, phase, day: today, reason });
    // the day stays closed even if the write lands on a ledger that does not say so
    if (reason === 'ledger') this.delta.close ??= ledger.closed;
    return renderDaySummary(await this.view(), { usd: this.options.limits.usd });
  }

  /** Paused issues whose day is over, oldest first, at most `max`; marked resumed here (the caller starts them). */
  async dueToResume(max: number): Promise<{ due: PausedIssue[]; more: boolean }> {
    const { today } = await this.load();
    const all = pausesToResume(await this.view(), today);
    const due = all.slice(0, max);
    this.delta.resume.push(...due.map((p) => p.issue));
    return { due, more: all.length > due.length };
  }

  /** Writes what this step added to the ledger (nothing to write: no request). */
  async flush(): Promise<void> {
    if (isEmptyDelta(this.delta) || !this.reading) return;
    let read = await this.reading;
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const next = { ...applyDelta(read.ledger, this.delta), parent: read.head };
      const text = encodeDayLedger(next, { key: this.options.key });
      const written = await this.store
        .write(read.head, text, `spend ${read.today}: run ${this.options.runId}`)
        .catch((error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          throw new UserError(
            `HydraFlow could not write its spend ledger (branch ${SPEND_BRANCH}): ${why}. budgets.per_day needs \`contents: write\` for the workflow's token; this run's spend is missing from the day's ledger`,
          );
        });
      if (written.ok) return;
      const fresh = await this.store.read();
      // an answer lost on the way: the branch already holds what this step wrote
      if (fresh.text === text) return;
      read = this.decode(fresh);
      this.reading = Promise.resolve(read);
    }
    throw new Error(
      `HydraFlow could not write its spend ledger (branch ${SPEND_BRANCH}): other runs moved it ${WRITE_ATTEMPTS} times in a row; this run's spend is not counted in the day`,
    );
  }
}
