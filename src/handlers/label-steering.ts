/**
 * Pipeline labels are steering, so they are permission-checked like slash commands (issue #17). On GitHub anyone with
 * the triage role can set labels, and an issue form applies its labels for whoever opens the issue: without a check, a
 * triage-role user or an outsider's form sends an issue past the outsider rule (src/phases/outsider.ts) to planning and
 * the coding agent. So a label set or removed by someone below commands.min_permission is undone — the labels go back
 * to what HydraFlow's signed state says — with a note (one per person and issue, updated in place); an issue opened
 * with a pipeline label by such a person (the form case) is triaged like any opened issue, outsider rule included.
 */
import {
  hasLogin,
  labelFor,
  lastLabelEvent,
  pipelineLabelRemained,
  stageOf,
  stagesBeside,
  type IssueState,
  type PipelineStage,
} from '@hydraflow/core';
import type { Permission } from '@hydraflow/github';
import type { App } from '../app';
import type { PhaseContext, PhaseOutcome } from '../phases/phase-context';
import { freeLockOfDeadAttempt, loadIssueAndComments, openPhase } from './open-session';
import { handlePhase, sendDispatches } from './phase';
import { belowSteering } from './may-steer';
import { reportIncident } from './untrusted-state';
import { dropUnpublishedMovesOf } from './own-labels';
import { honourMovesRefusedByLock } from '../phases/refused-moves';

/** A pipeline label change as the labeled/unlabeled event reports it. */
export interface LabelChange {
  issue: number;
  label: string;
  added: boolean;
  actor: string;
}

const noteMarker = (actor: string) => `<!-- hydraflow:refused-label:${actor} -->`;

/** Undoes a label change by someone who may not steer (or triages an issue opened with a pipeline label, see above). */
export async function refuseLabelChange(app: App, change: LabelChange, permission: Permission): Promise<PhaseOutcome> {
  const { issue, comments } = await loadIssueAndComments(app, change.issue);
  const ctx = await openPhase(app, {
    issue,
    phase: 'override',
    actor: change.actor,
    dispatched: false,
    forced: false,
    comments,
  });
  const held = await reportIncident(ctx, app.sleep);
  if (held) return held;
  const { state } = ctx.session;
  // A pipeline label on an issue HydraFlow never saw: an issue form (or a triage-role user) opened it with the label.
  // The label is not theirs to choose, but the issue is an opened issue (property test
  // tests/property/pipeline-histories found one left untriaged): triage, which moves it off that label.
  // hydraflow-find asks for triage even when auto_triage is off.
  const opened = stageOf(change.label) === 'find' || app.config.auto_triage;
  // A label already gone was undone before its event came (a re-run, src/phases/refused-moves.ts): not an opened issue.
  // Never seen means no history either: an issue a writer took out of the pipeline has no stage and no triage, and a
  // triage-role user's hydraflow-find must not bring it back (property test, seed -2101725468).
  // Its own label gone (someone took it off since), the issue is still an opened one while another stage label from
  // someone who may not steer is on it (property test, seed 1042266366: a reader's form applied hydraflow-find and
  // hydraflow-hitl, both runs died, a triage-role user took hydraflow-find off, and the re-run undid hydraflow-hitl).
  const asOpened = issue.labels.includes(change.label)
    ? opened
    : change.added && (await openedWithRefusedLabel(app, state, issue, opened));
  if (change.added && unseenByHydraflow(state) && asOpened) {
    return handlePhase(app, {
      phase: 'triage',
      issue: issue.number,
      actor: change.actor,
      dispatched: false,
      forced: false,
    });
  }
  // A re-run whose dead attempt took the other branch (it triaged the issue as opened and died holding the 👀) frees
  // that lock (property test tests/property/pipeline-histories found it left for good).
  await freeLockOfDeadAttempt(app, issue);
  const stage = trustedStage(state, change);
  // An issue HydraFlow has written nothing for yet (its opened run died first) has no stage to go back to: the undo
  // puts back the pipeline label the person took off (property test tests/property/pipeline-histories: an issue form's
  // hydraflow-shape, removed by a triage-role user, left the issue out of the pipeline).
  const unseen = state.history.length === 0 && (state.stage ?? null) === null;
  const own = stage ? labelFor(stage) : unseen && !change.added ? change.label : undefined;
  // back to the state's stage, whichever of the person's events this is (a swap of labels sends two)
  if (change.added && change.label !== own && !(await setAgainByOther(app, issue.number, change)))
    await app.issues.removeLabel(issue.number, change.label);
  const putBack =
    own !== undefined &&
    !issue.labels.includes(own) &&
    !(await removedByPermittedHuman(app, issue.number, own, change));
  if (putBack) await app.issues.addLabels(issue.number, [own]);
  ctx.issue.labels = [...issue.labels.filter((l) => l !== change.label || l === own), ...(putBack ? [own] : [])];
  await dropDeadRunsMoves(ctx);
  await noteRefusedLabel(app, issue.number, ctx.session.comments, change, permission);
  // A re-run: stage labels others set while its dead attempt held the lock found the issue locked, and no run acted on
  // them; this one settles them as any re-run does (refused-moves.ts). Property test tests/property/pipeline-histories,
  // seed 1803425905: a reader's issue form applied three stage labels; the triage of the first died, and the undo of
  // hers in its re-run left the other two beside the stage for good.
  const beside = app.runner.runAttempt > 1 ? stagesBeside(ctx.issue.labels, state.stage ?? null) : [];
  const outcome =
    beside.length > 0
      ? await honourMovesRefusedByLock(ctx, beside)
      : {
          summary: `${change.label} ${change.added ? 'set' : 'removed'} by ${change.actor} (${permission}) undone`,
          stage: state.stage ?? null,
        };
  // A re-run whose dead attempt took the other branch above (it triaged the issue as opened, recorded the dispatch of
  // the phase triage handed the issue to, and died before sending it) sends it, as any phase's re-run does (property
  // test tests/property/pipeline-histories, seed -1820932531: the issue was left at hydraflow-discover, its lock handed
  // to a discover run nobody started).
  await sendDispatches(app, ctx);
  return outcome;
}

/** HydraFlow has written nothing for the issue yet: no triage, no stage, no history. */
export function unseenByHydraflow(state: IssueState): boolean {
  return !state.triage && !state.stage && state.history.length === 0;
}

/**
 * Whether an issue HydraFlow never saw is still one opened with pipeline labels (an issue form) that triage must take:
 * a stage label someone who may not steer set is on it, and `auto_triage` (or `triageAnyway`, or that label being
 * hydraflow-find) asks for triage. For a run whose own label someone took off since (here and handlers/override.ts).
 */
export async function openedWithRefusedLabel(
  app: Pick<App, 'config' | 'issues'>,
  state: IssueState,
  issue: { number: number; labels: readonly string[] },
  triageAnyway = false,
): Promise<boolean> {
  if (!unseenByHydraflow(state)) return false;
  const label = await stageLabelSetByNonSteerer(app, issue);
  return label !== undefined && (triageAnyway || app.config.auto_triage || stageOf(label) === 'find');
}

/**
 * A stage label on the issue whose latest `labeled` event is by someone who may not steer (an issue form's, or a
 * triage-role user's), if there is one; a label whose setter is not known does not count.
 */
async function stageLabelSetByNonSteerer(
  app: Pick<App, 'config' | 'issues'>,
  issue: { number: number; labels: readonly string[] },
): Promise<string | undefined> {
  const labels = stagesBeside(issue.labels, null).map(labelFor);
  if (labels.length === 0) return undefined;
  const events = await app.issues.labelEvents(issue.number).catch(() => []);
  for (const label of labels) {
    const setter = lastLabelEvent(events, label, 'labeled')?.actor;
    if (setter !== undefined && (await belowSteering(app, setter).catch(() => undefined)) !== undefined) return label;
  }
  return undefined;
}

/**
 * A stage label beside the state's stage that HydraFlow's identity set and never published (a run that died between
 * adding the label and publishing its move: own-labels.ts) is taken off too, under the lock, so no live run is between
 * the two (property test tests/property/pipeline-histories, seed 620103312: a triage-role user's labels each started a
 * triage; the first died after adding hydraflow-groom, the second published plan and died before taking the others off,
 * and the undo of her labels left groom beside plan). No request unless a stage label is beside the state's.
 */
async function dropDeadRunsMoves(ctx: PhaseContext): Promise<void> {
  if (stagesBeside(ctx.issue.labels, ctx.session.state.stage ?? null).length === 0) return;
  const lock = await ctx.session.acquire();
  if (!lock.ok) return; // a live run holds the issue: its own move ends with the other labels off
  await dropUnpublishedMovesOf(ctx);
  await ctx.session.unlock();
}

/**
 * The stage to put the labels back to: the state's, unless the state got there by a human move that is this very
 * person's (or whose author was not known: a re-run honoured a label set while its dead attempt held the lock, before
 * src/phases/refused-moves.ts asked who set it). Comparing against that stage would keep the refused label (property
 * test tests/property/pipeline-histories, seed 4242): the stage before that move is the one to restore.
 */
function trustedStage(state: IssueState, change: LabelChange): PipelineStage | null {
  const stage = state.stage ?? null;
  const last = state.history?.at(-1);
  const untrusted =
    last !== undefined &&
    last.by === 'human' &&
    last.to === stage &&
    stage !== null &&
    labelFor(stage) === change.label &&
    (last.actor === undefined || last.actor === change.actor);
  return untrusted ? (last.from ?? null) : stage;
}

/**
 * Someone other than this person set the label since (its last `labeled` event is theirs): the label on the issue is no
 * longer the one refused here, and that setting's own event steers it — HydraFlow's unpublished move is dropped under
 * the lock (dropDeadRunsMoves), a permitted human's moves the issue, another refused one is undone by its own run
 * (property test tests/property/pipeline-histories, seed 2129331872: the re-run of a reader's refused
 * hydraflow-shape took off the same label a writer had set again since). No event to go by: this person's (removed).
 */
async function setAgainByOther(app: Pick<App, 'issues'>, issue: number, change: LabelChange): Promise<boolean> {
  const events = await app.issues.labelEvents(issue).catch(() => []);
  const setter = lastLabelEvent(events, change.label, 'labeled')?.actor;
  return setter !== undefined && setter !== change.actor;
}

/**
 * The state's own label is gone, and this event is not that person's removal of it: if a permitted human took it out
 * (their own event, or a dead run's re-run, moves the issue), putting it back would undo their move (property test
 * tests/property/pipeline-histories, seed 4242: a writer took out the last stage label while a triage-role user's was
 * set, and the undo of hers put the writer's back). Unknown remover: put back (fails closed).
 */
async function removedByPermittedHuman(
  app: Pick<App, 'config' | 'issues'>,
  issue: number,
  own: string,
  change: LabelChange,
): Promise<boolean> {
  if (!change.added && change.label === own) return false;
  const events = await app.issues.labelEvents(issue).catch(() => []);
  const removal = lastLabelEvent(events, own, 'unlabeled');
  const remover = removal?.actor;
  if (!removal || !remover || remover === change.actor || hasLogin(app.config.bot_logins, remover)) return false;
  // A removal that left another pipeline label (the refused one, say) moved nothing: the router skipped it, and the
  // state's label goes back (property test, seed -1941130860: a writer took off hydraflow-plan beside a triage-role
  // user's hydraflow-discover, and the undo of hers left the issue with no label).
  if (pipelineLabelRemained(events, removal.index, own)) return false;
  return (await belowSteering(app, remover).catch(() => 'none' as const)) === undefined;
}

/** The visible note on a refused label change: one per person and issue, updated in place. */
export async function noteRefusedLabel(
  app: Pick<App, 'config' | 'issues'>,
  issue: number,
  comments: readonly { id: number; body: string; user?: { login: string } | null }[],
  change: Omit<LabelChange, 'issue'>,
  permission: Permission,
): Promise<void> {
  const marker = noteMarker(change.actor);
  const body = `${marker}\n\`${change.actor}\` ${change.added ? 'set' : 'removed'} \`${change.label}\`: that was undone. Moving HydraFlow's pipeline labels needs ${app.config.commands.min_permission} permission on this repository (\`${change.actor}\` has ${permission}); someone who has it can set the label or comment a command.`;
  const existing = comments.find(
    (c) => c.user && hasLogin(app.config.bot_logins, c.user.login) && c.body.includes(marker),
  );
  if (existing) await app.issues.updateComment(existing.id, body);
  else await app.issues.createComment(issue, body, marker);
}
