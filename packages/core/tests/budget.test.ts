import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  checkAuthorStarts,
  checkDaySpend,
  dayLedgerSchema,
  dayTotals,
  decodeDayLedger,
  emptyDayLedger,
  emptyDelta,
  encodeDayLedger,
  ledgerAt,
  pausesToResume,
  renderDaySummary,
  type DayLedger,
} from '../src/index';

const KEY = 'k'.repeat(32);
const PARENT = 'a'.repeat(40);

function day(): DayLedger {
  return applyDelta(emptyDayLedger('acme/widgets', '2026-11-20'), {
    ...emptyDelta(),
    spent: [
      { issue: 1, phase: 'triage', usd: 0.002, calls: 1 },
      { issue: 2, phase: 'triage', usd: 0.003, calls: 1 },
      { issue: 1, phase: 'plan', usd: 0.05, calls: 3 },
    ],
    reserve: [{ issue: 1, run: '77', usd: 1.5 }],
    started: [
      { issue: 1, author: 'alice' },
      { issue: 2, author: 'Alice' },
    ],
    pause: [{ issue: 3, phase: 'triage', day: '2026-11-20', reason: 'day' }],
  });
}

describe('the day ledger', () => {
  it('adds a run’s delta to whatever ledger is current: spend per issue and phase, reservations settled, pauses', () => {
    const merged = applyDelta(day(), {
      ...emptyDelta(),
      spent: [
        { issue: 1, phase: 'implement', usd: 0.4, calls: 12 },
        { issue: 2, phase: 'triage', usd: 0.001, calls: 1 },
      ],
      release: [{ issue: 1, run: '77' }],
      started: [{ issue: 2, author: 'alice' }],
      resume: [3],
    });
    expect(merged.spent).toContainEqual({ issue: 2, phase: 'triage', usd: 0.004, calls: 2 });
    expect(merged.reserved).toEqual([]);
    expect(merged.started).toHaveLength(2);
    expect(merged.paused).toEqual([]);
    expect(dayTotals(merged)).toEqual({ spent: 0.456, reserved: 0, committed: 0.456 });
  });

  it('a new day starts afresh, keeping the issues still paused; those of earlier days are due', () => {
    const next = ledgerAt({ ...day(), closed: 'x' }, new Date('2026-11-21T00:07:00Z'));
    expect(next).toMatchObject({ day: '2026-11-21', spent: [], reserved: [], started: [] });
    expect(next.closed).toBeUndefined();
    expect(next.paused).toHaveLength(1);
    expect(pausesToResume(next, '2026-11-21').map((p) => p.issue)).toEqual([3]);
    expect(pausesToResume(next, '2026-11-20')).toEqual([]);
  });

  it('a reservation stops counting at its until (its agent’s run ended without settling it); one without until counts all day', () => {
    const ledger = {
      ...day(),
      reserved: [
        { issue: 4, run: '81', usd: 0.5, until: '2026-11-20T11:00:00.000Z' },
        { issue: 5, run: '82', usd: 0.25, until: '2026-11-20T13:00:00.000Z' },
        { issue: 6, run: '83', usd: 0.125 },
      ],
    };
    expect(dayLedgerSchema.parse(ledger)).toEqual(ledger);
    const at = (iso: string) => ledgerAt(ledger, new Date(iso)).reserved.map((r) => r.issue);
    expect(at('2026-11-20T10:59:59Z')).toEqual([4, 5, 6]);
    expect(at('2026-11-20T11:00:00Z')).toEqual([5, 6]);
    expect(at('2026-11-20T23:59:59Z')).toEqual([6]);
    expect(ledgerAt(ledger, new Date('2026-11-20T12:00:00Z'))).toMatchObject({ spent: ledger.spent, day: ledger.day });
  });

  it('checks a call against the day, reservations included, and an author against the cap (case-insensitive)', () => {
    expect(checkDaySpend({ ledger: day(), usd: 2, estimate: 0.4 })).toEqual({ ok: true });
    const over = checkDaySpend({ ledger: day(), usd: 1.6, estimate: 0.1 });
    expect(over.ok === false && over.reason).toBe('day');
    expect(over.ok === false && over.message).toContain('$1.5000 reserved for coding agents still running');
    expect(checkDaySpend({ ledger: day(), usd: undefined, estimate: 9 })).toEqual({ ok: true });
    const closed = checkDaySpend({ ledger: { ...day(), closed: 'edited' }, usd: undefined, estimate: 0 });
    expect(closed.ok === false && closed.reason).toBe('ledger');
    expect(checkAuthorStarts({ ledger: day(), cap: 2, author: 'ALICE', issue: 1 })).toEqual({ ok: true });
    const capped = checkAuthorStarts({ ledger: day(), cap: 2, author: 'alice', issue: 9 });
    expect(capped.ok === false && capped.message).toContain('alice has had 2 issues started on 2026-11-20 (UTC)');
  });

  it('renders the day: total against the limit, per issue, per phase', () => {
    const text = renderDaySummary(day(), { usd: 2 });
    expect(text).toContain('$0.0550 of $2.00 in 5 model calls on 2 issue(s)');
    expect(text).toContain('$1.5000 reserved for coding agents still running (#1)');
    expect(text).toContain('| #1 | $0.0520 |');
    expect(text).toContain('| plan | $0.0500 |');
  });
});

describe('the day ledger file', () => {
  const written = { ...day(), parent: PARENT };

  it('verifies what HydraFlow wrote on the commit it names', () => {
    const text = encodeDayLedger(written, { key: KEY });
    expect(decodeDayLedger(text, { key: KEY, repository: 'acme/widgets', parent: PARENT })).toEqual({
      status: 'valid',
      ledger: written,
    });
  });

  it('during a key rotation (HYDRAFLOW_STATE_KEY_PREVIOUS) verifies a ledger the old key signed: the day stays open', () => {
    const old = encodeDayLedger(written, { key: 'old-key-'.repeat(4) });
    const rotated = { key: KEY, previousKey: 'old-key-'.repeat(4), repository: 'acme/widgets', parent: PARENT };
    expect(decodeDayLedger(old, rotated)).toEqual({ status: 'valid', ledger: written });
    expect(decodeDayLedger(old, { ...rotated, previousKey: 'another-key-0123456789' })).toMatchObject({
      status: 'rejected',
    });
  });

  it('refuses an edit, another key, another repository, and a genuine ledger on another commit (pasted back)', () => {
    const text = encodeDayLedger(written, { key: KEY });
    const read = (t: string, o: Partial<{ key: string; repository: string; parent: string | null }> = {}) =>
      decodeDayLedger(t, { key: KEY, repository: 'acme/widgets', parent: PARENT, ...o });
    expect(read(text.replace('"usd": 0.05', '"usd": 0.01'))).toMatchObject({ status: 'rejected' });
    expect(read(text, { key: 'another-key-0123456789' })).toMatchObject({ status: 'rejected' });
    expect(read(text, { repository: 'acme/other' })).toMatchObject({ status: 'rejected' });
    expect(read(text, { parent: 'b'.repeat(40) })).toMatchObject({
      status: 'rejected',
      detail: expect.stringContaining('a commit HydraFlow did not make'),
    });
    expect(read(encodeDayLedger(written, { key: undefined }))).toMatchObject({ status: 'rejected' });
    expect(read('not json')).toMatchObject({ status: 'rejected' });
  });
});
