/**
 * `tsx bench/lib/lifecycle-timeline.ts`: runs the clear-issue lifecycle twice (the first warms the emulator's OpenAPI
 * validators) and prints the second one step by step: each GitHub request and model call at its offset in the step,
 * with the emulator's serving time. For investigating where lifecycle_overhead_ratio's time goes.
 */
import { BOT_LOGIN } from '@hydraflow/testkit';
import { runClearLifecycle } from './lifecycle';

const LATENCY_MS = 1500;
await (await runClearLifecycle({ latencyMs: LATENCY_MS })).world.close();
const run = await runClearLifecycle({ latencyMs: LATENCY_MS });
const t0 = run.startedAt;
let served = 0;
for (const job of [...run.before, ...run.after]) {
  for (const step of job.steps) {
    if (step.startedAt === undefined || step.endedAt === undefined) continue;
    const { startedAt: from, endedAt: to } = step;
    console.log(`-- job ${job.runId} ${job.event}: ${step.name} ${from - t0}..${to - t0} ms (${to - from} ms)`);
    const items: [number, string][] = [];
    for (const r of run.world.gh.requests.filter((x) => x.at >= from && x.at <= to)) {
      served += r.servedMs ?? 0;
      const who = r.actor === BOT_LOGIN ? '' : ` (${r.actor})`;
      items.push([r.at, `github ${r.method} ${r.path}${who}, served in ${r.servedMs?.toFixed(1)} ms`]);
    }
    for (const c of run.world.models.calls.filter((x) => x.at >= from && x.at <= to))
      items.push([c.at, `model ${c.role} (${c.latencyMs} ms)`]);
    for (const [t, what] of items.sort((a, b) => a[0] - b[0])) console.log(`   +${t - from}\t${what}`);
  }
}
const requests = run.world.gh.requests.length;
console.log(`wall ${run.wallMs.toFixed(0)} ms, ${requests} requests, emulator serving ${served.toFixed(0)} ms in all`);
await run.world.close();
