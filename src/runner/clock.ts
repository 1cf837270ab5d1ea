import type { RunClock } from '@hydraflow/github';

/**
 * Where a simulated clock is installed: the test world's step module (packages/testkit/src/clock/step-clock.mjs, loaded
 * with `node --import` into each step's process) puts one here, so hours of rate-limit waiting pass in seconds and
 * "now" is the emulated GitHub's. Nothing sets it on a runner.
 */
const INSTALLED = Symbol.for('hydraflow.clock');

const REAL: RunClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

/**
 * The time this run goes by, for its waits and its "now" (claims, expiries, the day): real time, unless the test world
 * installed its simulated clock (`globalThis[Symbol.for('hydraflow.clock')]`).
 */
export function runClock(): RunClock {
  return (globalThis as { [INSTALLED]?: RunClock })[INSTALLED] ?? REAL;
}
