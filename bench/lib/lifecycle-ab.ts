/**
 * `tsx bench/lib/lifecycle-ab.ts <action-root> [<action-root> …] [--runs N]`: the bench's clear-issue lifecycle
 * (lifecycle_overhead_ratio) run against several versions of HydraFlow — each a directory with its action.yml, actions/
 * and dist/, and its workflows-templates/ when its template differs, e.g. `git archive <commit> action.yml actions dist
 * workflows-templates | tar -x -C <dir>` — interleaved run by run so that the
 * machine's drift falls on all of them alike. Prints each version's median ratio and wall time. On a 2-core box one
 * version's ratio moves by ±0.02 between benches, more than most single changes are worth: judge changes this way.
 */
import { resolve } from 'node:path';
import { runClearLifecycle } from './lifecycle';

const LATENCY_MS = 1500;
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const roots = args.map((d) => resolve(d));
if (roots.length === 0)
  throw new Error('usage: tsx bench/lib/lifecycle-ab.ts <action-root> [<action-root> …] [--runs N]');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const walls = new Map<string, number[]>(roots.map((r) => [r, []]));
const modelMs = new Map<string, number>();
// one unmeasured run per version first: the emulator compiles each route's validators on first use
for (const root of roots) await (await runClearLifecycle({ latencyMs: LATENCY_MS, actionRoot: root })).world.close();
for (let i = 0; i < runs; i++) {
  for (const root of i % 2 === 0 ? roots : [...roots].reverse()) {
    const run = await runClearLifecycle({ latencyMs: LATENCY_MS, actionRoot: root });
    walls.get(root)!.push(run.wallMs);
    modelMs.set(root, run.world.models.calls.filter((c) => c.status === 200).length * LATENCY_MS);
    await run.world.close();
  }
}
for (const root of roots) {
  const w = walls.get(root)!;
  const model = modelMs.get(root)!;
  console.log(
    `${root}: ratio ${(median(w) / model).toFixed(3)} (wall ${median(w).toFixed(0)} ms; runs ${w.map((x) => (x / model).toFixed(3)).join(' ')})`,
  );
}
