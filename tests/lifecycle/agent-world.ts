/**
 * The world of the agent-boundary tests: the clear issue planned and accepted, and a coding agent whose session the
 * test scripts — typically a "test" file that runs as repository code in the agent job and attacks what it can reach.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect } from 'vitest';
import { decodeStateBlock } from '@hydraflow/core';
import type { Script, ScriptEntry } from '@hydraflow/testkit';
import { BOT_LOGIN } from '@hydraflow/testkit';
import { AVERAGE_ISSUE, averagePlan, lifecycleWorld, planAccepted, triageClear, type LifecycleWorld } from './scenario';

/** The issue's signed state as HydraFlow last wrote it (throws if it does not verify). */
export function issueState(w: LifecycleWorld, issue = 1) {
  const body = w.gh.world
    .commentsOn(issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:state'))!.body;
  const decoded = decodeStateBlock(body, { key: w.stateKey, issue });
  if (decoded.status !== 'valid') throw new Error(`the issue's state is ${decoded.status}`);
  return decoded.state;
}

export function progressOf(w: LifecycleWorld): string {
  return (
    w.gh.world.commentsOn(1).find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'))?.body ?? ''
  );
}

export function openIssue(w: LifecycleWorld, issue = AVERAGE_ISSUE) {
  const created = w.gh.world.issue({ ...issue, author: 'alice' });
  w.lc.dispatch('issues', 'opened', { issue: created.number, sender: 'alice' });
  return created;
}

export const CANARY = 'hf-canary-7f3a9c2e51d84b06';

/** Every place a secret could leak to: comments, issue and PR text, review bodies, branch names, every commit. */
export function everythingPublished(w: LifecycleWorld): string {
  const parts: string[] = [];
  for (const c of w.gh.world.comments.values()) parts.push(c.body);
  for (const i of w.gh.world.issues.values()) parts.push(i.title, i.body ?? '');
  for (const r of w.gh.world.reviews.values()) parts.push(JSON.stringify(r));
  parts.push(execFileSync('git', ['for-each-ref', '--format=%(refname)'], { cwd: w.sample.bareRepo }).toString());
  parts.push(execFileSync('git', ['log', '--all', '-p', '--format=%H %s%n%b'], { cwd: w.sample.bareRepo }).toString());
  return parts.join('\n');
}

/** Reads the environment of every process up the tree (the agent's commands run under HydraFlow's steps). */
export const READ_ANCESTOR_ENVIRONMENTS = `let pid = process.pid, out = '';\nwhile (pid > 1) {\n  try { out += fs.readFileSync('/proc/' + pid + '/environ', 'utf8'); } catch {}\n  pid = Number(fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1]);\n}\n`;

/** Commits with git as the agent's commands can, from the working directory. */
export const GIT_COMMIT_ALL = `const git = (...a) => require('child_process').execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@example.com', ...a]);\ngit('add', '-A');\ngit('commit', '-qm', 'agent-made commit');\n`;

/**
 * A model that writes `script` as a test file of the sample (`node --test` runs it: repository code, as an injected
 * test would be), runs the tests, makes the `after` turns and says it is done.
 */
export function agentRunningScript(script: string, after: ScriptEntry[] = [], done = 'Done.'): ScriptEntry[] {
  return [
    {
      toolCalls: [
        { name: 'write_file', input: { path: 'hook.test.cjs', content: `const fs = require('fs');\n${script}` } },
      ],
    },
    { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
    ...after,
    { text: done },
  ];
}

/** The clear issue's world, planned and accepted, with `implement` as the coding agent's session. */
export function agentWorld(
  implement: ScriptEntry[],
  options: {
    review?: ScriptEntry;
    env?: Record<string, string>;
    script?: Script;
    world?: Parameters<typeof lifecycleWorld>[2];
  } = {},
): Promise<LifecycleWorld> {
  return lifecycleWorld(
    {
      ...options.script,
      triage: triageClear,
      plan: averagePlan,
      plan_review: planAccepted,
      implement,
      ...(options.review ? { review: options.review } : {}),
    },
    options.env ?? {},
    { ...options.world, ownSecrets: true },
  );
}

/**
 * Cancels the run in progress, as a human's "Cancel workflow", once `marker` exists: a step of that run wrote it, so
 * the cancellation meets that step.
 */
export async function cancelOnceWritten(w: LifecycleWorld, marker: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(marker), `${marker} was never written`).toBe(true);
  expect(w.lc.cancel(w.gh.world.workflowRuns.find((r) => r.status === 'in_progress')!.id)).toBe(true);
}
