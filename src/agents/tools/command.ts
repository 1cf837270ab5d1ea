/**
 * A configured command line, run for the agent: `sh -c` in its own process group with the scrubbed environment the
 * caller passes, a timeout, and only the tail of its output kept for the model.
 */
import { spawn } from 'node:child_process';
import type { ToolOutcome } from '../tool-loop';

/** `sh -c line` in its own process group; output tail kept; the group is killed at the timeout and at the end. */
export function runCommand(
  line: string,
  opts: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    maxOutputChars: number;
    /** Aborting kills the process group; the outcome then says it was cancelled. */
    signal?: AbortSignal;
  },
): Promise<ToolOutcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    let tail = '';
    let dropped = 0;
    let timedOut = false;
    let cancelled = false;
    const keep = (chunk: Buffer) => {
      tail += chunk.toString('utf8');
      if (tail.length > opts.maxOutputChars * 2) {
        dropped += tail.length - opts.maxOutputChars;
        tail = tail.slice(-opts.maxOutputChars);
      }
    };
    const child = spawn('/bin/sh', ['-c', line], {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const cancel = () => {
      cancelled = true;
      killGroup();
    };
    if (opts.signal?.aborted) cancel();
    else opts.signal?.addEventListener('abort', cancel, { once: true });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', () => killGroup()); // background children die with the command
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ content: `Could not start the command: ${error.message}`, isError: true });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', cancel);
      if (tail.length > opts.maxOutputChars) {
        dropped += tail.length - opts.maxOutputChars;
        tail = tail.slice(-opts.maxOutputChars);
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const head = cancelled
        ? `Cancelled after ${seconds}s (killed).`
        : timedOut
          ? `Timed out after ${seconds}s (killed).`
          : `Exit code ${code ?? `signal ${signal ?? '?'}`} after ${seconds}s.`;
      const cut = dropped > 0 ? `[… ${dropped} earlier characters of output cut]\n` : '';
      resolve({ content: `${head}\n${cut}${tail}`, ...(timedOut || cancelled ? { isError: true } : {}) });
    });
  });
}
