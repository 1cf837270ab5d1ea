import {
  hasLogin,
  labelFor,
  lastLabelEvent,
  pipelineLabelRemained,
  stagesBeside,
  type HydraflowConfig,
  type LabelEvent,
  type PipelineStage,
} from '@hydraflow/core';
import type { App } from '../app';
import type { PhaseContext } from '../phases/phase-context';

/**
 * Takes off the stage labels beside the state's stage that HydraFlow's own identity set last: a dead run's move that
 * added the next stage's label and died before publishing it (IssueSession.moveTo adds first). The phase resumed from
 * the state redoes that move; until then the issue would show two stages (property test, seed -660527775: the sweep
 * resumed plan with hydraflow-ready beside it). A human's label is theirs and stays: its own event steers. One request
 * (the issue's label events), only when there is a label beside the stage.
 */
export async function dropUnpublishedMoves(
  app: Pick<App, 'config' | 'issues'>,
  issue: number,
  labels: readonly string[],
  stage: PipelineStage | null,
): Promise<string[]> {
  const beside = stagesBeside(labels, stage);
  const own = stage === null ? undefined : labelFor(stage);
  if (!own || beside.length === 0 || !labels.some((l) => l.toLowerCase() === own)) return [];
  const events = await app.issues.labelEvents(issue);
  // The stage's own label may have been taken off since `labels` were read (the hourly sweep reads them with its list
  // of issues, before each issue's state): a removal that left a pipeline label beside it was no move (the router skips
  // it), so the label goes back before HydraFlow's own beside it come off, as a re-run finishing a cut move does
  // (handlers/phase.ts, stillOwnCut). Taking those off alone left the issue with no label (property test
  // tests/property/pipeline-histories, product seed -1109540740: a writer took off hydraflow-shape beside a dead
  // discover run's leftover hydraflow-discover while the sweep resumed shape). A removal that left none was a move out:
  // nothing is touched, its own event steers.
  const ownRemoval = lastLabelEvent(events, own, 'unlabeled');
  if (ownRemoval && ownRemoval.index > (lastLabelEvent(events, own, 'labeled')?.index ?? -1)) {
    if (!pipelineLabelRemained(events, ownRemoval.index, own)) return [];
    await app.issues.addLabels(issue, [own]);
  }
  const removed: string[] = [];
  for (const other of beside) {
    if (lastSetterOf(app.config, events, labelFor(other)) !== 'ours') continue;
    await app.issues.removeLabel(issue, labelFor(other));
    removed.push(labelFor(other));
  }
  return removed;
}

/**
 * The same for a phase that has just taken the lock (never before: a live holder may be between adding a label and
 * publishing it), and the rest of the run is told (property test, product seed -1306409349: the sweep's shape timeout
 * died after adding hydraflow-hitl; a human's reply was answered by shape, which left hitl beside shape for good).
 */
export async function dropUnpublishedMovesOf(ctx: PhaseContext): Promise<void> {
  const removed = await dropUnpublishedMoves(ctx, ctx.issue.number, ctx.issue.labels, ctx.session.state.stage ?? null);
  forgetLabels(ctx, removed);
}

/**
 * Labels this run took off outside a move: what it does next reads the labels it started with, and must not see them
 * (a label it removed would look like one a human set beside the state's stage).
 */
export function forgetLabels(ctx: PhaseContext, removed: readonly string[]): void {
  if (removed.length === 0) return;
  ctx.issue.labels = ctx.issue.labels.filter((l) => !removed.includes(l.toLowerCase()));
  ctx.session.options.labelsAtStart = ctx.issue.labels;
}

/**
 * Who set `label` last, by the issue's label events: HydraFlow's own identity (bot_logins), someone else, or nobody
 * the events show.
 */
export function lastSetterOf(
  config: Pick<HydraflowConfig, 'bot_logins'>,
  events: readonly LabelEvent[],
  label: string,
): 'ours' | 'theirs' | undefined {
  const actor = lastLabelEvent(events, label, 'labeled')?.actor;
  if (actor === undefined) return undefined;
  return hasLogin(config.bot_logins, actor) ? 'ours' : 'theirs';
}

/**
 * Whether someone other than HydraFlow set `label` after `moved` was last set: a human who put the issue back on the
 * label a move of HydraFlow's left (the move added `moved` first). A human's setting from before the move (the label
 * the issue was opened with) is the one the move left, not a new one (pipeline seed -1846220037).
 */
export function setByHumanSinceMove(
  config: Pick<HydraflowConfig, 'bot_logins'>,
  events: readonly LabelEvent[],
  label: string,
  moved: string,
): boolean {
  if (lastSetterOf(config, events, label) !== 'theirs') return false;
  const movedAt = lastLabelEvent(events, moved, 'labeled')?.index ?? -1;
  return (lastLabelEvent(events, label, 'labeled')?.index ?? -1) > movedAt;
}
