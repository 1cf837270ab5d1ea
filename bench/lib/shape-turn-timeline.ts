/**
 * `tsx bench/lib/shape-turn-timeline.ts`: runs the product track's shape turn (bench/lib/product-track.ts: a human's
 * reply that names no direction, answered by one model call) twice (the first warms the emulator) and prints the
 * second turn step by step, from the reply's dispatch. For investigating where shape_turn_overhead_ratio's time goes.
 */
import { runProductTrack } from './product-track';
import { printSteps } from './step-timeline';

const LATENCY_MS = 1500;
await (await runProductTrack(LATENCY_MS)).world.close();
const run = await runProductTrack(LATENCY_MS);
const served = printSteps(run.world, run.turnJobs, run.turnAt!);
console.log(`turn wall ${run.turnWallMs!.toFixed(0)} ms, emulator serving ${served.toFixed(0)} ms`);
await run.world.close();
