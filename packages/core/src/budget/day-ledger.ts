/**
 * The repository's spend ledger for one UTC day (budgets.per_day): what every issue and phase spent today, what is
 * reserved for coding agents still running, whose issues were started today, and which issues wait for a later day.
 * It lives outside every issue's state (day-ledger-codec.ts: a signed file on HydraFlow's branch hydraflow/spend), so
 * a rejected, reset or rolled-back issue state cannot reset it. Pure: a run collects what it adds in a `DayDelta` and
 * applies it to whatever ledger is current when it writes (`applyDelta`), so concurrent writers never lose each
 * other's entries.
 *
 * Every string here is HydraFlow's own (phase names, run ids, logins, a reason it wrote itself): no issue or model
 * text.
 */
import { z } from 'zod';
import { isoTime, loginSchema, phaseSchema, runIdSchema } from '../state/schema';

export const DAY_LEDGER_VERSION = 1 as const;

/** A UTC day, `YYYY-MM-DD`. */
export const daySchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day YYYY-MM-DD');
const issueNumber = z.number().int().positive();
const usd = z.number().nonnegative();

/** Why an issue waits for another day: the day's spend, its author's issues today, or a ledger HydraFlow cannot trust. */
export const PAUSE_REASONS = ['day', 'author', 'ledger'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const pausedIssueSchema = z.object({
  issue: issueNumber,
  /** The phase that resumes (its issue keeps its stage label meanwhile). */
  phase: phaseSchema,
  /** The day it was paused: it resumes on a later one. */
  day: daySchema,
  reason: z.enum(PAUSE_REASONS),
});
export type PausedIssue = z.infer<typeof pausedIssueSchema>;

export const dayLedgerSchema = z.object({
  v: z.literal(DAY_LEDGER_VERSION),
  /** `owner/name`: a ledger copied from another repository does not verify. */
  repository: z.string().min(3).max(200),
  day: daySchema,
  /** The commit of the ledger branch this ledger was written on (null: the branch's first commit); see the codec. */
  parent: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable(),
  /** Today's spend, one entry per issue and phase. */
  spent: z.array(z.object({ issue: issueNumber, phase: phaseSchema, usd, calls: z.number().int().nonnegative() })),
  /**
   * What a coding agent that is running may still spend (its run settles it with what it spent), until `until`: a
   * reservation whose publish job never ran (the run was cancelled, its runner lost) stops counting then. Older
   * ledgers' reservations have no `until` and count for the rest of their day.
   */
  reserved: z.array(z.object({ issue: issueNumber, run: runIdSchema, usd, until: isoTime.optional() })),
  /** Issues started (triaged) today, by their author. */
  started: z.array(z.object({ issue: issueNumber, author: loginSchema })),
  /** Issues waiting for a later day; carried from day to day until they resume. */
  paused: z.array(pausedIssueSchema),
  /** Set when the day was closed early: HydraFlow found a ledger it did not write (what it found). */
  closed: z.string().max(300).optional(),
});
export type DayLedger = z.infer<typeof dayLedgerSchema>;

/** The UTC day of a moment. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export function emptyDayLedger(repository: string, day: string): DayLedger {
  return { v: DAY_LEDGER_VERSION, repository, day, parent: null, spent: [], reserved: [], started: [], paused: [] };
}

/**
 * The ledger as of `now`: a ledger of an earlier day starts afresh, keeping only the issues still paused; a reservation
 * past its `until` is dropped (its agent's run ended without settling it).
 */
export function ledgerAt(ledger: DayLedger, now: Date): DayLedger {
  const day = utcDay(now);
  if (ledger.day !== day)
    return { ...emptyDayLedger(ledger.repository, day), parent: ledger.parent, paused: ledger.paused };
  const live = ledger.reserved.filter((r) => r.until === undefined || Date.parse(r.until) > now.getTime());
  return live.length === ledger.reserved.length ? ledger : { ...ledger, reserved: live };
}

/** What one run adds to the day: applied to the current ledger whenever it writes, however often it must retry. */
export interface DayDelta {
  spent: { issue: number; phase: string; usd: number; calls: number }[];
  reserve: { issue: number; run: string; usd: number; until?: string }[];
  /** Reservations this run settles (its spend is in `spent`). */
  release: { issue: number; run: string }[];
  started: { issue: number; author: string }[];
  pause: PausedIssue[];
  /** Issues that resumed: no longer paused. */
  resume: number[];
  /** Close the day (a ledger HydraFlow did not write was found): why. */
  close?: string;
}

export function emptyDelta(): DayDelta {
  return { spent: [], reserve: [], release: [], started: [], pause: [], resume: [] };
}

export function isEmptyDelta(delta: DayDelta): boolean {
  return (
    delta.spent.length + delta.reserve.length + delta.release.length + delta.started.length === 0 &&
    delta.pause.length + delta.resume.length === 0 &&
    delta.close === undefined
  );
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** `ledger` (already for the right day) with `delta` added. */
export function applyDelta(ledger: DayLedger, delta: DayDelta): DayLedger {
  const spent = ledger.spent.map((e) => ({ ...e }));
  for (const s of delta.spent) {
    const at = spent.find((e) => e.issue === s.issue && e.phase === s.phase);
    if (at) {
      at.usd = round6(at.usd + s.usd);
      at.calls += s.calls;
    } else spent.push({ ...s, usd: round6(s.usd) });
  }
  const same = (a: { issue: number; run: string }) => (b: { issue: number; run: string }) =>
    a.issue === b.issue && a.run === b.run;
  const reserved = [...ledger.reserved.filter((r) => !delta.reserve.some(same(r))), ...delta.reserve].filter(
    (r) => !delta.release.some(same(r)),
  );
  const started = [...ledger.started];
  for (const s of delta.started) if (!started.some((e) => e.issue === s.issue)) started.push(s);
  const pausedIssues = new Set([...delta.resume, ...delta.pause.map((p) => p.issue)]);
  const paused = [...ledger.paused.filter((p) => !pausedIssues.has(p.issue)), ...delta.pause];
  const closed = ledger.closed ?? delta.close;
  return { ...ledger, spent, reserved, started, paused, ...(closed !== undefined ? { closed } : {}) };
}

/** The day's spend and what is reserved for running agents, in USD. */
export function dayTotals(ledger: DayLedger): { spent: number; reserved: number; committed: number } {
  const spent = round6(ledger.spent.reduce((n, e) => n + e.usd, 0));
  const reserved = round6(ledger.reserved.reduce((n, e) => n + e.usd, 0));
  return { spent, reserved, committed: round6(spent + reserved) };
}

/** Issues of `author` started today, other than `issue`. */
export function startedBy(ledger: DayLedger, author: string, issue: number): number[] {
  const lower = author.toLowerCase();
  return ledger.started.filter((s) => s.author.toLowerCase() === lower && s.issue !== issue).map((s) => s.issue);
}

/** Issues paused on a day before `day`: the ones to resume now, oldest pause first. */
export function pausesToResume(ledger: DayLedger, day: string): PausedIssue[] {
  return ledger.paused.filter((p) => p.day < day).sort((a, b) => a.day.localeCompare(b.day) || a.issue - b.issue);
}
