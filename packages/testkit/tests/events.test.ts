import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent, exampleEvent, writeEventFile } from '../src/events/index';
import { startGitHubEmulator, type GitHubEmulator } from '../src/github/index';

let gh: GitHubEmulator;
let dir: string;

beforeAll(async () => {
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets' });
  gh.addUser({ login: 'alice', type: 'User', permission: 'read' });
  gh.world.label('hydraflow:plan', '0e8a16', 'Plan it');
  const issue = gh.world.issue({
    title: 'Add dark mode',
    body: 'Please',
    author: 'alice',
    labels: ['bug', 'hydraflow:plan'],
  });
  gh.world.comment(issue.number, { author: 'bob', body: 'first' });
  gh.world.comment(issue.number, { author: 'alice', body: '/hydraflow plan' });
  gh.world.ref('hydraflow/issue-1');
  gh.world.pull({ title: 'Dark mode', body: 'Closes #1', author: 'github-actions[bot]', head: 'hydraflow/issue-1' });
  dir = mkdtempSync(join(tmpdir(), 'hf-events-'));
});
afterAll(async () => {
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

const cases: Array<[string, string | undefined]> = [
  ['issues', 'opened'],
  ['issues', 'edited'],
  ['issues', 'labeled'],
  ['issues', 'unlabeled'],
  ['issues', 'closed'],
  ['issue_comment', 'created'],
  ['issue_comment', 'edited'],
  ['pull_request', 'opened'],
  ['pull_request', 'synchronize'],
  ['check_suite', 'completed'],
  ['workflow_dispatch', undefined],
];

describe('buildEvent', () => {
  it.each(cases)('%s.%s keeps the example shape and reflects the world', (name, action) => {
    const example = exampleEvent(name, action);
    const ev = buildEvent(gh, name, action, name === 'issue_comment' || name === 'issues' ? { issue: 1 } : {});
    const exampleKeys = Object.keys(example)
      .filter((k) => k !== 'changes')
      .sort();
    expect(
      Object.keys(ev)
        .filter((k) => k !== 'changes')
        .sort(),
    ).toEqual(exampleKeys);
    if (action) expect(ev.action).toBe(action);
    const repo = ev.repository as Record<string, unknown>;
    expect(repo).toMatchObject({ name: 'widgets', full_name: 'acme/widgets', owner: { login: 'acme' } });
    expect(repo.url).toBe(`${gh.url}/repos/acme/widgets`);
    expect(Object.keys(repo).sort()).toEqual(Object.keys(example.repository as object).sort());
  });

  it('adapts issues to the world state', () => {
    const ev = buildEvent(gh, 'issues', 'labeled', { issue: 1, label: 'hydraflow:plan' });
    expect(ev.issue).toMatchObject({
      number: 1,
      title: 'Add dark mode',
      body: 'Please',
      user: { login: 'alice' },
      comments: 2,
    });
    expect((ev.issue as { labels: Array<{ name: string }> }).labels.map((l) => l.name)).toEqual([
      'bug',
      'hydraflow:plan',
    ]);
    expect(ev.label).toMatchObject({ name: 'hydraflow:plan', color: '0e8a16' });
    expect(ev.sender).toMatchObject({ login: 'alice' });
  });

  it('adapts issue_comment to the newest comment, sender = comment author', () => {
    const ev = buildEvent(gh, 'issue_comment', 'created', { issue: 1 });
    expect(ev.comment).toMatchObject({ body: '/hydraflow plan', user: { login: 'alice' } });
    expect((ev.comment as { id: number }).id).toBe(gh.world.commentsOn(1).at(-1)!.id);
    expect(ev.sender).toMatchObject({ login: 'alice' });
    const edited = buildEvent(gh, 'issue_comment', 'edited', { issue: 1, changes: { body: { from: 'old' } } });
    expect(edited.changes).toEqual({ body: { from: 'old' } });
  });

  it('adapts pull_request and workflow_dispatch', () => {
    const pr = buildEvent(gh, 'pull_request', 'synchronize');
    expect(pr.number).toBe(2);
    expect(pr.pull_request).toMatchObject({
      number: 2,
      title: 'Dark mode',
      head: { ref: 'hydraflow/issue-1' },
      base: { ref: 'main' },
    });
    expect(pr.after).toBe(gh.world.pulls.get(2)!.head.sha);
    const wd = buildEvent(gh, 'workflow_dispatch', undefined, { inputs: { issue: '1' } });
    expect(wd).toMatchObject({
      inputs: { issue: '1' },
      ref: 'refs/heads/main',
      sender: { login: 'github-actions[bot]' },
    });
    const cs = buildEvent(gh, 'check_suite', 'completed', { head_branch: 'hydraflow/issue-1', conclusion: 'failure' });
    expect(cs.check_suite).toMatchObject({
      conclusion: 'failure',
      head_branch: 'hydraflow/issue-1',
      pull_requests: [{ number: 2 }],
    });
  });

  it('writeEventFile writes a GITHUB_EVENT_PATH file', () => {
    const ev = buildEvent(gh, 'issues', 'opened', { issue: 1 });
    const path = writeEventFile(dir, 'issues.opened', ev);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(ev);
  });
});
