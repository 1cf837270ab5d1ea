/** Route handlers of the GitHub emulator. Each route names the OpenAPI path template it implements. */
import { GitError, ZERO_SHA } from './git';
import type { GitCommitObject } from './git-data';
import {
  BOT_LOGIN,
  PERMISSION_RANK,
  REACTION_CONTENTS,
  fakeSha,
  type EmulatedCheckRun,
  type EmulatedEvent,
  type EmulatedIssue,
  type EmulatedLabel,
  type EmulatedPull,
  type EmulatedUser,
  type GitHubWorld,
  type Permission,
  type ReactionContent,
} from './world';
import {
  checkRunJson,
  commentJson,
  issueJson,
  issueLabelsJson,
  issueSearchItemJson,
  labelJson,
  pullFileJson,
  pullJson,
  branchProtectionJson,
  contentJson,
  gitTreeJson,
  reactionJson,
  refJson,
  repoJson,
  reviewCommentJson,
  reviewJson,
  statusJson,
  urls,
  userJson,
  workflowJson,
  workflowRunJson,
  workflowJobJson,
  annotationJson,
  issueEventJson,
} from './serialize';
import { searchIssues } from './search';
import { readRepoPath, repoWorkflows, resolveCommitish } from './contents';
import { dispatchInputsProblem } from './dispatch-inputs';

export const DOCS = 'https://docs.github.com/rest';
export const COMMENT_BODY_MAX = 65_536;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Who acts in which world: all that issue logic shared by REST and GraphQL needs. */
export interface Actor {
  world: GitHubWorld;
  actor: EmulatedUser;
}

export interface RouteContext extends Actor {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown> | unknown[] | undefined;
  /** record that the request used something GitHub has and the emulator does not model */
  notEmulated(what: string): void;
  /** record a request GitHub rejects for a reason the OpenAPI description cannot express */
  rejected(why: string): void;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  template: string;
  regex: RegExp;
  paramNames: string[];
  literals: number;
  handler: (ctx: RouteContext) => RouteResult;
}

/** parameters that may span segments (the description's `x-multi-segment`) */
const GREEDY = new Set(['ref', 'path', 'branch']);

function compile(method: string, template: string, handler: Route['handler']): Route {
  const paramNames: string[] = [];
  let literals = 0;
  const src = template
    .split('/')
    .map((seg) => {
      const m = /^\{(.+)\}$/.exec(seg);
      if (!m) {
        if (seg) literals++;
        return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      paramNames.push(m[1]!);
      return GREEDY.has(m[1]!) ? '(.+?)' : '([^/]+)';
    })
    .join('/');
  return { method, template, regex: new RegExp(`^${src}$`), paramNames, literals, handler };
}

// -- helpers --------------------------------------------------------------------------------------------------

export const notFound = () => new HttpError(404, 'Not Found');

function validationFailed(resource: string, field: string, code: string, message?: string) {
  return new HttpError(422, 'Validation Failed', {
    errors: [{ resource, field, code, ...(message ? { message } : {}) }],
  });
}

export function requirePermission(ctx: Actor, min: Permission): void {
  if (PERMISSION_RANK[ctx.actor.permission] >= PERMISSION_RANK[min]) return;
  throw new HttpError(
    403,
    ctx.actor.type === 'Bot' ? 'Resource not accessible by integration' : `Must have ${min} access to repository.`,
  );
}

/**
 * Repository administration (settings, branch protection): admins, and apps granted it. The GITHUB_TOKEN never has the
 * `administration` permission.
 */
function requireAdmin(ctx: Actor): void {
  if (hasPermission(ctx, 'admin')) return;
  throw new HttpError(
    403,
    ctx.actor.type === 'Bot' ? 'Resource not accessible by integration' : 'Must have admin rights to Repository.',
  );
}

/**
 * "Allow GitHub Actions to create and approve pull requests" (Settings → Actions): off, GitHub refuses both to the
 * GITHUB_TOKEN. Modelled only in worlds that opt in (`enforceActionsPullRequestSetting`).
 */
function requireActionsMayCreatePulls(ctx: Actor): void {
  const w = ctx.world;
  if (!w.enforceActionsPullRequestSetting || w.actionsSettings.can_approve_pull_request_reviews) return;
  if (w.tokenKind(ctx.actor.login) !== 'GITHUB_TOKEN') return;
  throw new HttpError(403, 'GitHub Actions is not permitted to create or approve pull requests.');
}

function hasPermission(ctx: Actor, min: Permission): boolean {
  return PERMISSION_RANK[ctx.actor.permission] >= PERMISSION_RANK[min];
}

function obj(ctx: RouteContext): Record<string, unknown> {
  return ctx.body && !Array.isArray(ctx.body) ? ctx.body : {};
}

function num(v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n)) throw notFound();
  return n;
}

function getIssue(ctx: RouteContext): EmulatedIssue {
  const issue = ctx.world.issues.get(num(ctx.params.issue_number ?? ctx.params.pull_number));
  if (!issue) throw notFound();
  return issue;
}

function issueById(ctx: RouteContext, id: unknown): EmulatedIssue {
  const issue = [...ctx.world.issues.values()].find((i) => i.id === id);
  if (!issue) throw notFound();
  return issue;
}

function getReview(ctx: RouteContext) {
  const { pull } = getPull(ctx);
  const review = ctx.world.reviews.get(num(ctx.params.review_id));
  if (!review || review.pull_number !== pull.number) throw notFound();
  return review;
}

function getPull(ctx: RouteContext) {
  const pull = ctx.world.pulls.get(num(ctx.params.pull_number));
  if (!pull) throw notFound();
  return { pull, issue: ctx.world.issues.get(pull.number)! };
}

/** The most files GitHub lists for a pull request (`GET /pulls/{n}/files`), whatever the page. */
const MAX_LISTED_PULL_FILES = 3000;

/** GitHub-style pagination: per_page (default 30, max 100), page, and a Link header. */
function paginate<T>(ctx: RouteContext, items: T[]): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Math.max(Number(ctx.query.get('per_page') ?? 30) || 30, 1), 100);
  const page = Math.max(Number(ctx.query.get('page') ?? 1) || 1, 1);
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (p: number, rel: string) => {
    const q = new URLSearchParams(ctx.query);
    q.set('per_page', String(perPage));
    q.set('page', String(p));
    return `<${ctx.world.apiUrl}${ctx.path}?${q.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  if (page < last) links.push(link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  return { page: slice, headers: links.length ? { link: links.join(', ') } : {} };
}

function list<T>(ctx: RouteContext, items: T[], map: (t: T) => unknown): RouteResult {
  const { page, headers } = paginate(ctx, items);
  return { status: 200, body: page.map(map), headers };
}

function touch(ctx: Actor, issue: EmulatedIssue) {
  issue.updated_at = ctx.world.now();
}

function labelNamesFromBody(body: RouteContext['body']): string[] {
  const raw = Array.isArray(body) ? body : ((body as Record<string, unknown> | undefined)?.labels ?? []);
  if (!Array.isArray(raw)) throw validationFailed('Label', 'labels', 'invalid');
  return raw.map((l) => (typeof l === 'string' ? l : String((l as { name?: unknown })?.name ?? '')));
}

function applyLabel(ctx: Actor, issue: EmulatedIssue, name: string) {
  // GitHub creates labels that do not exist yet (color ededed, no description).
  const l = ctx.world.getLabel(name) ?? ctx.world.label(name, 'ededed', null);
  if (!issue.labels.some((n) => n.toLowerCase() === l.name.toLowerCase())) issue.labels.push(l.name);
}

function closeOrOpen(ctx: RouteContext, issue: EmulatedIssue, state: unknown, reason: unknown) {
  if (state === 'closed' && issue.state !== 'closed') {
    issue.state = 'closed';
    issue.closed_at = ctx.world.now();
    issue.closed_by = ctx.actor.login;
    issue.state_reason = (reason as EmulatedIssue['state_reason']) ?? 'completed';
  } else if (state === 'open' && issue.state !== 'open') {
    issue.state = 'open';
    issue.closed_at = null;
    issue.closed_by = null;
    issue.state_reason = 'reopened';
  } else if (reason !== undefined && state === undefined && issue.state === 'closed') {
    issue.state_reason = reason as EmulatedIssue['state_reason'];
  }
}

function checkCommentBody(body: unknown) {
  if (typeof body === 'string' && body.length > COMMENT_BODY_MAX) {
    throw validationFailed(
      'IssueComment',
      'body',
      'custom',
      `body is too long (maximum is ${COMMENT_BODY_MAX} characters)`,
    );
  }
}

/** Valid RIGHT-side line numbers of a unified-diff patch. */
function rightLines(patch: string): Set<number> {
  const lines = new Set<number>();
  let n = 0;
  for (const line of patch.split('\n')) {
    const h = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h) {
      n = Number(h[1]);
      continue;
    }
    if (line.startsWith('-') || line.startsWith('\\')) continue;
    lines.add(n++);
  }
  return lines;
}

/** Valid LEFT-side line numbers of a unified-diff patch (deleted and context lines, old numbering). */
function leftLines(patch: string): Set<number> {
  const lines = new Set<number>();
  let n = 0;
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(line);
    if (h) {
      n = Number(h[1]);
      continue;
    }
    if (line.startsWith('+') || line.startsWith('\\')) continue;
    lines.add(n++);
  }
  return lines;
}

function createReaction(
  ctx: RouteContext,
  subject: { type: 'issue'; number: number } | { type: 'comment'; id: number },
): RouteResult {
  const content = obj(ctx).content as ReactionContent;
  if (!REACTION_CONTENTS.includes(content)) throw validationFailed('Reaction', 'content', 'invalid');
  const existing = ctx.world.reactionsFor(subject).find((r) => r.user === ctx.actor.login && r.content === content);
  if (existing) return { status: 200, body: reactionJson(ctx.world, existing) };
  const id = ctx.world.nextId('reaction');
  const r = {
    id,
    node_id: ctx.world.nodeId('REA', id),
    user: ctx.actor.login,
    content,
    created_at: ctx.world.now(),
    subject,
  };
  ctx.world.reactions.push(r);
  return { status: 201, body: reactionJson(ctx.world, r) };
}

function deleteReaction(
  ctx: RouteContext,
  subject: { type: 'issue'; number: number } | { type: 'comment'; id: number },
): RouteResult {
  const id = num(ctx.params.reaction_id);
  const r = ctx.world.reactionsFor(subject).find((x) => x.id === id);
  if (!r) throw notFound();
  if (r.user !== ctx.actor.login && !hasPermission(ctx, 'write'))
    throw new HttpError(403, 'Must have admin rights to Repository.');
  ctx.world.reactions.splice(ctx.world.reactions.indexOf(r), 1);
  return { status: 204 };
}

function listReactions(
  ctx: RouteContext,
  subject: { type: 'issue'; number: number } | { type: 'comment'; id: number },
) {
  const content = ctx.query.get('content');
  const items = ctx.world.reactionsFor(subject).filter((r) => !content || r.content === content);
  return list(ctx, items, (r) => reactionJson(ctx.world, r));
}

function getComment(ctx: RouteContext) {
  const c = ctx.world.comments.get(num(ctx.params.comment_id));
  if (!c) throw notFound();
  return c;
}

// -- events ---------------------------------------------------------------------------------------------------

function emit(ctx: Actor, e: Omit<EmulatedEvent, 'seq' | 'at' | 'viaToken' | 'actor'>): void {
  ctx.world.emit({ ...e, actor: ctx.actor.login });
}

/** issues.* for an issue, pull_request.* for a pull request's issue. */
function issueEvent(ctx: Actor, issue: EmulatedIssue, action: string, extra: Partial<EmulatedEvent> = {}) {
  if (issue.isPullRequest) emit(ctx, { name: 'pull_request', action, pull: issue.number, ...extra });
  else emit(ctx, { name: 'issues', action, issue: issue.number, ...extra });
}

/** GitHub's `changes` of an edited event: the previous value of each changed field. */
function editChanges(
  before: { title: string; body: string | null },
  after: { title: string; body: string | null },
): EmulatedEvent['changes'] {
  return {
    ...(after.title !== before.title ? { title: { from: before.title } } : {}),
    ...(after.body !== before.body ? { body: { from: before.body ?? '' } } : {}),
  };
}

function labelEvents(ctx: Actor, issue: EmulatedIssue, before: string[]) {
  const lower = (l: string[]) => l.map((n) => n.toLowerCase());
  for (const n of before)
    if (!lower(issue.labels).includes(n.toLowerCase())) issueEvent(ctx, issue, 'unlabeled', { label: n });
  for (const n of issue.labels)
    if (!lower(before).includes(n.toLowerCase())) issueEvent(ctx, issue, 'labeled', { label: n });
}

function stateEvents(ctx: RouteContext, issue: EmulatedIssue, before: EmulatedIssue['state']) {
  if (before === issue.state) return;
  issueEvent(
    ctx,
    issue,
    issue.state === 'closed' ? 'closed' : 'reopened',
    issue.isPullRequest ? { merged: false } : {},
  );
}

// -- shared with GraphQL ------------------------------------------------------------------------------------------

/**
 * Open an issue as POST /repos/{owner}/{repo}/issues does: anyone who can read may open one; labels and assignees
 * are applied only with triage access (silently dropped otherwise, like GitHub). Emits issues.opened, then labeled.
 */
export function openIssue(
  ctx: Actor,
  input: { title: unknown; body: string | null; labels: string[]; assignees: string[] },
): EmulatedIssue {
  requirePermission(ctx, 'read');
  if (input.title === undefined || input.title === null || String(input.title).trim() === '')
    throw validationFailed('Issue', 'title', 'missing_field');
  const issue = ctx.world.issue({ title: String(input.title), body: input.body, author: ctx.actor.login });
  if (hasPermission(ctx, 'triage')) {
    for (const n of input.labels) applyLabel(ctx, issue, n);
    issue.assignees = input.assignees.slice(0, 10);
  }
  emit(ctx, { name: 'issues', action: 'opened', issue: issue.number });
  labelEvents(ctx, issue, []);
  return issue;
}

/** POST /repos/{owner}/{repo}/labels semantics: write access; names are unique case-insensitively. */
export function createLabel(ctx: Actor, input: { name: unknown; color: unknown; description: unknown }): EmulatedLabel {
  requirePermission(ctx, 'write');
  const name = String(input.name ?? '');
  if (!name) throw validationFailed('Label', 'name', 'missing_field');
  if (ctx.world.getLabel(name)) throw validationFailed('Label', 'name', 'already_exists');
  const color = String(input.color ?? 'ededed').replace(/^#/, '');
  if (!/^[0-9a-fA-F]{6}$/.test(color)) throw validationFailed('Label', 'color', 'invalid');
  return ctx.world.label(name, color.toLowerCase(), (input.description as string | null | undefined) ?? null);
}

/** Link `child` under `parent` (GitHub's sub-issue rules; 422 when broken). Needs triage access. */
export function addSubIssue(ctx: Actor, parent: EmulatedIssue, child: EmulatedIssue, replaceParent = false): void {
  requirePermission(ctx, 'triage');
  const problem = ctx.world.subIssueProblem(parent, child, replaceParent);
  if (problem) throw new HttpError(422, problem);
  ctx.world.linkSubIssue(parent.number, child.number);
  touch(ctx, parent);
}

export function removeSubIssue(ctx: Actor, parent: EmulatedIssue, child: EmulatedIssue): void {
  requirePermission(ctx, 'triage');
  if (!ctx.world.unlinkSubIssue(parent.number, child.number)) throw notFound();
  touch(ctx, parent);
}

// -- git ------------------------------------------------------------------------------------------------------

/** The pull request with files/mergeability recomputed from git when its branches moved. */
function freshPull(ctx: RouteContext, pull: EmulatedPull): EmulatedPull {
  if (ctx.world.git) ctx.world.refreshPullGit(pull);
  return pull;
}

function gitIdentity(ctx: RouteContext, login: string) {
  const u = ctx.world.users.get(login);
  return {
    name: login,
    email: `${u?.id ?? 0}+${login}@users.noreply.github.com`,
    date: Math.floor(ctx.world.clock() / 1000),
  };
}

const GITHUB_COMMITTER = (ctx: RouteContext) => ({
  name: 'GitHub',
  email: 'noreply@github.com',
  date: Math.floor(ctx.world.clock() / 1000),
});

function fullRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/${ref}`;
}

// -- artifacts --------------------------------------------------------------------------------------------------

/** A workflow run's artifact, as the lifecycle simulator's actions/upload-artifact steps keep them. */
export interface EmulatedArtifact {
  id: number;
  name: string;
  runId: number;
  size: number;
  /** SHA-256 hex */
  digest: string;
  createdAt: string;
  expiresAt: string;
  headBranch: string;
  headSha: string;
}

const artifactSources = new WeakMap<GitHubWorld, () => readonly EmulatedArtifact[]>();

/** Serve a world's artifacts on the REST API (the lifecycle simulator keeps them; without one there are none). */
export function serveArtifacts(world: GitHubWorld, source: () => readonly EmulatedArtifact[]): void {
  artifactSources.set(world, source);
}

function artifactsOf(world: GitHubWorld): readonly EmulatedArtifact[] {
  return artifactSources.get(world)?.() ?? [];
}

function artifactJson(w: GitHubWorld, a: EmulatedArtifact) {
  const { repoApi } = urls(w);
  return {
    id: a.id,
    node_id: w.nodeId('AR', a.id),
    name: a.name,
    size_in_bytes: a.size,
    url: `${repoApi}/actions/artifacts/${a.id}`,
    archive_download_url: `${repoApi}/actions/artifacts/${a.id}/zip`,
    expired: Date.parse(a.expiresAt) <= w.clock(),
    created_at: a.createdAt,
    expires_at: a.expiresAt,
    updated_at: a.createdAt,
    digest: `sha256:${a.digest}`,
    workflow_run: {
      id: a.runId,
      repository_id: w.repoId,
      head_repository_id: w.repoId,
      head_branch: a.headBranch,
      head_sha: a.headSha,
    },
  };
}

function artifactList(ctx: RouteContext, items: EmulatedArtifact[]): RouteResult {
  const name = ctx.query.get('name');
  const matching = items.filter((a) => name === null || a.name === name).reverse(); // newest first
  const { page, headers } = paginate(ctx, matching);
  return {
    status: 200,
    body: { total_count: matching.length, artifacts: page.map((a) => artifactJson(ctx.world, a)) },
    headers,
  };
}

// -- routes ---------------------------------------------------------------------------------------------------

const R = '/repos/{owner}/{repo}';

const defs: Array<[string, string, Route['handler']]> = [
  ['GET', '/rate_limit', () => ({ status: 200, body: {} })], // body filled by the server (needs the token's counters)
  [
    'GET',
    R,
    (ctx) => {
      const body = repoJson(ctx.world) as Record<string, unknown>;
      const p = ctx.actor.permission;
      body.permissions = {
        admin: p === 'admin',
        maintain: PERMISSION_RANK[p] >= PERMISSION_RANK.maintain,
        push: PERMISSION_RANK[p] >= PERMISSION_RANK.write,
        triage: PERMISSION_RANK[p] >= PERMISSION_RANK.triage,
        pull: true,
      };
      return { status: 200, body };
    },
  ],

  // issues
  [
    'GET',
    `${R}/issues`,
    (ctx) => {
      const state = ctx.query.get('state') ?? 'open';
      const labels = (ctx.query.get('labels') ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const creator = ctx.query.get('creator');
      const items = [...ctx.world.issues.values()]
        .filter((i) => state === 'all' || i.state === state)
        .filter((i) => labels.every((l) => i.labels.some((n) => n.toLowerCase() === l)))
        .filter((i) => !creator || i.user === creator)
        .sort((a, b) => (ctx.query.get('direction') === 'asc' ? a.number - b.number : b.number - a.number));
      return list(ctx, items, (i) => issueJson(ctx.world, i));
    },
  ],
  [
    'POST',
    `${R}/issues`,
    (ctx) => {
      const b = obj(ctx);
      const issue = openIssue(ctx, {
        title: b.title,
        body: (b.body as string | undefined) ?? null,
        labels: labelNamesFromBody({ labels: b.labels ?? [] }),
        assignees: (b.assignees as string[] | undefined) ?? [],
      });
      return { status: 201, body: issueJson(ctx.world, issue) };
    },
  ],
  ['GET', `${R}/issues/{issue_number}`, (ctx) => ({ status: 200, body: issueJson(ctx.world, getIssue(ctx)) })],
  [
    'PATCH',
    `${R}/issues/{issue_number}`,
    (ctx) => {
      const issue = getIssue(ctx);
      const b = obj(ctx);
      const isAuthor = issue.user === ctx.actor.login;
      if (!isAuthor) requirePermission(ctx, 'triage');
      if (('title' in b || 'body' in b) && !isAuthor) requirePermission(ctx, 'write');
      const before = { labels: [...issue.labels], state: issue.state, title: issue.title, body: issue.body };
      if (b.title !== undefined && b.title !== null) issue.title = String(b.title);
      if ('body' in b) issue.body = (b.body as string | null) ?? null;
      if (b.labels !== undefined && hasPermission(ctx, 'triage')) {
        issue.labels = [];
        for (const n of labelNamesFromBody({ labels: b.labels })) applyLabel(ctx, issue, n);
      }
      if (b.assignees !== undefined && hasPermission(ctx, 'triage')) issue.assignees = [...(b.assignees as string[])];
      closeOrOpen(ctx, issue, b.state, b.state_reason);
      touch(ctx, issue);
      if (issue.title !== before.title || issue.body !== before.body)
        issueEvent(ctx, issue, 'edited', { changes: editChanges(before, issue) });
      labelEvents(ctx, issue, before.labels);
      stateEvents(ctx, issue, before.state);
      return { status: 200, body: issueJson(ctx.world, issue) };
    },
  ],

  // sub-issues (sub_issue_id is the REST id, not the number)
  [
    'GET',
    `${R}/issues/{issue_number}/sub_issues`,
    (ctx) => list(ctx, ctx.world.subIssuesOf(getIssue(ctx).number), (i) => issueJson(ctx.world, i)),
  ],
  [
    'POST',
    `${R}/issues/{issue_number}/sub_issues`,
    (ctx) => {
      const parent = getIssue(ctx);
      const b = obj(ctx);
      addSubIssue(ctx, parent, issueById(ctx, b.sub_issue_id), b.replace_parent === true);
      return { status: 201, body: issueJson(ctx.world, parent) };
    },
  ],
  [
    'DELETE',
    `${R}/issues/{issue_number}/sub_issue`,
    (ctx) => {
      const child = issueById(ctx, obj(ctx).sub_issue_id);
      removeSubIssue(ctx, getIssue(ctx), child);
      return { status: 200, body: issueJson(ctx.world, child) };
    },
  ],
  [
    'GET',
    `${R}/issues/{issue_number}/parent`,
    (ctx) => {
      const parent = ctx.world.parentOf(getIssue(ctx).number);
      if (!parent) throw notFound();
      return { status: 200, body: issueJson(ctx.world, parent) };
    },
  ],
  [
    'GET',
    '/search/issues',
    (ctx) => {
      const { items, notEmulated, tooLong } = searchIssues(ctx.world, ctx.query.get('q') ?? '');
      for (const what of notEmulated) ctx.notEmulated(what);
      if (tooLong) {
        ctx.rejected(tooLong);
        throw new HttpError(422, 'Validation Failed', {
          errors: [{ message: tooLong, resource: 'Search', field: 'q', code: 'invalid' }],
        });
      }
      const { page, headers } = paginate(ctx, items);
      return {
        status: 200,
        body: {
          total_count: items.length,
          incomplete_results: false,
          search_type: 'lexical',
          items: page.map((i) => issueSearchItemJson(ctx.world, i)),
        },
        headers,
      };
    },
  ],

  // repository labels
  ['GET', `${R}/labels`, (ctx) => list(ctx, [...ctx.world.labels.values()], (l) => labelJson(ctx.world, l))],
  [
    'POST',
    `${R}/labels`,
    (ctx) => {
      const b = obj(ctx);
      const l = createLabel(ctx, { name: b.name, color: b.color, description: b.description });
      return { status: 201, body: labelJson(ctx.world, l) };
    },
  ],
  [
    'GET',
    `${R}/labels/{name}`,
    (ctx) => {
      const l = ctx.world.getLabel(ctx.params.name!);
      if (!l) throw notFound();
      return { status: 200, body: labelJson(ctx.world, l) };
    },
  ],
  [
    'PATCH',
    `${R}/labels/{name}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const l = ctx.world.getLabel(ctx.params.name!);
      if (!l) throw notFound();
      const b = obj(ctx);
      if (typeof b.new_name === 'string' && b.new_name !== l.name) {
        if (ctx.world.getLabel(b.new_name) && b.new_name.toLowerCase() !== l.name.toLowerCase()) {
          throw validationFailed('Label', 'name', 'already_exists');
        }
        const old = l.name;
        ctx.world.labels.delete(old.toLowerCase());
        l.name = b.new_name;
        ctx.world.labels.set(l.name.toLowerCase(), l);
        for (const i of ctx.world.issues.values()) i.labels = i.labels.map((n) => (n === old ? l.name : n));
      }
      if (typeof b.color === 'string') l.color = b.color.replace(/^#/, '').toLowerCase();
      if ('description' in b) l.description = (b.description as string | null) ?? null;
      return { status: 200, body: labelJson(ctx.world, l) };
    },
  ],
  [
    'DELETE',
    `${R}/labels/{name}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const l = ctx.world.getLabel(ctx.params.name!);
      if (!l) throw notFound();
      ctx.world.labels.delete(l.name.toLowerCase());
      for (const i of ctx.world.issues.values()) i.labels = i.labels.filter((n) => n !== l.name);
      return { status: 204 };
    },
  ],

  // issue labels
  ['GET', `${R}/issues/{issue_number}/labels`, (ctx) => list(ctx, issueLabelsJson(ctx.world, getIssue(ctx)), (l) => l)],
  [
    'POST',
    `${R}/issues/{issue_number}/labels`,
    (ctx) => {
      const issue = getIssue(ctx);
      requirePermission(ctx, 'triage');
      const names = labelNamesFromBody(ctx.body);
      if (names.length === 0) throw validationFailed('Label', 'labels', 'missing_field');
      const before = [...issue.labels];
      for (const n of names) applyLabel(ctx, issue, n);
      touch(ctx, issue);
      labelEvents(ctx, issue, before);
      return { status: 200, body: issueLabelsJson(ctx.world, issue) };
    },
  ],
  [
    'PUT',
    `${R}/issues/{issue_number}/labels`,
    (ctx) => {
      const issue = getIssue(ctx);
      requirePermission(ctx, 'triage');
      const before = [...issue.labels];
      issue.labels = [];
      for (const n of labelNamesFromBody(ctx.body)) applyLabel(ctx, issue, n);
      touch(ctx, issue);
      labelEvents(ctx, issue, before);
      return { status: 200, body: issueLabelsJson(ctx.world, issue) };
    },
  ],
  [
    'DELETE',
    `${R}/issues/{issue_number}/labels`,
    (ctx) => {
      const issue = getIssue(ctx);
      requirePermission(ctx, 'triage');
      const before = [...issue.labels];
      issue.labels = [];
      touch(ctx, issue);
      labelEvents(ctx, issue, before);
      return { status: 204 };
    },
  ],
  [
    'DELETE',
    `${R}/issues/{issue_number}/labels/{name}`,
    (ctx) => {
      const issue = getIssue(ctx);
      requirePermission(ctx, 'triage');
      const name = ctx.params.name!.toLowerCase();
      const idx = issue.labels.findIndex((n) => n.toLowerCase() === name);
      if (idx < 0) throw new HttpError(404, 'Label does not exist');
      const [removed] = issue.labels.splice(idx, 1);
      touch(ctx, issue);
      issueEvent(ctx, issue, 'unlabeled', { label: removed! });
      return { status: 200, body: issueLabelsJson(ctx.world, issue) };
    },
  ],

  // issue events: the labeled/unlabeled events recorded with who made them, oldest first (GitHub lists them so)
  [
    'GET',
    `${R}/issues/{issue_number}/events`,
    (ctx) => {
      const issue = getIssue(ctx);
      const items = ctx.world.events.filter(
        (e) =>
          (e.action === 'labeled' || e.action === 'unlabeled') &&
          e.label !== undefined &&
          (e.name === 'issues' ? e.issue : e.name === 'pull_request' ? e.pull : undefined) === issue.number,
      );
      return list(ctx, items, (e) => issueEventJson(ctx.world, e));
    },
  ],

  // issue comments
  [
    'GET',
    `${R}/issues/{issue_number}/comments`,
    (ctx) => {
      const issue = getIssue(ctx);
      const since = ctx.query.get('since');
      const items = ctx.world.commentsOn(issue.number).filter((c) => !since || c.updated_at >= since);
      return list(ctx, items, (c) => commentJson(ctx.world, c));
    },
  ],
  [
    'POST',
    `${R}/issues/{issue_number}/comments`,
    (ctx) => {
      const issue = getIssue(ctx);
      const body = obj(ctx).body;
      if (typeof body !== 'string' || body.length === 0)
        throw validationFailed('IssueComment', 'body', 'missing_field');
      checkCommentBody(body);
      if (issue.locked && !hasPermission(ctx, 'write'))
        throw new HttpError(403, 'Unable to create comment because issue is locked.');
      const c = ctx.world.comment(issue.number, { author: ctx.actor.login, body });
      emit(ctx, { name: 'issue_comment', action: 'created', issue: issue.number, comment: c.id });
      return {
        status: 201,
        body: commentJson(ctx.world, c),
        headers: { location: `${urls(ctx.world).repoApi}/issues/comments/${c.id}` },
      };
    },
  ],
  [
    'GET',
    `${R}/issues/comments`,
    (ctx) => {
      const items = [...ctx.world.comments.values()].sort((a, b) => a.id - b.id);
      return list(ctx, items, (c) => commentJson(ctx.world, c));
    },
  ],
  [
    'GET',
    `${R}/issues/comments/{comment_id}`,
    (ctx) => ({ status: 200, body: commentJson(ctx.world, getComment(ctx)) }),
  ],
  [
    'PATCH',
    `${R}/issues/comments/{comment_id}`,
    (ctx) => {
      const c = getComment(ctx);
      if (c.user !== ctx.actor.login) requirePermission(ctx, 'write');
      const body = obj(ctx).body;
      if (typeof body !== 'string') throw validationFailed('IssueComment', 'body', 'missing_field');
      checkCommentBody(body);
      const changed = c.body !== body;
      const from = c.body;
      ctx.world.editComment(c.id, body, ctx.actor.login);
      c.updated_at = ctx.world.now();
      if (changed)
        emit(ctx, {
          name: 'issue_comment',
          action: 'edited',
          issue: c.issue_number,
          comment: c.id,
          changes: { body: { from } },
        });
      return { status: 200, body: commentJson(ctx.world, c) };
    },
  ],
  [
    'DELETE',
    `${R}/issues/comments/{comment_id}`,
    (ctx) => {
      const c = getComment(ctx);
      if (c.user !== ctx.actor.login) requirePermission(ctx, 'write');
      emit(ctx, { name: 'issue_comment', action: 'deleted', issue: c.issue_number, comment: c.id });
      ctx.world.comments.delete(c.id);
      const issue = ctx.world.issues.get(c.issue_number);
      if (issue) issue.comments = Math.max(0, issue.comments - 1);
      return { status: 204 };
    },
  ],

  // reactions
  [
    'GET',
    `${R}/issues/comments/{comment_id}/reactions`,
    (ctx) => listReactions(ctx, { type: 'comment', id: getComment(ctx).id }),
  ],
  [
    'POST',
    `${R}/issues/comments/{comment_id}/reactions`,
    (ctx) => createReaction(ctx, { type: 'comment', id: getComment(ctx).id }),
  ],
  [
    'DELETE',
    `${R}/issues/comments/{comment_id}/reactions/{reaction_id}`,
    (ctx) => deleteReaction(ctx, { type: 'comment', id: getComment(ctx).id }),
  ],
  [
    'GET',
    `${R}/issues/{issue_number}/reactions`,
    (ctx) => listReactions(ctx, { type: 'issue', number: getIssue(ctx).number }),
  ],
  [
    'POST',
    `${R}/issues/{issue_number}/reactions`,
    (ctx) => createReaction(ctx, { type: 'issue', number: getIssue(ctx).number }),
  ],
  [
    'DELETE',
    `${R}/issues/{issue_number}/reactions/{reaction_id}`,
    (ctx) => deleteReaction(ctx, { type: 'issue', number: getIssue(ctx).number }),
  ],

  // collaborators
  [
    'GET',
    `${R}/collaborators/{username}/permission`,
    (ctx) => {
      const u = ctx.world.users.get(ctx.params.username!);
      if (!u || u.permission === 'none') throw new HttpError(404, `${ctx.params.username} is not a user`);
      // GitHub's quirk: `permission` folds maintain → write and triage → read; role_name has the real role.
      const legacy = { admin: 'admin', maintain: 'write', write: 'write', triage: 'read', read: 'read', none: 'none' }[
        u.permission
      ];
      const rank = PERMISSION_RANK[u.permission];
      const user = {
        ...userJson(ctx.world, u.login),
        permissions: {
          admin: u.permission === 'admin',
          maintain: rank >= PERMISSION_RANK.maintain,
          push: rank >= PERMISSION_RANK.write,
          triage: rank >= PERMISSION_RANK.triage,
          pull: rank >= PERMISSION_RANK.read,
        },
        role_name: u.permission,
      };
      return { status: 200, body: { permission: legacy, role_name: u.permission, user } };
    },
  ],

  // repository contents and settings
  [
    'GET',
    `${R}/contents/{path}`,
    (ctx) => {
      const ref = ctx.query.get('ref') || ctx.world.defaultBranch;
      const commit = resolveCommitish(ctx.world, ref);
      if (!commit) throw new HttpError(404, `No commit found for the ref ${ref}`);
      const found = readRepoPath(ctx.world, commit, ctx.params.path!.replace(/^\/+|\/+$/g, ''));
      if (!found) throw notFound();
      if (found.type === 'submodule') {
        ctx.notEmulated('GET /contents of a submodule');
        throw notFound();
      }
      return { status: 200, body: contentJson(ctx.world, found, ref) };
    },
  ],
  [
    'GET',
    `${R}/branches/{branch}/protection`,
    (ctx) => {
      requireAdmin(ctx);
      const branch = ctx.params.branch!;
      if (!ctx.world.refs.has(`refs/heads/${branch}`)) throw new HttpError(404, 'Branch not found');
      const protection = ctx.world.branchProtection.get(branch);
      if (!protection) throw new HttpError(404, 'Branch not protected');
      return { status: 200, body: branchProtectionJson(ctx.world, branch, protection) };
    },
  ],

  // pulls
  [
    'GET',
    `${R}/pulls`,
    (ctx) => {
      const state = ctx.query.get('state') ?? 'open';
      const head = ctx.query.get('head');
      const base = ctx.query.get('base');
      const items = [...ctx.world.pulls.values()]
        .filter((p) => state === 'all' || ctx.world.issues.get(p.number)!.state === state)
        .filter((p) => !head || `${ctx.world.owner}:${p.head.ref}` === head || p.head.ref === head)
        .filter((p) => !base || p.base.ref === base)
        .sort((a, b) => b.number - a.number);
      return list(ctx, items, (p) => pullJson(ctx.world, p));
    },
  ],
  [
    'POST',
    `${R}/pulls`,
    (ctx) => {
      requirePermission(ctx, 'write');
      requireActionsMayCreatePulls(ctx);
      const b = obj(ctx);
      const head = String(b.head ?? '').replace(new RegExp(`^${ctx.world.owner}:`), '');
      const base = String(b.base ?? '');
      if (!ctx.world.refs.has(`refs/heads/${head}`)) throw validationFailed('PullRequest', 'head', 'invalid');
      if (!ctx.world.refs.has(`refs/heads/${base}`)) throw validationFailed('PullRequest', 'base', 'invalid');
      if (head === base)
        throw validationFailed('PullRequest', 'base', 'custom', `No commits between ${base} and ${head}`);
      const git = ctx.world.git;
      if (git && git.isAncestor(ctx.world.refs.get(`refs/heads/${head}`)!, ctx.world.refs.get(`refs/heads/${base}`)!))
        throw validationFailed('PullRequest', 'base', 'custom', `No commits between ${base} and ${head}`);
      for (const p of ctx.world.pulls.values()) {
        if (p.head.ref === head && p.base.ref === base && ctx.world.issues.get(p.number)!.state === 'open') {
          throw validationFailed(
            'PullRequest',
            'head',
            'custom',
            `A pull request already exists for ${ctx.world.owner}:${head}.`,
          );
        }
      }
      const { pull } = ctx.world.pull({
        title: String(b.title ?? ''),
        body: (b.body as string | undefined) ?? null,
        author: ctx.actor.login,
        head,
        base,
        draft: b.draft === true,
      });
      freshPull(ctx, pull);
      emit(ctx, { name: 'pull_request', action: 'opened', pull: pull.number, sha: pull.head.sha });
      return { status: 201, body: pullJson(ctx.world, pull) };
    },
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}`,
    (ctx) => ({ status: 200, body: pullJson(ctx.world, freshPull(ctx, getPull(ctx).pull)) }),
  ],
  [
    'PATCH',
    `${R}/pulls/{pull_number}`,
    (ctx) => {
      const { pull, issue } = getPull(ctx);
      if (issue.user !== ctx.actor.login) requirePermission(ctx, 'write');
      const b = obj(ctx);
      const before = { state: issue.state, title: issue.title, body: issue.body, base: pull.base.ref };
      if (typeof b.title === 'string') issue.title = b.title;
      if ('body' in b) issue.body = (b.body as string | null) ?? null;
      if (typeof b.base === 'string') {
        if (ctx.world.git && !ctx.world.refs.has(`refs/heads/${b.base}`))
          throw validationFailed('PullRequest', 'base', 'invalid');
        pull.base = { ref: b.base, sha: ctx.world.refs.get(`refs/heads/${b.base}`) ?? fakeSha(b.base) };
        freshPull(ctx, pull);
      }
      if (b.state === 'closed' || b.state === 'open') closeOrOpen(ctx, issue, b.state, undefined);
      touch(ctx, issue);
      if (issue.title !== before.title || issue.body !== before.body || pull.base.ref !== before.base)
        issueEvent(ctx, issue, 'edited', { changes: editChanges(before, issue) });
      stateEvents(ctx, issue, before.state);
      return { status: 200, body: pullJson(ctx.world, pull) };
    },
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}/files`,
    (ctx) => {
      const pull = freshPull(ctx, getPull(ctx).pull);
      // GitHub: "Responses include a maximum of 3000 files"; the pull request's changed_files still counts them all.
      return list(ctx, pull.files.slice(0, MAX_LISTED_PULL_FILES), (f) => pullFileJson(ctx.world, pull, f));
    },
  ],
  [
    'PUT',
    `${R}/pulls/{pull_number}/merge`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const { pull, issue } = getPull(ctx);
      const b = obj(ctx);
      if (ctx.world.git) return gitMerge(ctx, freshPull(ctx, pull), issue, b);
      if (pull.merged || issue.state === 'closed' || pull.draft || pull.mergeable === false) {
        throw new HttpError(405, 'Pull Request is not mergeable');
      }
      if (typeof b.sha === 'string' && b.sha !== pull.head.sha) {
        throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
      }
      const sha = fakeSha(`merge:${pull.number}:${pull.head.sha}`);
      pull.merged = true;
      pull.merged_at = ctx.world.now();
      pull.merged_by = ctx.actor.login;
      pull.merge_commit_sha = sha;
      ctx.world.refs.set(`refs/heads/${pull.base.ref}`, sha);
      closeOrOpen(ctx, issue, 'closed', 'completed');
      emit(ctx, { name: 'pull_request', action: 'closed', pull: pull.number, merged: true, sha });
      return { status: 200, body: { sha, merged: true, message: 'Pull Request successfully merged' } };
    },
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}/reviews`,
    (ctx) => {
      const { pull } = getPull(ctx);
      const items = [...ctx.world.reviews.values()].filter((r) => r.pull_number === pull.number);
      return list(ctx, items, (r) => reviewJson(ctx.world, r));
    },
  ],
  [
    'POST',
    `${R}/pulls/{pull_number}/reviews`,
    (ctx) => {
      const { pull, issue } = getPull(ctx);
      const b = obj(ctx);
      const event = b.event as string | undefined;
      if (event === 'APPROVE') requireActionsMayCreatePulls(ctx);
      if (event === 'APPROVE' && issue.user === ctx.actor.login) {
        throw new HttpError(422, 'Unprocessable Entity', { errors: ['Can not approve your own pull request'] });
      }
      if (
        (event === 'REQUEST_CHANGES' || event === 'COMMENT') &&
        !b.body &&
        !(b.comments as unknown[] | undefined)?.length
      ) {
        throw new HttpError(422, 'Unprocessable Entity', {
          errors: [`Review Can not ${event === 'COMMENT' ? 'comment' : 'request changes'} without a body`],
        });
      }
      const comments = (b.comments as Array<Record<string, unknown>> | undefined) ?? [];
      freshPull(ctx, pull);
      for (const c of comments) {
        const file = pull.files.find((f) => f.filename === c.path);
        if ((pull.files.length || ctx.world.git) && !file)
          throw new HttpError(422, 'Unprocessable Entity', { errors: ['Path could not be resolved'] });
        if (ctx.world.git) {
          // a real diff: every line (and start_line) must be part of it, on its side
          const check = (line: unknown, side: unknown) => {
            if (line === undefined) return;
            const lines = side === 'LEFT' ? leftLines(file?.patch ?? '') : rightLines(file?.patch ?? '');
            if (typeof line !== 'number' || !lines.has(line))
              throw new HttpError(422, 'Unprocessable Entity', {
                errors: ['Pull request review thread line must be part of the diff'],
              });
          };
          check(c.line, c.side ?? 'RIGHT');
          check(c.start_line, c.start_side ?? c.side ?? 'RIGHT');
          continue;
        }
        if (
          file?.patch !== undefined &&
          typeof c.line === 'number' &&
          (c.side ?? 'RIGHT') === 'RIGHT' &&
          !rightLines(file.patch).has(c.line)
        ) {
          throw new HttpError(422, 'Unprocessable Entity', { errors: ['Line could not be resolved'] });
        }
      }
      const state =
        event === 'APPROVE'
          ? 'APPROVED'
          : event === 'REQUEST_CHANGES'
            ? 'CHANGES_REQUESTED'
            : event === 'COMMENT'
              ? 'COMMENTED'
              : 'PENDING';
      const { review } = ctx.world.review(pull.number, {
        author: ctx.actor.login,
        state,
        body: String(b.body ?? ''),
        commitId: typeof b.commit_id === 'string' ? b.commit_id : pull.head.sha,
        comments: comments.map((c) => ({
          path: String(c.path ?? ''),
          line: typeof c.line === 'number' ? c.line : typeof c.position === 'number' ? c.position : null,
          side: c.side === 'LEFT' ? 'LEFT' : 'RIGHT',
          body: String(c.body ?? ''),
        })),
      });
      // after its comments exist: a listener snapshotting the payload sees the whole review
      if (state !== 'PENDING')
        emit(ctx, { name: 'pull_request_review', action: 'submitted', pull: pull.number, review: review.id });
      return { status: 200, body: reviewJson(ctx.world, review) };
    },
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}/comments`,
    (ctx) => {
      const { pull } = getPull(ctx);
      const items = [...ctx.world.reviewComments.values()].filter((c) => c.pull_number === pull.number);
      return list(ctx, items, (c) => reviewCommentJson(ctx.world, c));
    },
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}/reviews/{review_id}`,
    (ctx) => ({ status: 200, body: reviewJson(ctx.world, getReview(ctx)) }),
  ],
  [
    'GET',
    `${R}/pulls/{pull_number}/reviews/{review_id}/comments`,
    (ctx) => {
      const review = getReview(ctx);
      const items = [...ctx.world.reviewComments.values()]
        .filter((c) => c.review_id === review.id)
        .sort((a, b) => a.id - b.id);
      return list(ctx, items, (c) => reviewCommentJson(ctx.world, c));
    },
  ],
  [
    'GET',
    `${R}/pulls/comments/{comment_id}`,
    (ctx) => {
      const c = ctx.world.reviewComments.get(num(ctx.params.comment_id));
      if (!c) throw notFound();
      return { status: 200, body: reviewCommentJson(ctx.world, c) };
    },
  ],
  [
    'POST',
    `${R}/pulls/{pull_number}/comments/{comment_id}/replies`,
    (ctx) => {
      const { pull, issue } = getPull(ctx);
      const to = ctx.world.reviewComments.get(num(ctx.params.comment_id));
      if (!to || to.pull_number !== pull.number) throw notFound();
      const body = obj(ctx).body;
      if (typeof body !== 'string' || body.length === 0)
        throw validationFailed('PullRequestReviewComment', 'body', 'missing_field');
      checkCommentBody(body);
      if (issue.locked && !hasPermission(ctx, 'write'))
        throw new HttpError(403, 'Unable to create comment because pull request is locked.');
      // GitHub files a reply as a review of its own (COMMENTED, empty body) and reports it as one
      const { review, comment } = ctx.world.replyToReviewComment(to.id, { author: ctx.actor.login, body });
      emit(ctx, { name: 'pull_request_review', action: 'submitted', pull: pull.number, review: review.id });
      return {
        status: 201,
        body: reviewCommentJson(ctx.world, comment),
        headers: { location: `${urls(ctx.world).repoApi}/pulls/comments/${comment.id}` },
      };
    },
  ],

  // git objects (git-data.ts): trees of files, commits
  [
    'GET',
    `${R}/git/trees/{tree_sha}`,
    (ctx) => {
      // a commit or a ref (GitHub takes a branch or tag name here too); a bare tree id or recursive is not emulated
      if (ctx.query.has('recursive')) ctx.notEmulated('GET /git/trees with recursive');
      const commit = resolveCommitish(ctx.world, ctx.params.tree_sha!);
      const root = commit ? readRepoPath(ctx.world, commit, '') : undefined;
      if (root?.type !== 'dir') throw notFound();
      return { status: 200, body: gitTreeJson(ctx.world, root.sha, root.entries) };
    },
  ],
  [
    'POST',
    `${R}/git/trees`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const entries = (Array.isArray(b.tree) ? b.tree : []) as Record<string, unknown>[];
      for (const e of entries) {
        if (e.type !== 'blob') ctx.notEmulated(`POST /git/trees with a ${String(e.type)} entry`);
        if (typeof e.content === 'string' && typeof e.sha === 'string')
          throw new HttpError(422, 'Must supply either tree.sha or tree.content, not both');
      }
      let sha: string;
      try {
        sha = ctx.world.gitData().createTree(
          typeof b.base_tree === 'string' ? b.base_tree : undefined,
          entries.map((e) => ({
            path: String(e.path),
            mode: String(e.mode),
            ...(typeof e.content === 'string' ? { content: e.content } : {}),
            ...(e.sha === null || typeof e.sha === 'string' ? { sha: e.sha } : {}),
          })),
        );
      } catch (error) {
        ctx.notEmulated(`POST /git/trees: ${(error as Error).message}`);
        throw new HttpError(422, 'Invalid tree info');
      }
      const api = urls(ctx.world).repoApi;
      return {
        status: 201,
        body: { sha, url: `${api}/git/trees/${sha}`, truncated: false, tree: [] },
        headers: { location: `${api}/git/trees/${sha}` },
      };
    },
  ],
  [
    'POST',
    `${R}/git/commits`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const data = ctx.world.gitData();
      const parents = (Array.isArray(b.parents) ? b.parents : []).map(String);
      for (const p of parents)
        if (!data.commit(p)) throw new HttpError(422, 'Parent SHA does not exist or is not a commit object');
      const who = { name: ctx.actor.login, email: `${ctx.actor.id}+${ctx.actor.login}@users.noreply.github.com` };
      const date = Math.floor(ctx.world.clock() / 1000);
      const commit = {
        tree: String(b.tree),
        parents,
        message: String(b.message ?? ''),
        author: { ...who, date },
        committer: { ...who, date },
      };
      const sha = data.createCommit(commit);
      return { status: 201, body: gitCommitJson(ctx.world, sha, commit) };
    },
  ],

  // git refs
  [
    'GET',
    `${R}/git/ref/{ref}`,
    (ctx) => {
      const ref = fullRef(ctx.params.ref!);
      const sha = ctx.world.refs.get(ref);
      if (!sha) throw notFound();
      return { status: 200, body: refJson(ctx.world, ref, sha) };
    },
  ],
  [
    'GET',
    `${R}/git/matching-refs/{ref}`,
    (ctx) => {
      const prefix = fullRef(ctx.params.ref!);
      const items = [...ctx.world.refs.entries()]
        .filter(([r]) => r.startsWith(prefix))
        .sort(([a], [b]) => a.localeCompare(b));
      return { status: 200, body: items.map(([r, s]) => refJson(ctx.world, r, s)) };
    },
  ],
  [
    'POST',
    `${R}/git/refs`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const ref = String(b.ref ?? '');
      if (!/^refs\/.+\/.+/.test(ref))
        throw new HttpError(422, "Reference name must start with 'refs/' and have at least two slashes.");
      if (typeof b.sha !== 'string' || !/^[0-9a-f]{40}$/.test(b.sha)) throw new HttpError(422, 'Object does not exist');
      if (ctx.world.refs.has(ref)) throw new HttpError(422, 'Reference already exists');
      const git = ctx.world.git;
      if (git) {
        if (!git.commitExists(b.sha)) throw new HttpError(422, 'Object does not exist');
        try {
          git.updateRef(ref, b.sha, ZERO_SHA);
        } catch (e) {
          if (e instanceof GitError) throw new HttpError(422, 'Reference already exists');
          throw e;
        }
      }
      ctx.world.refs.set(ref, b.sha);
      if (ref.startsWith('refs/heads/')) reportRef(ctx, ref, ZERO_SHA, b.sha);
      return {
        status: 201,
        body: refJson(ctx.world, ref, b.sha),
        headers: { location: `${urls(ctx.world).repoApi}/git/${ref}` },
      };
    },
  ],
  [
    'PATCH',
    `${R}/git/refs/{ref}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const ref = fullRef(ctx.params.ref!);
      if (!ctx.world.refs.has(ref)) throw new HttpError(422, 'Reference does not exist');
      const sha = String(obj(ctx).sha ?? '');
      if (!/^[0-9a-f]{40}$/.test(sha)) throw new HttpError(422, 'Object does not exist');
      const git = ctx.world.git;
      const old = ctx.world.refs.get(ref)!;
      if (git) {
        if (!git.commitExists(sha)) throw new HttpError(422, 'Object does not exist');
        if (obj(ctx).force !== true && !git.isAncestor(old, sha))
          throw new HttpError(422, 'Update is not a fast forward');
        try {
          git.updateRef(ref, sha, old);
        } catch (e) {
          // the ref moved under us (a concurrent push): GitHub answers the same way
          if (e instanceof GitError) throw new HttpError(422, 'Update is not a fast forward');
          throw e;
        }
      }
      // Without git, ancestry is known for the commits made through the git data API (git-data.ts); any other update
      // is accepted (force semantics).
      const memory = git ? undefined : ctx.world.gitData();
      if (memory?.commit(old) && obj(ctx).force !== true && !memory.isAncestor(old, sha))
        throw new HttpError(422, 'Update is not a fast forward');
      ctx.world.refs.set(ref, sha);
      if (ref.startsWith('refs/heads/') && old !== sha) reportRef(ctx, ref, old, sha);
      return { status: 200, body: refJson(ctx.world, ref, sha) };
    },
  ],
  [
    'DELETE',
    `${R}/git/refs/{ref}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const ref = fullRef(ctx.params.ref!);
      const old = ctx.world.refs.get(ref);
      if (old === undefined) throw new HttpError(422, 'Reference does not exist');
      if (ctx.world.git) ctx.world.git.deleteRef(ref);
      ctx.world.refs.delete(ref);
      if (ref.startsWith('refs/heads/')) reportRef(ctx, ref, old, ZERO_SHA);
      return { status: 204 };
    },
  ],

  // actions
  [
    'POST',
    `${R}/actions/workflows/{workflow_id}/dispatches`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const inputs = (b.inputs ?? {}) as Record<string, unknown>;
      const keys = Object.keys(inputs);
      if (keys.length > 25)
        throw new HttpError(422, `you may only define up to 25 \`inputs\` for a \`workflow_dispatch\` event`);
      for (const k of keys) {
        if (typeof inputs[k] !== 'string') {
          throw new HttpError(
            422,
            `Invalid request.\n\nFor 'properties/${k}', ${JSON.stringify(inputs[k])} is not a string.`,
          );
        }
      }
      const ref = String(b.ref ?? '');
      const refName = ref.replace(/^refs\/(heads|tags)\//, '');
      if (!ctx.world.refs.has(`refs/heads/${refName}`) && !ctx.world.refs.has(`refs/tags/${refName}`)) {
        throw new HttpError(422, `No ref found for: ${ref}`);
      }
      const wf = ctx.params.workflow_id!;
      const problem = dispatchInputsProblem(ctx.world, wf, refName, inputs);
      if (problem) throw new HttpError(422, problem);
      const at = ctx.world.clock();
      emit(ctx, {
        name: 'workflow_dispatch',
        workflow: wf,
        ref: ref.startsWith('refs/') ? ref : `refs/heads/${refName}`,
        sha: ctx.world.refs.get(`refs/heads/${refName}`) ?? ctx.world.refs.get(`refs/tags/${refName}`)!,
        inputs: inputs as Record<string, string>,
      });
      ctx.world.dispatches.push({
        workflow_id: /^\d+$/.test(wf) ? Number(wf) : wf,
        ref,
        inputs: inputs as Record<string, string>,
        actor: ctx.actor.login,
        at,
      });
      ctx.world.workflowRuns.push({
        id: ctx.world.nextId('run'),
        name: wf,
        workflow_id: /^\d+$/.test(wf) ? Number(wf) : 100_000 + ctx.world.dispatches.length,
        head_branch: refName,
        head_sha: ctx.world.refs.get(`refs/heads/${refName}`) ?? fakeSha(refName),
        event: 'workflow_dispatch',
        status: 'queued',
        conclusion: null,
        actor: ctx.actor.login,
        created_at: ctx.world.now(),
      });
      return { status: 204 };
    },
  ],
  [
    'GET',
    `${R}/actions/runs/{run_id}/artifacts`,
    (ctx) =>
      artifactList(
        ctx,
        artifactsOf(ctx.world).filter((a) => a.runId === num(ctx.params.run_id)),
      ),
  ],
  [
    'GET',
    `${R}/actions/workflows`,
    (ctx) => {
      const all = repoWorkflows(ctx.world);
      const { page, headers } = paginate(ctx, all);
      return {
        status: 200,
        body: { total_count: all.length, workflows: page.map((wf) => workflowJson(ctx.world, wf)) },
        headers,
      };
    },
  ],
  [
    'GET',
    `${R}/actions/workflows/{workflow_id}`,
    (ctx) => {
      const id = ctx.params.workflow_id!;
      const wf = repoWorkflows(ctx.world).find((x) =>
        /^\d+$/.test(id) ? x.id === Number(id) : x.path === `.github/workflows/${id}`,
      );
      if (!wf) throw notFound();
      return { status: 200, body: workflowJson(ctx.world, wf) };
    },
  ],
  [
    'GET',
    `${R}/actions/permissions/workflow`,
    (ctx) => {
      requireAdmin(ctx);
      return { status: 200, body: { ...ctx.world.actionsSettings } };
    },
  ],
  ['GET', `${R}/actions/artifacts`, (ctx) => artifactList(ctx, [...artifactsOf(ctx.world)])],
  [
    'GET',
    `${R}/actions/artifacts/{artifact_id}`,
    (ctx) => {
      const a = artifactsOf(ctx.world).find((x) => x.id === num(ctx.params.artifact_id));
      if (!a) throw notFound();
      return { status: 200, body: artifactJson(ctx.world, a) };
    },
  ],
  [
    'GET',
    `${R}/actions/runs`,
    (ctx) => {
      const event = ctx.query.get('event');
      const items = ctx.world.workflowRuns
        .filter((r) => !event || r.event === event)
        .slice()
        .reverse();
      const { page, headers } = paginate(ctx, items);
      return {
        status: 200,
        body: { total_count: items.length, workflow_runs: page.map((r) => workflowRunJson(ctx.world, r)) },
        headers,
      };
    },
  ],

  [
    'GET',
    `${R}/actions/runs/{run_id}/attempts/{attempt_number}/jobs`,
    (ctx) => {
      const [run, attempt] = [num(ctx.params.run_id), num(ctx.params.attempt_number)];
      if (!ctx.world.workflowRuns.some((r) => r.id === run)) throw notFound();
      const items = ctx.world.workflowJobs.filter((j) => j.runId === run && j.runAttempt === attempt);
      const { page, headers } = paginate(ctx, items);
      return {
        status: 200,
        body: { total_count: items.length, jobs: page.map((j) => workflowJobJson(ctx.world, j)) },
        headers,
      };
    },
  ],

  // checks & statuses
  [
    'POST',
    `${R}/check-runs`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const id = ctx.world.nextId('checkRun');
      const output = (b.output ?? {}) as Record<string, string | undefined>;
      const status = (
        b.conclusion ? 'completed' : ((b.status as string | undefined) ?? 'queued')
      ) as EmulatedCheckRun['status'];
      const run = {
        id,
        node_id: ctx.world.nodeId('CR', id),
        name: String(b.name ?? ''),
        head_sha: String(b.head_sha ?? ''),
        status,
        conclusion: (b.conclusion as string | undefined) ?? null,
        started_at: (b.started_at as string | undefined) ?? ctx.world.now(),
        completed_at: status === 'completed' ? ((b.completed_at as string | undefined) ?? ctx.world.now()) : null,
        output: { title: output.title ?? null, summary: output.summary ?? null, text: output.text ?? null },
        external_id: (b.external_id as string | undefined) ?? null,
        details_url: (b.details_url as string | undefined) ?? null,
        app: ctx.actor.login,
      };
      ctx.world.checkRuns.set(id, run);
      checkRunEvent(ctx, run, 'created');
      if (run.status === 'completed') checkRunEvent(ctx, run, 'completed');
      return { status: 201, body: checkRunJson(ctx.world, run) };
    },
  ],
  [
    'PATCH',
    `${R}/check-runs/{check_run_id}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const run = ctx.world.checkRuns.get(num(ctx.params.check_run_id));
      if (!run) throw notFound();
      const b = obj(ctx);
      const wasCompleted = run.status === 'completed';
      if (typeof b.name === 'string') run.name = b.name;
      if (typeof b.status === 'string') run.status = b.status as 'queued';
      if (typeof b.conclusion === 'string') {
        run.conclusion = b.conclusion;
        run.status = 'completed';
      }
      if (run.status === 'completed' && !run.completed_at)
        run.completed_at = (b.completed_at as string | undefined) ?? ctx.world.now();
      if (b.output && typeof b.output === 'object') {
        const o = b.output as Record<string, string | undefined>;
        run.output = {
          title: o.title ?? run.output.title,
          summary: o.summary ?? run.output.summary,
          text: o.text ?? run.output.text,
        };
      }
      if (typeof b.details_url === 'string') run.details_url = b.details_url;
      if (!wasCompleted && run.status === 'completed') checkRunEvent(ctx, run, 'completed');
      return { status: 200, body: checkRunJson(ctx.world, run) };
    },
  ],
  [
    'GET',
    `${R}/check-runs/{check_run_id}`,
    (ctx) => {
      const run = ctx.world.checkRuns.get(num(ctx.params.check_run_id));
      if (!run) throw notFound();
      return { status: 200, body: checkRunJson(ctx.world, run) };
    },
  ],
  [
    'GET',
    `${R}/check-runs/{check_run_id}/annotations`,
    (ctx) => {
      const run = ctx.world.checkRuns.get(num(ctx.params.check_run_id));
      if (!run) throw notFound();
      const { page, headers } = paginate(ctx, ctx.world.checkRunAnnotations.get(run.id) ?? []);
      return { status: 200, body: page.map((a) => annotationJson(ctx.world, run.head_sha, a)), headers };
    },
  ],
  [
    'GET',
    `${R}/commits/{ref}/check-runs`,
    (ctx) => {
      const sha = resolveSha(ctx.world, ctx.params.ref!);
      const name = ctx.query.get('check_name');
      const items = [...ctx.world.checkRuns.values()].filter((c) => c.head_sha === sha && (!name || c.name === name));
      const { page, headers } = paginate(ctx, items);
      return {
        status: 200,
        body: { total_count: items.length, check_runs: page.map((c) => checkRunJson(ctx.world, c)) },
        headers,
      };
    },
  ],
  [
    'POST',
    `${R}/statuses/{sha}`,
    (ctx) => {
      requirePermission(ctx, 'write');
      const b = obj(ctx);
      const id = ctx.world.nextId('status');
      const now = ctx.world.now();
      const s = {
        id,
        node_id: ctx.world.nodeId('SC', id),
        sha: ctx.params.sha!,
        state: b.state as 'success',
        context: String(b.context ?? 'default'),
        description: (b.description as string | undefined) ?? null,
        target_url: (b.target_url as string | undefined) ?? null,
        creator: ctx.actor.login,
        created_at: now,
        updated_at: now,
      };
      ctx.world.statuses.push(s);
      emit(ctx, { name: 'status', sha: s.sha, checkName: s.context, state: s.state });
      return { status: 201, body: statusJson(ctx.world, s) };
    },
  ],
  [
    'GET',
    `${R}/commits/{ref}/status`,
    (ctx) => {
      const sha = resolveSha(ctx.world, ctx.params.ref!);
      const latest = new Map<string, (typeof ctx.world.statuses)[number]>();
      for (const s of ctx.world.statuses) if (s.sha === sha) latest.set(s.context, s);
      const statuses = [...latest.values()];
      const state =
        statuses.length === 0 || statuses.some((s) => s.state === 'pending')
          ? 'pending'
          : statuses.some((s) => s.state === 'error' || s.state === 'failure')
            ? 'failure'
            : 'success';
      const { repoApi } = urls(ctx.world);
      const repo = repoJson(ctx.world);
      return {
        status: 200,
        body: {
          state,
          statuses: statuses.map((s) => statusJson(ctx.world, s)),
          sha,
          total_count: statuses.length,
          repository: repo,
          commit_url: `${repoApi}/commits/${sha}`,
          url: `${repoApi}/commits/${sha}/status`,
        },
      };
    },
  ],
];

function reportRef(ctx: RouteContext, ref: string, before: string, after: string) {
  ctx.world.reportPush(ref, before, after, { actor: ctx.actor.login });
  if (after === ZERO_SHA) return;
  // a pull request whose head branch moved through the REST API is synchronized too
  for (const pull of ctx.world.pulls.values()) {
    const issue = ctx.world.issues.get(pull.number)!;
    if (pull.merged || issue.state !== 'open' || `refs/heads/${pull.head.ref}` !== ref) continue;
    const reported = ctx.world.pullReportedHead.get(pull.number);
    pull.head.sha = after;
    freshPull(ctx, pull);
    if (reported === after) continue;
    ctx.world.pullReportedHead.set(pull.number, after);
    emit(ctx, {
      name: 'pull_request',
      action: 'synchronize',
      pull: pull.number,
      before: reported ?? before,
      after,
      sha: after,
    });
  }
}

function checkRunEvent(ctx: RouteContext, run: EmulatedCheckRun, action: string) {
  emit(ctx, {
    name: 'check_run',
    action,
    checkRun: run.id,
    checkName: run.name,
    sha: run.head_sha,
    conclusion: run.conclusion,
  });
}

/**
 * PUT /pulls/{n}/merge on a real repository: squash (one commit, base as sole parent, "title (#n)"), merge (two
 * parents) or rebase (each commit replayed onto the base). The base branch moves by compare-and-swap.
 */
function gitMerge(
  ctx: RouteContext,
  pull: EmulatedPull,
  issue: EmulatedIssue,
  b: Record<string, unknown>,
): RouteResult {
  const git = ctx.world.git!;
  if (pull.merged || issue.state === 'closed') throw new HttpError(405, 'Pull Request is not mergeable');
  if (pull.draft) throw new HttpError(405, 'Pull Request is still a draft');
  if (!ctx.world.refs.has(`refs/heads/${pull.head.ref}`)) throw new HttpError(405, 'Pull Request is not mergeable');
  if (typeof b.sha === 'string' && b.sha !== pull.head.sha) {
    throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
  }
  const method = (b.merge_method as string | undefined) ?? 'merge';
  if (!['merge', 'squash', 'rebase'].includes(method)) throw validationFailed('PullRequest', 'merge_method', 'invalid');
  const baseRef = `refs/heads/${pull.base.ref}`;
  const base = pull.base.sha;
  const head = pull.head.sha;
  const merged = git.mergeTree(base, head);
  if (!merged.clean) {
    pull.mergeable = false;
    throw new HttpError(405, 'Pull Request is not mergeable');
  }
  const author = gitIdentity(ctx, method === 'squash' ? issue.user : ctx.actor.login);
  const committer = GITHUB_COMMITTER(ctx);
  const title = typeof b.commit_title === 'string' ? b.commit_title : undefined;
  const message = typeof b.commit_message === 'string' ? b.commit_message : undefined;
  let sha: string;
  if (method === 'squash') {
    const subject = title ?? `${issue.title} (#${pull.number})`;
    const body = message ?? issue.body ?? '';
    sha = git.commitTree(
      merged.tree,
      [base],
      body
        ? `${subject}

${body}
`
        : `${subject}
`,
      author,
      committer,
    );
  } else if (method === 'merge') {
    const subject = title ?? `Merge pull request #${pull.number} from ${ctx.world.owner}/${pull.head.ref}`;
    const body = message ?? issue.title;
    sha = git.commitTree(
      merged.tree,
      [base, head],
      `${subject}

${body}
`,
      author,
      committer,
    );
  } else {
    const mergeBase = git.mergeBase(base, head) ?? base;
    const rebased = git.rebase(base, mergeBase, head, committer);
    if (!rebased) throw new HttpError(405, 'This branch can’t be rebased');
    sha = rebased;
  }
  try {
    git.updateRef(baseRef, sha, base);
  } catch (e) {
    if (e instanceof GitError) throw new HttpError(409, 'Base branch was modified. Review and try the merge again.');
    throw e;
  }
  ctx.world.refs.set(baseRef, sha);
  pull.merged = true;
  pull.merged_at = ctx.world.now();
  pull.merged_by = ctx.actor.login;
  pull.merge_commit_sha = sha;
  pull.mergeable = null;
  closeOrOpen(ctx, issue, 'closed', 'completed');
  touch(ctx, issue);
  ctx.world.reportPush(baseRef, base, sha, { actor: ctx.actor.login });
  emit(ctx, { name: 'pull_request', action: 'closed', pull: pull.number, merged: true, sha });
  return { status: 200, body: { sha, merged: true, message: 'Pull Request successfully merged' } };
}

function resolveSha(world: GitHubWorld, ref: string): string {
  if (/^[0-9a-f]{40}$/.test(ref)) return ref;
  return (
    world.refs.get(fullRef(ref)) ?? world.refs.get(`refs/heads/${ref}`) ?? world.refs.get(`refs/tags/${ref}`) ?? ref
  );
}

export const ROUTES: Route[] = defs
  .map(([m, t, h]) => compile(m, t, h))
  .sort((a, b) => b.literals - a.literals || a.paramNames.length - b.paramNames.length);

export function matchRoute(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const m = route.regex.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    let ok = true;
    route.paramNames.forEach((n, i) => {
      try {
        params[n] = decodeURIComponent(m[i + 1]!);
      } catch {
        ok = false;
      }
    });
    if (ok) return { route, params };
  }
  return undefined;
}

export const BOT = BOT_LOGIN;

/** A commit as the git data API shows it (POST /git/commits). */
export function gitCommitJson(w: GitHubWorld, sha: string, c: GitCommitObject) {
  const api = urls(w).repoApi;
  const person = (p: GitCommitObject['author']) => ({
    name: p.name,
    email: p.email,
    date: new Date((p.date ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
  return {
    sha,
    node_id: Buffer.from(`C_${sha}`).toString('base64'),
    url: `${api}/git/commits/${sha}`,
    html_url: `${urls(w).html}/commit/${sha}`,
    author: person(c.author),
    committer: person(c.committer),
    message: c.message,
    tree: { sha: c.tree, url: `${api}/git/trees/${c.tree}` },
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${api}/git/commits/${p}`,
      html_url: `${urls(w).html}/commit/${p}`,
    })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}
