import { neutralizeModelText } from '@hydraflow/core';
import type { RunJob } from '@hydraflow/github';
import type { PhaseContext } from './phase-context';

/** The agent job's name in workflows-templates/hydraflow.yml (its key; GitHub names a job without `name:` by it). */
const AGENT_JOB = 'agent';
const ENDED_BADLY = new Set(['failure', 'cancelled', 'timed_out']);
const MAX_ERRORS = 3;
const MAX_ERROR_CHARS = 300;

/** What stopped the agent job, for the issue: the step, GitHub's error lines for it, and the step's log. */
export interface AgentJobFailure {
  /** e.g. "the step `Run npm ci` failed: “npm error 404 …”; “Process completed with exit code 1.”" */
  what: string;
  /** the job's log, at the failed step when there is one */
  logUrl: string;
}

/**
 * Which step of this run's agent job failed and what GitHub annotated it with, so that the issue says "the step
 * `Run npm ci` failed: …" instead of sending a human to search the log: in a team's first runs that step is most often
 * one of their own setup steps (the toolchain, `npm ci`). Two reads with the publish job's token (actions and checks,
 * read); best effort — undefined when the job or its step cannot be told, and the caller says what it said before.
 * The annotations are what the agent job's processes printed as `::error::`: untrusted text, neutralized, one line
 * each, cut short.
 */
export async function agentJobFailure(ctx: PhaseContext): Promise<AgentJobFailure | undefined> {
  const { runId, runAttempt } = ctx.session.options;
  if (!/^\d+$/.test(runId)) return undefined;
  try {
    const ended = (await ctx.issues.runJobs(Number(runId), runAttempt)).filter((j) =>
      ENDED_BADLY.has(j.conclusion ?? ''),
    );
    const job = ended.find((j) => j.name === AGENT_JOB) ?? (ended.length === 1 ? ended[0] : undefined);
    if (!job) return undefined;
    const step = job.steps.find((s) => ENDED_BADLY.has(s.conclusion ?? ''));
    const errors = job.checkRunId === undefined ? [] : await errorLines(ctx, job.checkRunId);
    const quoted = errors.map((e) => `“${e}”`).join('; ');
    const where = step
      ? `the step ${stepName(step.name)} ${step.conclusion === 'failure' ? 'failed' : 'was cancelled'}`
      : `the job ${stepName(job.name)} ${job.conclusion}`;
    return { what: quoted ? `${where}: ${quoted}` : where, logUrl: logUrl(job, step) };
  } catch {
    return undefined;
  }
}

async function errorLines(ctx: PhaseContext, checkRunId: number): Promise<string[]> {
  const lines = (await ctx.issues.checkRunAnnotations(checkRunId))
    .filter((a) => a.level === 'failure')
    .map((a) => oneLine([a.title, a.message].filter(Boolean).join(': ')))
    .filter(Boolean);
  return [...new Set(lines)].slice(0, MAX_ERRORS);
}

function oneLine(text: string): string {
  const flat = neutralizeModelText(text).replace(/\s+/g, ' ').replace(/[“”]/g, '"').trim();
  return flat.length > MAX_ERROR_CHARS ? `${flat.slice(0, MAX_ERROR_CHARS - 1)}…` : flat;
}

/** A step's name as code: names come from the workflow file, but a backtick must not end the span. */
function stepName(name: string): string {
  return `\`${neutralizeModelText(name).replace(/`/g, "'").replace(/\s+/g, ' ').slice(0, 120)}\``;
}

function logUrl(job: RunJob, step: RunJob['steps'][number] | undefined): string {
  return step && job.htmlUrl ? `${job.htmlUrl}#step:${step.number}:1` : job.htmlUrl;
}
