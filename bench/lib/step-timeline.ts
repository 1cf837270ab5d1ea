/**
 * Prints jobs step by step for the timeline tools (lifecycle-timeline.ts, shape-turn-timeline.ts): each step's span
 * from `t0`, and in it each GitHub request (with the emulator's serving time) and each model call at its offset in the
 * step. Returns the emulator's serving time of the requests printed, ms.
 */
import { BOT_LOGIN, type JobRecord } from '@hydraflow/testkit';
import type { LifecycleWorld } from '../../tests/lifecycle/scenario';

export function printSteps(world: LifecycleWorld, jobs: readonly JobRecord[], t0: number): number {
  let served = 0;
  for (const job of jobs) {
    for (const step of job.steps) {
      if (step.startedAt === undefined || step.endedAt === undefined) continue;
      const { startedAt: from, endedAt: to } = step;
      console.log(`-- job ${job.runId} ${job.event}: ${step.name} ${from - t0}..${to - t0} ms (${to - from} ms)`);
      const items: [number, string][] = [];
      for (const r of world.gh.requests.filter((x) => x.at >= from && x.at <= to)) {
        served += r.servedMs ?? 0;
        const who = r.actor === BOT_LOGIN ? '' : ` (${r.actor})`;
        items.push([r.at, `github ${r.method} ${r.path}${who}, served in ${r.servedMs?.toFixed(1)} ms`]);
      }
      for (const c of world.models.calls.filter((x) => x.at >= from && x.at <= to))
        items.push([c.at, `model ${c.role} (${c.latencyMs} ms)`]);
      for (const [t, what] of items.sort((a, b) => a[0] - b[0])) console.log(`   +${t - from}\t${what}`);
    }
  }
  return served;
}
