import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EVENT_HANDLERS,
  issueOfBranch,
  createCommandRegistry,
  BUILTIN_COMMANDS,
  loadConfig,
  parseCommand,
  permissionAtLeast,
  renderHelp,
  route,
  type RouterContext,
} from '../src/index';

const require = createRequire(import.meta.url);

const examples: { name: string; examples: any[] }[] = require('@octokit/webhooks-examples');

function example(name: string, action?: string): any {
  const ex = examples.find((e) => e.name === name)!.examples.find((e) => action === undefined || e.action === action);
  return structuredClone(ex);
}

const config = loadConfig({ env: {}, inputs: {} });
const ctx: RouterContext = { botLogins: ['github-actions[bot]', 'hydra-pat-user'], config };
const human = { login: 'Codertocat', type: 'User' };
const bot = { login: 'github-actions[bot]', type: 'Bot' };

function issues(
  action: string,
  over: { labels?: string[]; label?: string; sender?: object; state?: string; pr?: boolean } = {},
) {
  const p = example('issues', action) ?? example('issues', 'opened');
  p.action = action;
  p.issue.state = over.state ?? (action === 'closed' ? 'closed' : 'open');
  p.issue.labels = (over.labels ?? []).map((name) => ({ name }));
  if (over.label) p.label = { name: over.label };
  if (over.pr) p.issue.pull_request = { url: 'x' };
  p.sender = over.sender ?? human;
  return { name: 'issues', payload: p };
}

function comment(body: string, over: { user?: { login: string; type: string }; action?: string; pr?: boolean } = {}) {
  const p = example('issue_comment', 'created');
  p.action = over.action ?? 'created';
  p.comment.body = body;
  p.comment.user = over.user ?? human;
  p.sender = over.user ?? human;
  if (over.pr) p.issue.pull_request = { url: 'x' };
  return { name: 'issue_comment', payload: p };
}

describe('issues events', () => {
  it('opened → triage when auto_triage', () => {
    const e = issues('opened');
    expect(route(e, ctx)).toEqual({
      kind: 'phase',
      phase: 'triage',
      issue: e.payload.issue.number,
      actor: 'Codertocat',
    });
    expect(route(e, { ...ctx, config: { ...config, auto_triage: false } })).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/auto_triage is off/),
    });
    expect(route(issues('opened', { labels: ['hydraflow-find'] }), ctx)).toMatchObject({ kind: 'skip' });
  });
  it('real example payloads route without crashing', () => {
    for (const group of examples) {
      for (const payload of group.examples) {
        const d = route({ name: group.name, payload }, ctx);
        expect(['skip', 'phase', 'command', 'override', 'close']).toContain(d.kind);
      }
    }
  });
  it('labeled: find → triage, other pipeline labels → override, others skipped', () => {
    expect(route(issues('labeled', { label: 'hydraflow-find', labels: ['hydraflow-find'] }), ctx)).toMatchObject({
      kind: 'phase',
      phase: 'triage',
    });
    expect(
      route(issues('labeled', { label: 'hydraflow-ready', labels: ['hydraflow-plan', 'hydraflow-ready'] }), ctx),
    ).toMatchObject({
      kind: 'override',
      stage: 'ready',
      actor: 'Codertocat',
    });
    expect(route(issues('labeled', { label: 'HydraFlow-HITL' }), ctx)).toMatchObject({
      kind: 'override',
      stage: 'hitl',
    });
    expect(route(issues('labeled', { label: 'bug' }), ctx)).toEqual({ kind: 'skip', reason: 'not a pipeline label' });
  });
  it('unlabeled → override null only when no pipeline label remains', () => {
    expect(route(issues('unlabeled', { label: 'hydraflow-plan', labels: ['bug'] }), ctx)).toMatchObject({
      kind: 'override',
      stage: null,
    });
    expect(route(issues('unlabeled', { label: 'hydraflow-plan', labels: ['hydraflow-ready'] }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/another pipeline label remains/),
    });
  });
  it('own writes and foreign bots never start work', () => {
    expect(route(issues('labeled', { label: 'hydraflow-plan', sender: bot }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/HydraFlow itself/),
    });
    expect(route(issues('opened', { sender: { login: 'Hydra-PAT-User', type: 'User' } }), ctx)).toMatchObject({
      kind: 'skip',
    });
    const renovate = { login: 'renovate[bot]', type: 'Bot' };
    expect(route(issues('opened', { sender: renovate }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/allowed_bots/),
    });
    const allow = { ...ctx, config: { ...config, commands: { ...config.commands, allowed_bots: ['renovate[bot]'] } } };
    expect(route(issues('opened', { sender: renovate }), allow)).toMatchObject({
      kind: 'phase',
      actor: 'renovate[bot]',
    });
  });
  it('closed issues: cleanup only', () => {
    expect(route(issues('closed', { labels: ['hydraflow-review', 'bug'] }), ctx)).toMatchObject({
      kind: 'close',
      target: null,
    });
    expect(route(issues('closed', { labels: ['hydraflow-review', 'hydraflow-fixed'] }), ctx)).toMatchObject({
      kind: 'close',
      target: 'fixed',
    });
    expect(route(issues('closed', { labels: ['hydraflow-fixed'] }), ctx).kind).toBe('skip');
    expect(route(issues('closed', { labels: ['bug'] }), ctx).kind).toBe('skip');
    // a dead run's transient adversarial label goes with the close, stage label or not
    expect(route(issues('closed', { labels: ['hydraflow-adv-discover-running'] }), ctx)).toMatchObject({
      kind: 'close',
      target: null,
    });
    expect(route(issues('closed', { labels: ['hydraflow-fixed', 'hydraflow-adv-plan-running'] }), ctx)).toMatchObject({
      kind: 'close',
      target: 'fixed',
    });
    expect(route(issues('closed', { labels: ['hydraflow-plan'], sender: bot }), ctx).kind).toBe('close');
    expect(route(issues('labeled', { label: 'hydraflow-plan', state: 'closed' }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/closed/),
    });
    expect(route(issues('opened', { pr: true }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/pull request/),
    });
  });
  it('edits re-run grooming only while grooming and only when material; other actions are skipped', () => {
    expect(route(issues('edited'), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/only while grooming/),
    });
    const questions = [
      '## Questions',
      '<!-- hydraflow:questions -->',
      '- [ ] **What does mode() return on ties?** - First, smallest or all? _(qa)_ `id:tie-behaviour`',
      '<!-- /hydraflow:questions -->',
    ].join('\n');
    const edit = (from: string, to: string) => {
      const e = issues('edited', { labels: ['hydraflow-groom'] });
      e.payload.changes = { body: { from } };
      e.payload.issue.body = to;
      return e;
    };
    const body = `Add mode(numbers) to src/numbers.js.\n\n${questions}`;
    const ticked = body.replace('- [ ] **What', '- [x] **What');
    expect(route(edit(body, ticked), ctx)).toMatchObject({ kind: 'phase', phase: 'groom' });
    expect(route(edit(body, body.replace('Add mode', 'Add  mode')), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/not material/),
    });
    const answered = body.replace(
      'src/numbers.js.',
      'src/numbers.js. On ties it returns the smallest of the most frequent values; an empty list gives undefined.',
    );
    expect(route(edit(body, answered), ctx)).toMatchObject({ kind: 'phase', phase: 'groom' });
    const titleOnly = issues('edited', { labels: ['hydraflow-groom'] });
    titleOnly.payload.changes = { title: { from: 'x' } };
    expect(route(titleOnly, ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/did not change the body/),
    });
    expect(route(issues('pinned'), ctx).kind).toBe('skip');
  });
});

describe('answers to grooming questions', () => {
  const body = [
    'Add mode(numbers).',
    '## Questions',
    '<!-- hydraflow:questions -->',
    '- [ ] **What does mode() return on ties?** - First, smallest or all of them? _(qa)_ `id:tie-behaviour`',
    '<!-- /hydraflow:questions -->',
  ].join('\n');
  const onGroomIssue = (text: string, association: string, user = human) => {
    const e = comment(text, { user });
    e.payload.issue.labels = [{ name: 'hydraflow-groom' }];
    e.payload.issue.body = body;
    e.payload.comment.author_association = association;
    e.payload.issue.user = { login: 'the-author', type: 'User' };
    return e;
  };

  it('an answer to an open question re-runs grooming: the author’s at once, anyone else’s if the permission API agrees', () => {
    const e = onGroomIssue('On ties, return the smallest of the most frequent values.', 'COLLABORATOR');
    // author_association is not access (a COLLABORATOR may have the read role): the executor asks for min_permission
    expect(route(e, ctx)).toEqual({
      kind: 'phase',
      phase: 'groom',
      issue: e.payload.issue.number,
      actor: human.login,
      minPermission: ctx.config.commands.min_permission,
    });
    const stranger = onGroomIssue('On ties, return the smallest value.', 'NONE', { login: 'drive-by', type: 'User' });
    expect(route(stranger, ctx)).toMatchObject({ kind: 'phase', minPermission: ctx.config.commands.min_permission });
    const byAuthor = onGroomIssue('On ties, return the smallest value.', 'NONE');
    byAuthor.payload.issue.user = { login: human.login, type: 'User' };
    expect(route(byAuthor, ctx)).toEqual({
      kind: 'phase',
      phase: 'groom',
      issue: byAuthor.payload.issue.number,
      actor: human.login,
    });
  });

  it('noise and issues not in grooming do not', () => {
    expect(route(onGroomIssue('+1', 'MEMBER'), ctx)).toMatchObject({ kind: 'skip' });
    expect(route(onGroomIssue('thanks!', 'OWNER'), ctx)).toMatchObject({ kind: 'skip' });
    const notGrooming = comment('On ties, return the smallest value.');
    expect(route(notGrooming, ctx)).toMatchObject({ kind: 'skip', reason: 'not a command' });
  });
});

describe('slash commands', () => {
  it('parses the first line only', () => {
    expect(parseCommand('/Ship-It direction B\nthanks!')).toEqual({ name: 'ship-it', args: 'direction B' });
    expect(parseCommand('  /groom  ')).toEqual({ name: 'groom', args: '' });
    expect(parseCommand('hello\n/groom')).toBeUndefined();
    expect(parseCommand('/usr/bin/env')).toBeUndefined();
    expect(parseCommand('// comment')).toBeUndefined();
    expect(parseCommand('/ groom')).toBeUndefined();
  });
  it('routes known and unknown commands', () => {
    const e = comment('/Retry please');
    expect(route(e, ctx)).toEqual({
      kind: 'command',
      command: 'retry',
      args: 'please',
      phase: 'retry',
      issue: e.payload.issue.number,
      commentId: e.payload.comment.id,
      actor: 'Codertocat',
      minPermission: 'write',
    });
    expect(route(comment('/foo bar'), ctx)).toMatchObject({
      kind: 'command',
      command: 'unknown',
      requested: 'foo',
      phase: null,
    });
    // The configured floor guards commands that start work; reply-only /help keeps its own minimum (read)
    expect(route(comment('/help'), ctx)).toMatchObject({ command: 'help', minPermission: 'read' });
    expect(route(comment('/triage'), ctx)).toMatchObject({ minPermission: 'write' });
    const strict = {
      ...ctx,
      config: { ...config, commands: { ...config.commands, min_permission: 'admin' as const } },
    };
    expect(route(comment('/triage'), strict)).toMatchObject({ minPermission: 'admin' });
    expect(route(comment('/groom'), ctx)).toMatchObject({ minPermission: 'write' });
  });
  it('ignores non-commands, bots, edits and PR comments', () => {
    expect(route(comment('nice idea'), ctx)).toEqual({ kind: 'skip', reason: 'not a command' });
    expect(route(comment('/retry', { user: bot }), ctx).kind).toBe('skip');
    expect(route(comment('/retry', { user: { login: 'other[bot]', type: 'Bot' } }), ctx).kind).toBe('skip');
    expect(route(comment('/retry', { action: 'edited' }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/only new comments/),
    });
  });
  it('an edit or deletion of HydraFlow’s state comment by someone else → state-check; any other edit is ignored', () => {
    const block = '<!-- hydraflow:progress -->\n<!-- hydraflow:state v=2 sig=none {} -->';
    const change = (action: 'edited' | 'deleted', sender: object, body = block, from?: string) => {
      const e = comment(body, { action, user: bot });
      e.payload.sender = sender;
      if (from !== undefined) e.payload.changes = { body: { from } };
      return e;
    };
    const issue = comment('x').payload.issue.number;
    expect(route(change('edited', human, 'gone', block), ctx)).toEqual({
      kind: 'state-check',
      issue,
      actor: human.login,
    });
    expect(route(change('deleted', human), ctx)).toMatchObject({ kind: 'state-check' });
    // another App editing HydraFlow's state is checked too (a bot is no less able to roll it back)
    expect(route(change('edited', { login: 'other[bot]', type: 'Bot' }, block, block), ctx)).toMatchObject({
      kind: 'state-check',
      actor: 'other[bot]',
    });
    // HydraFlow's own edits, comments that hold no state, others' comments: ignored
    expect(route(change('edited', bot, block, block), ctx).kind).toBe('skip');
    expect(route(change('edited', human, 'plan text', 'plan'), ctx).kind).toBe('skip');
    const theirs = comment(block, { action: 'deleted' });
    expect(route(theirs, ctx)).toMatchObject({ kind: 'skip', reason: expect.stringMatching(/only new comments/) });
  });
  it('the registry is extensible', () => {
    const reg = createCommandRegistry(BUILTIN_COMMANDS);
    reg.register({ name: 'deploy', description: 'Deploy', usage: '/deploy', minPermission: 'admin', phase: 'deploy' });
    expect(route(comment('/deploy'), { ...ctx, commands: reg })).toMatchObject({
      command: 'deploy',
      phase: 'deploy',
      minPermission: 'admin',
    });
    expect(() => reg.register({ ...BUILTIN_COMMANDS[0]! })).toThrow(/already registered/);
    expect(renderHelp(reg, 'foo')).toContain('`/deploy`');
  });
});

describe('workflow_dispatch', () => {
  const dispatch = (inputs: Record<string, unknown>) => {
    const p = example('workflow_dispatch');
    p.inputs = inputs;
    p.sender = bot; // the hop is made with the workflow token
    return { name: 'workflow_dispatch', payload: p };
  };
  it('valid inputs start the phase with the original actor', () => {
    expect(route(dispatch({ issue: '12', phase: 'plan', actor: 'octocat' }), ctx)).toEqual({
      kind: 'phase',
      phase: 'plan',
      issue: 12,
      actor: 'octocat',
      dispatched: true,
    });
  });
  it('bad inputs are skipped with a reason', () => {
    expect(route(dispatch({ phase: 'plan', actor: 'octocat' }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/input issue/),
    });
    expect(route(dispatch({ issue: '0', phase: 'plan', actor: 'x' }), ctx).kind).toBe('skip');
    expect(route(dispatch({ issue: '1; rm -rf', phase: 'plan', actor: 'x' }), ctx).kind).toBe('skip');
    expect(route(dispatch({ issue: '1', phase: 'Plan!', actor: 'x' }), ctx)).toMatchObject({
      reason: expect.stringMatching(/input phase/),
    });
    expect(route(dispatch({ issue: '1', phase: 'plan', actor: 'a b' }), ctx)).toMatchObject({
      reason: expect.stringMatching(/input actor/),
    });
    expect(
      route(dispatch({ issue: '1', phase: 'deploy', actor: 'x' }), { ...ctx, knownPhases: ['plan'] }),
    ).toMatchObject({ kind: 'skip' });
  });
});

describe('other events', () => {
  it('unknown events and odd payloads are skipped; handlers are replaceable', () => {
    for (const name of ['pull_request_target', 'check_run', 'pull_request_review_comment']) {
      expect(route({ name, payload: { action: 'created' } }, ctx).kind).toBe('skip');
    }
    expect(route({ name: 'star', payload: example('star') }, ctx)).toEqual({
      kind: 'skip',
      reason: 'event star is not handled',
    });
    const handlers = { ...DEFAULT_EVENT_HANDLERS, pull_request: () => ({ kind: 'skip' as const, reason: 'custom' }) };
    expect(route({ name: 'pull_request', payload: example('pull_request') }, { ...ctx, handlers })).toEqual({
      kind: 'skip',
      reason: 'custom',
    });
    expect(route({ name: 'issues', payload: null }, ctx).kind).toBe('skip');
    expect(route({ name: 'issues', payload: { action: 'opened', issue: {} } }, ctx).kind).toBe('skip');
  });
});

describe('pull requests and CI (HydraFlow branch hydraflow/issue-<n>)', () => {
  const REPO = 'acme/widgets';
  function withPull(p: any, over: { head?: string; fork?: boolean; number?: number; state?: string } = {}) {
    p.repository = { ...p.repository, full_name: REPO };
    p.pull_request.number = over.number ?? 31;
    p.pull_request.state = over.state ?? 'open';
    p.pull_request.head = {
      ...p.pull_request.head,
      ref: over.head ?? 'hydraflow/issue-12',
      repo: { ...p.pull_request.head?.repo, full_name: over.fork ? 'mallory/widgets' : REPO },
    };
    return p;
  }
  const review = (state: string, over: Parameters<typeof withPull>[1] & { user?: object } = {}) => {
    const p = withPull(example('pull_request_review', 'submitted'), over);
    p.review.state = state;
    p.review.user = over.user ?? human;
    p.sender = over.user ?? human;
    return { name: 'pull_request_review', payload: p };
  };
  const push = (over: Parameters<typeof withPull>[1] & { sender?: object; action?: string } = {}) => {
    const p = withPull(example('pull_request', 'synchronize'), over);
    p.action = over.action ?? 'synchronize';
    p.sender = over.sender ?? human;
    return { name: 'pull_request', payload: p };
  };

  it('maps branch names to issues, and nothing else', () => {
    expect(issueOfBranch('hydraflow/issue-12')).toBe(12);
    expect(issueOfBranch('refs/heads/hydraflow/issue-7')).toBe(7);
    for (const b of ['hydraflow/issue-0', 'hydraflow/issue-12x', 'x/hydraflow/issue-1', 'hydraflow/issue-', 'main', 5])
      expect(issueOfBranch(b)).toBeUndefined();
  });

  it('a human approval → merge for the issue, with the pull request number to verify', () => {
    expect(route(review('approved'), ctx)).toEqual({
      kind: 'phase',
      phase: 'merge',
      issue: 12,
      actor: 'Codertocat',
      pull: 31,
    });
    expect(route(review('APPROVED'), ctx)).toMatchObject({ phase: 'merge' });
  });

  it('a human’s change request or comment review is feedback (a refine round); bots’ are skipped', () => {
    for (const state of ['commented', 'changes_requested'])
      expect(route(review(state), ctx)).toMatchObject({ kind: 'phase', phase: 'feedback', actor: 'Codertocat' });
    expect(route(review('changes_requested', { user: bot }), ctx).kind).toBe('skip');
    expect(route(review('commented', { user: { login: 'other[bot]', type: 'Bot' } }), ctx).kind).toBe('skip');
  });

  it('other reviews, bots, forks, other branches and closed pull requests are skipped', () => {
    expect(route(review('dismissed'), ctx).kind).toBe('skip');
    expect(route(review('approved', { user: bot }), ctx).kind).toBe('skip');
    expect(route(review('approved', { user: { login: 'other[bot]', type: 'Bot' } }), ctx).kind).toBe('skip');
    expect(route(review('approved', { fork: true }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/fork/),
    });
    expect(route(review('approved', { head: 'feature/x' }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/not on a HydraFlow branch/),
    });
    expect(route(review('approved', { state: 'closed' }), ctx).kind).toBe('skip');
    const dismissed = review('approved');
    dismissed.payload.action = 'dismissed';
    expect(route(dismissed, ctx).kind).toBe('skip');
  });

  it('/fix on a pull request is a feedback command for that pull request', () => {
    const e = comment('/fix use a loop, not reduce', { pr: true });
    expect(route(e, ctx)).toMatchObject({
      kind: 'command',
      command: 'fix',
      args: 'use a loop, not reduce',
      phase: 'feedback',
      pull: e.payload.issue.number,
    });
  });

  it('/ship-it on a pull request is a merge command; other commands there are skipped, /help answers', () => {
    const e = comment('/ship-it', { pr: true });
    expect(route(e, ctx)).toEqual({
      kind: 'command',
      command: 'ship-it',
      args: '',
      phase: 'merge',
      issue: e.payload.issue.number,
      pull: e.payload.issue.number,
      commentId: e.payload.comment.id,
      actor: 'Codertocat',
      minPermission: 'write',
    });
    expect(route(comment('/retry', { pr: true }), ctx)).toMatchObject({
      kind: 'skip',
      reason: expect.stringMatching(/only \/ship-it/),
    });
    expect(route(comment('/help', { pr: true }), ctx)).toMatchObject({ kind: 'command', command: 'help' });
    expect(route(comment('/ship-it', { pr: true, user: bot }), ctx).kind).toBe('skip');
    // On an issue, /ship-it keeps its meaning (the shape phase)
    expect(route(comment('/ship-it'), ctx)).toMatchObject({ command: 'ship-it', phase: 'shape' });
    expect(route(comment('/ship-it'), ctx)).not.toHaveProperty('pull');
  });

  it('a human push to HydraFlow’s branch → a new review round; HydraFlow’s own push and other actions are skipped', () => {
    expect(route(push(), ctx)).toEqual({ kind: 'phase', phase: 'review', issue: 12, actor: 'Codertocat', pull: 31 });
    expect(route(push({ sender: bot }), ctx).kind).toBe('skip');
    expect(route(push({ sender: { login: 'hydra-pat-user', type: 'User' } }), ctx).kind).toBe('skip');
    expect(route(push({ fork: true }), ctx).kind).toBe('skip');
    expect(route(push({ head: 'feature/x' }), ctx).kind).toBe('skip');
    for (const action of ['opened', 'closed', 'labeled', 'edited', 'ready_for_review'])
      expect(route(push({ action }), ctx)).toMatchObject({ kind: 'skip', reason: expect.stringContaining(action) });
  });

  it('workflow_run.completed on HydraFlow’s branch → merge (whoever pushed), forks and other branches skipped', () => {
    const run = (
      over: { branch?: string; action?: string; fork?: boolean; pulls?: number[]; sender?: object } = {},
    ) => {
      const p = example('workflow_run', 'completed');
      p.action = over.action ?? 'completed';
      p.repository = { ...p.repository, full_name: REPO };
      p.workflow_run.head_branch = over.branch ?? 'hydraflow/issue-12';
      p.workflow_run.head_repository = { ...p.workflow_run.head_repository, full_name: over.fork ? 'm/w' : REPO };
      p.workflow_run.pull_requests = (over.pulls ?? [31]).map((number) => ({ number }));
      p.sender = over.sender ?? bot;
      return { name: 'workflow_run', payload: p };
    };
    expect(route(run(), ctx)).toEqual({ kind: 'phase', phase: 'merge', issue: 12, actor: bot.login, pull: 31 });
    expect(route(run({ pulls: [] }), ctx)).toEqual({ kind: 'phase', phase: 'merge', issue: 12, actor: bot.login });
    expect(route(run({ action: 'requested' }), ctx).kind).toBe('skip');
    expect(route(run({ fork: true }), ctx)).toMatchObject({ kind: 'skip', reason: expect.stringMatching(/fork/) });
    expect(route(run({ branch: 'main' }), ctx).kind).toBe('skip');
  });

  it('check_suite.completed and status → merge for the branch’s issue', () => {
    const suite = example('check_suite', 'completed');
    suite.check_suite.head_branch = 'hydraflow/issue-4';
    suite.check_suite.pull_requests = [{ number: 9 }];
    expect(route({ name: 'check_suite', payload: suite }, ctx)).toMatchObject({
      kind: 'phase',
      phase: 'merge',
      issue: 4,
      pull: 9,
    });
    suite.check_suite.head_branch = 'main';
    expect(route({ name: 'check_suite', payload: suite }, ctx).kind).toBe('skip');

    const status = example('status');
    status.state = 'success';
    status.branches = [{ name: 'main' }, { name: 'hydraflow/issue-8' }];
    expect(route({ name: 'status', payload: status }, ctx)).toMatchObject({ kind: 'phase', phase: 'merge', issue: 8 });
    expect(route({ name: 'status', payload: status }, ctx)).not.toHaveProperty('pull');
    status.state = 'pending';
    expect(route({ name: 'status', payload: status }, ctx).kind).toBe('skip');
    status.state = 'failure';
    status.branches = [{ name: 'hydraflow/issue-8' }, { name: 'hydraflow/issue-9' }];
    expect(route({ name: 'status', payload: status }, ctx).kind).toBe('skip');
    status.branches = [];
    expect(route({ name: 'status', payload: status }, ctx).kind).toBe('skip');
  });
});

describe('permissionAtLeast', () => {
  it('ranks like the collaborator API reports', () => {
    expect(permissionAtLeast('admin', 'write')).toBe(true);
    expect(permissionAtLeast('write', 'maintain')).toBe(true); // API reports maintain as write
    expect(permissionAtLeast('read', 'triage')).toBe(true); // and triage as read
    expect(permissionAtLeast('read', 'write')).toBe(false);
    expect(permissionAtLeast('none', 'read')).toBe(false);
    expect(permissionAtLeast(undefined, 'read')).toBe(false);
    expect(permissionAtLeast('weird', 'read')).toBe(false);
  });
});

describe('replies to shape’s directions (docs/adr/0016-shape.md)', () => {
  const onShapeIssue = (text: string, user = human) => {
    const e = comment(text, { user });
    e.payload.issue.labels = [{ name: 'hydraflow-shape' }];
    return e;
  };

  it('a plain comment at hydraflow-shape goes to shape with its id and no permission floor (the phase says why)', () => {
    const e = onShapeIssue('B');
    expect(route(e, ctx)).toEqual({
      kind: 'phase',
      phase: 'shape',
      issue: e.payload.issue.number,
      actor: human.login,
      comment: e.payload.comment.id,
    });
  });

  it('HydraFlow’s own comments and other bots’ never reach it; a command stays a command; elsewhere a reply is nothing', () => {
    expect(route(onShapeIssue('B', bot), ctx).kind).toBe('skip');
    expect(route(onShapeIssue('B', { login: 'renovate[bot]', type: 'Bot' }), ctx).kind).toBe('skip');
    expect(route(onShapeIssue('/ship-it B'), ctx)).toMatchObject({
      kind: 'command',
      command: 'ship-it',
      phase: 'shape',
    });
    expect(route(comment('B'), ctx)).toEqual({ kind: 'skip', reason: 'not a command' });
  });
});
