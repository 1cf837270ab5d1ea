/**
 * Which humans gave their go on the head HydraFlow is about to merge (issue #17: approvals are bound to a commit).
 * A go given on an earlier head says nothing about the code pushed since (a refine round, a human's push), so:
 * - an approving review counts only if it is the reviewer's latest deciding review and was submitted on this very
 *   commit (GitHub's `commit_id`);
 * - a `/ship-it` comment counts only if it was written after HydraFlow saw this head: after its own push of it
 *   (`implement.pushedAt`), else after its first review round on it. GitHub's timestamps have whole seconds, so a
 *   comment of the very second the head was seen is not counted (it may have been written just before).
 */
import type { IssueState } from '../state/schema';

export interface ReviewGo {
  login: string;
  /** APPROVED, CHANGES_REQUESTED, DISMISSED or COMMENTED. */
  state: string;
  commitId: string | null;
}

export interface ShipItGo {
  login: string;
  /** GitHub's created_at. */
  createdAt: string;
}

/** When HydraFlow first saw `head` on its pull request, from its signed state; undefined if it never did. */
export function headSeenAt(state: Pick<IssueState, 'implement' | 'review'>, head: string): string | undefined {
  const impl = state.implement;
  if (impl?.headSha === head && impl.pushedAt) return impl.pushedAt;
  const rounds = state.review?.rounds.filter((r) => r.sha === head) ?? [];
  return rounds.map((r) => r.at).sort()[0];
}

/** Whether a comment written at `createdAt` was written after `seenAt`, in GitHub's whole seconds. */
function writtenAfter(createdAt: string, seenAt: string): boolean {
  const written = Date.parse(createdAt);
  const seen = Date.parse(seenAt);
  return Number.isFinite(written) && Number.isFinite(seen) && written >= Math.floor(seen / 1000) * 1000 + 1000;
}

/**
 * The logins whose go counts for `head`, in the order to check their permission: approving reviews (oldest first, as
 * GitHub lists them), then `/ship-it` comments (newest first). Reviews and comments must already be humans' only.
 */
export function approversOfHead(input: {
  head: string;
  seenAt: string | undefined;
  reviews: readonly ReviewGo[];
  shipIts: readonly ShipItGo[];
}): string[] {
  const latest = new Map<string, ReviewGo>();
  for (const r of input.reviews) {
    if (r.state === 'APPROVED' || r.state === 'CHANGES_REQUESTED' || r.state === 'DISMISSED') latest.set(r.login, r);
  }
  const reviewed = [...latest.values()].filter((r) => r.state === 'APPROVED' && r.commitId === input.head);
  const seenAt = input.seenAt;
  const said = seenAt ? input.shipIts.filter((c) => writtenAfter(c.createdAt, seenAt)).reverse() : [];
  return [...new Set([...reviewed.map((r) => r.login), ...said.map((c) => c.login)])];
}
