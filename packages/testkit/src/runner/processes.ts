/**
 * Processes as the Actions runner tracks them: every step of a job runs with `RUNNER_TRACKING_ID` in its environment,
 * and when the job ends the runner kills every process whose environment still carries that id ("Cleaning up orphan
 * processes"), so a daemon a step started — even with `setsid`, in a session of its own — does not outlive the job.
 * Linux only (it reads /proc); elsewhere nothing is found.
 *
 * What it cannot see, as on a self-hosted runner: a process that replaced its environment (`env -i`, execve with a new
 * environment) carries no id. On GitHub-hosted runners the VM is discarded after the job, so those die too; in the
 * simulator they survive.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/** A fresh tracking id, as the runner makes one per job. */
export function newTrackingId(): string {
  return `github_${randomUUID()}`;
}

/** Pids of the processes whose initial environment holds `RUNNER_TRACKING_ID=<id>` (this process excluded). */
export function trackedProcesses(id: string): number[] {
  const needle = `RUNNER_TRACKING_ID=${id}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone, or not ours to read
    }
    if (environ.split('\0').includes(needle)) out.push(pid);
  }
  return out;
}

/**
 * SIGKILL every process tracked by `id`; again while new ones appear (a dying parent may have forked), at most a few
 * rounds. Returns how many were killed.
 */
export function killTrackedProcesses(id: string): number {
  const killed = new Set<number>();
  for (let round = 0; round < 5; round++) {
    const found = trackedProcesses(id).filter((pid) => !killed.has(pid));
    if (found.length === 0) break;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // already gone
      }
    }
  }
  return killed.size;
}

/** Whether a process is running (a zombie, killed and not yet reaped, is not). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
