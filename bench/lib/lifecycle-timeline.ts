/**
 * `tsx bench/lib/lifecycle-timeline.ts`: runs the clear-issue lifecycle twice (the first warms the emulator's OpenAPI
 * validators) and prints the second one step by step: each GitHub request and model call at its offset in the step,
 * with the emulator's serving time. For investigating where lifecycle_overhead_ratio's time goes.
 */
import { runClearLifecycle } from './lifecycle';
import { printSteps } from './step-timeline';

const LATENCY_MS = 1500;
await (await runClearLifecycle({ latencyMs: LATENCY_MS })).world.close();
const run = await runClearLifecycle({ latencyMs: LATENCY_MS });
const served = printSteps(run.world, [...run.before, ...run.after], run.startedAt);
const requests = run.world.gh.requests.length;
console.log(`wall ${run.wallMs.toFixed(0)} ms, ${requests} requests, emulator serving ${served.toFixed(0)} ms in all`);
await run.world.close();
