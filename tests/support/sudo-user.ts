/**
 * A runner user the way GitHub's hosted images make theirs: a user of its own with passwordless `sudo` and a group
 * that opens a root-owned service socket under /run (the `docker` group and /run/docker.sock there; a stand-in socket
 * here, so no Docker daemon is needed). For the lifecycle simulator's `runAs`. It needs this machine's root, `sudo`,
 * `setpriv` and `setfacl` (`.ci/run` installs the packages `sudo` and `acl`); `unavailable` says what is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { noRootFile } from '../../src/runner/drop-root';

export interface SudoUser {
  name: string;
  /** A root-owned socket only the user's extra group may write to, with a server behind it. */
  socket: string;
  /** Whether the user can still `sudo -n` (asked from a fresh login of the user, not from any job's process). */
  canSudo(): boolean;
  remove(): Promise<void>;
}

const TOOLS = ['/usr/bin/sudo', '/usr/bin/setpriv', '/usr/bin/setfacl', '/usr/sbin/useradd'];

/** Why a sudo user cannot be made on this machine, or undefined when it can. */
export function sudoUserUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the tests do not run as root';
  const missing = TOOLS.filter((tool) => !existsSync(tool));
  return missing.length > 0 ? `missing ${missing.join(', ')} (Debian packages sudo, acl, passwd)` : undefined;
}

/** `commands`: what the user's sudoers entry allows (default everything, as on GitHub's hosted runners). */
export async function createSudoUser(commands = 'ALL'): Promise<SudoUser> {
  const id = randomBytes(4).toString('hex');
  const name = `hf-runner-${id}`;
  const group = `hf-sock-${id}`;
  const sudoers = `/etc/sudoers.d/${name}`;
  const socket = `/run/hf-service-${id}.sock`;
  execFileSync('groupadd', [group]);
  execFileSync('useradd', ['--no-create-home', '--shell', '/bin/bash', '--groups', group, name]);
  writeFileSync(sudoers, `${name} ALL=(ALL) NOPASSWD: ${commands}\n`, { mode: 0o440 });
  const server: Server = createServer((connection) => {
    connection.on('error', () => undefined); // the client hangs up at once
    connection.end('service\n');
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  execFileSync('chown', [`root:${group}`, socket]);
  execFileSync('chmod', ['660', socket]);
  return {
    name,
    socket,
    canSudo() {
      try {
        execFileSync('setpriv', [`--reuid=${name}`, `--regid=${name}`, '--init-groups', '--', 'sudo', '-n', 'true'], {
          stdio: 'ignore',
        });
        return true;
      } catch {
        return false;
      }
    },
    async remove() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(socket, { force: true });
      // the user's own entry, what HydraFlow wrote about the user's uid, and its ACL entries on this machine's sockets
      const uid = execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim();
      rmSync(`/etc/sudoers.d/${name}`, { force: true });
      rmSync(noRootFile(Number(uid)), { force: true });
      execFileSync(
        'find',
        ['/run', '-xdev', '-type', 's', '-user', 'root', '-exec', 'setfacl', '-x', `u:${uid}`, '{}', ';'],
        {
          stdio: 'ignore',
        },
      );
      spawnSync('pkill', ['-KILL', '-u', name]); // what the user left running, so that it can be removed
      execFileSync('userdel', [name]);
      execFileSync('groupdel', [group]);
    },
  };
}
