/**
 * What the three jobs of an implement run hand each other, as Actions artifacts (immutable once uploaded, named by
 * issue, run and content digest): the routing job (GitHub token and model keys, runs no repository code) writes the
 * task; the agent job (model keys only, its own runner) runs the coding agent and writes its result — a record and the
 * change as a binary patch against the start commit; the publish job (GitHub token, a fresh runner) downloads that
 * result, validates it as data and only then commits, pushes and opens the pull request. Each job writes its hand-off
 * to a directory of RUNNER_TEMP and names it in its outputs; the workflow's upload step publishes it, the next job's
 * download step puts it in the same place of its own RUNNER_TEMP. See docs/adr/0001-agent-job.md.
 *
 * Whatever the agent job hands on was in reach of the agent's commands: a file may be anything by the time it is read
 * (a named pipe, a link, a huge file). Writes go to a fresh file renamed into place; reads take only a small regular
 * file, opened without following a link or waiting on a pipe.
 */
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ledgerEntrySchema, UserError } from '@hydraflow/core';
import type { FirstTurn } from '../agents/model-proxy';
import { MAX_METERED_ENTRIES, type ProxyLimits } from '../agents/proxy-meter';

export const implementTaskSchema = z.object({
  v: z.literal(2),
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
  /** The commit the agent starts from (also in the issue's signed state): the patch it hands back is against it. */
  startSha: z.string().regex(/^[0-9a-f]{40}$/),
  commands: z.record(z.string(), z.string()),
  protectedPaths: z.array(z.string()),
  limits: z.object({ maxTurns: z.number(), maxMinutes: z.number() }),
  /** The issue's ledger so far, so the agent step enforces the per-issue budget without GitHub access. */
  ledger: z.array(ledgerEntrySchema),
  runId: z.string(),
  /** What the day has left for this agent (budgets.per_day), reserved for it by the routing job; absent: no limit. */
  dayUsd: z.number().nonnegative().optional(),
});
export type ImplementTask = z.infer<typeof implementTaskSchema>;

export const implementResultSchema = z.object({
  v: z.literal(2),
  issue: z.number().int().positive(),
  /** The start commit the patch is against (the publish job refuses a result for another one). */
  startSha: z.string(),
  /** done: the agent finished; cap: a turn/time/token cap stopped it; failed: the agent step itself failed. */
  status: z.enum(['done', 'cap', 'failed']),
  /**
   * true: not the agent's result. The agent step handed on none (the agent never started: a setup step failed, the run
   * was cancelled first; or the step died), and this one only carries the model proxy's count of what was spent
   * (src/phases/agent-leftovers.ts).
   */
  spendOnly: z.literal(true).optional(),
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
  /** The model proxy's signed count of the job's model calls (src/agents/proxy-meter.ts): what the publish job ledgers. */
  meter: z.object({ report: z.string().max(1_000_000), signature: z.string().max(200) }).optional(),
});

/** What the model proxy signs (src/agents/proxy-meter.ts, MeterReport), checked once its signature is. */
export const meterReportSchema = z.object({
  v: z.literal(1),
  issue: z.number().int().positive(),
  startSha: z.string(),
  runId: z.string(),
  ledger: z.array(ledgerEntrySchema.extend({ phase: z.literal('implement') })).max(MAX_METERED_ENTRIES),
  refused: z.number().int().nonnegative(),
});
export type ImplementResult = z.infer<typeof implementResultSchema>;

/** The directories hand-offs live in, in the RUNNER_TEMP of the job that writes them and of the job that reads them. */
export const taskDir = (tempDir: string) => join(tempDir, 'hydraflow-task');
export const resultDir = (tempDir: string) => join(tempDir, 'hydraflow-result');
export const taskFile = (dir: string) => join(dir, 'task.json');
export const resultFile = (dir: string) => join(dir, 'result.json');
/** The agent's change: `git diff --binary` from the start commit to its final tree. */
export const patchFile = (dir: string) => join(dir, 'change.patch');

export function writeHandoff(path: string, value: ImplementTask | ImplementResult | FirstTurn | ProxyLimits): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const fresh = `${path}.${randomUUID()}`;
  writeFileSync(fresh, JSON.stringify(value, null, 2), { flag: 'wx' });
  renameSync(fresh, path);
}

/**
 * The artifact name of a hand-off: what it is, the issue, the run and attempt, and a digest of its files' contents, so
 * a name is never reused for other contents (artifacts are immutable per name within a run).
 */
export function artifactName(kind: 'task' | 'result', issue: number, runId: string, attempt: number, files: string[]) {
  const digest = createHash('sha256');
  for (const file of files) digest.update(readFileSync(file)).update('\0');
  return `hydraflow-${kind}-issue-${issue}-run-${runId}-${attempt}-${digest.digest('hex').slice(0, 16)}`;
}

/** Hand-off records hold a task or a result: a few kilobytes. */
const MAX_HANDOFF_BYTES = 4_000_000;

/** The bytes of a small regular file, opened without following a link or waiting on a pipe. */
export function readSmallRegularFile(path: string, maxBytes = MAX_HANDOFF_BYTES): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error('not a regular file');
    if (stats.size > maxBytes) throw new Error(`${stats.size} bytes, more than ${maxBytes}`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function readHandoff<T>(path: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(readSmallRegularFile(path).toString('utf8'));
  } catch (error) {
    throw new UserError(
      `${what} ${path}: expected the file the previous HydraFlow job hands on (${(error as Error).message})`,
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${what} ${path}: not a valid hand-off file (${parsed.error.message})`);
  return parsed.data;
}
