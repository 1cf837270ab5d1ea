/**
 * The checks of budgets.per_day against a day's ledger (day-ledger.ts), as HydraFlow sees it: the ledger it read,
 * with what its own run added since. Not ok names the reason an issue pauses and says so in one sentence.
 */
import type { HydraflowConfig } from '../config/schema';
import { dayTotals, startedBy, type DayLedger, type PauseReason } from './day-ledger';

export type DayCheck = { ok: true } | { ok: false; reason: PauseReason; message: string };

const dollars = (n: number) => `$${n.toFixed(4)}`;

/** Before a model call: would `estimate` (USD) take the day past `usd`? A closed day admits nothing. */
export function checkDaySpend(args: { ledger: DayLedger; usd: number | undefined; estimate: number }): DayCheck {
  const { ledger, usd, estimate } = args;
  if (ledger.closed !== undefined) {
    return {
      ok: false,
      reason: 'ledger',
      message: `HydraFlow stopped spending for ${ledger.day} (UTC): ${ledger.closed}`,
    };
  }
  if (usd === undefined) return { ok: true };
  const totals = dayTotals(ledger);
  if (totals.committed + estimate <= usd) return { ok: true };
  const reserved =
    totals.reserved > 0 ? ` and ${dollars(totals.reserved)} reserved for coding agents still running` : '';
  return {
    ok: false,
    reason: 'day',
    message: `the daily budget of $${usd.toFixed(2)} for ${ledger.day} (UTC) would be exceeded: ${dollars(totals.spent)} spent${reserved}, next call estimated at ${dollars(estimate)} (raise budgets.per_day.usd in .github/hydraflow.yml)`,
  };
}

/** Before an issue is started (triaged): has its author had `cap` other issues started today? */
export function checkAuthorStarts(args: {
  ledger: DayLedger;
  cap: number | undefined;
  author: string;
  issue: number;
}): DayCheck {
  const { ledger, cap, author, issue } = args;
  if (cap === undefined) return { ok: true };
  const others = startedBy(ledger, author, issue);
  if (others.length < cap) return { ok: true };
  return {
    ok: false,
    reason: 'author',
    message: `${author} has had ${others.length} issue${others.length === 1 ? '' : 's'} started on ${ledger.day} (UTC) already (${others.map((n) => `#${n}`).join(', ')}), the most budgets.per_day.issues_per_author allows (${cap})`,
  };
}

/** Whether budgets.per_day sets a limit: only then is the spend ledger read and written. */
export function hasDayLimits(config: Pick<HydraflowConfig, 'budgets'>): boolean {
  const day = config.budgets.per_day;
  return day.usd !== undefined || day.issues_per_author !== undefined;
}
