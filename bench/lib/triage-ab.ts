/**
 * `tsx bench/lib/triage-ab.ts <dist-dir> [<dist-dir> …] [--runs N]`: the bench's triage (issues.opened, a clear
 * verdict, 2 s of scripted model latency) run against several builds of dist/, interleaved run by run so that the
 * machine's load drifts equally over all of them. Prints, per build, the medians of the wall time, of spawn → model
 * request and of model answer → exit. For deciding whether a change to the cold path is a gain: on a 2-core box one
 * build's ratio moves by ±0.05 between bench runs, more than most single changes are worth. Also the run's CPU time
 * (the action's process, from this process's reaped-children times in /proc on Linux): under other load, wall times
 * stretch with the queue for the cores, CPU times much less.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createWorld } from '@hydraflow/testkit';

const LATENCY_MS = 2000;

/** CPU ms (user + system) of this process's children that have ended; NaN where /proc is absent. */
function childrenCpuMs(): number {
  if (!existsSync('/proc/self/stat')) return Number.NaN;
  // fields after "pid (comm) ": state is 0, so cutime and cstime are 13 and 14; in clock ticks (100 per second)
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 9;
const dists = args.map((d) => resolve(d));
if (dists.length === 0) throw new Error('usage: tsx bench/lib/triage-ab.ts <dist-dir> [<dist-dir> …] [--runs N]');

const world = await createWorld({
  script: {
    triage: {
      json: { clarity_score: 9, complexity_score: 3, needs_discovery: false, enrichment: 'x', reasons: ['a'] },
      latencyMs: LATENCY_MS,
    },
  },
});
world.gh.addUser({ login: 'alice', permission: 'write' });
const samples = new Map(
  dists.map((d) => [d, [] as { wall: number; request: number; tail: number; served: number[]; cpu: number }[]]),
);
try {
  for (let i = -1; i < runs; i++) {
    for (const dist of dists) {
      const issue = world.gh.world.issue({ title: `Paginate GET /users (${i})`, body: 'Return 50 per page.' });
      const callsBefore = world.models.calls.length;
      const requestsBefore = world.gh.requests.length;
      const started = Date.now();
      const cpuBefore = childrenCpuMs();
      // The triage step alone, as the bench measures it (the routing step would go on into planning).
      const run = await world.run(
        'issues',
        'opened',
        { issue: issue.number },
        { entry: join(dist, 'index.js'), inputs: { phase: 'triage' } },
      );
      if (run.exitCode !== 0) throw new Error(`${dist}: exit ${run.exitCode}\n${run.stdout}\n${run.stderr}`);
      const call = world.models.calls[callsBefore];
      if (!call) throw new Error(`${dist}: no model call`);
      // The first round warms the emulator's validators and the file cache: not counted.
      if (i >= 0)
        samples.get(dist)!.push({
          wall: run.durationMs,
          request: call.at - started,
          tail: run.durationMs - (call.at - started) - LATENCY_MS,
          served: world.gh.requests.slice(requestsBefore).map((r) => r.servedMs ?? 0),
          cpu: childrenCpuMs() - cpuBefore,
        });
    }
  }
} finally {
  await world.close();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [dist, s] of samples) {
  const wall = median(s.map((x) => x.wall));
  console.log(
    `${dist}: ratio ${(wall / LATENCY_MS).toFixed(3)} (wall ${wall.toFixed(0)} ms), spawn → model request ${median(s.map((x) => x.request)).toFixed(0)} ms, answer → exit ${median(s.map((x) => x.tail)).toFixed(0)} ms, emulator serving per request ${s[0]!.served.map((_, i) => median(s.map((x) => x.served[i] ?? 0)).toFixed(1)).join(' / ')} ms, n=${s.length}; CPU ${median(s.map((x) => x.cpu)).toFixed(0)} ms median, ${(s.reduce((t, x) => t + x.cpu, 0) / s.length).toFixed(1)} mean`,
  );
}
