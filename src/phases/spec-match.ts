/**
 * Spec-match (docs/adr/0017-product-track-plan-and-spec-match.md): the pull request of an issue that came through the
 * product track is checked against the direction a human chose in shape. Which direction, from signed state only:
 *
 * - the issue's own state (shape's record with a chosen direction and the decomposition requirement), or
 * - its epic parent's — the parent GitHub names (`parent_issue_url` in the issue GitHub already sent: an issue that is
 *   no sub-issue costs no request), its state read by the same reader as every session's (IssueSession.open: only a
 *   block HydraFlow signed and nobody else edited), its finalization comment checked against the recorded hash.
 *
 * A comment that says "DECOMPOSITION REQUIRED", a sub-issue marker in a body, a label: none of these count.
 */
import { productTrackSelection, type ShapeDirection } from '@hydraflow/core';
import { IssueSession } from '../session/issue-session';
import type { PhaseContext } from './phase-context';
import { chosenDirection } from './product-plan';

export interface SpecDirection {
  /** The issue whose signed state holds the choice: the issue itself, or its epic parent. */
  issue: number;
  /** The chosen direction's hash (shape/record.ts `selected.hash`). */
  hash: string;
  direction: ShapeDirection;
}

/**
 * The chosen direction the issue's pull request must match; undefined for an engineering-track issue (and for one
 * whose chosen direction can no longer be read back: `unreadable` says so, for the progress comment).
 */
export function specDirection(ctx: PhaseContext): Promise<{ spec?: SpecDirection; unreadable?: number }> {
  // Once per run and issue: the publish step's early review call and the review round ask the same (a parent's
  // comments are read once).
  let found = asked.get(ctx.session);
  if (!found) {
    found = lookUp(ctx);
    asked.set(ctx.session, found);
  }
  return found;
}

const asked = new WeakMap<object, Promise<{ spec?: SpecDirection; unreadable?: number }>>();

async function lookUp(ctx: PhaseContext): Promise<{ spec?: SpecDirection; unreadable?: number }> {
  const bots = ctx.config.bot_logins;
  const own = productTrackSelection(ctx.session.state);
  if (own) {
    const direction = chosenDirection(ctx.session.comments, bots, own);
    return direction
      ? { spec: { issue: ctx.issue.number, hash: own.hash, direction } }
      : { unreadable: ctx.issue.number };
  }
  const parent = ctx.issue.parent;
  if (parent === undefined || parent === ctx.issue.number) return {};
  const options = ctx.session.options;
  const read = await IssueSession.open(ctx.issues, {
    ...options,
    issue: parent,
    labelsAtStart: [],
    witnesses: [], // the event's texts are about this issue's comments, not the parent's
  });
  const selected = productTrackSelection(read.state);
  if (!selected) return {};
  const direction = chosenDirection(read.comments, bots, selected);
  return direction ? { spec: { issue: parent, hash: selected.hash, direction } } : { unreadable: parent };
}
