/**
 * Shape (docs/adr/0016-shape.md; product track, docs/adr/0012-product-track.md): the shape agent proposes 2–5 product
 * directions in ONE comment (updated in place), and the issue waits at `hydraflow-shape` for a human:
 *
 * - a reply by a permitted human (the issue's author, or commands.min_permission) that selects one direction
 *   (core: shape/match.ts), or `/ship-it [direction]`, finalizes: a finalization comment with the chosen direction's
 *   data block, `state.shape.selected` and `decomposition`, then `hydraflow-plan` and a dispatch of plan;
 * - any other reply by a permitted human is a conversation turn (one model call; the directions may change), at most
 *   max_shape_turns, after which a human is asked to pick (no model call);
 * - a reply by anyone else changes nothing but a visible reason: 😕 on it and a line in the progress comment;
 * - the hourly sweep escalates a conversation with no human reply for shape_timeout_minutes (`ctx.swept`, no model).
 *
 * The run started by a comment handles that comment once (handlers/phase.ts marks `comment:<id>` handled).
 */
import {
  hasLogin,
  DIRECTIONS_MARKER,
  FINAL_MARKER,
  ModelOutputError,
  SHAPE_CONVERSATION_LIMIT,
  answerMarker,
  extractSignals,
  isFatal,
  labelFor,
  matchSelection,
  parseCommand,
  permissionAtLeast,
  pipelineLabelsOf,
  readBriefData,
  readShapeData,
  renderAskPickComment,
  renderDirectionsComment,
  renderFinalComment,
  renderTurnComment,
  shapePreferenceEntries,
  shipItChoice,
  ConcernsUnavailableError,
  type ShapeDirection,
  type ShapeLetter,
  type ShapeRecord,
  type ShapeReply,
  type ShapeTurn,
} from '@hydraflow/core';
import type { IssueComment } from '@hydraflow/github';
import type { PhaseContext, PhaseOutcome } from '../phase-context';
import { endPhase } from '../end-phase';
import { escalate } from '../escalate';
import { stopSpending } from '../pause';
import { dropUnpublishedMovesOf } from '../../handlers/own-labels';
import { recallMemories, retainPreferences } from './memory';
import { shapeCall, type ShapeMessage } from './prompt';
import { runShapeCouncil } from '../adversarial/shape-council';
import { forgetRunningStages } from '../adversarial/stage-driver';
import { clearLeftoverRunningLabels } from '../adversarial/running-label';

/**
 * Requests a shape run makes at most after reading the issue: the lock (2), the permission, the comment(s) written
 * (2), the label move (2), the progress comment, the lock freed, the dispatch; and the memory (ADR 0015): its read for
 * a turn, or the retain of a finalized conversation (a read and a write; four requests when it creates the branch).
 */
export const SHAPE_REQUESTS = 15;

type Trigger =
  | { kind: 'none' }
  | { kind: 'reply'; comment: IssueComment }
  | { kind: 'ship-it'; comment: IssueComment; args: string };

export async function runShape(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session } = ctx;
  const stage = session.currentStage;
  if (ctx.swept) return timeout(ctx);
  const trigger = triggerOf(ctx);
  const record = session.state.shape;
  if (trigger.kind === 'none') {
    // the first turn: discover's dispatch, or a human's /retry after it failed (from hydraflow-hitl)
    if (stage !== 'shape' && !ctx.forced)
      return { summary: `issue #${issue.number} does not wait for shaping (${stage ?? 'no stage'})`, stage };
    if (record && !ctx.forced) return { summary: `the directions of #${issue.number} are posted already`, stage };
    return firstTurn(ctx);
  }
  // A re-run whose dead attempt chose a direction and died after moving the label, before publishing the choice and
  // dispatching plan (its finalization comment is there): the choice is redone from this same comment, which finishes
  // what the attempt began; without it the issue sat at plan with the state at shape and no plan run (property test
  // tests/property/pipeline-histories.test.ts, product-track seed -100551279).
  const deadChoice =
    session.options.runAttempt > 1 &&
    stage === 'plan' &&
    record !== undefined &&
    !record.selected &&
    session.comments.some((c) => isOurs(ctx, c) && c.body.startsWith(FINAL_MARKER));
  if (!deadChoice && (stage !== 'shape' || !record || record.selected)) {
    // its dead attempt's 👀, if this is a re-run (product property seed 385888652: a crashed reply's re-run found the
    // issue moved to hydraflow-find and left the lock for good)
    await session.freeDeadAttemptsLock();
    return {
      summary: `issue #${issue.number} does not wait for a direction (${stage ?? 'no stage'}${record?.selected ? `, ${record.selected.letter} chosen` : ''}): comment ${trigger.comment.id} changes nothing`,
      stage,
    };
  }
  await ctx.ensureRequests?.(SHAPE_REQUESTS, `shape reply on #${issue.number}`);
  const lock = await session.acquire();
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage };
  await dropUnpublishedMovesOf(ctx);
  try {
    return await answer(ctx, record, trigger);
  } catch (error) {
    if (isFatal(error)) return stopSpending(ctx, error, 'Shaping stopped before spending more');
    throw error;
  }
}

/** The comment that started this run, if any: a reply, or a /ship-it (a /retry or /groom starts the first turn). */
function triggerOf(ctx: PhaseContext): Trigger {
  if (ctx.comment === undefined) return { kind: 'none' };
  const comment = ctx.session.comments.find((c) => c.id === ctx.comment);
  if (!comment?.user || isOurs(ctx, comment)) return { kind: 'none' };
  const command = parseCommand(comment.body);
  if (!command) return { kind: 'reply', comment };
  return command.name === 'ship-it' ? { kind: 'ship-it', comment, args: command.args } : { kind: 'none' };
}

const isOurs = (ctx: PhaseContext, c: IssueComment) => c.user !== null && hasLogin(ctx.config.bot_logins, c.user.login);

const now = (ctx: PhaseContext) => ctx.session.options.now().toISOString();

/** The progress comment's shape status: since when it waits for a human, the turns used. */
function status(ctx: PhaseContext, record: ShapeRecord, extra?: string): string {
  return [
    `**Shape** · ${record.letters.length} directions (${record.letters.join(', ')}) · waiting for a human since ${record.waitingSince} (timeout ${ctx.config.shape_timeout_minutes} min) · turns used ${record.turns} of ${ctx.config.max_shape_turns}`,
    ...(extra ? ['', extra] : []),
  ].join('\n');
}

const NEXT_WAIT =
  'A human chooses: reply with a direction’s letter or name, or comment `/ship-it [letter]`; any other reply is answered.';

async function firstTurn(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session } = ctx;
  await ctx.ensureRequests?.(SHAPE_REQUESTS, `shaping of #${issue.number}`);
  const lock = await session.acquire({ takeOver: ctx.forced });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  // a run killed while the shape council ran left its transient label: no stage of this run runs yet
  await clearLeftoverRunningLabels(ctx);
  let turn: ShapeTurn;
  let council: string[] = [];
  try {
    turn = await proposeDirections(ctx);
    // The adversarial shape council (adversarial/shape-council.ts): the directions are attacked before anyone sees them.
    if (ctx.config.adversarial.enabled) {
      const result = await runShapeCouncil(ctx, turn, (current, notes) =>
        proposeDirections(ctx, { directions: current.directions, notes }),
      );
      turn = result.turn;
      council = result.lines;
    }
  } catch (error) {
    if (isFatal(error)) return stopSpending(ctx, error, 'Shaping stopped before spending more');
    if (error instanceof UnusableDirections) {
      return escalate(ctx, {
        headline: 'Shape did not produce usable directions (redone once), so nothing was guessed',
        reason: error.message,
      });
    }
    if (error instanceof ConcernsUnavailableError) {
      forgetRunningStages(ctx, 'shape');
      return escalate(ctx, {
        headline: 'The shape council’s recorded concerns are gone, so it did not guess them; /retry starts it over',
        reason: error.message,
      });
    }
    throw error;
  }
  if (session.currentStage !== 'shape') await session.moveTo('shape', 'shape: directions posted');
  const { body, hash } = renderDirectionsComment(turn.directions, { turns: 0, maxTurns: ctx.config.max_shape_turns });
  const comment = await upsert(ctx, session.state.shape?.commentId, DIRECTIONS_MARKER, body);
  const record: ShapeRecord = {
    commentId: comment.id,
    hash,
    letters: turn.directions.map((d) => d.letter),
    turns: 0,
    replies: [],
    waitingSince: now(ctx),
  };
  session.update((s) => ({ ...s, shape: record, lastError: undefined }));
  await endPhase(session, {
    headline: `Shape: ${turn.directions.length} product directions posted; waiting for a human to choose`,
    next: NEXT_WAIT,
    details: [
      status(ctx, record, `See [the directions](${comment.htmlUrl}).`),
      ...(council.length ? ['', ...council] : []),
    ].join('\n'),
  });
  return {
    summary: `shape: ${turn.directions.length} directions posted; waiting for a human`,
    stage: 'shape',
    // the shape council's outcome goes to the job summary too (run.ts shows an outcome's details there)
    ...(council.length ? { details: council.join('\n') } : {}),
  };
}

/** The shape agent's answer broke the rules twice (the provider's repair is the one redo). */
class UnusableDirections extends Error {}

/** The first turn's directions, or their revision for the shape council's blocking concerns (`revise.notes`). */
async function proposeDirections(
  ctx: PhaseContext,
  revise?: { directions: readonly ShapeDirection[]; notes: string },
): Promise<ShapeTurn> {
  const called = await callModel(ctx, revise?.directions ?? [], [], revise?.notes);
  if ('failure' in called) throw new UnusableDirections(called.failure);
  return called.turn;
}

type Called = { turn: ShapeTurn } | { failure: string };

/** One turn's model call; a failure when the answer broke the rules twice (the provider's repair is the one redo). */
async function callModel(
  ctx: PhaseContext,
  directions: readonly ShapeDirection[],
  conversation: readonly ShapeMessage[],
  revision?: string,
): Promise<Called> {
  const discover = ctx.session.state.discover;
  const briefComment = discover && ctx.session.comments.find((c) => c.id === discover.commentId && isOurs(ctx, c));
  const brief = discover && briefComment ? readBriefData(briefComment.body, discover.hash) : undefined;
  // the memory store's seam (one call site): what this team preferred before, recalled for this issue
  const memories = await recallMemories(ctx);
  try {
    return {
      turn: await ctx.models.structured(
        shapeCall({ issue: ctx.issue, brief, memories, directions, conversation, ...(revision ? { revision } : {}) }),
      ),
    };
  } catch (error) {
    if (error instanceof ModelOutputError) return { failure: error.message.slice(0, 500) };
    throw error;
  }
}

/** A human's reply or /ship-it on an issue waiting at hydraflow-shape, under the lock. */
async function answer(
  ctx: PhaseContext,
  record: ShapeRecord,
  trigger: Exclude<Trigger, { kind: 'none' }>,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const comment = trigger.comment;
  const by = comment.user!.login;
  if (record.replies.some((r) => r.commentId === comment.id)) {
    await session.unlock();
    return { summary: `comment ${comment.id} was handled already`, stage: 'shape' };
  }
  const signals = extractSignals(comment.body);
  const reply = (outcome: ShapeReply['outcome']): ShapeReply => ({
    commentId: comment.id,
    by,
    at: now(ctx),
    signals: outcome === 'refused' ? [] : signals,
    outcome,
  });
  // /ship-it was permission-checked as a command (handlers/command.ts); a reply is checked here, so that a stranger's
  // gets a visible reason (no reply comment: strangers cost nothing) and no model call.
  if (trigger.kind === 'reply' && !(await mayChoose(ctx, by))) {
    await ctx.issues.reactToComment(comment.id, 'confused');
    const next = withReply(record, reply('refused'));
    session.update((s) => ({ ...s, shape: next }));
    await endPhase(session, {
      headline: `Shape: ignored ${by}'s reply: choosing a direction needs the issue’s author or ${ctx.config.commands.min_permission} permission`,
      next: NEXT_WAIT,
      details: status(ctx, next),
    });
    return { summary: `shape: ${by} may not choose a direction; nothing changed`, stage: 'shape' };
  }
  const directionsComment = session.comments.find((c) => c.id === record.commentId && isOurs(ctx, c));
  const directions = readShapeData(directionsComment?.body, record.hash);
  if (!directions) {
    return escalate(ctx, {
      headline: 'Shape: the directions comment was changed or deleted, so no choice can be read against it',
      reason: `comment ${record.commentId} no longer holds the directions HydraFlow recorded (hash ${record.hash.slice(0, 12)}…)`,
      next: 'A human decides: comment /retry to post the directions afresh, or move the issue on by label.',
    });
  }
  if (trigger.kind === 'ship-it') {
    const letter = shipItChoice(trigger.args, directions);
    if (!letter) {
      return askPick(
        ctx,
        record,
        reply('ask-pick'),
        `\`/ship-it ${trigger.args.slice(0, 40)}\` names none of the directions.`,
      );
    }
    return finalize(ctx, record, directions, letter, reply('selected'), 'ship-it');
  }
  const selection = matchSelection(comment.body, directions);
  if (selection.kind === 'selected')
    return finalize(ctx, record, directions, selection.letter, reply('selected'), 'comment');
  if (record.turns >= ctx.config.max_shape_turns) {
    return askPick(
      ctx,
      record,
      reply('ask-pick'),
      `This conversation has used its ${ctx.config.max_shape_turns} turn(s) (max_shape_turns).`,
    );
  }
  return conversationTurn(ctx, record, directions, reply('turn'));
}

async function mayChoose(ctx: PhaseContext, login: string): Promise<boolean> {
  if (ctx.issue.author?.login && ctx.issue.author.login.toLowerCase() === login.toLowerCase()) return true;
  return permissionAtLeast(await ctx.issues.getPermission(login), ctx.config.commands.min_permission);
}

function withReply(record: ShapeRecord, reply: ShapeReply, changes: Partial<ShapeRecord> = {}): ShapeRecord {
  return { ...record, ...changes, replies: [...record.replies, reply].slice(-SHAPE_CONVERSATION_LIMIT) };
}

/** The conversation so far, re-read from the comments by id: the permitted humans' replies and HydraFlow's answers. */
function conversationOf(ctx: PhaseContext, record: ShapeRecord, latest: IssueComment): ShapeMessage[] {
  const byId = new Map(ctx.session.comments.map((c) => [c.id, c]));
  const messages: ShapeMessage[] = [];
  for (const r of record.replies) {
    if (r.outcome === 'refused') continue;
    const human = byId.get(r.commentId);
    if (human) messages.push({ from: 'human', by: r.by, text: human.body });
    const ours = ctx.session.comments.find((c) => isOurs(ctx, c) && c.body.startsWith(answerMarker(r.commentId)));
    if (ours)
      messages.push({ from: 'hydraflow', by: 'HydraFlow', text: ours.body.slice(answerMarker(r.commentId).length) });
  }
  messages.push({ from: 'human', by: latest.user!.login, text: latest.body });
  return messages;
}

async function conversationTurn(
  ctx: PhaseContext,
  record: ShapeRecord,
  directions: readonly ShapeDirection[],
  reply: ShapeReply,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const latest = session.comments.find((c) => c.id === reply.commentId)!;
  const called = await callModel(ctx, directions, conversationOf(ctx, record, latest));
  if ('failure' in called) {
    session.update((s) => ({ ...s, shape: withReply(record, reply) }));
    return escalate(ctx, {
      headline: 'Shape could not answer the reply with usable directions (redone once), so nothing was guessed',
      reason: called.failure,
    });
  }
  const { turn } = called;
  const turns = record.turns + 1;
  const rendered = renderDirectionsComment(turn.directions, { turns, maxTurns: ctx.config.max_shape_turns });
  const revised = rendered.hash !== record.hash;
  const directionsComment = revised ? await upsert(ctx, record.commentId, DIRECTIONS_MARKER, rendered.body) : undefined;
  const answered = await upsert(
    ctx,
    undefined,
    answerMarker(reply.commentId),
    renderTurnComment(reply.commentId, turn.reply, revised),
  );
  const next = withReply(record, reply, {
    commentId: directionsComment?.id ?? record.commentId,
    hash: rendered.hash,
    letters: turn.directions.map((d) => d.letter),
    turns,
    waitingSince: now(ctx),
  });
  session.update((s) => ({ ...s, shape: next }));
  await endPhase(session, {
    headline: `Shape: answered ${reply.by}'s reply (turn ${turns} of ${ctx.config.max_shape_turns})${revised ? '; the directions are revised' : ''}`,
    next: NEXT_WAIT,
    details: status(ctx, next, `See [the answer](${answered.htmlUrl}).`),
  });
  return {
    summary: `shape: turn ${turns}${revised ? ', directions revised' : ''}; waiting for a human`,
    stage: 'shape',
  };
}

/** The turns are used up, or a /ship-it named no direction: a short comment asks a human to pick. No model call. */
async function askPick(ctx: PhaseContext, record: ShapeRecord, reply: ShapeReply, why: string): Promise<PhaseOutcome> {
  const { session } = ctx;
  const asked = await upsert(
    ctx,
    undefined,
    answerMarker(reply.commentId),
    renderAskPickComment(reply.commentId, why, record.letters),
  );
  const next = withReply(record, reply, { waitingSince: now(ctx) });
  session.update((s) => ({ ...s, shape: next }));
  await endPhase(session, {
    headline: `Shape: a human is asked to pick a direction (${why.replace(/\.$/, '')})`,
    next: NEXT_WAIT,
    details: status(ctx, next, `See [the request](${asked.htmlUrl}).`),
  });
  return { summary: `shape: asked a human to pick (${why})`, stage: 'shape' };
}

/**
 * The direction is chosen: the finalization comment, the signed record (selected, decomposition), the preferences
 * retained, then plan (dispatched) — or, for the defer direction, a human (who closes the issue as not planned).
 */
async function finalize(
  ctx: PhaseContext,
  record: ShapeRecord,
  directions: readonly ShapeDirection[],
  letter: ShapeLetter,
  reply: ShapeReply,
  via: 'comment' | 'ship-it',
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const chosen = directions.find((d) => d.letter === letter)!;
  const { body, hash } = renderFinalComment(chosen, { by: reply.by, via });
  const final = await upsert(ctx, undefined, FINAL_MARKER, body);
  const at = now(ctx);
  const next = withReply(record, reply, {
    selected: { letter, commentId: final.id, hash, by: reply.by, at, via },
    decomposition: !chosen.defer,
  });
  session.update((s) => ({ ...s, shape: next }));
  // the memory store's seam (one call site): the preferences this conversation taught
  await retainPreferences(ctx, preferences(ctx, next, chosen));
  if (chosen.defer) {
    return escalate(ctx, {
      headline: `Shape: ${reply.by} chose ${letter} (${chosen.name.slice(0, 60)}), which defers the work`,
      reason: `the defer direction ${letter} was chosen: nothing is planned`,
      next: 'A human closes the issue as not planned (or moves it to another stage by label to go on after all).',
    });
  }
  const stage = await session.moveTo('plan', `shape: direction ${letter} chosen by ${reply.by}`);
  if (stage !== 'plan') {
    await endPhase(session, {
      headline: `Direction ${letter} chosen, but a human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
      details: status(ctx, next, `See [the chosen direction](${final.htmlUrl}).`),
    });
    return { summary: `direction ${letter} chosen; human override to ${stage} honoured`, stage };
  }
  // plan runs in a run of its own (its log is its own, and this run may be a comment's): dispatched with the lock
  session.dispatch(ctx.next.workflow, ctx.next.ref, 'plan', ctx.actor);
  await session.publish({
    headline: `Direction ${letter} chosen by ${reply.by}: ${chosen.name.slice(0, 80)}`,
    next: `Planning starts next (HydraFlow dispatches the plan phase): the plan splits the work into 3–8 sub-issues.`,
    details: `**Shape** · direction ${letter} chosen with ${via === 'ship-it' ? '`/ship-it`' : 'a reply'} after ${record.turns} turn(s). See [the chosen direction](${final.htmlUrl}).`,
  });
  return { summary: `shape: direction ${letter} chosen → plan`, stage: 'plan' };
}

function preferences(ctx: PhaseContext, record: ShapeRecord, chosen: ShapeDirection) {
  const byId = new Map(ctx.session.comments.map((c) => [c.id, c]));
  const replies = record.replies
    .filter((r) => r.outcome !== 'refused' && byId.has(r.commentId))
    .map((r) => ({
      commentId: r.commentId,
      by: r.by,
      at: r.at,
      text: byId.get(r.commentId)!.body,
      signals: r.signals,
    }));
  const selected = record.selected!;
  return shapePreferenceEntries({
    issue: ctx.issue.number,
    replies,
    chosen: { direction: chosen, by: selected.by, commentId: record.replies.at(-1)!.commentId, at: selected.at },
  });
}

/**
 * The hourly sweep (handlers/sweep.ts): a conversation waiting for a human longer than shape_timeout_minutes goes to
 * hydraflow-hitl with the reason. No model call; nothing is written unless it is due.
 */
async function timeout(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { session, issue } = ctx;
  const record = session.state.shape;
  const stage = session.currentStage;
  if (stage !== 'shape' || !record || record.selected || record.timedOutAt)
    return { summary: `#${issue.number}: no shape conversation waits`, stage };
  const at = session.options.now().getTime();
  const waited = at - Date.parse(record.waitingSince);
  const limit = ctx.config.shape_timeout_minutes * 60_000;
  if (waited < limit) return { summary: `#${issue.number}: shape waits (${Math.floor(waited / 60_000)} min)`, stage };
  // Silent means nothing happened on the issue for that long (a reply a lock refused counts): the sweep lists only quiet
  // issues (handlers/shape-timeouts.ts), but its re-run also looks at an active one to free its dead attempt's 👀. A
  // second pipeline label is an escalation cut short: finished whatever the quiet.
  const quiet = issue.updatedAt ? at - Date.parse(issue.updatedAt) : Infinity;
  if (pipelineLabelsOf(issue.labels).length === 1 && quiet < limit)
    return { summary: `#${issue.number}: shape waits (active ${Math.floor(quiet / 60_000)} min ago)`, stage };
  const lock = await session.acquire();
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage };
  session.update((s) => ({ ...s, shape: { ...record, timedOutAt: now(ctx) } }));
  return escalate(ctx, {
    headline: `Shape timed out: no human reply for ${ctx.config.shape_timeout_minutes} minutes`,
    reason: `no human reply since ${record.waitingSince} (shape_timeout_minutes ${ctx.config.shape_timeout_minutes})`,
    next: `A human picks a direction and moves the issue back to \`${labelFor('shape')}\` (then replies), or comments /retry to start shaping over.`,
  });
}

/**
 * One comment of HydraFlow's, never two: by the id in state, else by marker among HydraFlow's comments (a re-run after
 * a crash between writing it and publishing the state), else new.
 */
async function upsert(
  ctx: PhaseContext,
  known: number | undefined,
  marker: string,
  body: string,
): Promise<IssueComment> {
  let written: IssueComment | undefined;
  if (known !== undefined) {
    try {
      written = await ctx.issues.updateComment(known, body);
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error; // deleted by a human: post a new one
    }
  }
  if (!written) {
    const existing = ctx.session.comments.find((c) => c.id !== known && isOurs(ctx, c) && c.body.startsWith(marker));
    written = existing
      ? existing.body === body
        ? existing
        : await ctx.issues.updateComment(existing.id, body)
      : await ctx.issues.createComment(ctx.issue.number, body, marker);
  }
  ctx.session.noteWritten(written);
  return written;
}
