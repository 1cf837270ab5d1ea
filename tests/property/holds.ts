import fc from 'fast-check';
import { checkEndState } from './end-state';
import { Coverage, explain, report } from './report';
import { propertySeed } from './seed';
import type { Ctx, History } from './world';

const VALIDATE = process.env.HYDRAFLOW_PROPERTY_VALIDATE !== '0';

/** Checks a played history's end state; a failure's message gets the history's runs (and requests, when traced). */
export function checkPlayed(ctx: Ctx): void {
  if (process.env.HYDRAFLOW_PROPERTY_EXPLAIN) console.log(explain(ctx));
  try {
    if (process.env.HYDRAFLOW_PROPERTY_NOCHECK !== '1') checkEndState(ctx, VALIDATE);
  } catch (error) {
    (error as Error).message += explain(ctx);
    throw error;
  }
}

/** Plays `runs` histories of `arb` (the `examples` first) with `play` and checks each end state; prints the report. */
export async function holds(
  what: string,
  arb: fc.Arbitrary<History>,
  runs: number,
  examples: readonly History[],
  play: (history: History) => Promise<Ctx>,
): Promise<void> {
  const started = performance.now();
  const timings: number[] = [];
  const coverage = new Coverage();
  await fc.assert(
    fc.asyncProperty(arb, async (history) => {
      const t = performance.now();
      const ctx = await play(history);
      timings.push(performance.now() - t);
      coverage.add(ctx);
      checkPlayed(ctx);
    }),
    { numRuns: runs, examples: examples.map((history): [History] => [history]), ...propertySeed() },
  );
  report(what, runs, performance.now() - started, timings, VALIDATE, coverage);
}

/** A history with its quiesce in both orders: re-runs of crashed runs first, and pending deliveries first. */
export function inBothOrders(history: History): History[] {
  return (['crashed-first', 'pending-first'] as const).map((order) => ({
    ...history,
    quiesce: { ...history.quiesce, order },
  }));
}
