/**
 * Webhook event payloads for actions under test: a REAL example payload from `@octokit/webhooks-examples`, adapted to
 * the emulated repository and to the issue/comment/pull as it exists in the emulator's world.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { GitHubEmulator } from '../github/server';
import { commentJson, issueJson, labelJson, pullJson, repoJson, userJson } from '../github/serialize';
import { BOT_LOGIN, fakeSha } from '../github/world';

type Json = Record<string, unknown>;

interface WebhookDefinition {
  name: string;
  actions: string[];
  examples: Json[];
}

let definitions: WebhookDefinition[] | undefined;

function loadDefinitions(): WebhookDefinition[] {
  if (!definitions) {
    const require = createRequire(import.meta.url);
    definitions = JSON.parse(
      readFileSync(require.resolve('@octokit/webhooks-examples'), 'utf8'),
    ) as WebhookDefinition[];
  }
  return definitions;
}

/** The untouched example payload for an event/action (falls back to the event's first example). */
export function exampleEvent(name: string, action?: string): Json {
  const def = loadDefinitions().find((d) => d.name === name);
  if (!def) throw new Error(`@octokit/webhooks-examples has no "${name}" event`);
  const ex = (action ? def.examples.find((e) => e.action === action) : undefined) ?? def.examples[0];
  if (!ex) throw new Error(`@octokit/webhooks-examples has no example for "${name}"`);
  return structuredClone(ex);
}

export interface EventOverrides {
  /** issue number (issues, issue_comment); default: the newest issue in the world */
  issue?: number;
  /** comment id (issue_comment); default: the newest comment on the issue */
  comment?: number;
  /** pull number (pull_request); default: the newest pull request in the world */
  pull?: number;
  /** sender login; default: the issue/comment/pull author, or the bot for workflow_dispatch */
  sender?: string;
  /** label name for issues.labeled/unlabeled and pull_request.labeled; default: the issue's last label */
  label?: string;
  /** `changes` for *.edited */
  changes?: Json;
  /** workflow_dispatch */
  inputs?: Record<string, string>;
  ref?: string;
  workflow?: string;
  /** check_suite */
  head_sha?: string;
  head_branch?: string;
  conclusion?: string | null;
  /** merged last over the adapted payload (top-level keys) */
  payload?: Json;
}

/** Copy the values of `fresh` into the keys `shape` already has (keeps the example's shape). */
function adapt(shape: unknown, fresh: Json): Json {
  const out: Json = { ...(shape as Json) };
  for (const k of Object.keys(out)) if (k in fresh) out[k] = fresh[k];
  return out;
}

function newest<T>(values: Iterable<T>): T | undefined {
  let last: T | undefined;
  for (const v of values) last = v;
  return last;
}

export function buildEvent(
  gh: Pick<GitHubEmulator, 'world'>,
  name: string,
  action?: string,
  overrides: EventOverrides = {},
): Json {
  const w = gh.world;
  const payload = exampleEvent(name, action);
  if (action !== undefined && 'action' in payload) payload.action = action;

  const repo = repoJson(w);
  if (payload.repository)
    payload.repository = adapt(payload.repository, {
      ...repo,
      owner: adapt((payload.repository as Json).owner, userJson(w, w.owner)),
    });
  if (payload.organization) payload.organization = { ...(payload.organization as Json), login: w.owner };
  let sender: string | undefined = overrides.sender;

  if (name === 'issues' || name === 'issue_comment') {
    const number =
      overrides.issue ??
      newest([...w.issues.values()].filter((i) => name === 'issue_comment' || !i.isPullRequest))?.number;
    const issue = number !== undefined ? w.issues.get(number) : undefined;
    if (!issue) throw new Error(`buildEvent(${name}): no issue ${number ?? ''} in the world`);
    const issueFresh = issueJson(w, issue);
    // The recorded issues.closed example predates the reactions rollup, which GitHub's webhook schema requires of
    // every issue (HydraFlow's router reads its 👀 count on close): the world's own goes in whatever the example has.
    payload.issue = {
      ...adapt(payload.issue, issueFresh),
      labels: issueFresh.labels,
      reactions: issueFresh.reactions,
    };
    if (issue.isPullRequest) (payload.issue as Json).pull_request = issueFresh.pull_request;
    else delete (payload.issue as Json).pull_request;
    sender ??= issue.user;
    if (name === 'issue_comment') {
      const c =
        overrides.comment !== undefined ? w.comments.get(overrides.comment) : newest(w.commentsOn(issue.number));
      if (!c) throw new Error(`buildEvent(issue_comment): no comment on #${issue.number}`);
      payload.comment = adapt(payload.comment, commentJson(w, c));
      sender = overrides.sender ?? c.user;
    }
    if (name === 'issues' && (action === 'labeled' || action === 'unlabeled')) {
      const labelName = overrides.label ?? issue.labels.at(-1);
      const l = labelName ? (w.getLabel(labelName) ?? w.label(labelName)) : undefined;
      if (!l) throw new Error(`buildEvent(issues.${action}): no label`);
      payload.label = adapt(payload.label ?? labelJson(w, l), labelJson(w, l));
    }
  } else if (name === 'pull_request') {
    const number = overrides.pull ?? newest(w.pulls.keys());
    const pull = number !== undefined ? w.pulls.get(number) : undefined;
    if (!pull) throw new Error(`buildEvent(pull_request): no pull request ${number ?? ''} in the world`);
    const fresh = pullJson(w, pull) as Json;
    const shape = payload.pull_request as Json;
    payload.pull_request = adapt(shape, {
      ...fresh,
      head: adapt(shape.head, { ...(fresh.head as Json), repo: adapt((shape.head as Json).repo, repo) }),
      base: adapt(shape.base, { ...(fresh.base as Json), repo: adapt((shape.base as Json).repo, repo) }),
    });
    payload.number = pull.number;
    sender ??= w.issues.get(pull.number)!.user;
    if (action === 'synchronize' && 'before' in payload) {
      payload.before = fakeSha(`before:${pull.head.sha}`);
      payload.after = pull.head.sha;
    }
    if (action === 'labeled' || action === 'unlabeled') {
      const labelName = overrides.label ?? w.issues.get(pull.number)!.labels.at(-1);
      if (labelName) payload.label = labelJson(w, w.getLabel(labelName) ?? w.label(labelName));
    }
  } else if (name === 'check_suite') {
    const suite = payload.check_suite as Json;
    const head_branch = overrides.head_branch ?? w.defaultBranch;
    const head_sha = overrides.head_sha ?? w.refs.get(`refs/heads/${head_branch}`) ?? fakeSha(head_branch);
    payload.check_suite = {
      ...suite,
      head_branch,
      head_sha,
      ...(overrides.conclusion !== undefined ? { conclusion: overrides.conclusion } : {}),
      url: `${w.apiUrl}/repos/${w.owner}/${w.repo}/check-suites/${String(suite.id)}`,
      pull_requests: [...w.pulls.values()]
        .filter((p) => p.head.sha === head_sha)
        .map((p) => ({
          url: `${w.apiUrl}/repos/${w.owner}/${w.repo}/pulls/${p.number}`,
          id: p.id,
          number: p.number,
          head: { ref: p.head.ref, sha: p.head.sha, repo: { id: w.repoId, url: repo.url, name: w.repo } },
          base: { ref: p.base.ref, sha: p.base.sha, repo: { id: w.repoId, url: repo.url, name: w.repo } },
        })),
    };
    sender ??= BOT_LOGIN;
  } else if (name === 'workflow_dispatch') {
    payload.inputs = overrides.inputs ?? {};
    payload.ref = overrides.ref ?? `refs/heads/${w.defaultBranch}`;
    payload.workflow = overrides.workflow ?? '.github/workflows/hydraflow.yml';
    sender ??= BOT_LOGIN;
  }

  if (payload.sender) payload.sender = adapt(payload.sender, userJson(w, sender ?? w.owner));
  if (overrides.changes) payload.changes = overrides.changes;
  else if (action === 'edited' && !payload.changes) payload.changes = {};
  if (overrides.payload) Object.assign(payload, overrides.payload);
  return payload;
}

/** Write a payload to `<dir>/<name>.json`; the returned path is what GITHUB_EVENT_PATH should point to. */
export function writeEventFile(dir: string, name: string, payload: unknown): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name.endsWith('.json') ? name : `${name}.json`);
  writeFileSync(file, JSON.stringify(payload, null, 2));
  return file;
}
