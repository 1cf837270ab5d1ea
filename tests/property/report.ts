/** What a property run prints: the runs of a failing history (and its requests, on demand), and how long it took. */
import type { Ctx } from './world';

/** The runs of a history, and with HYDRAFLOW_PROPERTY_TRACE=1 every request, for a failure's message. */
export function explain(ctx: Ctx): string {
  const runs = ctx.log.map(
    (r) =>
      `  ${r.label}: ${r.crashed ? `CRASHED after ${r.results.map((j) => j.job).join(', ') || 'nothing'}` : r.results.map((j) => `${j.job} ${j.decision} → ${j.message}`).join(' | ')}`,
  );
  let text = `\nruns:\n${runs.join('\n')}`;
  if (process.env.HYDRAFLOW_PROPERTY_TRACE === '1') {
    const trace = ctx.gh.requests.map(
      (r) =>
        `  ${r.actor} ${r.method} ${r.path} → ${r.status}${r.body ? ` ${JSON.stringify(r.body).slice(0, 80)}` : ''}`,
    );
    text += `\nrequests:\n${trace.join('\n')}`;
  }
  return text;
}

export function report(what: string, runs: number, totalMs: number, timings: number[], validate: boolean): void {
  const sorted = [...timings].sort((a, b) => a - b);
  console.log(
    `${what}: ${runs} histories in ${(totalMs / 1000).toFixed(1)} s (validate=${validate}); ` +
      `per history median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms`,
  );
}
