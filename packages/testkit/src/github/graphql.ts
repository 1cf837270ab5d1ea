/**
 * POST /graphql on graphql-js and GitHub's public schema (`@octokit/graphql-schema`). Every document is parsed and
 * validated against that schema; one GitHub would reject is answered as GitHub does (HTTP 200 with `errors`) and
 * recorded as a violation. Valid documents run against the world. Resolvers are plain objects: a property is the
 * field's value, a function property is called with (args, context, info). A field the emulator does not model is a
 * GraphQL error plus a `not-emulated` violation, never a silent null.
 *
 * Emulated: Query.repository { id, issue, pullRequest, label, labels, ref, ... }, an issue's or pull request's comments
 * and Query.node for an issue comment (its editor and lastEditedAt from the edit history; an App's login without
 * `[bot]`, as GitHub gives it),
 * Query.search(type: ISSUE) (see search.ts), PullRequest.reviewThreads (a thread: a top-level review comment and its
 * replies), a ref's target commit with its parents and a file in it (git-data.ts), and the mutations createIssue,
 * createLabel, addSubIssue, removeSubIssue, markPullRequestReadyForReview, resolveReviewThread, unresolveReviewThread
 * and createCommitOnBranch (its `expectedHeadOid` a compare-and-swap, as on GitHub).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  GraphQLError,
  Kind,
  buildSchema,
  executeSync,
  getOperationAST,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationTypeNode,
} from 'graphql';
import {
  HttpError,
  addSubIssue,
  createLabel,
  openIssue,
  removeSubIssue,
  requirePermission,
  type RouteResult,
} from './routes';
import { searchIssues } from './search';
import { urls } from './serialize';
import {
  PERMISSION_RANK,
  type EmulatedComment,
  type EmulatedIssue,
  type EmulatedLabel,
  type EmulatedPull,
  type EmulatedReviewComment,
  type EmulatedReviewThread,
  type EmulatedUser,
  type GitHubWorld,
} from './world';

// ---------------------------------------------------------------------------------------------------------------
// GitHub's schema, built once per process

let schema: GraphQLSchema | undefined;
/** How often and how long the schema was built (once per process: tests check the count, the bench the time). */
export const graphqlSchemaStats = { buildMs: 0, builds: 0 };

function schemaFile(): string {
  // The package exports only its ESM entry (which eagerly builds its own graphql 16 schema), so find the file.
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths('@octokit/graphql-schema') ?? []) {
    const file = join(dir, '@octokit/graphql-schema/schema.graphql');
    if (existsSync(file)) return file;
  }
  throw new Error('@octokit/graphql-schema is not installed');
}

/**
 * The IDL, not `schema.json`: the JSON introspection result in the package is stale (it has no sub-issues). GitHub's
 * published IDL defines two fields twice and breaks graphql-js 17's stricter rule on deprecated interface fields, so
 * it is built as-is (assumeValid): it is GitHub's truth, not ours to reject.
 */
export function githubSchema(): GraphQLSchema {
  if (schema) return schema;
  const t0 = performance.now();
  schema = buildSchema(readFileSync(schemaFile(), 'utf8'), {
    assumeValidSDL: true,
    assumeValid: true,
    noLocation: true,
  });
  graphqlSchemaStats.buildMs = performance.now() - t0;
  graphqlSchemaStats.builds += 1;
  return schema;
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

export interface GraphqlViolation {
  kind: 'request' | 'response' | 'not-emulated';
  errors: string[];
}

export type PreparedGraphql =
  | {
      ok: true;
      document: DocumentNode;
      variables: Record<string, unknown> | undefined;
      operationName: string | undefined;
      operation: OperationTypeNode;
      /** e.g. 'graphql/mutation createIssue': names the request in the request log */
      operationId: string;
    }
  | { ok: false; result: RouteResult; operationId: string; violation: GraphqlViolation };

/**
 * GitHub runs graphql-ruby, which by default still accepts (and only logs) fields of one response key whose types
 * differ across mutually exclusive fragments (`... on Issue { state } ... on PullRequest { state }`), a legacy
 * leniency the spec does not allow; graphql-js rejects them. Accept what GitHub accepts; other conflicts stand.
 */
function githubRejects(e: GraphQLError): boolean {
  return !(/return conflicting types/.test(e.message) && !/different fields|differing/.test(e.message));
}

/** GitHub rewords graphql-js' most common validation error. */
function githubValidationError(e: GraphQLError): Record<string, unknown> {
  const m = /^Cannot query field "(\w+)" on type "(\w+)"\./.exec(e.message);
  return {
    message: m ? `Field '${m[1]}' doesn't exist on type '${m[2]}'` : e.message,
    locations: e.locations ?? [],
    ...(m ? { extensions: { code: 'undefinedField', typeName: m[2], fieldName: m[1] } } : {}),
  };
}

/** Parse and validate; the server applies rate limits and faults between this and running it. */
export function prepareGraphql(body: unknown): PreparedGraphql {
  const b = (body ?? {}) as { query?: unknown; variables?: unknown; operationName?: unknown };
  if (typeof b.query !== 'string') {
    return {
      ok: false,
      operationId: 'graphql',
      result: { status: 400, body: { message: 'A query attribute must be specified and must be a string.' } },
      violation: { kind: 'request', errors: ['body: no query string'] },
    };
  }
  const reject = (errors: Record<string, unknown>[], operationId = 'graphql'): PreparedGraphql => ({
    ok: false,
    operationId,
    result: { status: 200, body: { errors } },
    violation: { kind: 'request', errors: errors.map((e) => String(e.message)) },
  });
  let document: DocumentNode;
  let checked = checkedDocuments.get(b.query);
  try {
    document = checked ? checked.document : parse(b.query);
  } catch (e) {
    const err = e as GraphQLError;
    return reject([{ message: `Parse error: ${err.message}`, locations: err.locations ?? [] }]);
  }
  const operationName = typeof b.operationName === 'string' ? b.operationName : undefined;
  const op = getOperationAST(document, operationName);
  const roots = (op?.selectionSet.selections ?? []).map((s) => (s.kind === Kind.FIELD ? s.name.value : '…'));
  const operationId = op ? `graphql/${op.operation} ${[...new Set(roots)].join(',')}` : 'graphql';
  if (!checked) {
    // Validating against GitHub's whole schema takes 10–20 ms; a client sends the same few documents again and again.
    checked = { document, errors: validate(githubSchema(), document).filter(githubRejects) };
    if (checkedDocuments.size >= 500) checkedDocuments.clear();
    checkedDocuments.set(b.query, checked);
  }
  if (checked.errors.length > 0) return reject(checked.errors.map(githubValidationError), operationId);
  if (!op) return reject([{ message: 'An operation name is required when the document has several operations' }]);
  const variables =
    b.variables && typeof b.variables === 'object' ? (b.variables as Record<string, unknown>) : undefined;
  return { ok: true, document, variables, operationName, operation: op.operation, operationId };
}

/** Parsed and validated documents by their text (the schema never changes within a process). */
const checkedDocuments = new Map<string, { document: DocumentNode; errors: readonly GraphQLError[] }>();

/** An error GitHub answers inside a 200 (`type` as GitHub names it). */
class GitHubGraphqlError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const HTTP_TYPES: Record<number, string> = { 403: 'FORBIDDEN', 404: 'NOT_FOUND', 422: 'UNPROCESSABLE' };
const RAILS_PHRASES: Record<string, string> = {
  missing_field: "can't be blank",
  already_exists: 'has already been taken',
  invalid: 'is invalid',
};

/** A REST validation failure ({resource, field, code}) worded the way GraphQL reports it ("Name has already been taken"). */
function graphqlMessage(e: HttpError): string {
  const first = (e.extra.errors as { field?: string; code?: string; message?: string }[] | undefined)?.[0];
  if (!first?.field || !first.code) return e.message;
  const field = first.field.charAt(0).toUpperCase() + first.field.slice(1);
  return first.message ?? `${field} ${RAILS_PHRASES[first.code] ?? 'is invalid'}`;
}

interface Context {
  world: GitHubWorld;
  actor: EmulatedUser;
  violations: GraphqlViolation[];
}

function notEmulated(ctx: Context, what: string): GitHubGraphqlError {
  ctx.violations.push({ kind: 'not-emulated', errors: [`${what} is not emulated`] });
  return new GitHubGraphqlError('NOT_EMULATED', `The GitHub emulator does not implement ${what}`);
}

/** A property of the source object is the field; anything else is loud. */
const fieldResolver: GraphQLFieldResolver<unknown, Context> = (source, args, ctx, info) => {
  if (source && typeof source === 'object' && info.fieldName in source) {
    const v = (source as Record<string, unknown>)[info.fieldName];
    return typeof v === 'function' ? (v as Resolver)(args, ctx, info) : v;
  }
  throw notEmulated(ctx, `${info.parentType.name}.${info.fieldName}`);
};

/**
 * Run a prepared document. `performed` says whether execution happened (the server answers a "write succeeds, then
 * 502" fault only after a mutation really ran).
 */
export function runGraphql(
  world: GitHubWorld,
  actor: EmulatedUser,
  req: Extract<PreparedGraphql, { ok: true }>,
): { result: RouteResult; performed: boolean; violations: GraphqlViolation[] } {
  const ctx: Context = { world, actor, violations: [] };
  const out = executeSync({
    schema: githubSchema(),
    document: req.document,
    rootValue: root(world),
    contextValue: ctx,
    variableValues: req.variables,
    operationName: req.operationName,
    fieldResolver,
  });
  if (!('data' in out) || out.data === undefined) {
    // variables that do not fit the operation: GitHub rejects the request before running anything
    const errors = (out.errors ?? []).map((e) => ({ message: e.message, locations: e.locations ?? [] }));
    ctx.violations.push({ kind: 'request', errors: errors.map((e) => e.message) });
    return { result: { status: 200, body: { errors } }, performed: false, violations: ctx.violations };
  }
  const errors = (out.errors ?? []).map((e) => {
    const orig = e.originalError;
    let type = orig instanceof GitHubGraphqlError ? orig.type : undefined;
    let message = e.message;
    if (orig instanceof HttpError) {
      type = HTTP_TYPES[orig.status] ?? 'UNPROCESSABLE';
      message = graphqlMessage(orig);
    }
    // anything else (a serialization error, a crash) is the emulator answering outside the schema
    if (!type) ctx.violations.push({ kind: 'response', errors: [`${e.path?.join('.') ?? ''}: ${e.message}`] });
    return { ...(type ? { type } : {}), path: e.path ?? [], locations: e.locations ?? [], message };
  });
  return {
    result: { status: 200, body: { data: out.data, ...(errors.length ? { errors } : {}) } },
    performed: true,
    violations: ctx.violations,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Resolvers

type Resolver = (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => unknown;
type Obj = Record<string, unknown>;

const nodeNotFound = (id: unknown) =>
  new GitHubGraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${String(id)}'.`);

const cursor = (i: number) => Buffer.from(`cursor:v2:${i}`).toString('base64');
const fromCursor = (c: unknown) =>
  typeof c === 'string' ? Number(/:(\d+)$/.exec(Buffer.from(c, 'base64').toString())?.[1] ?? -1) : undefined;

/** GitHub's connection rules: `first` or `last` is required, at most 100, cursors from earlier pages. */
function connection(items: unknown[], args: Obj, ctx: Context, info: GraphQLResolveInfo): Obj {
  const first = args.first as number | null | undefined;
  const last = args.last as number | null | undefined;
  const reject = (message: string, type: string) => {
    ctx.violations.push({ kind: 'request', errors: [message] });
    return new GitHubGraphqlError(type, message);
  };
  if (first == null && last == null)
    throw reject(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${info.fieldName}\` connection.`,
      'MISSING_PAGINATION_BOUNDARIES',
    );
  for (const [name, n] of [
    ['first', first],
    ['last', last],
  ] as const) {
    if (n == null) continue;
    if (n < 0) throw reject(`\`${name}\` on the \`${info.fieldName}\` connection cannot be less than zero.`, 'INVALID');
    if (n > 100)
      throw reject(
        `Requesting ${n} records on the \`${info.fieldName}\` connection exceeds the \`${name}\` limit of 100 records.`,
        'EXCESSIVE_PAGINATION',
      );
  }
  let start = (fromCursor(args.after) ?? -1) + 1;
  let end = fromCursor(args.before) ?? items.length;
  if (first != null) end = Math.min(end, start + first);
  if (last != null) start = Math.max(start, end - last);
  const nodes = items.slice(start, end);
  return {
    totalCount: items.length,
    nodes,
    edges: nodes.map((node, i) => ({ node, cursor: cursor(start + i) })),
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: nodes.length ? cursor(start) : null,
      endCursor: nodes.length ? cursor(end - 1) : null,
    },
  };
}

const list =
  (items: () => unknown[]): Resolver =>
  (args, ctx, info) =>
    connection(items(), args, ctx, info);

function labelNode(w: GitHubWorld, l: EmulatedLabel): Obj {
  return {
    __typename: 'Label',
    id: l.node_id,
    name: l.name,
    color: l.color,
    description: l.description,
    isDefault: l.default,
    url: `${urls(w).html}/labels/${encodeURIComponent(l.name)}`,
  };
}

function labelsOf(w: GitHubWorld, i: EmulatedIssue): Resolver {
  return list(() =>
    i.labels
      .map((n) => w.getLabel(n))
      .filter((l): l is EmulatedLabel => !!l)
      .map((l) => labelNode(w, l)),
  );
}

/** Fields an Issue and a PullRequest share. */
function issueLike(w: GitHubWorld, i: EmulatedIssue): Obj {
  const url = `${urls(w).html}/${i.isPullRequest ? 'pull' : 'issues'}/${i.number}`;
  return {
    number: i.number,
    title: i.title,
    body: i.body ?? '',
    url,
    resourcePath: new URL(url).pathname,
    closed: i.state === 'closed',
    closedAt: i.closed_at,
    createdAt: i.created_at,
    updatedAt: i.updated_at,
    locked: i.locked,
    labels: labelsOf(w, i),
    comments: list(() => w.commentsOn(i.number).map((c) => issueCommentNode(w, c))),
    repository: () => repositoryNode(w),
  };
}

function issueNode(w: GitHubWorld, i: EmulatedIssue): Obj {
  if (i.isPullRequest) return pullNode(w, w.pulls.get(i.number)!, i);
  const summary = w.subIssuesSummary(i.number);
  return {
    __typename: 'Issue',
    id: i.node_id,
    databaseId: i.id,
    ...issueLike(w, i),
    state: i.state === 'open' ? 'OPEN' : 'CLOSED',
    stateReason: () => i.state_reason?.toUpperCase() ?? null,
    subIssues: list(() => w.subIssuesOf(i.number).map((s) => issueNode(w, s))),
    subIssuesSummary: {
      total: summary.total,
      completed: summary.completed,
      percentCompleted: summary.percent_completed,
    },
    parent: () => {
      const p = w.parentOf(i.number);
      return p ? issueNode(w, p) : null;
    },
  };
}

function pullNode(w: GitHubWorld, p: EmulatedPull, i: EmulatedIssue): Obj {
  return {
    __typename: 'PullRequest',
    id: p.node_id,
    databaseId: p.id,
    ...issueLike(w, i),
    state: p.merged ? 'MERGED' : i.state === 'open' ? 'OPEN' : 'CLOSED',
    isDraft: p.draft,
    merged: p.merged,
    mergedAt: p.merged_at,
    headRefName: p.head.ref,
    headRefOid: p.head.sha,
    baseRefName: p.base.ref,
    reviewThreads: list(() => w.reviewThreadsOf(p.number).map((t) => reviewThreadNode(w, t))),
  };
}

/** A User or Bot as the Actor interface (`author`, `resolvedBy`). */
function actorNode(w: GitHubWorld, login: string): Obj {
  const u = w.ensureUser(login);
  const url = u.type === 'Bot' ? `${urls(w).api}/apps/${login.replace(/\[bot\]$/, '')}` : `${urls(w).api}/${login}`;
  return {
    __typename: u.type === 'Bot' ? 'Bot' : 'User',
    id: u.node_id,
    databaseId: u.id,
    // GitHub's GraphQL names an App by its slug, without the `[bot]` REST adds (github-actions, not github-actions[bot])
    login: u.type === 'Bot' ? u.login.replace(/\[bot\]$/, '') : u.login,
    url,
    resourcePath: new URL(url).pathname,
    avatarUrl: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
  };
}

/** Who may resolve a thread on GitHub: writers, and the pull request's author. */
function canResolve(w: GitHubWorld, actor: EmulatedUser, t: EmulatedReviewThread): boolean {
  return (
    PERMISSION_RANK[actor.permission] >= PERMISSION_RANK.write || w.issues.get(t.pull_number)?.user === actor.login
  );
}

function reviewThreadNode(w: GitHubWorld, t: EmulatedReviewThread): Obj {
  const top = t.comments[0]!;
  const pull = () => pullNode(w, w.pulls.get(t.pull_number)!, w.issues.get(t.pull_number)!);
  return {
    __typename: 'PullRequestReviewThread',
    id: t.node_id,
    isResolved: t.resolved_by !== null,
    // GitHub collapses a thread when it is resolved
    isCollapsed: t.resolved_by !== null,
    resolvedBy: () => (t.resolved_by === null ? null : actorNode(w, t.resolved_by)),
    path: top.path,
    line: top.line,
    originalLine: top.line,
    startLine: null,
    originalStartLine: null,
    startDiffSide: null,
    diffSide: top.side,
    subjectType: 'LINE',
    comments: list(() => t.comments.map((c) => reviewCommentNode(w, c))),
    pullRequest: pull,
    repository: () => repositoryNode(w),
    viewerCanReply: true,
    viewerCanResolve: (_: Obj, ctx: Context) => t.resolved_by === null && canResolve(w, ctx.actor, t),
    viewerCanUnresolve: (_: Obj, ctx: Context) => t.resolved_by !== null && canResolve(w, ctx.actor, t),
  };
}

function reviewCommentNode(w: GitHubWorld, c: EmulatedReviewComment): Obj {
  const url = `${urls(w).html}/pull/${c.pull_number}#discussion_r${c.id}`;
  return {
    __typename: 'PullRequestReviewComment',
    id: c.node_id,
    databaseId: c.id,
    fullDatabaseId: String(c.id),
    body: c.body,
    bodyText: c.body,
    path: c.path,
    line: c.line,
    originalLine: c.line,
    startLine: null,
    originalStartLine: null,
    diffHunk: '@@ -1 +1 @@',
    author: () => actorNode(w, c.user),
    authorAssociation: w.authorAssociation(c.user),
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    publishedAt: c.created_at,
    lastEditedAt: null,
    url,
    resourcePath: new URL(url).pathname,
    subjectType: 'LINE',
    replyTo: () => {
      const to = c.in_reply_to_id === undefined ? undefined : w.reviewComments.get(c.in_reply_to_id);
      return to ? reviewCommentNode(w, to) : null;
    },
    pullRequest: () => pullNode(w, w.pulls.get(c.pull_number)!, w.issues.get(c.pull_number)!),
    repository: () => repositoryNode(w),
  };
}

/** An issue (or pull request) comment; `editor` and `lastEditedAt` come from its edit history, as on GitHub. */
function issueCommentNode(w: GitHubWorld, c: EmulatedComment): Obj {
  const issue = w.issues.get(c.issue_number)!;
  const url = `${urls(w).html}/${issue.isPullRequest ? 'pull' : 'issues'}/${c.issue_number}#issuecomment-${c.id}`;
  const last = c.revisions.length > 1 ? c.revisions[c.revisions.length - 1]! : undefined;
  return {
    __typename: 'IssueComment',
    id: c.node_id,
    databaseId: c.id,
    fullDatabaseId: String(c.id),
    body: c.body,
    author: () => actorNode(w, c.user),
    authorAssociation: c.author_association,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    lastEditedAt: last?.at ?? null,
    editor: () => (last ? actorNode(w, last.by) : null),
    includesCreatedEdit: last !== undefined,
    url,
    resourcePath: new URL(url).pathname,
  };
}

function repositoryNode(w: GitHubWorld): Obj {
  return {
    __typename: 'Repository',
    id: w.nodeId('R', w.repoId), // = REST node_id
    databaseId: w.repoId,
    name: w.repo,
    nameWithOwner: `${w.owner}/${w.repo}`,
    url: urls(w).html,
    issue: ({ number }: Obj) => {
      const i = w.issues.get(number as number);
      if (!i || i.isPullRequest)
        throw new GitHubGraphqlError(
          'NOT_FOUND',
          `Could not resolve to an Issue with the number of ${String(number)}.`,
        );
      return issueNode(w, i);
    },
    pullRequest: ({ number }: Obj) => {
      const p = w.pulls.get(number as number);
      if (!p)
        throw new GitHubGraphqlError(
          'NOT_FOUND',
          `Could not resolve to a PullRequest with the number of ${String(number)}.`,
        );
      return pullNode(w, p, w.issues.get(p.number)!);
    },
    label: ({ name }: Obj) => {
      const l = w.getLabel(String(name));
      return l ? labelNode(w, l) : null;
    },
    labels: list(() => [...w.labels.values()].map((l) => labelNode(w, l))),
    ref: ({ qualifiedName }: Obj) => refNode(w, String(qualifiedName)),
    // null for a repository with no commit yet, as on GitHub
    defaultBranchRef: () => refNode(w, w.defaultBranch),
  };
}

function refNode(w: GitHubWorld, name: string): Obj | null {
  const full = name.startsWith('refs/') ? name : `refs/heads/${name}`;
  const sha = w.refs.get(full);
  if (!sha) return null;
  const [, prefix, short] = /^(refs\/(?:[^/]+\/)?)(.*)$/.exec(full)!;
  return {
    __typename: 'Ref',
    id: Buffer.from(`REF_${full}`).toString('base64'),
    name: short,
    prefix,
    target: () => commitNode(w, sha),
  };
}

/** A commit of the world's git data (git-data.ts), with the fields HydraFlow reads: its parents and a file in it. */
function commitNode(w: GitHubWorld, sha: string): Obj | null {
  const c = w.gitData().commit(sha);
  if (!c) return null;
  return {
    __typename: 'Commit',
    oid: sha,
    message: c.message,
    messageHeadline: c.message.split('\n', 1)[0] ?? '',
    url: `${urls(w).html}/commit/${sha}`,
    tree: { __typename: 'Tree', oid: c.tree },
    parents: list(() => c.parents.map((p) => commitNode(w, p) ?? { __typename: 'Commit', oid: p })),
    file: ({ path }: Obj) => {
      const file = w.gitData().fileAt(sha, String(path));
      if (!file) return null;
      const name = String(path).split('/').pop()!;
      return {
        __typename: 'TreeEntry',
        name,
        path: String(path),
        oid: file.oid,
        type: 'blob',
        object: {
          __typename: 'Blob',
          oid: file.oid,
          text: file.text,
          isBinary: false,
          isTruncated: false,
          byteSize: Buffer.byteLength(file.text),
        },
      };
    },
  };
}

function issueByNodeId(w: GitHubWorld, id: unknown): EmulatedIssue {
  const i = [...w.issues.values()].find((x) => x.node_id === id && !x.isPullRequest);
  if (!i) throw nodeNotFound(id);
  return i;
}

/** The fields of an input object GitHub has and the emulator ignores: loud, not silently dropped. */
function onlyEmulated(ctx: Context, type: string, input: Obj, emulated: string[]): void {
  for (const [k, v] of Object.entries(input))
    if (v != null && !emulated.includes(k) && k !== 'clientMutationId') throw notEmulated(ctx, `${type}.${k}`);
}

const payload = (input: Obj, rest: Obj): Obj => ({ clientMutationId: input.clientMutationId ?? null, ...rest });

/** resolveReviewThread / unresolveReviewThread: writers and the pull request's author; doing it twice is a no-op. */
function setThreadResolved(input: Obj, ctx: Context, resolved: boolean): Obj {
  const w = ctx.world;
  const thread = w.reviewThread(String(input.threadId));
  if (!thread) throw nodeNotFound(input.threadId);
  if (!canResolve(w, ctx.actor, thread)) requirePermission(ctx, 'write');
  const top = thread.comments[0]!.id;
  if (resolved && !w.resolvedThreads.has(top)) w.resolvedThreads.set(top, ctx.actor.login);
  if (!resolved) w.resolvedThreads.delete(top);
  return payload(input, { thread: reviewThreadNode(w, w.reviewThread(thread.node_id)!) });
}

function root(w: GitHubWorld): Obj {
  const repoId = w.nodeId('R', w.repoId);
  const mutationInput = (args: Obj) => args.input as Obj;
  const subIssueArgs = (input: Obj) => {
    const parent = issueByNodeId(w, input.issueId);
    if (input.subIssueId != null) return { parent, child: issueByNodeId(w, input.subIssueId) };
    const n = new RegExp(`^${urls(w).html}/issues/(\\d+)$`).exec(String(input.subIssueUrl ?? ''))?.[1];
    const child = n ? w.issues.get(Number(n)) : undefined;
    if (!child || child.isPullRequest)
      throw new GitHubGraphqlError('UNPROCESSABLE', 'Either subIssueId or a valid subIssueUrl must be provided.');
    return { parent, child };
  };
  return {
    node: ({ id }: Obj, ctx: Context) => {
      const comment = [...w.comments.values()].find((c) => c.node_id === id);
      if (comment) return issueCommentNode(w, comment);
      if (typeof id === 'string' && /^IC_/.test(id)) throw nodeNotFound(id);
      throw notEmulated(ctx, `node(id: ${String(id)})`);
    },
    repository: ({ owner, name }: Obj) => {
      if (String(owner).toLowerCase() !== w.owner.toLowerCase() || String(name).toLowerCase() !== w.repo.toLowerCase())
        throw new GitHubGraphqlError(
          'NOT_FOUND',
          `Could not resolve to a Repository with the name '${String(owner)}/${String(name)}'.`,
        );
      return repositoryNode(w);
    },
    search: (args: Obj, ctx: Context, info: GraphQLResolveInfo) => {
      if (args.type !== 'ISSUE') throw notEmulated(ctx, `search(type: ${String(args.type)})`);
      const { items, notEmulated: unsupported, tooLong } = searchIssues(w, String(args.query));
      for (const what of unsupported)
        ctx.violations.push({ kind: 'not-emulated', errors: [`${what} is not emulated`] });
      if (tooLong) {
        ctx.violations.push({ kind: 'request', errors: [tooLong] });
        throw new GitHubGraphqlError('UNPROCESSABLE', tooLong);
      }
      return {
        ...connection(
          items.map((i) => issueNode(w, i)),
          args,
          ctx,
          info,
        ),
        issueCount: items.length,
      };
    },

    createIssue: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      onlyEmulated(ctx, 'CreateIssueInput', input, ['repositoryId', 'title', 'body', 'labelIds', 'parentIssueId']);
      if (input.repositoryId !== repoId) throw nodeNotFound(input.repositoryId);
      const labels = ((input.labelIds as string[] | null) ?? []).map((id) => {
        const l = [...w.labels.values()].find((x) => x.node_id === id);
        if (!l) throw nodeNotFound(id);
        return l.name;
      });
      // checked before creating: GitHub does not leave a half-made issue behind
      const parent = input.parentIssueId != null ? issueByNodeId(w, input.parentIssueId) : undefined;
      if (parent) {
        requirePermission(ctx, 'triage');
        const problem = w.subIssueProblem(parent, undefined);
        if (problem) throw new GitHubGraphqlError('UNPROCESSABLE', problem);
      }
      const issue = openIssue(ctx, {
        title: input.title,
        body: (input.body as string | null) ?? null,
        labels,
        assignees: [],
      });
      if (parent) addSubIssue(ctx, parent, issue);
      return payload(input, { issue: issueNode(w, issue) });
    },
    createLabel: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      if (input.repositoryId !== repoId) throw nodeNotFound(input.repositoryId);
      const label = createLabel(ctx, { name: input.name, color: input.color, description: input.description });
      return payload(input, { label: labelNode(w, label) });
    },
    addSubIssue: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      const { parent, child } = subIssueArgs(input);
      addSubIssue(ctx, parent, child, input.replaceParent === true);
      return payload(input, { issue: issueNode(w, parent), subIssue: issueNode(w, child) });
    },
    removeSubIssue: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      const parent = issueByNodeId(w, input.issueId);
      const child = issueByNodeId(w, input.subIssueId);
      removeSubIssue(ctx, parent, child);
      return payload(input, { issue: issueNode(w, parent), subIssue: issueNode(w, child) });
    },
    createCommitOnBranch: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      onlyEmulated(ctx, 'CreateCommitOnBranchInput', input, ['branch', 'expectedHeadOid', 'message', 'fileChanges']);
      requirePermission(ctx, 'write');
      const branch = input.branch as Obj;
      if (branch.branchId != null) throw notEmulated(ctx, 'CommittableBranch.branchId');
      if (String(branch.repositoryNameWithOwner).toLowerCase() !== `${w.owner}/${w.repo}`.toLowerCase())
        throw new GitHubGraphqlError(
          'NOT_FOUND',
          `Could not resolve to a Repository with the name '${String(branch.repositoryNameWithOwner)}'.`,
        );
      const ref = `refs/heads/${String(branch.branchName)}`;
      const head = w.refs.get(ref);
      if (!head)
        throw new GitHubGraphqlError('NOT_FOUND', `A ref named "${String(branch.branchName)}" does not exist.`);
      if (head !== input.expectedHeadOid)
        throw new GitHubGraphqlError(
          'STALE_DATA',
          `Expected branch to point to "${String(input.expectedHeadOid)}" but it did not. Pull and try again.`,
        );
      const changes = (input.fileChanges ?? {}) as { additions?: Obj[] | null; deletions?: Obj[] | null };
      const data = w.gitData();
      const parent = data.commit(head)!;
      const tree = data.createTree(parent.tree, [
        ...(changes.additions ?? []).map((a) => ({
          path: String(a.path),
          mode: '100644',
          content: Buffer.from(String(a.contents), 'base64').toString('utf8'),
        })),
        ...(changes.deletions ?? []).map((d) => ({ path: String(d.path), mode: '100644', sha: null })),
      ]);
      const message = input.message as Obj;
      const who = { name: ctx.actor.login, email: `${ctx.actor.id}+${ctx.actor.login}@users.noreply.github.com` };
      const date = Math.floor(w.clock() / 1000);
      const sha = data.createCommit({
        tree,
        parents: [head],
        message: [message.headline, message.body].filter((t) => typeof t === 'string' && t !== '').join('\n\n'),
        author: { ...who, date },
        committer: { name: 'GitHub', email: 'noreply@github.com', date },
      });
      w.git?.updateRef(ref, sha, head);
      w.refs.set(ref, sha);
      w.reportPush(ref, head, sha, { actor: ctx.actor.login });
      return payload(input, { commit: commitNode(w, sha), ref: null });
    },
    resolveReviewThread: (args: Obj, ctx: Context) => setThreadResolved(mutationInput(args), ctx, true),
    unresolveReviewThread: (args: Obj, ctx: Context) => setThreadResolved(mutationInput(args), ctx, false),
    markPullRequestReadyForReview: (args: Obj, ctx: Context) => {
      const input = mutationInput(args);
      const pull = [...w.pulls.values()].find((p) => p.node_id === input.pullRequestId);
      if (!pull) throw nodeNotFound(input.pullRequestId);
      requirePermission(ctx, 'write');
      const issue = w.issues.get(pull.number)!;
      if (issue.state !== 'open') throw new GitHubGraphqlError('UNPROCESSABLE', 'Pull request is closed');
      if (pull.draft) {
        pull.draft = false;
        issue.updated_at = w.now();
        w.emit({ name: 'pull_request', action: 'ready_for_review', pull: pull.number, actor: ctx.actor.login });
      }
      return payload(input, { pullRequest: pullNode(w, pull, issue) });
    },
  };
}
