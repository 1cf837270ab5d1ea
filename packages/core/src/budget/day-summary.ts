/**
 * The day's spend as the pause note shows it: the total against the limit, then per issue and per phase (the ledger
 * keeps one entry per issue and phase, so both are sums of the same entries).
 */
import { dayTotals, type DayLedger } from './day-ledger';

/** Issues listed by name before the rest are counted together. */
const LISTED_ISSUES = 15;

const dollars = (n: number) => `$${n.toFixed(4)}`;

type Spent = DayLedger['spent'][number];

function sumBy<K>(entries: readonly Spent[], keyOf: (entry: Spent) => K): [K, number][] {
  const out = new Map<K, number>();
  for (const e of entries) out.set(keyOf(e), (out.get(keyOf(e)) ?? 0) + e.usd);
  return [...out];
}

export function renderDaySummary(ledger: DayLedger, limits: { usd?: number | undefined }): string {
  const totals = dayTotals(ledger);
  const calls = ledger.spent.reduce((n, e) => n + e.calls, 0);
  const of = limits.usd !== undefined ? ` of $${limits.usd.toFixed(2)}` : '';
  const lines = [
    `**The repository's spend on ${ledger.day} (UTC)**: ${dollars(totals.spent)}${of} in ${calls} model call${calls === 1 ? '' : 's'} on ${new Set(ledger.spent.map((e) => e.issue)).size} issue(s)` +
      (totals.reserved > 0
        ? `, and ${dollars(totals.reserved)} reserved for coding agents still running (${ledger.reserved.map((r) => `#${r.issue}`).join(', ')})`
        : ''),
  ];
  const byIssue = sumBy(ledger.spent, (e) => e.issue).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  if (byIssue.length > 0) {
    lines.push('', '| Issue | Spent today |', '| --- | ---: |');
    for (const [issue, usd] of byIssue.slice(0, LISTED_ISSUES)) lines.push(`| #${issue} | ${dollars(usd)} |`);
    const rest = byIssue.slice(LISTED_ISSUES);
    if (rest.length > 0) lines.push(`| ${rest.length} more | ${dollars(rest.reduce((n, [, usd]) => n + usd, 0))} |`);
  }
  const byPhase = sumBy(ledger.spent, (e) => e.phase).sort((a, b) => b[1] - a[1]);
  if (byPhase.length > 0) {
    lines.push('', '| Phase | Spent today |', '| --- | ---: |');
    for (const [phase, usd] of byPhase) lines.push(`| ${phase} | ${dollars(usd)} |`);
  }
  return lines.join('\n');
}
