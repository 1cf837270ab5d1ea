/**
 * The files the three steps of an implement run pass each other in RUNNER_TEMP: the routing step (GitHub token and
 * model keys, runs no repository code) writes the task; the agent step (model keys only, no GitHub token) runs the
 * coding agent and writes the result; the publish step (GitHub token; a model key only for the review after it)
 * validates the result and only then commits, pushes and opens the pull request.
 *
 * RUNNER_TEMP is open to the agent's commands too, so a file may be anything by the time a step looks: a named pipe
 * (opening it for reading or writing waits forever), a link, a huge file. Writes go to a fresh file renamed into
 * place; reads take only a small regular file, opened without following a link or waiting on a pipe.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ledgerEntrySchema, UserError } from '@hydraflow/core';

export const implementTaskSchema = z.object({
  v: z.literal(1),
  issue: z.number().int().positive(),
  title: z.string(),
  /** Sanitised issue body. */
  body: z.string(),
  /** The accepted plan, as markdown. */
  plan: z.string(),
  /** Review findings to address (a refine round), as markdown; empty on the first round. */
  findings: z.string(),
  branch: z.string(),
  base: z.string(),
  commands: z.record(z.string(), z.string()),
  protectedPaths: z.array(z.string()),
  limits: z.object({ maxTurns: z.number(), maxMinutes: z.number() }),
  /** The issue's ledger so far, so the agent step enforces the per-issue budget without GitHub access. */
  ledger: z.array(ledgerEntrySchema),
  runId: z.string(),
});
export type ImplementTask = z.infer<typeof implementTaskSchema>;

export const implementResultSchema = z.object({
  v: z.literal(1),
  issue: z.number().int().positive(),
  /** done: the agent finished; cap: a turn/time/token cap stopped it; failed: the agent step itself failed. */
  status: z.enum(['done', 'cap', 'failed']),
  cap: z.string().optional(),
  summary: z.string(),
  refusals: z.array(z.object({ tool: z.string(), path: z.string(), reason: z.string() })),
  /** Ledger entries of the agent's model calls. */
  ledger: z.array(ledgerEntrySchema),
  turns: z.number().int().nonnegative(),
  /** Exit code of the `test` command run after the agent finished (null: no test command). */
  testExitCode: z.number().int().nullable(),
  /** The end of that run's output, for the progress comment when it fails. */
  testOutput: z.string(),
});
export type ImplementResult = z.infer<typeof implementResultSchema>;

const dirOf = (tempDir: string) => join(tempDir, 'hydraflow');
/** One implement run per job, so fixed names: the agent step needs no input to find its task. */
export const taskPath = (tempDir: string) => join(dirOf(tempDir), 'implement.task.json');
export const resultPath = (tempDir: string) => join(dirOf(tempDir), 'implement.result.json');

export function writeHandoff(path: string, value: ImplementTask | ImplementResult): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const fresh = `${path}.${randomUUID()}`;
  writeFileSync(fresh, JSON.stringify(value, null, 2), { flag: 'wx' });
  renameSync(fresh, path);
}

/** Hand-off files hold a task or a result: a few kilobytes. */
const MAX_HANDOFF_BYTES = 4_000_000;

function readSmallRegularFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error('not a regular file');
    if (stats.size > MAX_HANDOFF_BYTES) throw new Error(`${stats.size} bytes, more than ${MAX_HANDOFF_BYTES}`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

export function readHandoff<T>(path: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(readSmallRegularFile(path));
  } catch (error) {
    throw new UserError(
      `${what} ${path}: expected the file the previous HydraFlow step writes (${(error as Error).message})`,
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${what} ${path}: not a valid hand-off file (${parsed.error.message})`);
  return parsed.data;
}
