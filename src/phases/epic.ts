/**
 * An epic's next step (docs/grooming.md, "Phases and sub-issues"): grooming split the parent into phase sub-issues and
 * started the first; this phase runs on the PARENT when a phase is done — dispatched by the merge of a phase's pull
 * request, or by a human closing a phase — and starts the next phase, or closes the parent when every phase is done.
 * It trusts only the parent's sub-issue list as GitHub returns it, never the marker in a sub-issue's body.
 */
import {
  labelFor,
  nextEpicStep,
  pipelineLabelsOf,
  subIssueParent,
  subIssuePhase,
  upsertPhasesSection,
  type EpicPhase,
} from '@hydraflow/core';
import { escalate } from './escalate';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { endPhase } from './end-phase';

export async function runEpic(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session } = ctx;
  if (session.currentStage !== 'epic') {
    return {
      summary: `issue #${issue.number} is not an epic (${session.currentStage ?? 'no stage'}): nothing to advance`,
      stage: session.currentStage,
    };
  }
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };

  const found = await ctx.grooming.groomContext(issue.number, { search: '', relatedLimit: 0, labels: [] });
  const phases: (EpicPhase & { title: string })[] = found.subIssues.flatMap((s) => {
    const phase = subIssuePhase(s);
    return phase === undefined
      ? []
      : [
          {
            phase,
            number: s.number,
            title: s.title,
            state: s.state,
            inPipeline: pipelineLabelsOf(s.labels).length > 0,
          },
        ];
  });
  const step = nextEpicStep(phases);
  if (step.kind === 'none') {
    // a human set hydraflow-epic on an issue grooming never split: "all 0 phases done" would close it as completed
    return escalate(ctx, {
      headline: 'This issue is labelled hydraflow-epic but has no phase sub-issues; a human decides',
      reason: `issue #${issue.number} has no phase sub-issues to advance (an epic is made by /groom when the work is split into phases)`,
    });
  }
  const entries = phases.map((p) => ({ phase: p.phase, number: p.number, state: p.state }));
  const body = upsertPhasesSection(issue.body, entries);
  const done = phases.filter((p) => p.state === 'closed').length;

  if (step.kind === 'done') {
    if (body !== issue.body) await ctx.issues.updateIssue(issue.number, { body });
    const stage = await session.moveTo('fixed', `all ${phases.length} phases done`);
    await ctx.pulls.closeIssue(issue.number, 'completed');
    await endPhase(session, {
      headline: `All ${phases.length} phases are done (${phases.map((p) => `#${p.number}`).join(', ')})`,
      next: 'Nothing: the issue is closed as completed.',
    });
    return { summary: `epic done: ${phases.length} phases closed; issue closed`, stage };
  }

  if (body !== issue.body) await ctx.issues.updateIssue(issue.number, { body });
  const { phase } = step;
  if (step.kind === 'start') {
    await ctx.issues.addLabels(phase.number, [labelFor('plan')]);
    await ctx.issues.dispatchWorkflow(ctx.next.workflow, ctx.next.ref, {
      issue: String(phase.number),
      phase: 'plan',
      ...(ctx.actor ? { actor: ctx.actor } : {}),
    });
  }
  session.handOff('epic'); // the 👀 stays while the phases run
  await session.publish({
    headline:
      step.kind === 'start'
        ? `Phase ${phase.phase} of ${phases.length} started: #${phase.number} (${done} done)`
        : `Phase ${phase.phase} of ${phases.length} is under way: #${phase.number} (${done} done)`,
    next: 'Each phase starts when the one before it is done; this issue closes when all are.',
  });
  return {
    summary: `epic: ${done}/${phases.length} phases done; ${step.kind === 'start' ? 'started' : 'waiting for'} #${phase.number}`,
    stage: 'epic',
  };
}

/**
 * A phase sub-issue is done (merged, or closed by a human): start its parent's epic phase in a run of its own, on the
 * parent's concurrency group. The marker is only a hint; the epic phase checks its own sub-issue list.
 */
export async function advanceParentEpic(ctx: PhaseContext): Promise<void> {
  const parent = subIssueParent(ctx.issue.body);
  if (parent === undefined || parent === ctx.issue.number) return;
  await ctx.issues.dispatchWorkflow(ctx.next.workflow, ctx.next.ref, {
    issue: String(parent),
    phase: 'epic',
    ...(ctx.actor ? { actor: ctx.actor } : {}),
  });
}
