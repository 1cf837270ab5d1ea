import {
  hasLogin,
  RateLimitedError,
  dispatchStage,
  hasHandled,
  isFatal,
  labelFor,
  lastLabelEvent,
  markHandled,
  pipelineLabelRemained,
  pipelineLabelsOf,
  stagesBeside,
  takeDispatch,
  type IssuePhase,
  type PipelineStage,
} from '@hydraflow/core';
import type { App } from '../app';
import { escalate } from '../phases/escalate';
import { honourMovesRefusedByLock, labelEventsOf, setByHumanWhoMaySteer } from '../phases/refused-moves';
import { forgetLabels, setByHumanSinceMove } from './own-labels';
import type { PhaseContext, PhaseOutcome, PhaseSpan } from '../phases/phase-context';
import { MODEL_PHASES, runnerOf, type PhaseRunner } from '../phases/registry';
import type { EarlyCall } from '../agents/model-gateway';
import { openedIssue } from '../runner/event-issue';
import { StateChangedError } from '../session/issue-session';
import {
  canContinueWith,
  freeLockOfDeadAttempt,
  loadIssueAndComments,
  openPhase,
  phaseContext,
  releaseFirstLock,
} from './open-session';
import { heldForHuman, reportIncident } from './untrusted-state';
import { endPhase } from '../phases/end-phase';

export interface PhaseRequest {
  phase: IssuePhase;
  issue: number;
  actor: string | undefined;
  /** Started by another phase's workflow_dispatch (inherits its lock). */
  dispatched: boolean;
  /** A human asked for it explicitly (/triage, /retry): redo even if done. */
  forced: boolean;
  /** Started by the hourly sweep (handlers/sweep.ts): see PhaseContext.swept. */
  swept?: boolean;
  /**
   * The comment that started it (a command, or a reply routed to the phase): done once per comment, whatever the
   * deliveries or re-runs.
   */
  commandId?: number;
}

/**
 * Runs one phase on one issue; an unexpected failure is escalated with the real error before the run fails. `early`
 * is the phase's model call, already started (phases/early-calls.ts).
 */
export async function handlePhase(app: App, request: PhaseRequest, early?: EarlyCall): Promise<PhaseOutcome> {
  // Load the phase's model SDK while GitHub answers the first requests (it is needed unless the work is already done);
  // publish goes on into the review.
  const modelRole = MODEL_PHASES.has(request.phase)
    ? request.phase
    : request.phase === 'publish' && canContinueWith(app, 'review')
      ? 'review'
      : undefined;
  if (modelRole) app.providerFor(modelRole).catch(() => undefined);
  // So does the day's spend ledger (budgets.per_day), which the first model call waits for; its failure surfaces there.
  if (modelRole) app.daySpend?.load().catch(() => undefined);
  // A dispatched phase and the issue's own `opened` run take the lock whatever they find: first, so the state they
  // read is read under it (loadIssueAndComments).
  const lockFirst = request.dispatched || openedIssue(app.runner, request.issue, app.inputs.phase) !== undefined;
  const { issue, comments, locked } = await loadIssueAndComments(app, request.issue, { lockFirst });
  if (issue.state === 'closed' || issue.isPullRequest) await releaseFirstLock(app, issue.number, locked);
  if (issue.state === 'closed') {
    // A re-run of a run that died holding the 👀 lock finds the issue closed: free the lock that run left (property
    // test tests/property/pipeline-histories found it leaked on closed issues).
    await freeLockOfDeadAttempt(app, issue);
    return { summary: `issue #${issue.number} is closed; HydraFlow acts on open issues only`, stage: null };
  }
  if (issue.isPullRequest) return { summary: `#${issue.number} is a pull request, not an issue`, stage: null };
  const startedAt = Date.now();
  const ctx = await openPhase(app, { ...request, comment: request.commandId, issue, early, comments, locked });
  try {
    return await runPhase(app, request, ctx, startedAt);
  } finally {
    // the lock taken first, when the run found nothing to do (work done, a taken dispatch, a held issue)
    await ctx.session.releaseUnusedLock().catch(() => undefined);
  }
}

async function runPhase(app: App, request: PhaseRequest, ctx: PhaseContext, startedAt: number): Promise<PhaseOutcome> {
  const done = doneBefore(app, ctx, request);
  if (done !== undefined) return finishDone(app, ctx, done);
  // State HydraFlow did not write last is never acted on; a permitted human's explicit go starts the issue over.
  const held = (await reportIncident(ctx, app.sleep)) ?? (await heldForHuman(ctx, request.forced));
  if (held) return held;
  // A re-run, or the hourly sweep looking at an issue again, first finishes a label move that HydraFlow published
  // and did not finish (its run was cut after the state and before the old label came off).
  if (app.runner.runAttempt > 1 || request.swept) await finishCutMove(ctx);
  // A swept look writes nothing unless something is due, so it takes no lock that would replace the 👀 its dead
  // attempt left after publishing (no claim names a holder): its re-run frees it, as finishDone does for other runs.
  if (request.swept && app.runner.runAttempt > 1 && ctx.session.state.claim === undefined) await ctx.session.dropLock();
  const runner = runnerOf(request.phase);
  if (!runner) return phaseUnavailable(ctx.session, request.phase);
  const outcome =
    (await resumption(app, ctx, request.phase)) ??
    (request.dispatched
      ? await runDispatched(ctx, request.phase, runner)
      : await runEscalating(ctx, request.phase, () => runner(ctx)));
  return continueRun(app, ctx, { phase: request.phase, startedAt, endedAt: Date.now() }, outcome);
}

/**
 * Whether the work this run was started for was done by a run before it — say why — or it is this run's to do (the
 * state is then marked so). The work is a slash command (`comment:<id>`, done once per comment) or HydraFlow's
 * workflow_dispatch of this phase (the dispatch, taken by the first run GitHub starts for it: GitHub may start several
 * for one, when it performed a request it answered 5xx and HydraFlow sent it again). A new run for work done by any
 * run does nothing. So does a re-run of the run that did it — unless that run died half-way: the state still names it
 * as the lock's holder (it published a phase's state, then died in the next phase of its chain, maybe half-way
 * through a label swap); its re-run then finishes the work (`resumption`).
 */
function doneBefore(app: App, ctx: PhaseContext, request: PhaseRequest): string | undefined {
  const { session } = ctx;
  const { runId } = app.runner;
  const interrupted = session.earlierAttemptsClaim !== undefined;
  if (request.commandId !== undefined) {
    const id = `comment:${request.commandId}`;
    if (hasHandled(session.state, id) && !interrupted)
      return `the command of comment ${request.commandId} was done already`;
    session.update((s) => markHandled(s, id));
  }
  if (request.dispatched && hasLogin(app.config.bot_logins, app.runner.payload.sender?.login)) {
    const taking = takeDispatch(session.state, request.phase, runId);
    if (taking.kind === 'duplicate')
      return `the ${request.phase} dispatch this run was started for was taken by run ${taking.by}`;
    if (taking.kind === 'ours' && !interrupted)
      return `this run did the ${request.phase} phase it was dispatched for already`;
    if (taking.kind === 'taken') session.update(() => taking.state);
  }
  return undefined;
}

/**
 * Work done before: nothing to do. A re-run still finishes what its earlier attempt may have left after its last publish:
 * the 👀 it held, if no claim names a holder (it died before removing it), and a dispatch it recorded that no run took.
 */
async function finishDone(app: App, ctx: PhaseContext, summary: string): Promise<PhaseOutcome> {
  if (app.runner.runAttempt > 1) await finishCutMove(ctx);
  if (app.runner.runAttempt > 1 && ctx.session.state.claim === undefined) await ctx.session.dropLock();
  await sendDispatches(app, ctx);
  return { summary: `${summary}; nothing to do`, stage: ctx.session.currentStage };
}

/**
 * Triage removes the stage label it leaves only after publishing its verdict (ADR 0014): an earlier attempt that died in
 * between left both labels, the one its state's last move came from beside the one it went to. Its re-run, finding the
 * work done, finishes that move (property test tests/property/pipeline-histories: a /triage that died there). The
 * label it went to may have been taken off since, while the stale one stood: no move (the router skips a removal that
 * leaves a pipeline label), so it is put back before the stale one comes off (stillOwnCut).
 */
async function finishCutMove(ctx: PhaseContext): Promise<void> {
  const last = ctx.session.state.history.at(-1);
  const stage = ctx.session.state.stage ?? null;
  if (!last || last.by !== 'hydraflow' || !last.from || last.to !== stage || stage === null || last.from === stage)
    return;
  // Both labels, whatever else: a human's label set since then (its event maybe still on its way) is that event's to
  // steer, never a reason to leave HydraFlow's own stale label (property test: a triage-role user's hydraflow-find
  // beside the two left the issue on hydraflow-plan and hydraflow-groom).
  const pipeline = pipelineLabelsOf(ctx.issue.labels);
  const taken = labelFor(last.from);
  const wanted = labelFor(stage);
  if (!pipeline.includes(taken)) return;
  if (!pipeline.includes(wanted)) {
    if (!(await stillOwnCut(ctx, taken, wanted))) return;
    await ctx.issues.addLabels(ctx.issue.number, [wanted]);
    ctx.issue.labels = [...ctx.issue.labels, wanted];
  } else if (await setAgainByHuman(ctx, taken, wanted)) return;
  await ctx.issues.removeLabel(ctx.issue.number, taken);
  // (property test, CI seed -1844924908: an escalation cut before it took off hydraflow-plan; the re-run took it off,
  // then, still seeing it, honoured it as a writer's move and left the issue with no label)
  forgetLabels(ctx, [taken]);
  ctx.cutFinished = taken;
}

/**
 * Whether the stale label of a cut move was set again since by someone else than HydraFlow: a human moving the issue
 * back (a writer's hydraflow-discover on an issue discover had left), whose own event's run steers it (property test
 * tests/property/pipeline-histories, product seed 397133805: the hourly sweep took it off as the move's leftover and her
 * event's run found nothing to do). "Since" is after the move added `wanted`: a human's setting of the label before it
 * is the one the move left (pipeline seed -1846220037: an admin opened the issue with hydraflow-discover, /triage
 * escalated it and died before taking that label off, and its re-run left it beside hydraflow-hitl). The issue's
 * events say (labelEventsOf); when they cannot be read, the label is taken as the leftover it usually is.
 */
async function setAgainByHuman(ctx: PhaseContext, taken: string, wanted: string): Promise<boolean> {
  const events = await labelEventsOf(ctx).catch(() => undefined);
  return events !== undefined && setByHumanSinceMove(ctx.config, events, taken, wanted);
}

/**
 * Whether a cut move whose label `wanted` is gone is still HydraFlow's to finish: `wanted` was taken off while a
 * pipeline label stood beside it (no move: packages/core/src/router/route.ts), and no human has set `taken` since the
 * move added `wanted` (moving the issue back to it). The issue's events say (labelEventsOf: read once per run, on this
 * rare path only). Property test tests/property/pipeline-histories, product seed -1137976996: a discover run died
 * between adding hydraflow-shape and taking off hydraflow-discover, a triage-role user took off hydraflow-shape, and
 * the issue ended with both labels.
 */
async function stillOwnCut(ctx: PhaseContext, taken: string, wanted: string): Promise<boolean> {
  const events = await labelEventsOf(ctx).catch(() => undefined);
  const removal = events && lastLabelEvent(events, wanted, 'unlabeled');
  if (!events || !removal || !pipelineLabelRemained(events, removal.index, wanted)) return false;
  // `taken` set again since the move added `wanted` is no leftover of the cut, whoever set it: a human (their event
  // steers), or a later move of HydraFlow's own that died before publishing it (product seed -1703224964: the sweep's
  // shape timeout finished its move to hydraflow-hitl, a /retry moved the issue back to hydraflow-shape and died; its
  // re-run "finished" the sweep's move, and the shape phase it then resumed left hydraflow-hitl under a shape state).
  const setAt = lastLabelEvent(events, taken, 'labeled')?.index;
  return setAt !== undefined && setAt < (lastLabelEvent(events, wanted, 'labeled')?.index ?? -1);
}

/**
 * The run's last act: the workflow_dispatch its last phase recorded goes out once everything the run wrote is on GitHub
 * (the state that records the hand-off, the lock handed on or freed), so the run it starts finds it all in place. A
 * re-run sends again the dispatches an earlier attempt recorded and no run took (GitHub may not have performed them);
 * were they performed after all, the first run of the phase takes the dispatch and the others do nothing.
 */
export function sendDispatches(app: App, ctx: PhaseContext): Promise<void> {
  return ctx.session.sendDispatches(ctx.next, { resend: app.runner.runAttempt > 1, actor: ctx.actor });
}

/** A dispatched (or continued) phase runs only if its issue is still where the phase that started it left it. */
async function runDispatched(ctx: PhaseContext, phase: string, runner: PhaseRunner): Promise<PhaseOutcome> {
  const expected = dispatchStage(phase);
  // The label decides (ADR-0002): HydraFlow adds the next stage's label before it dispatches, so a dispatched phase
  // whose label is gone was taken out by a human — even if that human's unlabeled event has not been processed yet.
  // An issue waiting for triage has hydraflow-find or no pipeline label at all (a dispatched triage resumes a pause).
  const stillThere =
    expected === 'find'
      ? (ctx.session.currentStage ?? 'find') === 'find' &&
        pipelineLabelsOf(ctx.issue.labels).every((l) => l.toLowerCase() === labelFor('find'))
      : ctx.session.currentStage === expected && ctx.issue.labels.some((l) => l.toLowerCase() === labelFor(expected));
  if (expected && !stillThere) return movedMeanwhile(ctx.session, phase, expected);
  // Likewise a stage label a permitted human set beside it: their move, though its own run comes later (queued behind
  // this one in the issue's concurrency group) or never (it gave up on a lock a dead run held, and the sweep resumed
  // that run's phase). Running the phase would take the label off with its move; the move is honoured instead
  // (tests/queued-label.e2e.test.ts). Labels of people who may not steer are left to the phase, as before.
  const beside = expected && expected !== 'find' ? stagesBeside(ctx.issue.labels, expected) : [];
  for (const stage of beside) {
    if (await setByHumanWhoMaySteer(ctx, stage))
      return runEscalating(ctx, phase, () => honourMovesRefusedByLock(ctx, beside));
  }
  return runEscalating(ctx, phase, () => runner(ctx));
}

/** Runs a phase; an unexpected failure is escalated with the real error (on the issue) before the run fails. */
export async function runEscalating(
  ctx: PhaseContext,
  phase: string,
  work: () => Promise<PhaseOutcome>,
): Promise<PhaseOutcome> {
  try {
    return await work();
  } catch (error) {
    // GitHub's rate limit: nothing could be written now anyway; the issue is left where a later run resumes it (ADR 0014)
    if (error instanceof RateLimitedError) throw error;
    if (error instanceof StateChangedError) throw error; // not a failure: the run starts over (execute.ts)
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    try {
      const outcome = await escalate(ctx, { headline: `The ${phase} phase failed`, reason: message, failed: true });
      return isFatal(error) ? outcome : { ...outcome, summary: `${phase} failed: ${message}` };
    } catch {
      throw error; // GitHub itself is failing: the original error is the one to report
    }
  }
}

/**
 * Runs the phases the finished one handed to this run (`continueWith`, see phases/next-phase.ts), each on a fresh read
 * of the issue, so a human who moved it meanwhile is honoured as with a dispatch.
 */
export async function continueRun(
  app: App,
  first: PhaseContext,
  firstSpan: PhaseSpan,
  outcome: PhaseOutcome,
): Promise<PhaseOutcome> {
  const outcomes = [outcome];
  const spans = [firstSpan];
  let ctx = first;
  let next = outcome.continueWith;
  let handed = handedCall(outcome);
  while (next) {
    const phase = next;
    const runner = runnerOf(phase)!;
    const startedAt = Date.now();
    try {
      const issue = await app.issues.getIssue(ctx.issue.number);
      const session = ctx.session.continueAs(phase, issue.labels);
      ctx = phaseContext(app, { issue, session, phase, actor: ctx.actor, forced: false, early: handed });
      outcome = issue.state === 'closed' ? await stopOnClosed(ctx, phase) : await runDispatched(ctx, phase, runner);
    } finally {
      handed?.cancel(); // not adopted (the phase did not run, or asked another call): stop paying for it
    }
    outcomes.push(outcome);
    spans.push({ phase, startedAt, endedAt: Date.now() });
    next = outcome.continueWith;
    handed = handedCall(outcome);
  }
  await sendDispatches(app, ctx);
  return { ...(outcomes.length === 1 ? outcome : chained(outcomes)), phases: spans };
}

/** The next phase's first model call, begun by the phase that produced `outcome`; cancelled when nothing runs next. */
function handedCall(outcome: PhaseOutcome): EarlyCall | undefined {
  if (outcome.continueWith) return outcome.nextCall;
  outcome.nextCall?.cancel();
  return undefined;
}

/**
 * A re-run of a run that died after going on from its first phase into another (the claim its earlier attempt left
 * names that phase): it resumes there instead of starting over, if this step can run that phase. Stage labels that
 * humans set meanwhile were refused by the dead attempt's lock: they are honoured first (refused-moves.ts), by triage
 * itself when that is the first phase (a lone `hydraflow-find` asks it for a fresh triage).
 */
export async function resumption(app: App, ctx: PhaseContext, firstPhase: string): Promise<PhaseOutcome | undefined> {
  const claim = ctx.session.earlierAttemptsClaim;
  if (!claim || claim.phase === firstPhase) return undefined;
  if (!ctx.canContinueWith(claim.phase)) return undefined;
  const refused = stagesBeside(ctx.issue.labels, ctx.session.state.stage ?? null);
  if (refused.length > 0) {
    return firstPhase === 'triage'
      ? undefined
      : runEscalating(ctx, claim.phase, () => honourMovesRefusedByLock(ctx, refused, { resume: claim.phase }));
  }
  return {
    summary: `resumed at ${claim.phase}, where an earlier attempt of this run had gone on to`,
    stage: ctx.session.currentStage,
    continueWith: claim.phase,
  };
}

/** Closed while the previous phase ran: nothing more runs; the queued close event's run tidies the labels. */
async function stopOnClosed(ctx: PhaseContext, phase: string): Promise<PhaseOutcome> {
  await endPhase(ctx.session, {
    headline: `The ${phase} phase did not start: the issue was closed`,
    next: 'HydraFlow acts on open issues only; reopen it and comment /retry to resume.',
  });
  return { summary: `${phase} not started: issue #${ctx.issue.number} was closed`, stage: ctx.session.currentStage };
}

/** One outcome for the phases one run went through: every summary, the last stage, all outputs. */
function chained(outcomes: readonly PhaseOutcome[]): PhaseOutcome {
  const last = outcomes[outcomes.length - 1]!;
  const details = outcomes.map((o) => o.details).filter((d): d is string => Boolean(d));
  const outputs = Object.assign({}, ...outcomes.map((o) => o.outputs ?? {})) as Record<string, string>;
  return {
    summary: outcomes.map((o) => o.summary).join('; then '),
    stage: last.stage,
    ...(outcomes.some((o) => o.failed) ? { failed: true } : {}),
    ...(details.length ? { details: details.join('\n\n') } : {}),
    ...(Object.keys(outputs).length ? { outputs } : {}),
  };
}

/** A human moved (or took out) the issue after the previous phase dispatched this one: the human wins, nothing runs. */
async function movedMeanwhile(
  session: Awaited<ReturnType<typeof openPhase>>['session'],
  phase: string,
  expected: PipelineStage,
): Promise<PhaseOutcome> {
  const stage = session.currentStage;
  // at the expected stage by its state, the stage's label gone: a human took the label off
  const labelGone = stage === expected ? `its label ${labelFor(expected)} was taken off` : undefined;
  const summary = `the dispatched ${phase} did not run: ${labelGone ?? `the issue is ${stage ? `at ${labelFor(stage)}` : 'out of the pipeline'}, not ${labelFor(expected)}`}, so a human moved it`;
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary, stage };
  await endPhase(session, {
    headline: `The ${phase} phase did not start: ${labelGone ?? `the issue was moved ${stage ? `to ${stage}` : 'out of the pipeline'}`}`,
    next: 'HydraFlow follows the label: set a stage label (or comment /retry) to resume.',
  });
  return { summary, stage };
}

/** A phase this version does not implement yet: say so on the issue, keep the stage, free the lock. */
async function phaseUnavailable(
  session: Awaited<ReturnType<typeof openPhase>>['session'],
  phase: string,
): Promise<PhaseOutcome> {
  const lock = await session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  session.releaseClaim();
  const stage = session.currentStage;
  await session.publish({
    headline: `The ${phase} phase is not available in this HydraFlow version`,
    next: `The issue waits${stage ? ` at \`${labelFor(stage)}\`` : ''}: a human can take it from here, or move it to another stage by label.`,
  });
  await session.unlock();
  return { summary: `phase ${phase} is not implemented in this version; issue left at ${stage ?? 'no stage'}`, stage };
}
