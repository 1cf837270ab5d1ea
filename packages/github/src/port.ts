import type { LabelEvent } from '@hydraflow/core';

/**
 * What HydraFlow's phases need from GitHub, as one small interface. The REST implementation lives in rest-issues.ts;
 * tests run it against the testkit's emulator rather than faking this interface.
 */
export interface Author {
  login: string;
  type: string;
}

export interface IssueComment {
  id: number;
  /** GitHub's global id (GraphQL), for what REST does not tell: who edited the comment last. */
  nodeId: string;
  body: string;
  user: Author | null;
  createdAt: string;
  updatedAt: string;
  htmlUrl: string;
  /**
   * Who edited the comment last, as GitHub records it (GraphQL `editor`; the login as REST spells it, `name[bot]` for
   * an App), from the same answer as `body` (`readComments`): null when nobody edited it since it was written;
   * undefined when not asked (`listComments`).
   */
  editor?: Author | null;
}

export interface Issue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
  author: Author | null;
  /** GitHub's author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, NONE, ... */
  authorAssociation: string;
  isPullRequest: boolean;
  htmlUrl: string;
  /**
   * The parent issue's number when this issue is a sub-issue (GitHub's `parent_issue_url`, part of the issue it already
   * sends: knowing that an issue is no sub-issue costs no request). Undefined when GitHub did not say.
   */
  parent?: number;
  /** When anything last happened on the issue (a comment, a label, an edit), as GitHub says; absent if not sent. */
  updatedAt?: string;
}

/** A job of a workflow run attempt, as far as HydraFlow reads it: which of its steps failed, and where its log is. */
export interface RunJob {
  name: string;
  /** success, failure, cancelled, skipped, ...; null while it runs */
  conclusion: string | null;
  htmlUrl: string;
  /** the check run GitHub reports the job as (its annotations are the job's errors) */
  checkRunId: number | undefined;
  steps: { name: string; number: number; conclusion: string | null }[];
}

/** An annotation of a check run: a job's error, warning or notice. */
export interface Annotation {
  level: string;
  title: string;
  message: string;
}

export type Permission = 'admin' | 'write' | 'read' | 'none';

export type Reaction = '+1' | '-1' | 'laugh' | 'confused' | 'heart' | 'hooray' | 'rocket' | 'eyes';

export interface LabelSpec {
  name: string;
  color: string;
  description: string;
}

export interface IssuesPort {
  getIssue(issue: number): Promise<Issue>;
  /**
   * One page (100, oldest first) of the repository's open issues, with `label` if given (pull requests included:
   * isPullRequest), each with its count of 👀 reactions (anyone's: HydraFlow's lock is one).
   */
  listOpenIssues(options: { label?: string; page: number }): Promise<(Issue & { eyes: number })[]>;
  /** Every comment on the issue, across all pages, oldest first. */
  listComments(issue: number): Promise<IssueComment[]>;
  /**
   * Creates a comment exactly once: if GitHub fails after maybe writing it, looks for `marker` among the bot's
   * comments before trying again.
   */
  createComment(issue: number, body: string, marker: string): Promise<IssueComment>;
  updateComment(commentId: number, body: string): Promise<IssueComment>;
  /**
   * Every comment on the issue, oldest first, each with its last `editor`: the text and who edited it last come from
   * ONE GraphQL answer, so an edit cannot land between them (ADR 0007). For HydraFlow's state; `listComments` otherwise.
   */
  readComments(issue: number): Promise<IssueComment[]>;
  deleteComment(commentId: number): Promise<void>;
  /**
   * Adds labels (a set union, never clobbering concurrent edits) and returns the issue's labels afterwards, as GitHub
   * reports them in the same response (so concurrent human edits are seen).
   */
  addLabels(issue: number, labels: string[]): Promise<LabelSpec[]>;
  /**
   * Sets the body and/or the WHOLE label set in one request (GitHub's PATCH replaces the labels). Only for a caller
   * that read the issue just before (grooming: the window for a concurrent human edit is that of one round trip);
   * returns the issue and its labels as GitHub reports them afterwards.
   */
  updateIssue(
    issue: number,
    changes: { body?: string; labels?: string[] },
  ): Promise<Issue & { labelSpecs: LabelSpec[] }>;
  /** Removes one label; a label already gone is not an error. */
  removeLabel(issue: number, label: string): Promise<void>;
  /** Gives HydraFlow's labels their colour and description (GitHub auto-creates them blank). */
  describeLabels(labels: LabelSpec[]): Promise<void>;
  /** The collaborator permission, normalised (GitHub reports maintain as write, triage as read). */
  getPermission(login: string): Promise<Permission>;
  /**
   * The issue's labeled/unlabeled events, oldest first (past 100 events: the first page and the last, where the latest
   * are). One request (two past 100): only for a stage label HydraFlow must honour or restore without its own event.
   */
  labelEvents(issue: number): Promise<LabelEvent[]>;
  reactToComment(commentId: number, reaction: Reaction): Promise<void>;
  /**
   * Adds the caller's reaction to the issue. `created` is false when the caller had already reacted with it: GitHub
   * answers 200 instead of 201, which makes this a test-and-set (the per-issue lock).
   */
  reactToIssue(issue: number, reaction: Reaction): Promise<{ id: number; created: boolean; createdAt: string }>;
  /** Removes one reaction by id; false when it was already gone (so a take-over of a lock is a compare-and-swap). */
  removeIssueReaction(issue: number, reactionId: number): Promise<boolean>;
  dispatchWorkflow(workflow: string, ref: string, inputs: Record<string, string>): Promise<void>;
  /** The jobs of a workflow run's attempt (the first 100; actions: read). */
  runJobs(runId: number, attempt: number): Promise<RunJob[]>;
  /** A check run's annotations (the first 50; checks: read). */
  checkRunAnnotations(checkRunId: number): Promise<Annotation[]>;
}
