import {
  hasLogin,
  labelFor,
  lastLabelEvent,
  pipelineLabelsOf,
  type LabelEvent,
  type PipelineStage,
} from '@hydraflow/core';
import { noteRefusedLabel } from '../handlers/label-steering';
import { belowSteering } from '../handlers/may-steer';
import { escalate } from './escalate';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { endPhase } from './end-phase';

/** Who set a stage label honoured without its own event, and whether they may steer. */
type Setter =
  | { stage: PipelineStage; may: true; actor: string }
  | { stage: PipelineStage; may: false; actor: string; permission: Awaited<ReturnType<typeof belowSteering>> & {} }
  | { stage: PipelineStage; may: 'unknown'; why: string };

/**
 * Stage labels that humans set while the dead attempt this re-run replaces held the lock: their label events found the
 * issue locked and were refused (handlers/override.ts waits for a lock, then gives up), so no run acted on them. A
 * dispatched phase's run honours them too (handlers/phase.ts, runDispatched): labels a permitted human set while the
 * run waited in the issue's queue, or that a dead run's lock refused before the sweep resumed its phase. The
 * label says nothing of who set it, and steering is permission-checked (handlers/label-steering.ts, issue #17): the
 * issue's events name who set each (GET /issues/{n}/events, one request on this rare path). A label from someone below
 * commands.min_permission is removed with label steering's note; one whose setter cannot be found is not honoured and a
 * human is asked (fails closed). One permitted label is honoured as the override it was; several conflict, and the
 * re-run cannot know which was set last, so a human chooses (HITL). Property test tests/property/pipeline-histories
 * found three pipeline labels left this way, and (seed 4242) a triage-role user's label honoured.
 */
export async function honourMovesRefusedByLock(
  ctx: PhaseContext,
  stages: readonly PipelineStage[],
  {
    own,
    resume,
  }: {
    /** the dead attempt's own event, a label change, when that is what it ran for (handlers/override.ts) */
    own?: { stage: PipelineStage | null; actor: string };
    /**
     * The phase the dead attempt had gone on to in this run (its claim names it): resumed when no label is honoured,
     * as a re-run with no labels set meanwhile resumes it (handlers/phase.ts, resumption). Without it, nothing would
     * run that phase: the issue would wait at its label with no run on the way.
     */
    resume?: string;
  } = {},
): Promise<PhaseOutcome> {
  const { session, issue } = ctx;
  const lock = await session.acquire(); // the dead attempt's own lock: same run id
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  const setters = await Promise.all(stages.map((stage) => setterOf(ctx, stage)));
  let labels = [...issue.labels];
  for (const s of setters) {
    if (s.may !== false) continue;
    const label = labelFor(s.stage);
    await ctx.issues.removeLabel(issue.number, label);
    labels = labels.filter((l) => l !== label);
    await noteRefusedLabel(ctx, issue.number, session.comments, { label, added: true, actor: s.actor }, s.permission);
  }
  const unknown = setters.filter((s) => s.may === 'unknown');
  if (unknown.length > 0) {
    const which = unknown.map((s) => `\`${labelFor(s.stage)}\``).join(', ');
    return escalate(ctx, {
      headline: 'A stage label was set while HydraFlow held this issue, and who set it is not known',
      reason: `who set ${which} could not be found (${unknown.map((s) => (s.may === 'unknown' ? s.why : '')).join('; ')}), so it was not honoured: labels are steering, and only someone with ${ctx.config.commands.min_permission} permission may move the issue. Set the stage label that should stand`,
    });
  }
  const permitted = setters.filter((s) => s.may === true);
  const named = permitted.map((s) => `\`${labelFor(s.stage)}\``).join(', ');
  if (permitted.length > 1) {
    return escalate(ctx, {
      headline: 'Several stage labels were set while HydraFlow held this issue',
      reason: `${named} were set while an earlier attempt of this run held the issue (their label events were refused), and which one stands is not known: set the stage label that should`,
    });
  }
  if (permitted.length === 0) {
    // Nothing to honour. The dead attempt's own label change, found with nothing to do beside the refused labels, now
    // stands alone (property test, seed 4242: a writer took out the last stage label while a triage-role user's was
    // set): it is honoured if its author may steer.
    const left = pipelineLabelsOf(labels);
    const ownStands =
      own !== undefined &&
      (own.stage === null ? left.length === 0 : left.length === 1 && left[0] === labelFor(own.stage)) &&
      (await belowSteering(ctx, own.actor).catch(() => 'none' as const)) === undefined;
    if (own && ownStands) {
      const stage = await session.moveToByHuman(own.stage, own.actor, labels);
      await endPhase(session, {
        headline: stage === null ? `Taken out of the pipeline by ${own.actor}` : `Moved to ${stage} by ${own.actor}`,
        next:
          stage === null
            ? 'HydraFlow leaves this issue alone until a pipeline label is set again (hydraflow-find to triage).'
            : `HydraFlow resumes from ${stage} when that phase runs.`,
      });
      return {
        summary: `human override honoured: ${stage ?? 'out of the pipeline'} (labels set meanwhile by people who may not steer undone)`,
        stage,
      };
    }
    // Otherwise the issue stays at the state's stage, its label back if someone's change took it.
    const ownLabel = session.state.stage ? labelFor(session.state.stage) : undefined;
    if (ownLabel && !left.includes(ownLabel)) await ctx.issues.addLabels(issue.number, [ownLabel]);
    if (resume) {
      return {
        summary: `stage labels set meanwhile by people who may not steer undone; resumed at ${resume}`,
        stage: session.currentStage,
        continueWith: resume,
      };
    }
    await endPhase(session, {
      headline: 'A stage label set while HydraFlow held the issue was undone',
      next: `HydraFlow resumes from ${session.currentStage ?? 'where it was'} when that phase runs.`,
    });
    return { summary: 'stage labels set meanwhile by people who may not steer undone', stage: session.currentStage };
  }
  const [only] = permitted as [Extract<Setter, { may: true }>];
  const stage = await session.moveToByHuman(only.stage, only.actor, labels);
  await endPhase(session, {
    headline: `Moved to ${stage} by ${only.actor} while HydraFlow held the issue`,
    next: `HydraFlow resumes from ${stage} when that phase runs.`,
  });
  return {
    summary: `human override honoured (${named} by ${only.actor}, set while HydraFlow held the issue)`,
    stage,
  };
}

/** Whether a permitted human set this stage's label (its latest labeled event); false when not known. */
export async function setByPermittedHuman(ctx: PhaseContext, stage: PipelineStage): Promise<boolean> {
  return (await setterOf(ctx, stage)).may === true;
}

/** The issue's label events, read once per run however many labels ask who set them (one request, two past 100). */
const eventsRead = new WeakMap<PhaseContext, Promise<LabelEvent[]>>();
export function labelEventsOf(ctx: PhaseContext): Promise<LabelEvent[]> {
  let events = eventsRead.get(ctx);
  if (!events) eventsRead.set(ctx, (events = ctx.issues.labelEvents(ctx.issue.number)));
  return events;
}

/**
 * Whether someone who may steer, and is not HydraFlow's own identity (a dead run's unpublished move), set this stage's
 * label last: a human's move (handlers/phase.ts, runDispatched).
 */
export async function setByHumanWhoMaySteer(ctx: PhaseContext, stage: PipelineStage): Promise<boolean> {
  const setter = await setterOf(ctx, stage);
  return setter.may === true && !hasLogin(ctx.config.bot_logins, setter.actor);
}

/** Who set a stage label and whether they may steer, asked once per run and label (a permission request each). */
const settersAsked = new WeakMap<PhaseContext, Map<PipelineStage, Promise<Setter>>>();
function setterOf(ctx: PhaseContext, stage: PipelineStage): Promise<Setter> {
  let asked = settersAsked.get(ctx);
  if (!asked) settersAsked.set(ctx, (asked = new Map()));
  let setter = asked.get(stage);
  if (!setter) asked.set(stage, (setter = askSetter(ctx, stage)));
  return setter;
}

async function askSetter(ctx: PhaseContext, stage: PipelineStage): Promise<Setter> {
  const label = labelFor(stage);
  try {
    const actor = lastLabelEvent(await labelEventsOf(ctx), label, 'labeled')?.actor;
    if (!actor) return { stage, may: 'unknown', why: `no labeled event for \`${label}\`` };
    const permission = await belowSteering(ctx, actor);
    return permission === undefined ? { stage, may: true, actor } : { stage, may: false, actor, permission };
  } catch (error) {
    return {
      stage,
      may: 'unknown',
      why: `GitHub answered: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    };
  }
}
