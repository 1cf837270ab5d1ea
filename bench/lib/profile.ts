/**
 * `tsx bench/lib/profile.ts [triage|work|skip]`: runs the built action once under `node --cpu-prof`, the way the bench
 * does, and prints where the time goes: wall time, the V8 profile's self time by file (and by dist chunk module), the
 * hottest functions, and the time from spawn to the first GitHub request. For investigating a missed bench target.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvent, createWorld, DIST_ENTRY, runnerEnv } from '@hydraflow/testkit';

const mode = process.argv[2] ?? 'triage';
const LATENCY = 2000;

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const dir = mkdtempSync(join(tmpdir(), 'hydraflow-prof-'));
const world = await createWorld({
  script: {
    triage: {
      json: { clarity_score: 9, complexity_score: 3, needs_discovery: false, enrichment: 'x', reasons: ['a'] },
      latencyMs: LATENCY,
    },
  },
});
world.gh.addUser({ login: 'alice', permission: 'write' });
world.gh.world.label('hydraflow-plan', 'fef2c0', 'HydraFlow: needs a plan');
// Warm the emulator first (its OpenAPI validators compile on first use, ~0.5 s) so only the action is measured.
const warm = world.gh.world.issue({ title: 'Warm-up', body: 'Warm the emulator.', author: 'alice' });
await world.run('issues', 'opened', { issue: warm.number });
const requestsBefore = world.gh.requests.length;
const issue = world.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'alice' });
world.gh.world.comment(issue.number, { author: 'alice', body: 'Thanks!' });
// --cpu-prof is not allowed in NODE_OPTIONS: spawn node with the runner's environment ourselves, as runAction does.
const [event, action] = mode === 'skip' ? ['issue_comment', 'created'] : ['issues', 'opened'];
const payload = buildEvent(world.gh, event, action, { issue: issue.number });
const env = runnerEnv(
  {
    gh: world.gh,
    event,
    payload,
    // triage: the triage step alone, as the bench measures it (the routing step would go on into planning)
    inputs: mode === 'triage' ? { ...world.inputs(), phase: 'triage' } : world.inputs(),
    env: mode === 'work' ? { HYDRAFLOW_AUTO_TRIAGE: 'false' } : {},
  },
  mkdtempSync(join(tmpdir(), 'hydraflow-run-')),
);
const started = Date.now();
// Async spawn: the emulator and model server live in this process and must keep answering.
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200', DIST_ENTRY], {
  env,
  cwd: env.GITHUB_WORKSPACE,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let stdout = '';
child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
const exitCode = await new Promise<number | null>((r) => child.on('close', r));
const wall = Date.now() - started;
const firstRequest = world.gh.requests[requestsBefore]?.at;
await world.close();
if (exitCode !== 0) console.log(stdout);
console.log(`${mode}: exit ${exitCode}, wall ${wall} ms (includes profiler overhead)`);
if (firstRequest) console.log(`spawn → first GitHub request: ${firstRequest - started} ms`);

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = (profile.endTime - profile.startTime) / 1000;
console.log(`profile span ${total.toFixed(0)} ms\n`);

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const byFile = new Map<string, number>();
const byFn = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/.*\/dist\//, 'dist/') || n.callFrame.functionName;
  add(byFile, url, us);
  add(byFn, `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`, us);
}
const top = (m: Map<string, number>, k: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([name, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`)
    .join('\n');
console.log('self time by file:\n' + top(byFile, 15));
console.log('\nhottest functions:\n' + top(byFn, 25));

// Inclusive time (self + callees) of each function, counting a function once per sample even when recursive.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
profile.samples.forEach((id, i) => {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/.*\/dist\//, 'dist/');
    const key = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
    if (seen.has(key) || key.startsWith('(root)') || key.startsWith('(idle)')) continue;
    seen.add(key);
    add(inclusive, key, profile.timeDeltas[i] ?? 0);
  }
});
console.log('\ninclusive time:\n' + top(inclusive, 40));

// Busy time per 100 ms window after the profile starts, with what dominated it.
console.log('\ntimeline (100 ms windows: busy ms, top file):');
let t = 0;
const windows = new Map<number, Map<string, number>>();
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i] ?? 0;
  const n = byId.get(id)!;
  if (n.callFrame.functionName === '(idle)') return;
  const w = Math.floor(t / 100_000);
  if (!windows.has(w)) windows.set(w, new Map());
  add(
    windows.get(w)!,
    n.callFrame.url.replace(/.*\/dist\//, 'dist/') || n.callFrame.functionName,
    profile.timeDeltas[i] ?? 0,
  );
});
for (const [w, m] of [...windows].sort((a, b) => a[0] - b[0])) {
  const busy = [...m.values()].reduce((a, b) => a + b, 0) / 1000;
  const [file, us] = [...m].sort((a, b) => b[1] - a[1])[0]!;
  console.log(
    `${String(w * 100).padStart(6)} ms  busy ${busy.toFixed(0).padStart(3)} ms  ${file} ${(us / 1000).toFixed(0)} ms`,
  );
}

// ncc/webpack module factories are named by module id: their inclusive time is the cost of evaluating that module.
const factories = new Map([...inclusive].filter(([k]) => /^\d+ dist\//.test(k)));
console.log('\nmodule evaluation (factories by webpack id, inclusive):\n' + top(factories, 15));
