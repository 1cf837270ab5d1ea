/**
 * Output neutralization (issue #17 item 8), on the built dist/ in the lifecycle world: what a model writes — the triage
 * enrichment, the plan, the coding agent's summary, the review — and what an issue's author writes in its title reach
 * GitHub (comments, the pull request's body, reviews, the squash commit) and the job log. None of it may @mention
 * anyone, carry a closing keyword, make a clickable link to another host, or issue a workflow command.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTimeline, type JobRecord, type ScriptEntry } from '@hydraflow/testkit';
import { everythingPublished, openIssue, progressOf } from './agent-world';
import {
  AVERAGE_GOOD,
  AVERAGE_ISSUE,
  averagePlan,
  implementAverage,
  lifecycleWorld,
  planAccepted,
  triageClear,
  type LifecycleWorld,
} from './scenario';

/** A prompt-injected model's text: a mention after a code span, closing keywords, links of every form, log commands. */
const POISON = [
  'Done: `average` @victim, `sum`@victim and @acme/team were told.',
  'Fixes #99, closes acme/widgets#3 and Resolved: #4.',
  'See [click](https://evil.example/x), ![pixel](https://evil.example/p.png?leak=1), <https://evil.example/a>, https://evil.example/b and <a href="https://evil.example/c">c</a>.',
  '::add-mask::HYDRA_INJECT',
  '  ::stop-commands::HYDRA_INJECT',
  '::error file=src/numbers.js,line=1::HYDRA_INJECT',
].join('\n');

/** What GitHub would act on in `text`: live mentions, closing keywords, links to a host other than the emulator's. */
function liveReferences(markdown: string, ownBase: string): string[] {
  // HydraFlow's hidden data blocks (escaped JSON in an HTML comment) are not rendered: GitHub acts on none of it
  const text = markdown.replace(/<!-- hydraflow:[a-z-]+ [\s\S]*?-->/g, '');
  const found: string[] = [];
  for (const m of text.matchAll(/@(victim|acme\/team)/g)) found.push(`mention ${m[0]}`);
  for (const m of text.matchAll(
    /(?<![A-Za-z0-9])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)[\s:*_]*(?:[\w.-]+\/[\w.-]+)?#\d+/gi,
  ))
    found.push(`closing keyword ${m[0]}`);
  for (const m of text.matchAll(/https?:\/\/[^\s)>"]+/g)) if (!m[0].startsWith(ownBase)) found.push(`link ${m[0]}`);
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]*)/g)) if (!m[1]!.startsWith(ownBase)) found.push(`link ](${m[1]}`);
  for (const m of text.matchAll(/<(a|img)\s/gi)) found.push(`html ${m[0]}`);
  return found;
}

/** The lines of `stdout` the runner would run as workflow commands (it trims leading whitespace; `##[` anywhere). */
function workflowCommands(stdout: string): string[] {
  return stdout.split(/\r\n|\r|\n/).filter((line) => line.trimStart().startsWith('::') || line.includes('##['));
}

/** Workflow commands in any step's log that the model's text chose (HydraFlow's own carry its data escaped). */
function injectedCommands(jobs: readonly JobRecord[]): string[] {
  const found: string[] = [];
  for (const job of jobs)
    for (const step of job.steps)
      for (const line of workflowCommands(`${step.stdout}\n${step.stderr ?? ''}`)) {
        const name = /^\s*::([^\s:]+)/.exec(line)?.[1];
        const ours = name && ['add-mask', 'warning', 'error', 'notice', 'debug', 'set-output'].includes(name);
        if (!ours || /^\s*::add-mask::HYDRA/.test(line) || /^\s*::error file=/.test(line))
          found.push(`${job.job}/${step.id}: ${line}`);
      }
  return found;
}

let world: LifecycleWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('model text is neutralized wherever HydraFlow publishes it', () => {
  it('comments, the pull request body, the review and the squash commit carry no live mention, closing keyword or foreign link; HydraFlow’s own Fixes and links stay', async () => {
    const implement = implementAverage(AVERAGE_GOOD) as ScriptEntry[];
    world = await lifecycleWorld({
      triage: { json: { ...triageClear.json, enrichment: POISON } },
      plan: { json: { ...averagePlan.json, approach: POISON } },
      plan_review: planAccepted,
      implement: [...implement.slice(0, -1), { text: POISON }],
      review: {
        json: {
          summary: POISON,
          findings: [
            {
              severity: 'low',
              path: 'src/numbers.js',
              line: 6,
              title: 'Nit: `x`@victim fixes #98',
              recommendation: POISON,
              needs_human_decision: false,
            },
          ],
        },
      },
    });
    const w = world;
    // the issue's author writes a closing keyword and a mention into the title, which becomes the commit's title
    openIssue(w, { ...AVERAGE_ISSUE, title: `${AVERAGE_ISSUE.title} (fixes #99, cc @victim)` });
    const jobs = await w.lc.runUntilQuiet();
    const pull = [...w.gh.world.pulls.values()][0]!;
    expect(pull, formatTimeline(jobs, { steps: true })).toBeDefined();
    await w.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, { event: 'APPROVE', body: 'Ok.' });
    const after = await w.lc.runUntilQuiet();
    expect(w.gh.world.pulls.get(pull.number)!.merged, formatTimeline(after, { steps: true })).toBe(true);

    const ownBase = `${w.gh.world.apiUrl}/acme/widgets/`;
    const pullUrl = `${ownBase}pull/${pull.number}`;
    const body = w.gh.world.issues.get(pull.number)!.body ?? '';
    // the pull request closes its own issue, and nothing else
    expect(body.startsWith('Fixes #1\n')).toBe(true);
    const squash = execFileSync('git', ['log', '-1', '--format=%B', 'main'], { cwd: w.sample.bareRepo }).toString();
    const places = {
      'pull request body': body.replace(/^Fixes #1\n/, ''),
      'squash commit': squash,
      'pull request title': w.gh.world.issues.get(pull.number)!.title,
      ...Object.fromEntries([...w.gh.world.comments.values()].map((c) => [`comment ${c.id}`, c.body])),
      ...Object.fromEntries([...w.gh.world.reviews.values()].map((r) => [`review ${r.id}`, r.body ?? ''])),
      ...Object.fromEntries([...w.gh.world.reviewComments.values()].map((c) => [`review comment ${c.id}`, c.body])),
    };
    const live = Object.entries(places)
      .map(([place, text]) => [place, liveReferences(text, ownBase)] as const)
      .filter(([, found]) => found.length > 0);
    expect(Object.fromEntries(live)).toEqual({});
    // the model's text is still there to read
    expect(everythingPublished(w)).toContain('evil.example/x');
    // HydraFlow's own link to its pull request still works
    expect(progressOf(w)).toContain(`[#${pull.number}](${pullUrl})`);
  }, 240_000);
});

describe('untrusted text in the job log', () => {
  it('cannot issue a workflow command: the coding agent’s summary, logged by the escalation, stays plain text', async () => {
    world = await lifecycleWorld({
      triage: triageClear,
      plan: averagePlan,
      plan_review: planAccepted,
      // the agent changes nothing and says so with a poisoned summary: publish escalates and logs why
      implement: [{ text: POISON }],
    });
    openIssue(world);
    const jobs = await world.lc.runUntilQuiet();
    const timeline = formatTimeline(jobs, { steps: true });
    expect(world.gh.world.issues.get(1)!.labels, timeline).toContain('hydraflow-hitl');
    const logged = jobs.flatMap((j) => j.steps.map((s) => s.stdout)).join('\n');
    expect(logged, timeline).toContain('HYDRA_INJECT'); // the text was logged…
    expect(injectedCommands(jobs)).toEqual([]); // …and none of it as a command
    // the progress comment shows the agent's words (the error, the history) and GitHub acts on none of them
    expect(progressOf(world)).toContain('evil.example/x');
    expect(liveReferences(progressOf(world), `${world.gh.world.apiUrl}/acme/widgets/`)).toEqual([]);
  }, 180_000);
});
