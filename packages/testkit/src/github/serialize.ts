/** World records → GitHub REST JSON, with the real URL shapes rooted at the emulator's base URL. */
import type {
  EmulatedCheckRun,
  EmulatedComment,
  EmulatedEvent,
  EmulatedIssue,
  EmulatedLabel,
  EmulatedPull,
  EmulatedReaction,
  EmulatedReview,
  EmulatedReviewComment,
  EmulatedStatus,
  EmulatedBranchProtection,
  EmulatedAnnotation,
  EmulatedWorkflowJob,
  EmulatedWorkflowRun,
  GitHubWorld,
} from './world';
import type { RepoEntry, RepoPath, RepoWorkflow } from './contents';

export function urls(w: GitHubWorld) {
  const api = w.apiUrl;
  return {
    api,
    repoApi: `${api}/repos/${w.owner}/${w.repo}`,
    html: `${api}/${w.owner}/${w.repo}`,
  };
}

export function userJson(w: GitHubWorld, login: string) {
  const u = w.ensureUser(login);
  const api = w.apiUrl;
  const base = `${api}/users/${encodeURIComponent(login)}`;
  return {
    login: u.login,
    id: u.id,
    node_id: u.node_id,
    avatar_url: `${api}/avatars/u/${u.id}?v=4`,
    gravatar_id: '',
    url: base,
    html_url: `${api}/${u.type === 'Bot' ? 'apps/' + login.replace(/\[bot\]$/, '') : login}`,
    followers_url: `${base}/followers`,
    following_url: `${base}/following{/other_user}`,
    gists_url: `${base}/gists{/gist_id}`,
    starred_url: `${base}/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/subscriptions`,
    organizations_url: `${base}/orgs`,
    repos_url: `${base}/repos`,
    events_url: `${base}/events{/privacy}`,
    received_events_url: `${base}/received_events`,
    type: u.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

export function labelJson(w: GitHubWorld, l: EmulatedLabel) {
  return {
    id: l.id,
    node_id: l.node_id,
    url: `${urls(w).repoApi}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: l.default,
    description: l.description,
  };
}

export function issueLabelsJson(w: GitHubWorld, issue: EmulatedIssue) {
  return issue.labels
    .map((n) => w.getLabel(n))
    .filter((l): l is EmulatedLabel => !!l)
    .map((l) => labelJson(w, l));
}

export function repoJson(w: GitHubWorld) {
  const { repoApi, html } = urls(w);
  const now = w.now();
  return {
    id: w.repoId,
    node_id: w.nodeId('R', w.repoId),
    name: w.repo,
    full_name: `${w.owner}/${w.repo}`,
    owner: userJson(w, w.owner),
    private: false,
    html_url: html,
    description: `Emulated repository ${w.owner}/${w.repo}`,
    fork: false,
    url: repoApi,
    archive_url: `${repoApi}/{archive_format}{/ref}`,
    assignees_url: `${repoApi}/assignees{/user}`,
    blobs_url: `${repoApi}/git/blobs{/sha}`,
    branches_url: `${repoApi}/branches{/branch}`,
    collaborators_url: `${repoApi}/collaborators{/collaborator}`,
    comments_url: `${repoApi}/comments{/number}`,
    commits_url: `${repoApi}/commits{/sha}`,
    compare_url: `${repoApi}/compare/{base}...{head}`,
    contents_url: `${repoApi}/contents/{+path}`,
    contributors_url: `${repoApi}/contributors`,
    deployments_url: `${repoApi}/deployments`,
    downloads_url: `${repoApi}/downloads`,
    events_url: `${repoApi}/events`,
    forks_url: `${repoApi}/forks`,
    git_commits_url: `${repoApi}/git/commits{/sha}`,
    git_refs_url: `${repoApi}/git/refs{/sha}`,
    git_tags_url: `${repoApi}/git/tags{/sha}`,
    git_url: `git://127.0.0.1/${w.owner}/${w.repo}.git`,
    issue_comment_url: `${repoApi}/issues/comments{/number}`,
    issue_events_url: `${repoApi}/issues/events{/number}`,
    issues_url: `${repoApi}/issues{/number}`,
    keys_url: `${repoApi}/keys{/key_id}`,
    labels_url: `${repoApi}/labels{/name}`,
    languages_url: `${repoApi}/languages`,
    merges_url: `${repoApi}/merges`,
    milestones_url: `${repoApi}/milestones{/number}`,
    notifications_url: `${repoApi}/notifications{?since,all,participating}`,
    pulls_url: `${repoApi}/pulls{/number}`,
    releases_url: `${repoApi}/releases{/id}`,
    ssh_url: `git@127.0.0.1:${w.owner}/${w.repo}.git`,
    stargazers_url: `${repoApi}/stargazers`,
    statuses_url: `${repoApi}/statuses/{sha}`,
    subscribers_url: `${repoApi}/subscribers`,
    subscription_url: `${repoApi}/subscription`,
    tags_url: `${repoApi}/tags`,
    teams_url: `${repoApi}/teams`,
    trees_url: `${repoApi}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${repoApi}/hooks`,
    svn_url: html,
    homepage: null,
    language: 'TypeScript',
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 128,
    default_branch: w.defaultBranch,
    open_issues_count: [...w.issues.values()].filter((i) => i.state === 'open').length,
    open_issues: [...w.issues.values()].filter((i) => i.state === 'open').length,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: 'public',
    pushed_at: now,
    created_at: '2024-01-01T00:00:00Z',
    updated_at: now,
    permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    allow_rebase_merge: true,
    allow_squash_merge: true,
    allow_merge_commit: true,
    allow_auto_merge: false,
    delete_branch_on_merge: false,
    allow_forking: true,
    web_commit_signoff_required: false,
    subscribers_count: 0,
    network_count: 0,
    license: null,
    temp_clone_token: '',
  };
}

export function issueJson(w: GitHubWorld, i: EmulatedIssue) {
  const { repoApi, html } = urls(w);
  const url = `${repoApi}/issues/${i.number}`;
  const pull = w.pulls.get(i.number);
  const parent = w.parentOf(i.number);
  const json: Record<string, unknown> = {
    id: i.id,
    node_id: i.node_id,
    url,
    repository_url: repoApi,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${html}/${i.isPullRequest ? 'pull' : 'issues'}/${i.number}`,
    number: i.number,
    state: i.state,
    state_reason: i.state_reason,
    title: i.title,
    body: i.body,
    user: userJson(w, i.user),
    labels: issueLabelsJson(w, i),
    assignee: i.assignees[0] ? userJson(w, i.assignees[0]) : null,
    assignees: i.assignees.map((a) => userJson(w, a)),
    milestone: null,
    locked: i.locked,
    active_lock_reason: null,
    comments: i.comments,
    closed_at: i.closed_at,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_by: i.closed_by ? userJson(w, i.closed_by) : null,
    author_association: i.author_association,
    reactions: w.reactionSummary({ type: 'issue', number: i.number }, `${url}/reactions`),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    sub_issues_summary: w.subIssuesSummary(i.number),
    parent_issue_url: parent ? `${repoApi}/issues/${parent.number}` : null,
  };
  if (i.isPullRequest) {
    json.pull_request = {
      url: `${repoApi}/pulls/${i.number}`,
      html_url: `${html}/pull/${i.number}`,
      diff_url: `${html}/pull/${i.number}.diff`,
      patch_url: `${html}/pull/${i.number}.patch`,
      merged_at: pull?.merged_at ?? null,
    };
    json.draft = pull?.draft ?? false;
  }
  return json;
}

/** A search hit: the issue plus a score; the description types `body` as a non-null string, so a null body is omitted. */
export function issueSearchItemJson(w: GitHubWorld, i: EmulatedIssue) {
  const { body, ...rest } = issueJson(w, i);
  return { ...rest, ...(body === null ? {} : { body }), score: 1 };
}

export function commentJson(w: GitHubWorld, c: EmulatedComment) {
  const { repoApi, html } = urls(w);
  const url = `${repoApi}/issues/comments/${c.id}`;
  const issue = w.issues.get(c.issue_number);
  return {
    id: c.id,
    node_id: c.node_id,
    url,
    html_url: `${html}/${issue?.isPullRequest ? 'pull' : 'issues'}/${c.issue_number}#issuecomment-${c.id}`,
    body: c.body,
    user: userJson(w, c.user),
    created_at: c.created_at,
    updated_at: c.updated_at,
    issue_url: `${repoApi}/issues/${c.issue_number}`,
    author_association: c.author_association,
    performed_via_github_app: null,
    reactions: w.reactionSummary({ type: 'comment', id: c.id }, `${url}/reactions`),
  };
}

export function reactionJson(w: GitHubWorld, r: EmulatedReaction) {
  return { id: r.id, node_id: r.node_id, user: userJson(w, r.user), content: r.content, created_at: r.created_at };
}

function branchJson(w: GitHubWorld, ref: string, sha: string, fork?: string) {
  if (fork) {
    // a fork: the same shape, another owner and repository (what a fork pull request's head carries)
    const [owner = fork, name = fork] = fork.split('/');
    const own = repoJson(w);
    return {
      label: `${owner}:${ref}`,
      ref,
      sha,
      user: userJson(w, owner),
      repo: {
        ...own,
        id: own.id + 1_000_000,
        node_id: w.nodeId('R', own.id + 1_000_000),
        name,
        full_name: fork,
        owner: userJson(w, owner),
        fork: true,
        html_url: `https://github.com/${fork}`,
      },
    };
  }
  return {
    label: `${w.owner}:${ref}`,
    ref,
    sha,
    user: userJson(w, w.owner),
    repo: repoJson(w),
  };
}

export function pullJson(w: GitHubWorld, p: EmulatedPull) {
  const i = w.issues.get(p.number)!;
  const { repoApi, html } = urls(w);
  const url = `${repoApi}/pulls/${p.number}`;
  return {
    url,
    id: p.id,
    node_id: p.node_id,
    html_url: `${html}/pull/${p.number}`,
    diff_url: `${html}/pull/${p.number}.diff`,
    patch_url: `${html}/pull/${p.number}.patch`,
    issue_url: `${repoApi}/issues/${p.number}`,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${repoApi}/pulls/comments{/number}`,
    comments_url: `${repoApi}/issues/${p.number}/comments`,
    statuses_url: `${repoApi}/statuses/${p.head.sha}`,
    number: p.number,
    state: i.state,
    locked: i.locked,
    title: i.title,
    user: userJson(w, i.user),
    body: i.body,
    labels: issueLabelsJson(w, i),
    milestone: null,
    active_lock_reason: null,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_at: i.closed_at,
    merged_at: p.merged_at,
    merge_commit_sha: p.merge_commit_sha,
    assignee: i.assignees[0] ? userJson(w, i.assignees[0]) : null,
    assignees: i.assignees.map((a) => userJson(w, a)),
    requested_reviewers: [],
    requested_teams: [],
    head: branchJson(w, p.head.ref, p.head.sha, p.head.repo),
    base: branchJson(w, p.base.ref, p.base.sha),
    _links: {
      self: { href: url },
      html: { href: `${html}/pull/${p.number}` },
      issue: { href: `${repoApi}/issues/${p.number}` },
      comments: { href: `${repoApi}/issues/${p.number}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${repoApi}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: `${repoApi}/statuses/${p.head.sha}` },
    },
    author_association: i.author_association,
    auto_merge: null,
    draft: p.draft,
    merged: p.merged,
    mergeable: p.merged ? null : p.mergeable,
    rebaseable: p.mergeable,
    mergeable_state: p.merged ? 'unknown' : p.mergeable === false ? 'dirty' : p.draft ? 'draft' : 'clean',
    merged_by: p.merged_by ? userJson(w, p.merged_by) : null,
    comments: i.comments,
    review_comments: [...w.reviewComments.values()].filter((c) => c.pull_number === p.number).length,
    maintainer_can_modify: p.maintainer_can_modify,
    commits: 1,
    additions: p.files.reduce((s, f) => s + f.additions, 0),
    deletions: p.files.reduce((s, f) => s + f.deletions, 0),
    changed_files: p.files.length,
  };
}

export function pullFileJson(w: GitHubWorld, p: EmulatedPull, f: EmulatedPull['files'][number]) {
  const { html, repoApi } = urls(w);
  return {
    sha: p.head.sha,
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${html}/blob/${p.head.sha}/${f.filename}`,
    raw_url: `${html}/raw/${p.head.sha}/${f.filename}`,
    contents_url: `${repoApi}/contents/${f.filename}?ref=${p.head.sha}`,
    ...(f.patch !== undefined ? { patch: f.patch } : {}),
  };
}

export function reviewJson(w: GitHubWorld, r: EmulatedReview) {
  const { repoApi, html } = urls(w);
  return {
    id: r.id,
    node_id: r.node_id,
    user: userJson(w, r.user),
    body: r.body,
    state: r.state,
    html_url: `${html}/pull/${r.pull_number}#pullrequestreview-${r.id}`,
    pull_request_url: `${repoApi}/pulls/${r.pull_number}`,
    _links: {
      html: { href: `${html}/pull/${r.pull_number}#pullrequestreview-${r.id}` },
      pull_request: { href: `${repoApi}/pulls/${r.pull_number}` },
    },
    ...(r.submitted_at ? { submitted_at: r.submitted_at } : {}),
    commit_id: r.commit_id,
    author_association: w.authorAssociation(r.user),
  };
}

export function reviewCommentJson(w: GitHubWorld, c: EmulatedReviewComment) {
  const { repoApi, html } = urls(w);
  const url = `${repoApi}/pulls/comments/${c.id}`;
  return {
    url,
    pull_request_review_id: c.review_id,
    id: c.id,
    node_id: c.node_id,
    diff_hunk: '@@ -1 +1 @@',
    path: c.path,
    position: c.line,
    original_position: c.line,
    commit_id: c.commit_id,
    original_commit_id: c.commit_id,
    ...(c.in_reply_to_id !== undefined ? { in_reply_to_id: c.in_reply_to_id } : {}),
    user: userJson(w, c.user),
    body: c.body,
    created_at: c.created_at,
    updated_at: c.updated_at,
    html_url: `${html}/pull/${c.pull_number}#discussion_r${c.id}`,
    pull_request_url: `${repoApi}/pulls/${c.pull_number}`,
    author_association: w.authorAssociation(c.user),
    _links: {
      self: { href: url },
      html: { href: `${html}/pull/${c.pull_number}#discussion_r${c.id}` },
      pull_request: { href: `${repoApi}/pulls/${c.pull_number}` },
    },
    line: c.line ?? undefined,
    original_line: c.line ?? undefined,
    side: c.side,
    subject_type: 'line',
    reactions: w.reactionSummary({ type: 'comment', id: -c.id }, `${url}/reactions`),
  };
}

export function refJson(w: GitHubWorld, ref: string, sha: string) {
  const { repoApi } = urls(w);
  return {
    ref,
    node_id: w.nodeId(
      'REF',
      [...ref].reduce((a, ch) => (a * 31 + ch.charCodeAt(0)) >>> 0, 7),
    ),
    url: `${repoApi}/git/${ref}`,
    object: { type: 'commit', sha, url: `${repoApi}/git/commits/${sha}` },
  };
}

export function checkRunJson(w: GitHubWorld, c: EmulatedCheckRun) {
  const { repoApi, html } = urls(w);
  return {
    id: c.id,
    head_sha: c.head_sha,
    node_id: c.node_id,
    external_id: c.external_id,
    url: `${repoApi}/check-runs/${c.id}`,
    html_url: `${html}/runs/${c.id}`,
    details_url: c.details_url,
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.started_at,
    completed_at: c.completed_at,
    output: {
      title: c.output.title,
      summary: c.output.summary,
      text: c.output.text,
      annotations_count: w.checkRunAnnotations.get(c.id)?.length ?? 0,
      annotations_url: `${repoApi}/check-runs/${c.id}/annotations`,
    },
    name: c.name,
    check_suite: { id: 5_000_000 + (c.id % 1_000_000) },
    app: null,
    pull_requests: [],
  };
}

/** A job of a run attempt, as GET /actions/runs/{run_id}/attempts/{n}/jobs shows it. */
export function workflowJobJson(w: GitHubWorld, j: EmulatedWorkflowJob) {
  const { repoApi, html } = urls(w);
  return {
    id: j.id,
    run_id: j.runId,
    run_url: `${repoApi}/actions/runs/${j.runId}`,
    run_attempt: j.runAttempt,
    node_id: w.nodeId('CR', j.id),
    head_sha: j.headSha,
    url: `${repoApi}/actions/jobs/${j.id}`,
    html_url: `${html}/actions/runs/${j.runId}/job/${j.id}`,
    status: 'completed',
    conclusion: j.conclusion,
    created_at: j.startedAt,
    started_at: j.startedAt,
    completed_at: j.completedAt,
    name: j.name,
    steps: j.steps.map((step, i) => ({
      name: step.name,
      status: 'completed',
      conclusion: step.conclusion,
      number: i + 1,
      started_at: j.startedAt,
      completed_at: j.completedAt,
    })),
    check_run_url: `${repoApi}/check-runs/${j.checkRunId}`,
    labels: ['ubuntu-latest'],
    runner_id: 1,
    runner_name: 'GitHub Actions 1',
    runner_group_id: 0,
    runner_group_name: 'GitHub Actions',
    workflow_name: j.workflowName,
    head_branch: j.headBranch,
  };
}

/** A check run's annotation as GitHub reports a job's: on the path `.github`, line 1. */
export function annotationJson(w: GitHubWorld, sha: string, a: EmulatedAnnotation) {
  return {
    path: '.github',
    blob_href: `${urls(w).html}/blob/${sha}/.github`,
    start_line: 1,
    end_line: 1,
    start_column: null,
    end_column: null,
    annotation_level: a.level,
    title: a.title ?? '',
    message: a.message,
    raw_details: '',
  };
}

export function statusJson(w: GitHubWorld, s: EmulatedStatus) {
  const { repoApi } = urls(w);
  return {
    url: `${repoApi}/statuses/${s.sha}`,
    avatar_url: null,
    id: s.id,
    node_id: s.node_id,
    state: s.state,
    description: s.description,
    target_url: s.target_url,
    context: s.context,
    created_at: s.created_at,
    updated_at: s.updated_at,
    creator: userJson(w, s.creator),
  };
}

export function workflowRunJson(w: GitHubWorld, r: EmulatedWorkflowRun) {
  const { repoApi, html } = urls(w);
  const url = `${repoApi}/actions/runs/${r.id}`;
  return {
    id: r.id,
    name: r.name,
    node_id: w.nodeId('WFR', r.id),
    head_branch: r.head_branch,
    head_sha: r.head_sha,
    path: `.github/workflows/${r.name}`,
    run_number: 1,
    run_attempt: 1,
    event: r.event,
    status: r.status,
    conclusion: r.conclusion,
    workflow_id: r.workflow_id,
    url,
    html_url: `${html}/actions/runs/${r.id}`,
    pull_requests: [],
    created_at: r.created_at,
    updated_at: r.created_at,
    actor: userJson(w, r.actor),
    triggering_actor: userJson(w, r.actor),
    run_started_at: r.created_at,
    jobs_url: `${url}/jobs`,
    logs_url: `${url}/logs`,
    check_suite_url: `${repoApi}/check-suites/1`,
    artifacts_url: `${url}/artifacts`,
    cancel_url: `${url}/cancel`,
    rerun_url: `${url}/rerun`,
    workflow_url: `${repoApi}/actions/workflows/${r.workflow_id}`,
    head_commit: null,
    repository: repoJson(w),
    head_repository: repoJson(w),
    display_title: r.name,
  };
}

// -- repository contents, branch protection, workflows ------------------------------------------------------------

const pathUrl = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** One entry as GET /contents shapes it (a directory listing's item; a file adds content and encoding). */
export function contentEntryJson(w: GitHubWorld, e: RepoEntry, ref: string) {
  const { repoApi, html } = urls(w);
  const p = pathUrl(e.path);
  const r = pathUrl(ref);
  const self = `${repoApi}/contents/${p}?ref=${encodeURIComponent(ref)}`;
  const git = e.type === 'submodule' ? null : `${repoApi}/git/${e.type === 'dir' ? 'trees' : 'blobs'}/${e.sha}`;
  const htmlUrl = e.type === 'submodule' ? null : `${html}/${e.type === 'dir' ? 'tree' : 'blob'}/${r}/${p}`;
  return {
    name: e.name,
    path: e.path,
    sha: e.sha,
    size: e.size,
    url: self,
    html_url: htmlUrl,
    git_url: git,
    download_url: e.type === 'file' || e.type === 'symlink' ? `${html}/raw/${r}/${p}` : null,
    type: e.type,
    _links: { self, git, html: htmlUrl },
  };
}

/** A tree entry's git object type, and its mode when the world does not know it (no git repository). */
const TREE_ENTRY_KIND = {
  dir: ['tree', '040000'],
  submodule: ['commit', '160000'],
  symlink: ['blob', '120000'],
  file: ['blob', '100644'],
} as const;

/** A tree as GET /git/trees shows it (not recursive): each entry's path, git mode, object type, id and blob size. */
export function gitTreeJson(w: GitHubWorld, sha: string, entries: readonly RepoEntry[]) {
  const { repoApi } = urls(w);
  return {
    sha,
    url: `${repoApi}/git/trees/${sha}`,
    truncated: false,
    tree: entries.map((e) => {
      const [type, mode] = TREE_ENTRY_KIND[e.type];
      return {
        path: e.name,
        mode: e.mode ?? mode,
        type,
        sha: e.sha,
        ...(type === 'blob' ? { size: e.size } : {}),
        ...(type === 'commit' ? {} : { url: `${repoApi}/git/${type}s/${e.sha}` }),
      };
    }),
  };
}

/** Files up to 1 MB carry base64 content wrapped at 60 characters, as GitHub sends it; larger ones `encoding: none`. */
const CONTENT_MAX = 1024 * 1024;

export function contentJson(w: GitHubWorld, found: RepoPath, ref: string) {
  if (found.type === 'dir') return found.entries.map((e) => contentEntryJson(w, e, ref));
  const entry = contentEntryJson(w, found, ref);
  if (found.type === 'symlink') return { ...entry, target: found.target };
  if (found.type === 'file') {
    if (found.content.length > CONTENT_MAX) return { ...entry, content: '', encoding: 'none' };
    const b64 = found.content.toString('base64');
    return { ...entry, content: b64 ? `${b64.match(/.{1,60}/g)!.join('\n')}\n` : '', encoding: 'base64' };
  }
  return entry;
}

export function branchProtectionJson(w: GitHubWorld, branch: string, p: EmulatedBranchProtection) {
  const url = `${urls(w).repoApi}/branches/${pathUrl(branch)}/protection`;
  const flag = (v: boolean | undefined) => ({ enabled: v === true });
  const body: Record<string, unknown> = { url };
  if (p.required_status_checks) {
    const contexts = [...(p.required_status_checks.contexts ?? [])];
    body.required_status_checks = {
      url: `${url}/required_status_checks`,
      strict: p.required_status_checks.strict === true,
      contexts,
      contexts_url: `${url}/required_status_checks/contexts`,
      checks: contexts.map((context) => ({ context, app_id: null })),
    };
  }
  if (p.required_pull_request_reviews) {
    const r = p.required_pull_request_reviews;
    body.required_pull_request_reviews = {
      url: `${url}/required_pull_request_reviews`,
      dismiss_stale_reviews: r.dismiss_stale_reviews === true,
      require_code_owner_reviews: r.require_code_owner_reviews === true,
      required_approving_review_count: r.required_approving_review_count ?? 1,
      require_last_push_approval: r.require_last_push_approval === true,
    };
  }
  body.required_signatures = { url: `${url}/required_signatures`, enabled: p.required_signatures === true };
  body.enforce_admins = { url: `${url}/enforce_admins`, enabled: p.enforce_admins === true };
  body.required_linear_history = flag(p.required_linear_history);
  body.allow_force_pushes = flag(p.allow_force_pushes);
  body.allow_deletions = flag(p.allow_deletions);
  body.block_creations = flag(p.block_creations);
  body.required_conversation_resolution = flag(p.required_conversation_resolution);
  body.lock_branch = flag(p.lock_branch);
  body.allow_fork_syncing = flag(p.allow_fork_syncing);
  return body;
}

export function workflowJson(w: GitHubWorld, wf: RepoWorkflow) {
  const { repoApi, html } = urls(w);
  const now = w.now();
  return {
    id: wf.id,
    node_id: w.nodeId('W', wf.id),
    name: wf.name,
    path: wf.path,
    state: w.workflowStates.get(wf.path) ?? 'active',
    created_at: now,
    updated_at: now,
    url: `${repoApi}/actions/workflows/${wf.id}`,
    html_url: `${html}/blob/${pathUrl(w.defaultBranch)}/${pathUrl(wf.path)}`,
    badge_url: `${html}/workflows/${encodeURIComponent(wf.name)}/badge.svg`,
  };
}

/** A labeled/unlabeled entry of GET /issues/{n}/events (GitHub's `labeled-issue-event`), from the recorded event. */
export function issueEventJson(w: GitHubWorld, e: EmulatedEvent) {
  const id = 7_000_000_000 + e.seq;
  const label = e.label ? w.getLabel(e.label) : undefined;
  return {
    id,
    node_id: w.nodeId(e.action === 'labeled' ? 'LE' : 'UNLE', id),
    url: `${urls(w).repoApi}/issues/events/${id}`,
    actor: userJson(w, e.actor),
    event: e.action,
    commit_id: null,
    commit_url: null,
    created_at: new Date(e.at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    performed_via_github_app: null,
    label: { name: e.label, color: label?.color ?? 'ededed' },
  };
}
