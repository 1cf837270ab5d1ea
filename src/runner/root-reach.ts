/**
 * How the job's user can become root on this runner: root already, passwordless `sudo`, or write access to the Docker
 * socket (a privileged container is root on the host). Any of them that the agent job keeps lets code the coding
 * agent's tests run read the model proxy's memory, key included (docs/adr/0023-the-agent-job-gives-up-root.md). The
 * doctor reports it from the routing job, whose runner is of the same kind as the agent job's in the template
 * (`runs-on: ubuntu-latest` both).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { RootReach } from '@hydraflow/core';

const DOCKER_SOCKET = '/var/run/docker.sock';

/** Passwordless sudo: `-n` never prompts; a sudo that wants a password (or is not installed) does not count. */
export const sudoWorks = (sudo = 'sudo') =>
  spawnSync(sudo, ['-n', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;

/** Write access to the Docker socket: a privileged container is root on the host. */
export function dockerReachable(): boolean {
  try {
    accessSync(DOCKER_SOCKET, constants.W_OK);
    return true;
  } catch {
    return false; // no Docker, or not this user's to use
  }
}

export function rootReach(): RootReach[] {
  if (process.platform === 'win32') return [];
  if (process.getuid?.() === 0) return ['root'];
  return [...(sudoWorks() ? (['sudo'] as const) : []), ...(dockerReachable() ? (['docker'] as const) : [])];
}
