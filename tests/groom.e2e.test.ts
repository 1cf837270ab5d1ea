/**
 * Grooming through the built dist/, the GitHub emulator (REST + GraphQL, checked against GitHub's schemas) and the
 * scripted model servers: triage → grooming → ready, sub-issues from the engineer's phases, the question lifecycle
 * across re-runs, and the seed's failure modes. Assertions are on the world's end state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStateBlock, type IssueState } from '@hydraflow/core';
import { createWorld, expectNoViolations, type Script, type World } from '@hydraflow/testkit';
import {
  groomModeQuestions,
  groomReady,
  MODE_ISSUE,
  MODE_PHASES,
  STATS_ISSUE,
  STATS_PHASES,
  TIES_ANSWER,
  triageComplex,
  triageModeComplex,
} from './lifecycle/grooming';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const BOT = 'github-actions[bot]';

function progress(w: World, issue: number) {
  const mine = w.gh.world.commentsOn(issue).filter((c) => c.user === BOT);
  expect(mine, 'one progress comment').toHaveLength(1);
  return mine[0]!.body;
}

function state(w: World, issue: number): IssueState {
  const decoded = decodeStateBlock(progress(w, issue), { key: w.stateKey, issue });
  expect(decoded.status).toBe('valid');
  return (decoded as { state: IssueState }).state;
}

const labelsOf = (w: World, issue: number) => [...w.gh.world.issues.get(issue)!.labels].sort();
const bodyOf = (w: World, issue: number) => w.gh.world.issues.get(issue)!.body ?? '';
const callsOf = (w: World, role: string) => w.models.calls.filter((c) => c.role === role).length;

async function groomWorld(script: Script, provider: 'anthropic' | 'openai' = 'anthropic'): Promise<World> {
  const w = await createWorld({ provider, script });
  w.gh.addUser({ login: 'alice', permission: 'write' });
  return w;
}

/** alice ticks the empty-list question's box in the issue body herself: an issues.edited event, as GitHub sends it. */
async function aliceTicksEmptyList(w: World, issue: number) {
  const before = bodyOf(w, issue);
  w.gh.world.issues.get(issue)!.body = before.replace(
    '- [ ] **What does mode([]) return?**',
    '- [x] **What does mode([]) return?**',
  );
  return w.run('issues', 'edited', { issue, sender: 'alice', changes: { body: { from: before } } });
}

/** alice comments on the issue, and the comment's event runs the action as GitHub would deliver it. */
async function aliceComments(w: World, issue: number, body: string) {
  const c = w.gh.world.comment(issue, { author: 'alice', body });
  return w.run('issue_comment', 'created', { issue, comment: c.id, sender: 'alice' });
}

describe.each(['anthropic', 'openai'] as const)('triage → grooming → ready (%s)', (provider) => {
  it('grooms a complex issue with four agents and a summary, then moves it on to planning', async () => {
    world = await groomWorld({ triage: triageComplex, ...groomReady() }, provider);
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });

    const triaged = await world.run('issues', 'opened', { issue: issue.number });
    expect(triaged.exitCode, triaged.stderr).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-groom']);
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(issue.number), phase: 'groom' });

    const groomed = await world.runDispatch();
    expect(groomed.exitCode, groomed.stdout + groomed.stderr).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(issue.number), phase: 'plan' });
    // No question: the body is the author's, untouched.
    expect(bodyOf(world, issue.number)).toBe(STATS_ISSUE.body);

    const s = state(world, issue.number);
    expect(s.groom).toMatchObject({ runs: 1, decision: 'ready', openQuestionIds: [], subIssues: [] });
    expect(Object.keys(s.groom!.agents).sort()).toEqual(['engineer', 'pm', 'qa', 'research']);
    // Every agent and the summary in the ledger, each under its own role.
    const roles = new Set(s.ledger.map((e) => e.role));
    for (const role of ['groom_pm', 'groom_engineer', 'groom_qa', 'groom_research', 'groom_summary'])
      expect(roles).toContain(role);
    for (const agent of ['pm', 'engineer', 'qa', 'research'])
      expect(callsOf(world, `groom_${agent}`)).toBeGreaterThan(0);
    // The explorers used their read-only tools: the engineer read the code, research searched the issues.
    const engineerCalls = world.models.calls.filter((c) => c.role === 'groom_engineer');
    expect(engineerCalls.at(-1)!.request!.toolResults.map((r) => r.name)).toContain('read_file');
    expect(world.models.calls.filter((c) => c.role === 'groom_research').at(-1)!.request!.toolResults[0]?.name).toBe(
      'search_issues',
    );
    // One prompt cache for the whole run: the engineer's first call writes the shared prefix; every other call — the
    // other agents, the engineer's later turns, the summary — reads it.
    const grooming = world.models.calls.filter((c) => c.role?.startsWith('groom_'));
    const cacheUsage = (c: (typeof grooming)[number]) =>
      provider === 'anthropic'
        ? {
            read: Number(c.usage?.cache_read_input_tokens ?? 0),
            written: Number(c.usage?.cache_creation_input_tokens ?? 0),
          }
        : {
            read: Number(
              (c.usage?.prompt_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens ?? 0,
            ),
            written: 0,
          };
    expect(grooming[0]!.role).toBe('groom_engineer');
    if (provider === 'anthropic') expect(cacheUsage(grooming[0]!).written).toBeGreaterThan(1000);
    const readers = grooming.slice(1);
    expect(readers.length).toBeGreaterThanOrEqual(6);
    for (const call of readers) expect(cacheUsage(call).read, call.role).toBeGreaterThan(1000);
    // Per-agent cost in the job summary and the progress comment.
    expect(groomed.summary).toMatch(/\| pm \| ready \| high \| 0 \| 1 \| [\d.]+ s \| \$[\d.]+ \|/);
    expect(groomed.summary).toMatch(/\| summary \| ready \|.*\$[\d.]+ \|/);
    expect(progress(world, issue.number)).toMatch(/Decision: ready/);
    expectNoViolations(world.gh);

    // The same dispatch again: nothing changes, nothing is posted twice, no model is called.
    const calls = world.models.calls.length;
    const again = await world.runDispatch(world.gh.world.dispatches.length - 2);
    expect(again.exitCode).toBe(0);
    expect(world.models.calls.length).toBe(calls);
    expect(labelsOf(world, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    progress(world, issue.number);
  });
});

describe('sub-issues from the engineer’s phases', () => {
  it('/groom splits the work into linked phase sub-issues; the first is planned; a re-run duplicates none', async () => {
    world = await groomWorld(groomReady({ phases: STATS_PHASES }));
    const parent = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, parent.number, '/groom');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);

    const subs = world.gh.world.subIssuesOf(parent.number);
    expect(subs.map((s) => s.title)).toEqual([
      '[Phase 1]: Add average(numbers)',
      '[Phase 2]: Add median(numbers) and describe(numbers)',
    ]);
    const [one, two] = subs as [(typeof subs)[0], (typeof subs)[0]];
    expect(one.body).toContain('## Description');
    expect(one.body).toContain('## Affected Areas');
    expect(one.body).toMatch(/`src\/numbers\.js`.*\(modify\)/);
    expect(one.body).toContain('## Todo');
    expect(two.body).toContain('- [ ] [Manual] Check the README examples render');
    expect(two.body).toContain(`#${one.number}`); // depends_on rendered as a link to phase 1's issue
    expect(two.body).toContain(`#${parent.number}`);
    expect(labelsOf(world, one.number)).toEqual(['groomed', 'hydraflow-plan']);
    expect(labelsOf(world, two.number)).toEqual(['groomed']);
    expect(labelsOf(world, parent.number)).toEqual(['groomed', 'hydraflow-epic']);
    // A task list in the parent as well.
    expect(bodyOf(world, parent.number)).toContain(`- [ ] #${one.number}`);
    expect(bodyOf(world, parent.number)).toContain(`- [ ] #${two.number}`);
    // Phase 1 is started; phase 2 waits for it.
    expect(world.gh.world.dispatches.map((d) => d.inputs)).toContainEqual(
      expect.objectContaining({ issue: String(one.number), phase: 'plan', actor: 'alice' }),
    );
    expect(state(world, parent.number).groom?.subIssues).toEqual([
      { phase: 1, number: one.number },
      { phase: 2, number: two.number },
    ]);

    // /groom again (a human insists): the agents run again, but no sub-issue is created twice.
    const issuesBefore = world.gh.world.issues.size;
    const again = await aliceComments(world, parent.number, '/groom');
    expect(again.exitCode, again.stdout).toBe(0);
    expect(world.gh.world.subIssuesOf(parent.number).map((s) => s.number)).toEqual([one.number, two.number]);
    expect(world.gh.world.issues.size).toBe(issuesBefore);
    expectNoViolations(world.gh);
  });

  it('phases run one at a time: closing one starts the next; closing the last closes the parent', async () => {
    world = await groomWorld(groomReady({ phases: STATS_PHASES }));
    const parent = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    expect((await aliceComments(world, parent.number, '/groom')).exitCode).toBe(0);
    const [one, two] = world.gh.world.subIssuesOf(parent.number).map((s) => s.number) as [number, number];

    /** alice closes a phase as completed (its pull request merged by hand, say); GitHub delivers issues.closed. */
    const close = async (n: number) => {
      const issue = world!.gh.world.issues.get(n)!;
      issue.state = 'closed';
      issue.state_reason = 'completed';
      const closed = await world!.run('issues', 'closed', { issue: n, sender: 'alice' });
      expect(closed.exitCode, closed.stdout + closed.stderr).toBe(0);
      expect(world!.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(parent.number), phase: 'epic' });
      const epic = await world!.runDispatch();
      expect(epic.exitCode, epic.stdout + epic.stderr).toBe(0);
    };

    await close(one);
    expect(labelsOf(world, two)).toEqual(['groomed', 'hydraflow-plan']);
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(two), phase: 'plan' });
    expect(bodyOf(world, parent.number)).toContain(`- [x] #${one}`);
    expect(bodyOf(world, parent.number)).toContain(`- [ ] #${two}`);
    expect(world.gh.world.issues.get(parent.number)!.state).toBe('open');

    await close(two);
    expect(world.gh.world.issues.get(parent.number)!.state).toBe('closed');
    expect(labelsOf(world, parent.number)).toEqual(['groomed', 'hydraflow-fixed']);
    expect(bodyOf(world, parent.number)).toContain(`- [x] #${two}`);
    expect(progress(world, parent.number)).toMatch(/All 2 phases are done/);
    expectNoViolations(world.gh);
  });

  it('a sub-issue whose creation answered 502 after GitHub made it is not made twice', async () => {
    world = await groomWorld(groomReady({ phases: STATS_PHASES }));
    const parent = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    world.gh.world.label('groomed');
    world.gh.world.label('hydraflow-plan');
    // The first GraphQL mutation (phase 1's createIssue) runs, then GitHub answers 502.
    world.gh.faults.writeSucceedsThen502(1, { pathIncludes: '/graphql' });
    const run = await aliceComments(world, parent.number, '/groom');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(world.gh.requests.filter((r) => r.path === '/graphql' && r.status === 502)).toHaveLength(1);
    expect(world.gh.world.subIssuesOf(parent.number).map((s) => s.title)).toEqual([
      '[Phase 1]: Add average(numbers)',
      '[Phase 2]: Add median(numbers) and describe(numbers)',
    ]);
    expect([...world.gh.world.issues.values()].filter((i) => i.title.startsWith('[Phase 1]'))).toHaveLength(1);
  });
});

describe('the question lifecycle: pending → answered', () => {
  it('asks in the seed’s format, then keeps a checked box checked and strikes through an answered one', async () => {
    world = await groomWorld({ triage: triageModeComplex, ...groomModeQuestions() });
    const issue = world.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
    await world.run('issues', 'opened', { issue: issue.number });
    const first = await world.runDispatch();
    expect(first.exitCode, first.stdout + first.stderr).toBe(0);

    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-groom']);
    const asked = bodyOf(world, issue.number);
    expect(asked.startsWith(MODE_ISSUE.body)).toBe(true);
    expect(asked).toContain(
      '- [ ] **What does mode() return on ties?** - Two values can be equally frequent: return the first, the smallest, or all of them? _(engineer, qa)_ `id:tie-behaviour`',
    );
    expect(asked).toContain(
      '- [ ] **What does mode([]) return?** - sum([]) is 0; should mode([]) return undefined, 0 or throw? _(qa)_ `id:empty-list`',
    );
    expect(state(world, issue.number).groom).toMatchObject({
      decision: 'needs_info',
      openQuestionIds: ['tie-behaviour', 'empty-list'],
    });
    expect(world.gh.world.dispatches.at(-1)?.inputs.phase).toBe('groom'); // no plan dispatched

    // alice ticks the empty-list box herself (an issue edit), then answers the tie question in a comment.
    const edit = await aliceTicksEmptyList(world, issue.number);
    expect(edit.exitCode, edit.stdout + edit.stderr).toBe(0);
    expect(edit.outputs.decision).toBe('groom');
    const pmCalls = callsOf(world, 'groom_pm');
    const answer = await aliceComments(world, issue.number, TIES_ANSWER);
    expect(answer.exitCode, answer.stdout + answer.stderr).toBe(0);

    const body = bodyOf(world, issue.number);
    expect(body).toContain(
      '- [x] ~~What does mode() return on ties?~~ - The smallest of the most frequent values (alice, in a comment) `id:tie-behaviour`',
    );
    expect(body).toContain('- [x] **What does mode([]) return?**');
    expect(body).not.toContain('- [ ] ');
    expect(labelsOf(world, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ issue: String(issue.number), phase: 'plan' });
    // Incremental re-run: the PM was ready with no question open, so its verdict was reused.
    expect(callsOf(world, 'groom_pm')).toBe(pmCalls);
    expect(state(world, issue.number).groom).toMatchObject({ decision: 'ready', openQuestionIds: [] });

    // A comment that answers nothing does not re-run grooming (nor does anything on an issue no longer grooming).
    const calls = world.models.calls.length;
    const noise = await aliceComments(world, issue.number, 'thanks!');
    expect(noise.exitCode).toBe(0);
    expect(world.models.calls.length).toBe(calls);
    expectNoViolations(world.gh);
  });
});

describe('a re-run after answers, when an earlier run died half-way', () => {
  it('keeps the checked box checked, strikes the answered one through, and duplicates no sub-issue', async () => {
    world = await groomWorld(groomModeQuestions({ phasesWhenReady: MODE_PHASES }));
    const issue = world.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
    expect((await aliceComments(world, issue.number, '/groom')).exitCode).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-groom']);

    // alice ticks the empty-list box (grooming runs again: still needs the tie answer).
    const edit = await aliceTicksEmptyList(world, issue.number);
    expect(edit.exitCode, edit.stdout + edit.stderr).toBe(0);
    expect(bodyOf(world, issue.number)).toContain('- [x] **What does mode([]) return?**');
    expect(bodyOf(world, issue.number)).toContain('- [ ] **What does mode() return on ties?**');

    // alice answers the tie question; grooming decides ready and creates the phases — then GitHub fails every write
    // of the issue itself, so the run dies before the parent is updated.
    world.gh.faults.failNext(20, 502, {
      methods: ['PATCH'],
      pathIncludes: `/repos/acme/widgets/issues/${issue.number}`,
    });
    await aliceComments(world, issue.number, TIES_ANSWER);
    world.gh.faults.reset();
    const made = world.gh.world.subIssuesOf(issue.number).map((s) => s.number);
    expect(made).toHaveLength(2);
    expect(bodyOf(world, issue.number)).not.toContain('~~What does mode() return on ties?~~');

    // alice re-runs grooming.
    const rerun = await aliceComments(world, issue.number, '/groom');
    expect(rerun.exitCode, rerun.stdout + rerun.stderr).toBe(0);
    const body = bodyOf(world, issue.number);
    expect(body).toContain('- [x] **What does mode([]) return?**');
    expect(body).toContain(
      '- [x] ~~What does mode() return on ties?~~ - The smallest of the most frequent values (alice, in a comment) `id:tie-behaviour`',
    );
    expect(world.gh.world.subIssuesOf(issue.number).map((s) => s.number)).toEqual(made);
    expect([...world.gh.world.issues.values()].filter((i) => i.title.startsWith('[Phase'))).toHaveLength(2);
    expect(body).toContain(`- [ ] #${made[0]}`);
    expect(labelsOf(world, issue.number)).toEqual(['groomed', 'hydraflow-epic']);
    expectNoViolations(world.gh);
  });
});

describe('blocked, and custom agents', () => {
  it('a blocker is documented and the issue goes to a human', async () => {
    const summary = {
      toolCalls: [
        {
          name: 'submit_summary',
          input: {
            summary: 'The statistics helpers wait on the reports API redesign.',
            decision: 'blocked',
            decision_rationale: 'Research found the reports API is being replaced; its new shape decides the helpers.',
            consolidated_questions: [],
            answered_questions: [],
            blocker_reason: 'Waiting for the reports API redesign (an external team) to settle the data shape.',
          },
        },
      ],
    };
    world = await groomWorld({ ...groomReady(), groom_summary: summary });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, issue.number, '/groom');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(world, issue.number)).toContain('Waiting for the reports API redesign');
    expect(state(world, issue.number).groom).toMatchObject({ decision: 'blocked' });
    expect(world.gh.world.dispatches).toHaveLength(0);
  });

  it('a custom agent from the config joins the parallel set; its question carries its name', async () => {
    const ready = groomReady();
    world = await createWorld({
      config: [
        'grooming:',
        '  custom_agents:',
        '    - name: security',
        "      purpose: 'Security: untrusted input, secrets, permissions'",
        "      checks: ['Untrusted input validated', 'No secret in logs']",
      ].join('\n'),
      script: {
        ...ready,
        groom_security: {
          toolCalls: [
            {
              name: 'submit_verdict',
              input: {
                ready: false,
                confidence: 'high',
                assessment: 'describe() may receive untrusted report data.',
                questions: ['Can describe() receive non-numbers from user input?'],
              },
            },
          ],
        },
        groom_summary: {
          toolCalls: [
            {
              name: 'submit_summary',
              input: {
                summary: 'Ready except for input validation.',
                decision: 'needs_info',
                decision_rationale: 'Security (high confidence) needs to know whether inputs are trusted.',
                consolidated_questions: [
                  {
                    id: 'untrusted-input',
                    title: 'Can describe() receive non-numbers?',
                    description: 'If report data is user input, describe() must validate it.',
                    sources: ['security'],
                    priority: 'critical',
                  },
                ],
                answered_questions: [],
                blocker_reason: null,
              },
            },
          ],
        },
      },
    });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, issue.number, '/groom');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(callsOf(world, 'groom_security')).toBe(1);
    expect(Object.keys(state(world, issue.number).groom!.agents)).toContain('security');
    expect(bodyOf(world, issue.number)).toContain(
      '- [ ] **Can describe() receive non-numbers?** - If report data is user input, describe() must validate it. _(security)_ `id:untrusted-input`',
    );
    expect(run.summary).toMatch(/\| security \| not ready \| high \|/);
  });
});

describe('failures (seed: Error handling)', () => {
  it('a failing agent yields its diagnostic question; a summary answering junk yields the fallback summary', async () => {
    const ready = groomReady();
    world = await groomWorld({
      ...ready,
      groom_qa: { fault: 'junk' },
      groom_summary: { fault: 'junk' },
    });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, issue.number, '/groom');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const body = bodyOf(world, issue.number);
    expect(body).toMatch(/- \[ \] \*\*Agent qa failed to complete analysis\*\* - .*`id:fallback-0`/);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-groom']);
    expect(state(world, issue.number).groom).toMatchObject({ decision: 'needs_info' });
    expect(progress(world, issue.number)).toMatch(/summary agent failed/i);
  });

  describe.each(['anthropic', 'openai'] as const)(
    'every agent failing on the provider fails closed (%s)',
    (provider) => {
      const everyRole = (entry: Script[string]): Script =>
        Object.fromEntries(['pm', 'engineer', 'qa', 'research', 'summary'].map((r) => [`groom_${r}`, entry]));

      it('HTTP 500 from every call: hydraflow-hitl with the provider’s message, no question to the author', async () => {
        world = await groomWorld(everyRole({ fault: '500' }), provider);
        const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
        const run = await aliceComments(world, issue.number, '/groom');
        expect(labelsOf(world, issue.number), run.stdout + run.stderr).toEqual(['hydraflow-hitl']);
        expect(bodyOf(world, issue.number)).toBe(STATS_ISSUE.body);
        const said = progress(world, issue.number);
        expect(said).toContain(
          provider === 'anthropic'
            ? 'Internal server error'
            : 'The server had an error while processing your request. Sorry about that!',
        );
        expect(said).not.toMatch(/failed to complete analysis/);
        expect(state(world, issue.number).lastError?.phase).toBe('groom');
        expect(world.gh.world.dispatches).toHaveLength(0);
        // No summary was asked to decide on four failures.
        expect(callsOf(world, 'groom_summary')).toBe(0);
      });

      it('HTTP 401 (a key the provider refuses): hydraflow-hitl with the provider’s message', async () => {
        world = await createWorld({ provider, script: groomReady(), models: { apiKeys: ['sk-another-key'] } });
        world.gh.addUser({ login: 'alice', permission: 'write' });
        const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
        const run = await aliceComments(world, issue.number, '/groom');
        expect(labelsOf(world, issue.number), run.stdout + run.stderr).toEqual(['hydraflow-hitl']);
        expect(bodyOf(world, issue.number)).toBe(STATS_ISSUE.body);
        const said = progress(world, issue.number);
        expect(said).toContain(provider === 'anthropic' ? 'invalid x-api-key' : 'Incorrect API key provided');
        expect(said).not.toMatch(/failed to complete analysis/);
      });

      it('the agents answer but the summary’s calls fail with HTTP 500: hydraflow-hitl, not the fallback questions', async () => {
        world = await groomWorld({ ...groomModeQuestions(), groom_summary: { fault: '500' } }, provider);
        const issue = world.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
        const run = await aliceComments(world, issue.number, '/groom');
        expect(labelsOf(world, issue.number), run.stdout + run.stderr).toEqual(['hydraflow-hitl']);
        expect(bodyOf(world, issue.number)).toBe(MODE_ISSUE.body);
        expect(progress(world, issue.number)).toContain(
          provider === 'anthropic' ? 'Internal server error' : 'The server had an error',
        );
      });
    },
  );

  it('a spent budget stops the run visibly, and asks the author nothing', async () => {
    world = await createWorld({ script: groomReady(), config: 'budgets:\n  per_run:\n    usd: 0.004\n' });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, issue.number, '/groom');
    expect(run.exitCode).not.toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(world, issue.number)).toMatch(/Grooming stopped: its budget is spent/);
    expect(bodyOf(world, issue.number)).toBe(STATS_ISSUE.body);
  });

  it('a model out of credit stops the run visibly', async () => {
    world = await groomWorld({ ...groomReady(), groom_pm: { fault: 'credit' } });
    const issue = world.gh.world.issue({ ...STATS_ISSUE, author: 'alice' });
    const run = await aliceComments(world, issue.number, '/groom');
    expect(run.exitCode).not.toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(world, issue.number)).toMatch(/out of credit/i);
    expect(bodyOf(world, issue.number)).toBe(STATS_ISSUE.body);
  });
});

describe('an outsider’s complex issue (config outsider_issues: wait)', () => {
  it('waits in hydraflow-groom: the author’s edit or answer grooms nothing; a maintainer’s /groom grooms it', async () => {
    world = await groomWorld({ triage: triageComplex, ...groomReady() });
    const w = world;
    w.gh.addUser({ login: 'mallory', permission: 'read' });
    const issue = w.gh.world.issue({ ...STATS_ISSUE, author: 'mallory' });

    const triaged = await w.run('issues', 'opened', { issue: issue.number });
    expect(triaged.exitCode, triaged.stderr).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-groom']);
    expect(w.gh.world.dispatches).toEqual([]);
    expect(progress(w, issue.number)).toContain('waits for a maintainer');

    // The author edits the issue and comments: neither buys a grooming.
    const before = bodyOf(w, issue.number);
    w.gh.world.issues.get(issue.number)!.body = `${before}\n\nAlso the median, please, for lists of any size.`;
    await w.run('issues', 'edited', { issue: issue.number, sender: 'mallory', changes: { body: { from: before } } });
    const answer = w.gh.world.comment(issue.number, { author: 'mallory', body: 'mean of [] should be 0' });
    await w.run('issue_comment', 'created', { issue: issue.number, comment: answer.id, sender: 'mallory' });
    expect(w.models.calls.map((c) => c.role)).toEqual(['triage']);

    await aliceComments(w, issue.number, '/groom');
    expect(callsOf(w, 'groom_summary')).toBe(1);
    expect(labelsOf(w, issue.number)).toEqual(['groomed', 'hydraflow-plan']);
    expectNoViolations(w.gh);
  });
});

describe('who may re-run grooming by answering (issue #17 item 3: access, not author_association)', () => {
  it.each([
    ['an organization MEMBER without access to the repository', 'none', 'MEMBER'],
    ['a COLLABORATOR with the read role', 'read', 'COLLABORATOR'],
  ] as const)('%s: the answer grooms nothing; a writer’s answer does', async (_who, permission, association) => {
    world = await groomWorld({ triage: triageModeComplex, ...groomModeQuestions() });
    const w = world;
    w.gh.addUser({ login: 'olga', permission, association });
    const issue = w.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
    await w.run('issues', 'opened', { issue: issue.number });
    await w.runDispatch();
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-groom']);

    const calls = w.models.calls.length;
    const stranger = w.gh.world.comment(issue.number, { author: 'olga', body: TIES_ANSWER });
    const run = await w.run('issue_comment', 'created', { issue: issue.number, comment: stranger.id, sender: 'olga' });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(w.models.calls.length, 'no model call for a comment by someone without write access').toBe(calls);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-groom']);
    expect(w.gh.world.commentsOn(issue.number).filter((c) => c.user === BOT)).toHaveLength(1); // no reply either

    w.gh.addUser({ login: 'wendy', permission: 'write', association: 'COLLABORATOR' });
    const writer = w.gh.world.comment(issue.number, { author: 'wendy', body: TIES_ANSWER });
    await w.run('issue_comment', 'created', { issue: issue.number, comment: writer.id, sender: 'wendy' });
    expect(callsOf(w, 'groom_summary')).toBe(2);
    expectNoViolations(w.gh);
  });
});
