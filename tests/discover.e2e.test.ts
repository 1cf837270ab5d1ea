/**
 * Discover (issue #18, item 2; docs/adr/0012-product-track.md): a vague issue goes from triage to a structured brief
 * posted as one comment, kept in signed state by hash, and on to hydraflow-shape; a brief with gaps is redone once
 * with the gaps named, then goes to a human. Through the built dist on real webhook payloads (discovery goes on in the
 * issues.opened run that triaged the issue);
 * the assertions are on the world: labels, comments, the signed state and the model server's record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { vague } from './support/briefs';
import { BRIEF_MARKER, briefHash, costOf, decodeStateBlock, type DiscoverBrief } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, type ParsedRequest, type ScriptEntry, type World } from '@hydraflow/testkit';

const ISSUE = {
  title: 'Make onboarding better',
  body: 'New users of the CLI get lost after installing it. Should we add an interactive tour?',
};

const complete: DiscoverBrief = {
  summary: 'New users install the CLI and do not know which command to run first, so many give up early.',
  existing_solutions: [
    {
      name: 'The README quick start',
      what: 'Lists three commands to run after installing.',
      gap: 'Nobody reads it from the terminal; it is out of date.',
    },
  ],
  user_needs: ['See the next useful command right after installing.'],
  opportunities: ['Print a short getting-started hint on the first run of the CLI.'],
  open_questions: ['Should we add an interactive tour, or is a first-run hint enough?'],
  sources: [{ title: 'README quick start section', where: 'README.md' }],
};

const gappy: DiscoverBrief = { ...complete, opportunities: [], open_questions: ['Colours?'] };

const submit = (brief: DiscoverBrief): ScriptEntry => ({ toolCalls: [{ name: 'submit_brief', input: brief }] });

/** Looks at the issues first, then submits: the first brief, or the redone one when the task names gaps. */
function researcher(first: DiscoverBrief, redone: DiscoverBrief) {
  return (request: ParsedRequest): ScriptEntry => {
    if (request.toolResults.length === 0)
      return { toolCalls: [{ name: 'search_issues', input: { query: 'onboarding' } }] };
    const redo = request.messages.some((m) => m.content.includes('It falls short'));
    return submit(redo ? redone : first);
  };
}

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const labelsOf = (w: World, n: number) => [...w.gh.world.issues.get(n)!.labels].sort();
const ours = (w: World, n: number) => w.gh.world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
const briefs = (w: World, n: number) => ours(w, n).filter((c) => c.body.startsWith(BRIEF_MARKER));
const progress = (w: World, n: number) => ours(w, n).find((c) => c.body.includes('hydraflow:progress'))!.body;
const stateOf = (w: World, n: number) => {
  const decoded = decodeStateBlock(progress(w, n), { key: w.stateKey, issue: n });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
};
const roles = (w: World) => w.models.calls.map((c) => c.role);

/**
 * Opens the vague issue: its issues.opened run triages it and goes on with discovery in the same run (phases.ts:
 * discover is not a run of its own). The run is given a fixed id so that a test can re-run it as GitHub would.
 */
async function throughDiscovery(w: World) {
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({ ...ISSUE, author: 'lee' });
  const discover = await w.run('issues', 'opened', { issue: issue.number }, { runId: OPENED_RUN });
  expect(w.gh.world.dispatches.filter((d) => d.inputs.phase === 'discover')).toEqual([]);
  return { issue, discover };
}
const OPENED_RUN = '7300';

describe('discover', () => {
  it('posts one structured brief, keeps its hash in signed state and moves the issue to shape; a re-run posts nothing', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: researcher(complete, complete) } });
    const { issue, discover } = await throughDiscovery(world);
    expect(discover.exitCode, discover.stdout).toBe(0);
    expect(discover.outputs.stage).toBe('shape');
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape']);
    const [brief] = briefs(world, issue.number);
    expect(briefs(world, issue.number)).toHaveLength(1);
    for (const section of ['Existing solutions', 'User needs', 'Opportunities', 'Open questions', 'Sources'])
      expect(brief!.body).toContain(`### ${section}`);
    expect(brief!.body).toContain('Print a short getting-started hint');
    expect(stateOf(world, issue.number).discover).toMatchObject({
      commentId: brief!.id,
      hash: briefHash(complete),
      attempts: 1,
    });
    expect(progress(world, issue.number)).toMatch(/Discovery brief posted/);
    // triage went on with discovery in its own run; shape starts in a run of its own (tests/shape.e2e.test.ts)
    expect(world.gh.world.dispatches.at(-1)?.inputs).toMatchObject({ phase: 'shape', issue: String(issue.number) });
    // read-only: the agent was offered no tool that writes or runs anything (web_search runs on Anthropic's side)
    const offered = world.models.calls.find((c) => c.role === 'discover')!.request!;
    expect([...offered.tools].sort()).toEqual([
      'list_files',
      'read_file',
      'search',
      'search_issues',
      'submit_brief',
      'web_search',
    ]);
    expect(offered.serverTools).toEqual(['web_search_20250305']);
    expect(roles(world)).toEqual(['triage', 'discover', 'discover']);

    // the run re-run (its second attempt) and the event redelivered post nothing and call no model
    const before = world.gh.world.commentsOn(issue.number).map((c) => [c.id, c.body]);
    const rerun = await world.run('issues', 'opened', { issue: issue.number }, { runId: OPENED_RUN, runAttempt: 2 });
    const redelivered = await world.run('issues', 'opened', { issue: issue.number });
    for (const r of [rerun, redelivered]) expect(r.exitCode, r.stdout).toBe(0);
    expect(world.gh.world.commentsOn(issue.number).map((c) => [c.id, c.body])).toEqual(before);
    expect(roles(world)).toEqual(['triage', 'discover', 'discover']);
  });

  it('GitHub failing the brief’s post sends the issue to a human with the error; /retry discovers again, without a second triage', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: researcher(complete, complete) } });
    const w = world;
    // GitHub answers 500 to every attempt to post the brief, after triage published its verdict in the same run
    w.gh.faults.beforeNext({ methods: ['POST'], pathIncludes: '/comments', bodyIncludes: 'hydraflow:brief' }, () =>
      w.gh.faults.failNext(4, 500, { methods: ['POST'], pathIncludes: '/issues/1/comments' }),
    );
    const { issue, discover: failed } = await throughDiscovery(w);
    expect(failed.exitCode).toBe(1);
    w.gh.faults.reset();
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(w, issue.number)).toMatch(/discover phase failed[\s\S]*500/);
    expect(briefs(w, issue.number)).toEqual([]);

    const retry = w.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const resumed = await w.run('issue_comment', 'created', { issue: issue.number, comment: retry.id });
    expect(resumed.exitCode, resumed.stdout).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-shape']);
    expect(briefs(w, issue.number)).toHaveLength(1);
    expect(roles(w).filter((r) => r === 'triage')).toHaveLength(1);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['shape']);
  });

  it('an outsider’s vague issue is triaged and waits: no research is paid for until a maintainer’s /retry', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: researcher(complete, complete) } });
    const w = world;
    w.gh.addUser({ login: 'lee', permission: 'write' });
    w.gh.addUser({ login: 'mallory', permission: 'read' });
    const issue = w.gh.world.issue({ ...ISSUE, author: 'mallory' });
    const opened = await w.run('issues', 'opened', { issue: issue.number });
    expect(opened.exitCode, opened.stdout).toBe(0);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-discover']);
    expect(roles(w)).toEqual(['triage']); // the run did not go on into discovery
    expect(w.gh.world.dispatches).toEqual([]);
    expect(briefs(w, issue.number)).toEqual([]);

    const retry = w.gh.world.comment(issue.number, { author: 'lee', body: '/retry' });
    const resumed = await w.run('issue_comment', 'created', { issue: issue.number, comment: retry.id });
    expect(resumed.exitCode, resumed.stdout).toBe(0);
    expect(roles(w)).toEqual(['triage', 'discover', 'discover']);
    expect(briefs(w, issue.number)).toHaveLength(1);
    expect(labelsOf(w, issue.number)).toEqual(['hydraflow-shape']);
    expect(w.gh.world.dispatches.map((d) => d.inputs.phase)).toEqual(['shape']);
  });

  it('redoes a brief with gaps once, naming them; the second brief stands', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: researcher(gappy, complete) } });
    const { issue, discover } = await throughDiscovery(world);
    expect(discover.exitCode, discover.stdout).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-shape']);
    const redo = world.models.calls.filter((c) => c.role === 'discover').at(-1)!.request!;
    const task = redo.messages[0]!.content;
    expect(task).toContain('opportunities is empty');
    expect(task).toContain('Should we add an interactive tour?');
    expect(briefs(world, issue.number)).toHaveLength(1);
    expect(stateOf(world, issue.number).discover).toMatchObject({ hash: briefHash(complete), attempts: 2 });
  });

  it('a brief still short after its redo goes to a human, with the gaps named', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: researcher(gappy, gappy) } });
    const { issue, discover } = await throughDiscovery(world);
    expect(discover.exitCode, discover.stdout).toBe(0);
    expect(labelsOf(world, issue.number)).toEqual(['hydraflow-hitl']);
    expect(progress(world, issue.number)).toMatch(/still incomplete after one redo/);
    expect(progress(world, issue.number)).toContain('opportunities is empty');
    expect(briefs(world, issue.number)).toHaveLength(1);
    expect(roles(world).filter((r) => r === 'discover')).toHaveLength(4);
  });
});

describe('discover: the provider’s server-side web search', () => {
  const found = { title: 'CLI onboarding patterns', url: 'https://example.com/cli-onboarding' };
  const cited = { ...complete, sources: [...complete.sources, { title: found.title, where: found.url }] };
  /** One turn: a search on Anthropic's side, then the brief citing it. */
  const searcher: ScriptEntry = {
    webSearches: [{ query: 'CLI onboarding first run', results: [found] }],
    toolCalls: [{ name: 'submit_brief', input: cited }],
  };
  const serverTool = (request: ParsedRequest) =>
    (request.body.tools as { type?: string; max_uses?: number }[]).find((t) => t.type === 'web_search_20250305');

  it('Anthropic: the request offers its web search tool; the results and their price reach the brief and the ledger', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: searcher } });
    const { issue, discover } = await throughDiscovery(world);
    expect(discover.exitCode, discover.stdout).toBe(0);
    const call = world.models.calls.find((c) => c.role === 'discover')!;
    expect(serverTool(call.request!)).toMatchObject({ name: 'web_search', max_uses: 5 });
    expect(call.usage).toMatchObject({ server_tool_use: { web_search_requests: 1 } });
    expect(briefs(world, issue.number)[0]!.body).toContain('example.com/cli-onboarding');
    // the tokens at the model's price, plus one search at $10 per 1,000
    const entry = stateOf(world, issue.number).ledger.find((e) => e.role === 'discover')!;
    const tokens = costOf(entry, entry.model).usd;
    expect(entry.costUsd).toBeCloseTo(tokens + 0.01, 6);
  });

  it('is off when the config says so, and never offered on the OpenAI wire; a model that searches anyway is refused', async () => {
    world = await createWorld({
      config: 'discover:\n  web_search: false\n',
      script: { triage: { json: vague }, discover: researcher(complete, complete) },
    });
    const { discover } = await throughDiscovery(world);
    expect(discover.exitCode, discover.stdout).toBe(0);
    const offered = world.models.calls.filter((c) => c.role === 'discover').map((c) => c.request!.serverTools);
    expect(offered.flat()).toEqual([]);
    expect(world.models.calls.find((c) => c.role === 'discover')!.request!.messages[0]!.content).toContain(
      'no web access',
    );
    await world.close();

    world = await createWorld({ provider: 'openai', script: { triage: { json: vague }, discover: searcher } });
    const openai = await throughDiscovery(world);
    const call = world.models.calls.find((c) => c.role === 'discover')!;
    expect(call.request!.serverTools).toEqual([]);
    expect(call.status).toBe(400); // the scripted search needs a tool the request does not offer
    expect(labelsOf(world, openai.issue.number)).toEqual(['hydraflow-hitl']);
  });
});
