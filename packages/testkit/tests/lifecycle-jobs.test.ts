import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { createLifecycle, formatTimeline, type Lifecycle } from '../src/lifecycle/index';
import { processAlive } from '../src/runner/processes';
import { createSampleRepo, type SampleRepo } from '../src/sample-repo/index';

let dir: string;
let sample: SampleRepo;
let gh: GitHubEmulator;
let lc: Lifecycle | undefined;
const strays: number[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hydraflow-lifecycle-jobs-'));
  sample = createSampleRepo(join(dir, 'sample'));
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: sample.bareRepo } });
  gh.addUser({ login: 'alice', permission: 'write' });
});

afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  lc?.close();
  lc = undefined;
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

async function lifecycle(files: Record<string, string>, options: { keepWorkspaces?: boolean } = {}) {
  const workflowsDir = join(dir, 'workflows');
  mkdirSync(workflowsDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(workflowsDir, name), text);
  lc = await createLifecycle({
    gh,
    workflowsDir,
    repoDir: sample.bareRepo,
    secrets: { MY_SECRET: 's3cret-value' },
    ...options,
  });
  return lc;
}

async function openIssue(sim: Lifecycle) {
  const issue = gh.world.issue({ title: 'Jobs', author: 'alice' });
  sim.dispatch('issues', 'opened', { issue: issue.number });
  const jobs = await sim.runUntilQuiet();
  return { jobs, timeline: formatTimeline(jobs), issue };
}

describe('lifecycle jobs', () => {
  it('job outputs reach later jobs as needs.<job>.outputs; a skipped job is `skipped` with no outputs', async () => {
    const sim = await lifecycle({
      'jobs.yml': `on:
  issues:
    types: [opened]
jobs:
  first:
    runs-on: ubuntu-latest
    permissions:
      contents: read
      issues: write
    timeout-minutes: 5
    outputs:
      greeting: \${{ steps.say.outputs.greeting }}
      fixed: constant
      leak: token \${{ secrets.MY_SECRET }}
      masked: \${{ steps.say.outputs.masked }}
    steps:
      - id: say
        run: |
          echo "greeting=hello $ISSUE" >> "$GITHUB_OUTPUT"
          echo "::add-mask::not-for-others"
          echo "masked=not-for-others" >> "$GITHUB_OUTPUT"
        env:
          ISSUE: \${{ github.event.issue.number }}
  never:
    if: false
    runs-on: ubuntu-latest
    outputs:
      x: y
    steps:
      - run: exit 1
  second:
    needs: [first, never]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - id: got
        run: |
          echo "greeting=$G" >> "$GITHUB_OUTPUT"
          echo "never=$N" >> "$GITHUB_OUTPUT"
          echo "x=[$X]" >> "$GITHUB_OUTPUT"
          echo "leak=[$L]" >> "$GITHUB_OUTPUT"
        env:
          G: \${{ needs.first.outputs.greeting }} / \${{ needs.first.outputs.fixed }} / \${{ needs.first.result }}
          N: \${{ needs.never.result }}
          X: \${{ needs.never.outputs.x }}
          L: \${{ needs.first.outputs.leak }}
  third:
    needs: never
    runs-on: ubuntu-latest
    steps:
      - run: exit 1
`,
    });
    const { jobs, timeline, issue } = await openIssue(sim);
    expect(
      jobs.map((j) => [j.job, j.status]),
      timeline,
    ).toEqual([
      ['first', 'success'],
      ['never', 'skipped'],
      ['second', 'success'],
      ['third', 'skipped'],
    ]);
    expect(jobs[0]!.outputs).toEqual({ greeting: `hello ${issue.number}`, fixed: 'constant' });
    expect(jobs[1]!.outputs).toEqual({});
    expect(jobs[2]!.steps[0]!.outputs).toEqual({
      greeting: `hello ${issue.number} / constant / success`,
      never: 'skipped',
      x: '[]',
      leak: '[]',
    });
    // an output holding a secret is dropped, as GitHub drops it
    expect(sim.log).toContain(
      `warning: run ${jobs[0]!.runId} job first: Skip output 'leak' since it may contain secret.`,
    );
    expect(sim.log).toContain(
      `warning: run ${jobs[0]!.runId} job first: Skip output 'masked' since it may contain secret.`,
    );
    const first = sim.workflows[0]!.jobs.find((j) => j.id === 'first')!;
    expect(first.permissions).toEqual({ contents: 'read', issues: 'write' });
    expect(first.timeoutMinutes).toBe(5);
  });

  it('each job runs on a machine of its own: HOME, RUNNER_TEMP and the workspace are not shared', async () => {
    const record = `
          echo "home=$HOME" >> "$GITHUB_OUTPUT"
          echo "temp=$RUNNER_TEMP" >> "$GITHUB_OUTPUT"
          echo "ws=$GITHUB_WORKSPACE" >> "$GITHUB_OUTPUT"
          echo "ctx=\${{ runner.temp }}|\${{ github.workspace }}" >> "$GITHUB_OUTPUT"
          echo "pwd=$PWD" >> "$GITHUB_OUTPUT"`;
    const sim = await lifecycle(
      {
        'machines.yml': `on:
  issues:
    types: [opened]
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - id: where
        run: |${record}
          echo a > "$HOME/from-a"
          echo a > "$RUNNER_TEMP/from-a"
          echo a > from-a
      - id: same
        run: |
          test -f "$HOME/from-a" && test -f "$RUNNER_TEMP/from-a" && test -f from-a
          echo "tracking=$RUNNER_TRACKING_ID" >> "$GITHUB_OUTPUT"
  b:
    needs: a
    runs-on: ubuntu-latest
    steps:
      - id: where
        run: |${record}
          echo "tracking=$RUNNER_TRACKING_ID" >> "$GITHUB_OUTPUT"
          for f in "$HOME/from-a" "$RUNNER_TEMP/from-a" from-a; do test ! -e "$f"; done
`,
      },
      { keepWorkspaces: true },
    );
    const { jobs, timeline } = await openIssue(sim);
    expect(
      jobs.map((j) => [j.job, j.status]),
      timeline,
    ).toEqual([
      ['a', 'success'],
      ['b', 'success'],
    ]);
    const a = jobs[0]!.steps[0]!.outputs;
    const b = jobs[1]!.steps[0]!.outputs;
    for (const key of ['home', 'temp', 'ws']) {
      expect(a[key]).not.toBe(b[key]);
      expect(a[key]!.startsWith(`${jobs[0]!.runnerDir}/`)).toBe(true);
      expect(b[key]!.startsWith(`${jobs[1]!.runnerDir}/`)).toBe(true);
    }
    expect(a.home).not.toBe(process.env.HOME);
    expect(a.ctx).toBe(`${a.temp}|${a.ws}`);
    expect(a.pwd).toBe(a.ws);
    expect(jobs[0]!.workspace).toBe(a.ws);
    // one tracking id per job, the same for every step of it
    expect(jobs[0]!.steps[1]!.outputs.tracking).toMatch(/^github_[0-9a-f-]{36}$/);
    expect(b.tracking).toMatch(/^github_/);
    expect(b.tracking).not.toBe(jobs[0]!.steps[1]!.outputs.tracking);
    for (const j of jobs) rmSync(j.runnerDir!, { recursive: true, force: true });
  });

  it('runner directories are removed when the lifecycle closes, not on the jobs’ path (a runner is thrown away)', async () => {
    const sim = await lifecycle({
      'gone.yml': `on:
  issues:
    types: [opened]
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - id: where
        run: echo "dir=$HOME" >> "$GITHUB_OUTPUT"
`,
    });
    const { jobs } = await openIssue(sim);
    const home = jobs[0]!.steps[0]!.outputs.dir!;
    expect(jobs[0]!.runnerDir).toBeUndefined();
    expect(existsSync(home)).toBe(true);
    sim.close();
    expect(existsSync(home)).toBe(false);
  });

  it('a daemon a step started (setsid, its own session) is killed when its job ends, before the next job', async () => {
    const sim = await lifecycle({
      'daemon.yml': `on:
  issues:
    types: [opened]
jobs:
  a:
    runs-on: ubuntu-latest
    outputs:
      pid: \${{ steps.start.outputs.pid }}
      holder: \${{ steps.start.outputs.holder }}
    steps:
      - id: start
        run: |
          setsid sh -c 'echo $$ > "$RUNNER_TEMP/pid"; exec sleep 300' > /dev/null 2>&1 < /dev/null &
          # a second one keeps the step's stdout open: the step still ends when its shell exits
          setsid sh -c 'echo $$ > "$RUNNER_TEMP/holder"; exec sleep 301' &
          for i in $(seq 100); do [ -s "$RUNNER_TEMP/pid" ] && [ -s "$RUNNER_TEMP/holder" ] && break; sleep 0.05; done
          echo "pid=$(cat "$RUNNER_TEMP/pid")" >> "$GITHUB_OUTPUT"
          echo "holder=$(cat "$RUNNER_TEMP/holder")" >> "$GITHUB_OUTPUT"
      - id: still
        run: kill -0 "$PID"
        env:
          PID: \${{ steps.start.outputs.pid }}
  b:
    needs: a
    runs-on: ubuntu-latest
    steps:
      - id: check
        run: |
          for pid in "$PID" "$HOLDER"; do
            state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
            echo "$pid=\${state:-gone}" >> "$GITHUB_OUTPUT"
            case "$state" in ''|Z|X) ;; *) exit 1 ;; esac
          done
        env:
          PID: \${{ needs.a.outputs.pid }}
          HOLDER: \${{ needs.a.outputs.holder }}
`,
    });
    const { jobs, timeline } = await openIssue(sim);
    const pid = Number(jobs[0]!.outputs!.pid);
    const holder = Number(jobs[0]!.outputs!.holder);
    strays.push(pid, holder);
    expect(pid).toBeGreaterThan(1);
    expect(
      jobs.map((j) => [j.job, j.status]),
      timeline,
    ).toEqual([
      ['a', 'success'],
      ['b', 'success'],
    ]);
    expect(jobs[0]!.steps.map((s) => s.outcome)).toEqual(['success', 'success']); // alive during its job
    expect(jobs[0]!.durationMs).toBeLessThan(20_000); // the holder of stdout did not keep the step running
    expect(jobs[0]!.orphansKilled).toBe(2);
    expect(jobs[1]!.orphansKilled).toBe(0);
    expect(sim.log).toContain(`cleaned up 2 orphan process(es) of run ${jobs[0]!.runId} job a`);
    expect(processAlive(pid)).toBe(false);
    expect(processAlive(holder)).toBe(false);
  });
});
