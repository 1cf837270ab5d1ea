/**
 * `tsx bench/lib/lifecycle-timeline.ts [--github-latency MS]`: runs the clear-issue lifecycle twice (the first warms the
 * emulator's OpenAPI validators) and prints the second one step by step: each GitHub request and model call at its
 * offset in the step, with the emulator's serving time. For investigating where lifecycle_overhead_ratio's time goes.
 * With --github-latency every GitHub request of the second run takes that much longer, as on GitHub (~100–300 ms),
 * which the bench leaves out: what a real repository waits for shows as the requests that follow one another.
 */
import { runClearLifecycle } from './lifecycle';
import { printSteps } from './step-timeline';

const LATENCY_MS = 1500;
const at = process.argv.indexOf('--github-latency');
const githubLatencyMs = at >= 0 ? Number(process.argv[at + 1]) : 0;
if (!Number.isFinite(githubLatencyMs) || githubLatencyMs < 0)
  throw new Error(`--github-latency: expected milliseconds (a number ≥ 0), got "${process.argv[at + 1]}"`);
await (await runClearLifecycle({ latencyMs: LATENCY_MS })).world.close();
const run = await runClearLifecycle({ latencyMs: LATENCY_MS, githubLatencyMs });
const served = printSteps(run.world, [...run.before, ...run.after], run.startedAt);
const requests = run.world.gh.requests.length;
console.log(`wall ${run.wallMs.toFixed(0)} ms, ${requests} requests, emulator serving ${served.toFixed(0)} ms in all`);
await run.world.close();
