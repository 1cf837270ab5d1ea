/**
 * The emulated repository's state: plain data in Maps/arrays, plus fluent builders for tests.
 * Everything a test may want to assert on ("end state, not call counts") lives here.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ZERO_SHA, type GitRepo } from './git';
import { BareGitData, MemoryGitData, type GitData } from './git-data';

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';
export const PERMISSION_RANK: Record<Permission, number> = {
  none: 0,
  read: 1,
  triage: 2,
  write: 3,
  maintain: 4,
  admin: 5,
};

export interface EmulatedUser {
  login: string;
  id: number;
  node_id: string;
  type: 'User' | 'Bot';
  permission: Permission;
  token: string;
  /** author_association to show instead of the one the permission implies (world.authorAssociation). */
  association?: string;
}

export interface EmulatedLabel {
  id: number;
  node_id: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export type ReactionContent = '+1' | '-1' | 'laugh' | 'confused' | 'heart' | 'hooray' | 'rocket' | 'eyes';
export const REACTION_CONTENTS: ReactionContent[] = [
  '+1',
  '-1',
  'laugh',
  'confused',
  'heart',
  'hooray',
  'rocket',
  'eyes',
];

export interface EmulatedReaction {
  id: number;
  node_id: string;
  user: string;
  content: ReactionContent;
  created_at: string;
  subject: { type: 'issue'; number: number } | { type: 'comment'; id: number };
}

export interface EmulatedIssue {
  number: number;
  id: number;
  node_id: string;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  state_reason: 'completed' | 'reopened' | 'not_planned' | 'duplicate' | null;
  /** label names, in the order they were applied */
  labels: string[];
  user: string;
  assignees: string[];
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  closed_by: string | null;
  locked: boolean;
  author_association: string;
  /** set when this issue number belongs to a pull request */
  isPullRequest: boolean;
}

export interface EmulatedComment {
  id: number;
  node_id: string;
  issue_number: number;
  user: string;
  body: string;
  created_at: string;
  updated_at: string;
  author_association: string;
  /**
   * Every version of the body, the first as created, then one per edit with who made it: GitHub's edit history
   * (GraphQL `editor` and `lastEditedAt` are the last entry's, once there is more than one).
   */
  revisions: { body: string; by: string; at: string }[];
}

export interface EmulatedPullFile {
  filename: string;
  /** renamed files: the old path */
  previous_filename?: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed' | 'unchanged';
  additions: number;
  deletions: number;
  patch?: string;
}

export interface EmulatedPull {
  number: number;
  id: number;
  node_id: string;
  /** `repo`: the head branch's repository (owner/name) when it is not this one — a fork's pull request. */
  head: { ref: string; sha: string; repo?: string };
  base: { ref: string; sha: string };
  draft: boolean;
  merged: boolean;
  merged_at: string | null;
  merged_by: string | null;
  merge_commit_sha: string | null;
  mergeable: boolean | null;
  files: EmulatedPullFile[];
  maintainer_can_modify: boolean;
}

export interface EmulatedReview {
  id: number;
  node_id: string;
  pull_number: number;
  user: string;
  body: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING' | 'DISMISSED';
  commit_id: string;
  submitted_at: string | null;
}

export interface EmulatedReviewComment {
  id: number;
  node_id: string;
  pull_number: number;
  review_id: number | null;
  user: string;
  body: string;
  path: string;
  line: number | null;
  side: 'LEFT' | 'RIGHT';
  commit_id: string;
  created_at: string;
  updated_at: string;
  /** a reply: the id of its thread's top comment (GitHub's `in_reply_to_id`); absent on a thread's first comment */
  in_reply_to_id?: number;
}

/**
 * A review thread: a top-level review comment and its replies, in order. Not stored: derived from reviewComments and
 * `resolvedThreads` (keyed by the top comment's id); its node id (PRRT_…) is stable because the top comment's is.
 */
export interface EmulatedReviewThread {
  node_id: string;
  pull_number: number;
  /** the top comment first, then its replies by id */
  comments: EmulatedReviewComment[];
  /** who resolved it, null while unresolved */
  resolved_by: string | null;
}

export interface EmulatedDispatch {
  workflow_id: string | number;
  ref: string;
  inputs: Record<string, string>;
  actor: string;
  at: number;
}

export interface EmulatedCheckRun {
  id: number;
  node_id: string;
  name: string;
  head_sha: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  conclusion: string | null;
  started_at: string | null;
  completed_at: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  external_id: string | null;
  details_url: string | null;
  app: string;
}

/** An annotation of a check run: what a job's `::error::`/`::warning::` lines and its failed steps report. */
export interface EmulatedAnnotation {
  level: 'notice' | 'warning' | 'failure';
  message: string;
  title: string | null;
}

/** A job of a workflow run attempt (GET /actions/runs/{run_id}/attempts/{n}/jobs), as the lifecycle simulator ran it. */
export interface EmulatedWorkflowJob {
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  workflowName: string;
  headSha: string;
  headBranch: string | null;
  conclusion: 'success' | 'failure' | 'cancelled' | 'skipped';
  startedAt: string;
  completedAt: string;
  /** GitHub's steps: "Set up job", the job's steps in order, "Complete job"; numbered from 1 */
  steps: { name: string; conclusion: 'success' | 'failure' | 'skipped' | 'cancelled' }[];
  /** the check run GitHub reports the job as (its annotations are the job's) */
  checkRunId: number;
}

export interface EmulatedStatus {
  id: number;
  node_id: string;
  sha: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  context: string;
  description: string | null;
  target_url: string | null;
  creator: string;
  created_at: string;
  updated_at: string;
}

export interface EmulatedWorkflowRun {
  id: number;
  name: string;
  workflow_id: number;
  head_branch: string;
  head_sha: string;
  event: string;
  status: string;
  conclusion: string | null;
  actor: string;
  created_at: string;
}

/** Settings → Actions → General → "Workflow permissions", as GET /actions/permissions/workflow reports them. */
export interface ActionsWorkflowSettings {
  /** the GITHUB_TOKEN's default permissions: 'read' (contents and packages read) or 'write' (read and write) */
  default_workflow_permissions: 'read' | 'write';
  /** "Allow GitHub Actions to create and approve pull requests" */
  can_approve_pull_request_reviews: boolean;
}

/**
 * A branch protection rule as a test sets it (GitHub's classic branch protection). An absent (or null) section is not
 * required; booleans default to false. Reported by GET /branches/{branch}/protection; not enforced on merges.
 */
export interface EmulatedBranchProtection {
  required_pull_request_reviews?: {
    required_approving_review_count?: number;
    dismiss_stale_reviews?: boolean;
    require_code_owner_reviews?: boolean;
    require_last_push_approval?: boolean;
  } | null;
  required_status_checks?: { strict?: boolean; contexts?: string[] } | null;
  enforce_admins?: boolean;
  required_signatures?: boolean;
  required_linear_history?: boolean;
  allow_force_pushes?: boolean;
  allow_deletions?: boolean;
  block_creations?: boolean;
  required_conversation_resolution?: boolean;
  lock_branch?: boolean;
  allow_fork_syncing?: boolean;
}

export type EmulatedWorkflowState =
  'active' | 'deleted' | 'disabled_fork' | 'disabled_inactivity' | 'disabled_manually';

/** Which kind of credential made a change: GitHub starts no workflow for changes made with the GITHUB_TOKEN. */
export type TokenKind = 'GITHUB_TOKEN' | 'user' | 'app';

/**
 * A state change a webhook would report (the simulator routes these to workflows). Ids name what changed; `payload`
 * is the webhook payload snapshotted when the event happened, filled by an `onEvent` listener (the simulator).
 */
export interface EmulatedEvent {
  seq: number;
  name: string;
  action?: string;
  issue?: number;
  comment?: number;
  pull?: number;
  review?: number;
  label?: string;
  checkRun?: number;
  /** push / workflow_dispatch / status */
  ref?: string;
  sha?: string;
  before?: string;
  after?: string;
  created?: boolean;
  deleted?: boolean;
  merged?: boolean;
  workflow?: string;
  inputs?: Record<string, string>;
  /** issues.edited / pull_request.edited: the previous values, as GitHub's `changes` (`{ body: { from } }`). */
  changes?: { title?: { from: string }; body?: { from: string } };
  /** check_run / status */
  checkName?: string;
  conclusion?: string | null;
  state?: string;
  actor: string;
  viaToken: TokenKind;
  at: number;
  payload?: Record<string, unknown>;
}

export const BOT_LOGIN = 'github-actions[bot]';
export const BOT_ID = 41898282;

export function fakeSha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

export class GitHubWorld {
  readonly owner: string;
  readonly repo: string;
  defaultBranch: string;
  readonly repoId = 1296269;
  apiUrl = 'http://127.0.0.1';
  clock: () => number;

  readonly users = new Map<string, EmulatedUser>();
  readonly tokens = new Map<string, string>();
  /** keyed by lower-cased name: GitHub label names are case-insensitive */
  readonly labels = new Map<string, EmulatedLabel>();
  /** issues and pull requests share the numbering; a PR has an entry in both maps */
  readonly issues = new Map<number, EmulatedIssue>();
  readonly pulls = new Map<number, EmulatedPull>();
  readonly comments = new Map<number, EmulatedComment>();
  readonly reactions: EmulatedReaction[] = [];
  readonly reviews = new Map<number, EmulatedReview>();
  readonly reviewComments = new Map<number, EmulatedReviewComment>();
  /** resolved review threads: the thread's top comment id → the login that resolved it */
  readonly resolvedThreads = new Map<number, string>();
  /** full ref name ("refs/heads/main") → sha */
  readonly refs = new Map<string, string>();
  readonly dispatches: EmulatedDispatch[] = [];
  readonly checkRuns = new Map<number, EmulatedCheckRun>();
  readonly statuses: EmulatedStatus[] = [];
  readonly workflowRuns: EmulatedWorkflowRun[] = [];
  readonly workflowJobs: EmulatedWorkflowJob[] = [];
  /** by check run id */
  readonly checkRunAnnotations = new Map<number, EmulatedAnnotation[]>();
  /** every state change a webhook would report, in order */
  readonly events: EmulatedEvent[] = [];
  readonly eventListeners: Array<(e: EmulatedEvent) => void> = [];
  /** logins whose token is a GitHub App / PAT token (their events DO start workflows) */
  readonly appLogins = new Set<string>();
  /** set when the repository's git data comes from a real bare repository */
  git: GitRepo | undefined;
  /** git objects of a world without a bare repository (git-data.ts) */
  private readonly memoryGit = new MemoryGitData();
  /** branch heads as last reported by a push event (syncGit diffs against this) */
  readonly gitReported = new Map<string, string>();
  /** per pull request: the head sha its last opened/synchronize event reported */
  readonly pullReportedHead = new Map<number, string>();
  /** per pull request: the base/head shas its files and mergeability were computed for */
  readonly pullGitKey = new Map<number, string>();
  /** parent issue number → its sub-issue numbers, in order */
  readonly subIssueLists = new Map<number, number[]>();

  /**
   * The repository's files when it has no git repository (`git` unset): path ("docs/a.md", no leading slash) → UTF-8
   * content; directories are implied. GET /contents and GET /actions/workflows read them, at any existing ref.
   */
  readonly files = new Map<string, string>();
  /** Settings → Actions → Workflow permissions; a new repository's defaults */
  actionsSettings: ActionsWorkflowSettings = {
    default_workflow_permissions: 'read',
    can_approve_pull_request_reviews: false,
  };
  /**
   * When true, a pull request created (POST /pulls) or approved (POST /reviews, event APPROVE) with the GITHUB_TOKEN
   * fails with GitHub's 403 unless `actionsSettings.can_approve_pull_request_reviews`. Off by default so worlds that do
   * not model the setting keep working.
   */
  enforceActionsPullRequestSetting = false;
  /** branch name → its protection rule (absent: not protected) */
  readonly branchProtection = new Map<string, EmulatedBranchProtection>();
  /** workflow file path (".github/workflows/ci.yml") → state; absent: 'active' */
  readonly workflowStates = new Map<string, EmulatedWorkflowState>();

  private nextNumber = 1;
  private nextIds = {
    issue: 1_800_000_000,
    comment: 2_400_000_000,
    label: 5_000_000_000,
    reaction: 250_000_000,
    user: 90_000_000,
    pull: 1_900_000_000,
    review: 2_100_000_000,
    reviewComment: 1_600_000_000,
    checkRun: 30_000_000_000,
    status: 33_000_000_000,
    run: 12_000_000_000,
  };

  constructor(opts: { owner: string; repo: string; defaultBranch?: string; clock?: () => number }) {
    this.owner = opts.owner;
    this.repo = opts.repo;
    this.defaultBranch = opts.defaultBranch ?? 'main';
    this.clock = opts.clock ?? Date.now;
    this.refs.set(`refs/heads/${this.defaultBranch}`, fakeSha(`${this.owner}/${this.repo}@${this.defaultBranch}`));
  }

  tokenKind(login: string): TokenKind {
    if (login === BOT_LOGIN) return 'GITHUB_TOKEN';
    return this.appLogins.has(login) ? 'app' : 'user';
  }

  /** Record a webhook-worthy state change; listeners (the simulator) snapshot its payload synchronously. */
  emit(e: Omit<EmulatedEvent, 'seq' | 'at' | 'viaToken'> & { viaToken?: TokenKind; at?: number }): EmulatedEvent {
    const event: EmulatedEvent = {
      ...e,
      seq: this.events.length + 1,
      at: e.at ?? this.clock(),
      viaToken: e.viaToken ?? this.tokenKind(e.actor),
    };
    this.events.push(event);
    for (const l of this.eventListeners) l(event);
    return event;
  }

  /** Trees, commits and files for the git data API and GraphQL: the bare repository's, or the in-memory ones. */
  gitData(): GitData {
    return this.git ? new BareGitData(this.git) : this.memoryGit;
  }

  // -- git ------------------------------------------------------------------------------------------------------

  /**
   * Re-read refs from the bare repository; open pull requests follow their branches (head and base shas), and their
   * files and mergeability are recomputed when either moved. No events: pushes are reported by syncGit().
   */
  refreshFromGit(): void {
    const git = this.git;
    if (!git) return;
    const refs = git.refs();
    this.refs.clear();
    for (const [r, s] of refs) this.refs.set(r, s);
    for (const pull of this.pulls.values()) {
      const issue = this.issues.get(pull.number);
      if (pull.merged || !issue || issue.state !== 'open') continue;
      const head = refs.get(`refs/heads/${pull.head.ref}`);
      const base = refs.get(`refs/heads/${pull.base.ref}`);
      if (head) pull.head.sha = head;
      if (base) pull.base.sha = base;
      this.refreshPullGit(pull);
    }
  }

  /** Files (base...head) and mergeability (merge-tree) of one pull request, cached per base/head sha pair. */
  refreshPullGit(pull: EmulatedPull): void {
    const git = this.git;
    if (!git) return;
    const key = `${pull.base.sha}...${pull.head.sha}`;
    if (this.pullGitKey.get(pull.number) === key) return;
    if (!git.commitExists(pull.head.sha) || !git.commitExists(pull.base.sha)) return;
    pull.files = git.diffFiles(pull.base.sha, pull.head.sha);
    pull.mergeable = git.mergeTree(pull.base.sha, pull.head.sha).clean;
    this.pullGitKey.set(pull.number, key);
  }

  /**
   * Report what changed in the bare repository since the last report: a push per moved branch, and a
   * pull_request.synchronize per open pull request whose head moved. `actor`/`viaToken` say who pushed.
   */
  syncGit(pusher: { actor: string; viaToken?: TokenKind }): EmulatedEvent[] {
    if (!this.git) return [];
    this.refreshFromGit();
    const emitted: EmulatedEvent[] = [];
    const current = new Map([...this.refs].filter(([r]) => r.startsWith('refs/heads/')));
    const names = new Set([...current.keys(), ...this.gitReported.keys()]);
    for (const ref of [...names].sort()) {
      const before = this.gitReported.get(ref) ?? ZERO_SHA;
      const after = current.get(ref) ?? ZERO_SHA;
      if (before === after) continue;
      emitted.push(this.reportPush(ref, before, after, pusher));
    }
    for (const pull of this.pulls.values()) {
      const issue = this.issues.get(pull.number);
      if (pull.merged || !issue || issue.state !== 'open') continue;
      const reported = this.pullReportedHead.get(pull.number);
      if (reported === undefined || reported === pull.head.sha || !current.has(`refs/heads/${pull.head.ref}`)) continue;
      this.pullReportedHead.set(pull.number, pull.head.sha);
      emitted.push(
        this.emit({
          name: 'pull_request',
          action: 'synchronize',
          pull: pull.number,
          before: reported,
          after: pull.head.sha,
          sha: pull.head.sha,
          actor: pusher.actor,
          ...(pusher.viaToken ? { viaToken: pusher.viaToken } : {}),
        }),
      );
    }
    return emitted;
  }

  /** Emit one push event and remember the reported head. */
  reportPush(
    ref: string,
    before: string,
    after: string,
    pusher: { actor: string; viaToken?: TokenKind },
  ): EmulatedEvent {
    if (after === ZERO_SHA) this.gitReported.delete(ref);
    else this.gitReported.set(ref, after);
    return this.emit({
      name: 'push',
      ref,
      before,
      after,
      sha: after,
      created: before === ZERO_SHA,
      deleted: after === ZERO_SHA,
      actor: pusher.actor,
      ...(pusher.viaToken ? { viaToken: pusher.viaToken } : {}),
    });
  }

  nextId(kind: keyof GitHubWorld['nextIds']): number {
    const id = this.nextIds[kind];
    this.nextIds[kind] += 1 + (kind === 'comment' || kind === 'issue' ? 7 : 0);
    return id;
  }

  now(): string {
    return new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  nodeId(prefix: string, id: number): string {
    return `${prefix}_${Buffer.from(`${prefix}:${id}`).toString('base64url')}`;
  }

  // -- users ----------------------------------------------------------------------------------------------------

  addUser(u: {
    login: string;
    type?: 'User' | 'Bot';
    permission?: Permission;
    id?: number;
    token?: string;
    association?: string;
  }): EmulatedUser {
    const existing = this.users.get(u.login);
    if (existing) {
      if (u.permission) existing.permission = u.permission;
      if (u.association) existing.association = u.association;
      if (u.type) existing.type = u.type;
      return existing;
    }
    const id = u.id ?? this.nextId('user');
    // random, as GitHub's are: tests in parallel workers must never share a token (an attack test that scans every
    // process on the machine for one would find another world's)
    const token = u.token ?? `ghs_emu${randomBytes(15).toString('hex')}`;
    const user: EmulatedUser = {
      login: u.login,
      id,
      node_id: this.nodeId(u.type === 'Bot' ? 'BOT' : 'U', id),
      type: u.type ?? 'User',
      permission: u.permission ?? 'read',
      token,
      ...(u.association ? { association: u.association } : {}),
    };
    this.users.set(u.login, user);
    this.tokens.set(token, u.login);
    return user;
  }

  /** A user referenced by a builder but never registered: a read-only stranger. */
  ensureUser(login: string): EmulatedUser {
    return (
      this.users.get(login) ??
      this.addUser({
        login,
        permission: login.endsWith('[bot]') ? 'none' : 'read',
        type: login.endsWith('[bot]') ? 'Bot' : 'User',
      })
    );
  }

  authorAssociation(login: string): string {
    const u = this.users.get(login);
    if (!u) return 'NONE';
    if (u.association) return u.association;
    if (login === this.owner) return 'OWNER';
    if (u.type === 'Bot') return 'NONE';
    if (PERMISSION_RANK[u.permission] >= PERMISSION_RANK.triage) return 'COLLABORATOR';
    return 'CONTRIBUTOR';
  }

  // -- labels ---------------------------------------------------------------------------------------------------

  getLabel(name: string): EmulatedLabel | undefined {
    return this.labels.get(name.toLowerCase());
  }

  label(name: string, color = 'ededed', description: string | null = null): EmulatedLabel {
    const existing = this.getLabel(name);
    if (existing) return existing;
    const id = this.nextId('label');
    const l: EmulatedLabel = { id, node_id: this.nodeId('LA', id), name, color, description, default: false };
    this.labels.set(name.toLowerCase(), l);
    return l;
  }

  // -- issues ---------------------------------------------------------------------------------------------------

  /**
   * A person adds and removes labels of an issue on GitHub's page: the labels change and GitHub records a labeled or
   * unlabeled event per change with them as its actor (GET /issues/{n}/events lists them). The webhook is the test's
   * to deliver (world.run), when it chooses.
   */
  setLabelsAs(issueNumber: number, by: string, change: { add?: string[]; remove?: string[] }): void {
    const issue = this.issues.get(issueNumber);
    if (!issue) throw new Error(`no issue #${issueNumber}`);
    const name = issue.isPullRequest ? 'pull_request' : 'issues';
    const ref = issue.isPullRequest ? { pull: issueNumber } : { issue: issueNumber };
    for (const l of change.remove ?? []) {
      const i = issue.labels.findIndex((n) => n.toLowerCase() === l.toLowerCase());
      if (i < 0) continue;
      const [removed] = issue.labels.splice(i, 1);
      this.emit({ name, action: 'unlabeled', ...ref, label: removed!, actor: by });
    }
    for (const l of change.add ?? []) {
      const label = this.getLabel(l) ?? this.label(l);
      if (issue.labels.some((n) => n.toLowerCase() === label.name.toLowerCase())) continue;
      issue.labels.push(label.name);
      this.emit({ name, action: 'labeled', ...ref, label: label.name, actor: by });
    }
  }

  issue(i: {
    title: string;
    body?: string | null;
    author?: string;
    labels?: string[];
    assignees?: string[];
    state?: 'open' | 'closed';
  }): EmulatedIssue {
    const author = i.author ?? 'octocat';
    this.ensureUser(author);
    const number = this.nextNumber++;
    const id = this.nextId('issue');
    const now = this.now();
    const labels: string[] = [];
    for (const name of i.labels ?? []) {
      const l = this.label(name);
      if (!labels.includes(l.name)) labels.push(l.name);
    }
    const issue: EmulatedIssue = {
      number,
      id,
      node_id: this.nodeId('I', id),
      title: i.title,
      body: i.body ?? null,
      state: i.state ?? 'open',
      state_reason: i.state === 'closed' ? 'completed' : null,
      labels,
      user: author,
      assignees: [...(i.assignees ?? [])],
      comments: 0,
      created_at: now,
      updated_at: now,
      closed_at: i.state === 'closed' ? now : null,
      closed_by: null,
      locked: false,
      author_association: this.authorAssociation(author),
      isPullRequest: false,
    };
    this.issues.set(number, issue);
    return issue;
  }

  comment(issueNumber: number, c: { author?: string; body: string }): EmulatedComment {
    const issue = this.issues.get(issueNumber);
    if (!issue) throw new Error(`world.comment: issue #${issueNumber} does not exist`);
    const author = c.author ?? 'octocat';
    this.ensureUser(author);
    const id = this.nextId('comment');
    const now = this.now();
    const comment: EmulatedComment = {
      id,
      node_id: this.nodeId('IC', id),
      issue_number: issueNumber,
      user: author,
      body: c.body,
      created_at: now,
      updated_at: now,
      author_association: this.authorAssociation(author),
      revisions: [{ body: c.body, by: author, at: now }],
    };
    this.comments.set(id, comment);
    issue.comments++;
    issue.updated_at = now;
    return comment;
  }

  /**
   * `by` edits the comment's body, as GitHub records it (a new revision, `updated_at`); no event, like `comment()`: a
   * test delivers the `issue_comment.edited` it wants. An unchanged body records nothing, as on GitHub.
   */
  editComment(id: number, body: string, by: string): EmulatedComment {
    const c = this.comments.get(id);
    if (!c) throw new Error(`world.editComment: comment ${id} does not exist`);
    if (c.body === body) return c;
    this.ensureUser(by);
    const now = this.now();
    c.body = body;
    c.updated_at = now;
    c.revisions.push({ body, by, at: now });
    return c;
  }

  commentsOn(issueNumber: number): EmulatedComment[] {
    return [...this.comments.values()].filter((c) => c.issue_number === issueNumber).sort((a, b) => a.id - b.id);
  }

  // -- sub-issues -----------------------------------------------------------------------------------------------

  subIssuesOf(number: number): EmulatedIssue[] {
    return (this.subIssueLists.get(number) ?? []).map((n) => this.issues.get(n)!);
  }

  parentOf(number: number): EmulatedIssue | undefined {
    for (const [parent, children] of this.subIssueLists) if (children.includes(number)) return this.issues.get(parent);
    return undefined;
  }

  subIssuesSummary(number: number): { total: number; completed: number; percent_completed: number } {
    const subs = this.subIssuesOf(number);
    const completed = subs.filter((i) => i.state === 'closed').length;
    return {
      total: subs.length,
      completed,
      percent_completed: subs.length ? Math.floor((completed * 100) / subs.length) : 0,
    };
  }

  /**
   * Why `child` (undefined: an issue about to be created) cannot become a sub-issue of `parent`, or undefined when it
   * can. GitHub's rules: issues only, one parent unless replaced, no cycles, at most 100 sub-issues per issue and 8
   * levels of nesting.
   */
  subIssueProblem(parent: EmulatedIssue, child: EmulatedIssue | undefined, replaceParent = false): string | undefined {
    if (parent.isPullRequest || child?.isPullRequest) return 'Pull requests cannot have or be sub-issues';
    if (child) {
      if (parent.number === child.number) return 'An issue cannot be a sub-issue of itself';
      const current = this.parentOf(child.number);
      if (current?.number === parent.number) return 'Issue may not contain duplicate sub-issues';
      if (current && !replaceParent) return 'Sub-issue may only have one parent';
      for (let a: EmulatedIssue | undefined = parent; a; a = this.parentOf(a.number))
        if (a.number === child.number) return 'An issue cannot be a sub-issue of its own sub-issue';
    }
    if ((this.subIssueLists.get(parent.number)?.length ?? 0) >= 100)
      return 'Issue cannot have more than 100 sub-issues';
    if (this.depth(parent) + (child ? this.height(child) : 1) > 8)
      return 'Sub-issues cannot be nested more than 8 levels deep';
    return undefined;
  }

  /** Make `child` the last sub-issue of `parent`, detaching it from any previous parent. */
  linkSubIssue(parent: number, child: number): void {
    const old = this.parentOf(child);
    if (old) this.unlinkSubIssue(old.number, child);
    const list = this.subIssueLists.get(parent) ?? [];
    list.push(child);
    this.subIssueLists.set(parent, list);
  }

  unlinkSubIssue(parent: number, child: number): boolean {
    const list = this.subIssueLists.get(parent);
    const i = list?.indexOf(child) ?? -1;
    if (!list || i < 0) return false;
    list.splice(i, 1);
    if (list.length === 0) this.subIssueLists.delete(parent);
    return true;
  }

  /** levels from the top of the hierarchy down to `issue` (a root is level 1) */
  private depth(issue: EmulatedIssue): number {
    let d = 1;
    for (let p = this.parentOf(issue.number); p; p = this.parentOf(p.number)) d++;
    return d;
  }

  /** levels in the tree rooted at `issue` (a leaf is 1) */
  private height(issue: EmulatedIssue): number {
    return 1 + Math.max(0, ...this.subIssuesOf(issue.number).map((s) => this.height(s)));
  }

  // -- pulls ----------------------------------------------------------------------------------------------------

  pull(p: {
    title: string;
    body?: string | null;
    author?: string;
    head: string;
    /** The head branch's repository (owner/name), for a pull request from a fork; default: this repository. */
    headRepo?: string;
    base?: string;
    headSha?: string;
    draft?: boolean;
    mergeable?: boolean | null;
    files?: EmulatedPullFile[];
    labels?: string[];
  }): { issue: EmulatedIssue; pull: EmulatedPull } {
    const issue = this.issue({
      title: p.title,
      body: p.body ?? null,
      author: p.author ?? 'octocat',
      labels: p.labels ?? [],
    });
    issue.isPullRequest = true;
    const base = p.base ?? this.defaultBranch;
    const fork = p.headRepo !== undefined && p.headRepo !== `${this.owner}/${this.repo}`;
    const headSha =
      p.headSha ?? (fork ? undefined : this.refs.get(`refs/heads/${p.head}`)) ?? fakeSha(`${p.head}#${issue.number}`);
    // a fork's branch lives in the fork: this repository's refs do not get it
    if (!fork && !this.refs.has(`refs/heads/${p.head}`)) this.refs.set(`refs/heads/${p.head}`, headSha);
    const id = this.nextId('pull');
    const pull: EmulatedPull = {
      number: issue.number,
      id,
      node_id: this.nodeId('PR', id),
      head: fork ? { ref: p.head, sha: headSha, repo: p.headRepo! } : { ref: p.head, sha: headSha },
      base: { ref: base, sha: this.refs.get(`refs/heads/${base}`) ?? fakeSha(base) },
      draft: p.draft ?? false,
      merged: false,
      merged_at: null,
      merged_by: null,
      merge_commit_sha: null,
      mergeable: p.mergeable === undefined ? true : p.mergeable,
      files: p.files ?? [],
      maintainer_can_modify: false,
    };
    this.pulls.set(issue.number, pull);
    this.pullReportedHead.set(issue.number, headSha);
    if (this.git) this.refreshPullGit(pull);
    return { issue, pull };
  }

  // -- reviews --------------------------------------------------------------------------------------------------

  /**
   * A submitted review (no events: routes emit them), with its inline comments, each a new thread. `commit_id`
   * defaults to the pull request's head.
   */
  review(
    pullNumber: number,
    r: {
      author?: string;
      state?: EmulatedReview['state'];
      body?: string;
      commitId?: string;
      comments?: Array<{ path: string; line?: number | null; side?: 'LEFT' | 'RIGHT'; body: string }>;
    },
  ): { review: EmulatedReview; comments: EmulatedReviewComment[] } {
    const pull = this.pulls.get(pullNumber);
    if (!pull) throw new Error(`world.review: pull request #${pullNumber} does not exist`);
    const author = r.author ?? 'octocat';
    this.ensureUser(author);
    const id = this.nextId('review');
    const state = r.state ?? 'COMMENTED';
    const review: EmulatedReview = {
      id,
      node_id: this.nodeId('PRR', id),
      pull_number: pullNumber,
      user: author,
      body: r.body ?? '',
      state,
      commit_id: r.commitId ?? pull.head.sha,
      submitted_at: state === 'PENDING' ? null : this.now(),
    };
    this.reviews.set(id, review);
    const comments = (r.comments ?? []).map((c) =>
      this.addReviewComment({
        pull_number: pullNumber,
        review_id: id,
        user: author,
        body: c.body,
        path: c.path,
        line: c.line ?? null,
        side: c.side ?? 'RIGHT',
        commit_id: review.commit_id,
      }),
    );
    return { review, comments };
  }

  /**
   * A reply to a review comment, as GitHub makes one: a new COMMENTED review with an empty body holding one comment in
   * the same thread (`in_reply_to_id` = the thread's top comment; same path, line, side and commit). No events.
   */
  replyToReviewComment(
    commentId: number,
    r: { author?: string; body: string },
  ): { review: EmulatedReview; comment: EmulatedReviewComment } {
    const to = this.reviewComments.get(commentId);
    if (!to) throw new Error(`world.replyToReviewComment: review comment ${commentId} does not exist`);
    const top = this.reviewComments.get(to.in_reply_to_id ?? to.id) ?? to;
    const { review } = this.review(to.pull_number, {
      author: r.author,
      state: 'COMMENTED',
      body: '',
      commitId: top.commit_id,
    });
    const comment = this.addReviewComment({
      pull_number: top.pull_number,
      review_id: review.id,
      user: review.user,
      body: r.body,
      path: top.path,
      line: top.line,
      side: top.side,
      commit_id: top.commit_id,
      in_reply_to_id: top.id,
    });
    return { review, comment };
  }

  private addReviewComment(
    c: Omit<EmulatedReviewComment, 'id' | 'node_id' | 'created_at' | 'updated_at'>,
  ): EmulatedReviewComment {
    const id = this.nextId('reviewComment');
    const now = this.now();
    const comment: EmulatedReviewComment = {
      id,
      node_id: this.nodeId('PRRC', id),
      ...c,
      created_at: now,
      updated_at: now,
    };
    this.reviewComments.set(id, comment);
    return comment;
  }

  /** A pull request's review threads, oldest first; comments of a pending review are not part of any yet. */
  reviewThreadsOf(pullNumber: number): EmulatedReviewThread[] {
    const submitted = (c: EmulatedReviewComment) =>
      c.review_id === null || this.reviews.get(c.review_id)?.state !== 'PENDING';
    const mine = [...this.reviewComments.values()]
      .filter((c) => c.pull_number === pullNumber && submitted(c))
      .sort((a, b) => a.id - b.id);
    return mine
      .filter((c) => c.in_reply_to_id === undefined)
      .map((top) => ({
        node_id: this.nodeId('PRRT', top.id),
        pull_number: pullNumber,
        comments: [top, ...mine.filter((c) => c.in_reply_to_id === top.id)],
        resolved_by: this.resolvedThreads.get(top.id) ?? null,
      }));
  }

  /** The thread with this node id (PRRT_…), if any. */
  reviewThread(nodeId: string): EmulatedReviewThread | undefined {
    const top = [...this.reviewComments.values()].find(
      (c) => c.in_reply_to_id === undefined && this.nodeId('PRRT', c.id) === nodeId,
    );
    return top && this.reviewThreadsOf(top.pull_number).find((t) => t.comments[0] === top);
  }

  // -- refs -----------------------------------------------------------------------------------------------------

  ref(name: string, sha?: string): string {
    const full = name.startsWith('refs/') ? name : `refs/heads/${name}`;
    const value = sha ?? fakeSha(`${full}@${this.clock()}`);
    this.refs.set(full, value);
    return value;
  }

  // -- reactions ------------------------------------------------------------------------------------------------

  reactionsFor(subject: EmulatedReaction['subject']): EmulatedReaction[] {
    return this.reactions.filter((r) =>
      subject.type === 'issue'
        ? r.subject.type === 'issue' && r.subject.number === subject.number
        : r.subject.type === 'comment' && r.subject.id === subject.id,
    );
  }

  reactionSummary(subject: EmulatedReaction['subject'], url: string) {
    const list = this.reactionsFor(subject);
    const count = (c: ReactionContent) => list.filter((r) => r.content === c).length;
    return {
      url,
      total_count: list.length,
      '+1': count('+1'),
      '-1': count('-1'),
      laugh: count('laugh'),
      confused: count('confused'),
      heart: count('heart'),
      hooray: count('hooray'),
      eyes: count('eyes'),
      rocket: count('rocket'),
    };
  }
}
