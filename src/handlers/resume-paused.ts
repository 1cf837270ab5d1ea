import type { App } from '../app';
import type { PhaseOutcome } from '../phases/phase-context';

/** Issues one run resumes: each is a workflow_dispatch, a content-creating request (GitHub allows ~80 a minute). */
const RESUMED_PER_RUN = 50;

/**
 * The issues budgets.per_day paused on an earlier UTC day start again, oldest pause first, each with a dispatch of the
 * phase that paused (which checks, like any dispatched phase, that its issue is still at the stage it paused at: a
 * human's move since wins). They leave the paused list as they are dispatched; one that finds the new day spent pauses
 * again. More than one run's share: this run dispatches another run (phase resume-paused) for the rest. Part of the
 * workflow's hourly sweep (sweep.ts): pauses of the current day are not due, so running it every hour is harmless.
 * `issues`: the issues resumed, and those still paused (the sweep leaves both alone).
 */
export async function resumePaused(app: App): Promise<PhaseOutcome & { issues: Set<number> }> {
  const day = app.daySpend;
  if (!day) return { summary: 'budgets.per_day is not set: no issue is paused by it', stage: null, issues: new Set() };
  const { due, more } = await day.dueToResume(RESUMED_PER_RUN);
  const ref = app.runner.defaultBranch;
  const actor = app.config.bot_logins[0]!;
  for (const paused of due) {
    await app.issues.dispatchWorkflow(app.workflow, ref, { issue: String(paused.issue), phase: paused.phase, actor });
  }
  if (more) await app.issues.dispatchWorkflow(app.workflow, ref, { phase: 'resume-paused' });
  const list = due.map((p) => `#${p.issue} (${p.phase})`).join(', ');
  const still = (await day.view()).paused.map((p) => p.issue);
  return {
    summary:
      due.length === 0
        ? 'no paused issue is due to resume'
        : `resumed ${due.length} paused issue(s): ${list}${more ? '; another run resumes the rest' : ''}`,
    stage: null,
    issues: new Set([...due.map((p) => p.issue), ...still]),
  };
}

/** A workflow_dispatch of phase resume-paused: what a resumption that had more to do dispatches. */
export async function handleResumePaused(app: App): Promise<PhaseOutcome> {
  const { summary, stage } = await resumePaused(app);
  return { summary, stage };
}
