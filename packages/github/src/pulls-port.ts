/**
 * What the engineering phases (implement, review, merge) need from GitHub's pull requests, reviews and checks. The
 * REST implementation is rest-pulls.ts; tests run it against the testkit's emulator (backed by a real git remote).
 */
import type { Author } from './port';

export interface PullRequest {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  headRef: string;
  headSha: string;
  /** The head branch's repository (owner/name): another one for a fork; null when GitHub deleted it. */
  headRepo: string | null;
  baseRef: string;
  /** GitHub's computed mergeability: null while it is still computing. */
  mergeable: boolean | null;
  author: Author | null;
  htmlUrl: string;
  /** GraphQL node id (needed to mark a draft ready for review). */
  nodeId: string;
  /**
   * How many files the pull request changes (`changed_files`): GitHub lists at most 3000 of them, so a list shorter
   * than this count left some out. Absent when the response did not say (a pull request from a list).
   */
  changedFiles?: number;
}

export interface PullFile {
  path: string;
  status: 'added' | 'modified' | 'removed' | 'renamed' | string;
  additions: number;
  deletions: number;
  /** Unified diff hunk(s) of the file; absent for binary or very large files. */
  patch?: string;
}

export interface InlineComment {
  path: string;
  /** Line in the new version of the file (RIGHT side); must be inside the diff. */
  line: number;
  body: string;
}

export type ReviewEvent = 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT';

/** An inline comment of a review, as a human wrote it on a line of the pull request's diff. */
export interface ReviewComment {
  id: number;
  reviewId: number | null;
  /** The thread's first comment, for a reply. */
  inReplyTo: number | null;
  path: string;
  line: number | null;
  body: string;
  author: Author | null;
}

export interface Review {
  id: number;
  state: string;
  body: string;
  author: Author | null;
  commitId: string | null;
}

/** The state of the required checks on a commit: check runs and commit statuses combined. */
export type ChecksState = 'success' | 'failure' | 'pending';

export interface ChecksSummary {
  state: ChecksState;
  /** Names of failing checks, for the progress comment. */
  failing: string[];
  pending: string[];
  /** Names of the checks that passed (or were skipped or neutral). */
  passed: string[];
}

export type MergeMethod = 'squash' | 'merge' | 'rebase';

export interface PullsPort {
  /** The open pull request whose head is `branch`, if any (so a re-run never opens a second one). */
  findOpenPull(branch: string): Promise<PullRequest | undefined>;
  getPull(pull: number): Promise<PullRequest>;
  createPull(args: { title: string; body: string; head: string; base: string; draft: boolean }): Promise<PullRequest>;
  updatePull(pull: number, args: { title?: string; body?: string }): Promise<PullRequest>;
  /** Draft → ready for review (GraphQL: REST cannot undraft). */
  markReady(pull: PullRequest): Promise<void>;
  listFiles(pull: number): Promise<PullFile[]>;
  listReviews(pull: number): Promise<Review[]>;
  /**
   * One review with all its inline comments: one notification, not one per finding. `pullAuthor`: who opened the pull
   * request, when known — HydraFlow's own pull request cannot be approved by HydraFlow, so that approval goes out as a
   * comment review at once instead of after GitHub's refusal.
   */
  createReview(
    pull: number,
    args: { commitId: string; event: ReviewEvent; body: string; comments: InlineComment[]; pullAuthor?: string },
  ): Promise<Review>;
  /** The inline comments of one review. */
  listReviewComments(pull: number, review: number): Promise<ReviewComment[]>;
  /**
   * Answers a review thread: a reply to `comment` (its first comment), and with `resolve` the thread is marked
   * resolved (GraphQL: REST cannot). Exactly once: a reply with the same body already in the thread is not posted again.
   */
  answerReviewThread(pull: number, comment: number, body: string, resolve: boolean): Promise<void>;
  checks(ref: string): Promise<ChecksSummary>;
  /** Merges if the head is still `sha` (GitHub refuses otherwise); returns the merge commit sha. */
  merge(pull: number, args: { method: MergeMethod; sha: string; title: string; message: string }): Promise<string>;
  deleteBranch(branch: string): Promise<void>;
  closeIssue(issue: number, reason: 'completed' | 'not_planned'): Promise<void>;
}
