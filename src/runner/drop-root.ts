/**
 * The agent step gives up root before the coding agent runs (docs/adr/0023-the-agent-job-gives-up-root.md). On a
 * runner whose user has passwordless sudo (GitHub's hosted images), code the agent's commands run could otherwise
 * become root and read any process's memory: the model proxy's, key included, and the runner's, which holds the job's
 * secrets. So, while sudo still works:
 *
 * 1. the agent is started as the same user (files keep their owner) under `setpriv` with no_new_privs (no setuid
 *    program, sudo among them, can raise it again), no supplementary groups (not `docker`) and no capabilities, as
 *    the child of a reaping shell that is pid 1 of a PID namespace of its own: when it ends, the kernel kills whatever
 *    its commands left running. It checks its confinement, says it is ready, and waits for its environment on stdin,
 *    the gate that opens only once step 2 is done;
 * 2. a root phase takes sudo from the user for the rest of the job (a last `!ALL` rule in /etc/sudoers.d: a later
 *    step whose code the agent's commands rewrote gets no root either) and denies the user every root-owned service
 *    socket under /run that a group or everyone may write (the Docker socket: a privileged container is root) with an
 *    ACL entry;
 * 3. this process checks the result as the user (sudo refused, no such socket writable) and only then opens the gate.
 *    If the agent could not start confined, nothing is taken; if root could not be taken, the gate stays shut.
 *
 * `implement.runner_root: keep` turns it off (tests that need Docker). A runner whose user is root cannot be helped
 * this way, nor one without sudo whose user can write the Docker socket: the step says so in its log.
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, lstatSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { RunnerIO } from './io';
import { dockerReachable, sudoWorks } from './root-reach';
import { plainSize, resetStepFile } from './step-files';

/** The argument that starts the bundle as the confined agent (src/main.ts). */
export const CONFINED_ARG = '--hydraflow-confined-agent';

const SUDO = '/usr/bin/sudo';
const SETPRIV = '/usr/bin/setpriv';
const UNSHARE = '/usr/bin/unshare';
const SETFACL = '/usr/bin/setfacl';
const SERVICE_SOCKETS = '/run';
/** How long the confined agent may take to start (sudo, a namespace, node loading the bundle) before the step gives up. */
const READY_TIMEOUT_MS = 60_000;

export type RootDropPlan = { drop: true } | { drop: false; note?: string };

/** The sudoers file that takes sudo from the user; named by uid (sudo skips files whose name holds a dot). */
export const noRootFile = (uid: number) => `/etc/sudoers.d/zzzz-hydraflow-no-root-${uid}`;

/** `implement.runner_root` from the routing job's run-config (default `drop`); read without loading the schema. */
function runnerRootSetting(env: NodeJS.ProcessEnv): string {
  try {
    const handed = JSON.parse(env['INPUT_RUN-CONFIG'] ?? '') as { config?: { implement?: { runner_root?: unknown } } };
    const value = handed.config?.implement?.runner_root;
    return typeof value === 'string' ? value : 'drop';
  } catch {
    return 'drop'; // no run-config (a custom workflow): the safe default
  }
}

/** Root-owned sockets under /run this process may write to (the Docker socket, among others). */
function writableServiceSockets(dir = SERVICE_SOCKETS, depth = 0): string[] {
  if (depth > 4) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) found.push(...writableServiceSockets(path, depth + 1));
    else if (stat.isSocket() && stat.uid === 0) {
      try {
        accessSync(path, constants.W_OK);
        found.push(path);
      } catch {
        // not this user's to use
      }
    }
  }
  return found;
}

/**
 * What sudo lets this user run without a password (`sudo -n -l`): nothing, something (a rule for one program is often
 * root through it), or nothing any more because HydraFlow's `!ALL` rule comes last (an earlier agent job on this
 * runner, a self-hosted one, took it).
 */
function passwordlessSudo(): 'none' | 'some' | 'taken' {
  const listed = spawnSync(SUDO, ['-n', '-l'], { encoding: 'utf8', timeout: 10_000 });
  if (listed.status !== 0 || !/NOPASSWD/.test(listed.stdout)) return 'none';
  return /!ALL\s*$/.test(listed.stdout) ? 'taken' : 'some';
}

/** Whether the agent step gives up root here, and if not, what the log should say. */
export function rootDropPlan(env: NodeJS.ProcessEnv): RootDropPlan {
  const setting = runnerRootSetting(env);
  if (setting === 'keep')
    return { drop: false, note: 'the agent keeps the runner user’s root access (implement.runner_root: keep)' };
  // macOS and Windows runners: their user is an administrator on GitHub's images, which HydraFlow gives up only on Linux
  if (process.platform !== 'linux')
    return {
      drop: false,
      note: `HydraFlow gives up root only on Linux runners; on this one (${process.platform}) code the agent’s commands run may reach the model key if the runner's user is an administrator (docs/adr/0023-the-agent-job-gives-up-root.md)`,
    };
  if (process.getuid?.() === 0)
    return {
      drop: false,
      note: 'the agent job runs as root, which HydraFlow cannot give up: code the agent’s commands run can read the model key from the proxy’s memory (docs/adr/0023-the-agent-job-gives-up-root.md)',
    };
  if (sudoWorks(SUDO)) return { drop: true };
  // Without passwordless sudo for everything, nothing can be given up; say what is left that leads to root.
  const left = [
    ...(dockerReachable() ? ['use the Docker socket'] : []),
    ...(passwordlessSudo() === 'some' ? ['run some commands with sudo without a password (`sudo -n -l`)'] : []),
  ];
  return left.length > 0
    ? {
        drop: false,
        note: `this user can ${left.join(' and ')}, but has no passwordless sudo for everything to give that up with: code the agent’s commands run may become root that way (docs/adr/0023-the-agent-job-gives-up-root.md)`,
      }
    : { drop: false };
}

/**
 * Run as root through sudo: `$1` uid, `$2` the sudoers file. The `!ALL` rule for the uid comes last (the file sorts
 * last in /etc/sudoers.d, which /etc/sudoers includes at its end) and so wins over every rule before it. Then every
 * root-owned socket under /run that a group or everyone may write gets an ACL entry for the uid with no rights (a named
 * user entry is checked before the groups), found as root, so that one in a directory the user may only traverse is
 * not missed; one that goes away meanwhile is skipped. Prints the sockets it closed.
 */
const ROOT_PHASE = `set -eu
uid=$1; file=$2
umask 022
printf '# HydraFlow (implement.runner_root: drop): no sudo for uid %s for the rest of this job. Delete this file to give it back.\\n#%s ALL=(ALL:ALL) !ALL\\n' "$uid" "$uid" > "$file.tmp"
chmod 0440 "$file.tmp"
if command -v visudo >/dev/null 2>&1; then visudo -cqf "$file.tmp"; fi
mv -f "$file.tmp" "$file"
find ${SERVICE_SOCKETS} -xdev -type s -uid 0 -perm /022 -exec /bin/sh -c 'for s; do [ -S "$s" ] || continue; ${SETFACL} -m "u:$0:---" -- "$s" || [ ! -S "$s" ]; printf "%s\\n" "$s"; done' "$uid" {} +
`;

/**
 * PID 1 of the agent's namespace: a shell that starts the agent (the gate, stdin, passed on) and waits for it. A
 * waiting shell reaps every child, and the processes the agent's commands orphan become its children: they do not
 * pile up as zombies under a node process that never waits for them. The shell exits with the agent's status.
 */
const REAPER = 'exec 3<&0; "$@" <&3 3<&- & wait $!';

/**
 * The confined agent: checks its confinement, says it is ready (the line the step waits for before it takes root
 * from the job), then reads its environment from stdin and takes it as process.env.
 */
export async function enterConfinement(): Promise<void> {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim();
  if (field('NoNewPrivs') !== '1' || field('Groups') !== '' || !/^0+$/.test(field('CapEff') ?? ''))
    throw new Error('HydraFlow: the agent is not confined as it should be (no_new_privs, no groups, no capabilities)');
  writeSync(1, `${process.argv[3] ?? ''}\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) throw new Error('HydraFlow: the agent was not let through its gate (the root phase failed: see above)');
  Object.assign(process.env, JSON.parse(text) as Record<string, string>);
}

/** Resolves once the confined agent printed `token` on its own line (then passes the rest of its output on). */
function readyLine(child: ChildProcessByStdio<Writable, Readable, null>, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = '';
    const timer = setTimeout(() => settle(false), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const end = seen.indexOf('\n');
      if (end >= 0) settle(seen.slice(0, end).replace(/\r$/, '') === token, seen.slice(end + 1));
      else if (seen.length > token.length + 2) settle(false);
    };
    const onClose = () => settle(false);
    function settle(ready: boolean, rest = '') {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('close', onClose);
      if (rest) process.stdout.write(rest);
      child.stdout.pipe(process.stdout);
      resolve(ready);
    }
    child.stdout.on('data', onData);
    child.once('close', onClose);
  });
}

/** The confined agent's node process, found by the token in its command line (it runs as this user). */
function agentProcess(token: string): number | undefined {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0] === process.execPath && argv.includes(token)) return Number(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

/**
 * Starts the agent confined, takes root from the job once it is waiting at its gate, checks, lets it go; resolves to
 * its exit code. After it, the step files the runner reads once the step ends are made plain files again: GITHUB_ENV
 * and GITHUB_PATH emptied (the agent step sets neither, so what is there was written for the steps after it), and
 * GITHUB_OUTPUT or the summary replaced if something other than a file stands there (a FIFO would hang the runner).
 */
export async function runAgentWithoutRoot(env: NodeJS.ProcessEnv, entry: string, io: RunnerIO): Promise<number> {
  const uid = process.getuid!();
  const gid = process.getgid!();
  const missing = [SETPRIV, UNSHARE, ...(writableServiceSockets().length > 0 ? [SETFACL] : [])].filter(
    (tool) => !existsSync(tool),
  );
  if (missing.length > 0) {
    io.error(
      `HydraFlow cannot take root from the agent: ${missing.join(', ')} not found (Debian/Ubuntu packages util-linux, acl); install them in a setup step, or set implement.runner_root: keep`,
    );
    return 1;
  }
  const token = `hydraflow-ready-${randomBytes(16).toString('hex')}`;
  const child = spawn(
    SUDO,
    [
      '-n',
      '--',
      UNSHARE,
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--',
      SETPRIV,
      `--reuid=${uid}`,
      `--regid=${gid}`,
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
      '/usr/bin/env',
      '-i',
      `PATH=${env.PATH ?? '/usr/bin:/bin'}`,
      '/bin/sh',
      '-c',
      REAPER,
      'hydraflow-init',
      process.execPath,
      entry,
      CONFINED_ARG,
      token,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], cwd: process.cwd() },
  );
  const exited = new Promise<number>((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  // A cancelled step (actions/agent `exec`s this process, which the runner signals): the agent gets the signal itself
  // and writes what it spent before it exits; sudo only while there is no agent yet, since sudo relays it to unshare,
  // whose death (--kill-child) would kill the agent mid-write.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      const agent = agentProcess(token);
      if (agent !== undefined) process.kill(agent, signal);
      else child.kill(signal);
    });

  if (!(await readyLine(child, token))) {
    child.stdin.end();
    await exited;
    io.error(
      `HydraFlow could not start the agent confined (sudo, unshare --pid and setpriv: see the error above); nothing was changed on this runner. Set implement.runner_root: keep to run the agent with root, knowing its code can read the model key`,
    );
    return 1;
  }
  const root = spawnSync(SUDO, ['-n', '--', '/bin/sh', '-c', ROOT_PHASE, 'hydraflow', String(uid), noRootFile(uid)], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const left = [...(sudoWorks(SUDO) ? ['sudo'] : []), ...writableServiceSockets()];
  if (root.status !== 0 || left.length > 0) {
    child.stdin.end(); // the gate stays shut: the agent exits without starting
    await exited;
    io.error(
      `HydraFlow could not take root from the agent's commands (${root.status !== 0 ? `the root phase failed: ${(root.stderr || root.error?.message || '').trim()}` : `still open: ${left.join(', ')}`}); set implement.runner_root: keep to run the agent anyway, knowing its code can read the model key`,
    );
    return 1;
  }
  const closed = root.stdout.split('\n').filter(Boolean);
  io.info(
    `HydraFlow: the agent gave up root: no sudo for this job's user for the rest of the job${closed.length > 0 ? `, and no access to ${closed.join(', ')}` : ''}; its commands run with no_new_privs, no supplementary groups and no capabilities, in a PID namespace that ends with it (implement.runner_root: drop).`,
  );
  child.stdin.end(JSON.stringify(env));
  const code = await exited;
  const reset = [
    ...(['GITHUB_ENV', 'GITHUB_PATH'] as const).filter((name) => env[name] && resetStepFile(env[name], 0)),
    ...(['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY'] as const).filter(
      (name) => env[name] && resetStepFile(env[name], plainSize(env[name])),
    ),
  ];
  if (reset.length > 0) io.warning(`HydraFlow: what the agent's commands left in ${reset.join(', ')} was removed`);
  return code;
}
