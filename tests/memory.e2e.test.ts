/**
 * The memory store (issue #18 item 4, docs/adr/0015-memory-store.md): memory.md on the branch hydraflow/memory,
 * written with a compare-and-swap. The store's adapter and the run's Memory against the GitHub emulator over HTTP (no
 * phase of this build retains yet: shape will); recall into the discover prompt through the built dist. Assertions are
 * on the emulated branch and the model server's record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { vague } from './support/briefs';
import { parseMemoryFile, type HydraflowConfig, type MemoryDraft } from '@hydraflow/core';
import { createRestClient, MEMORY_BRANCH, MemoryBranch } from '@hydraflow/github';
import {
  createWorld,
  expectNoViolations,
  startGitHubEmulator,
  type GitHubEmulator,
  type ParsedRequest,
  type ScriptEntry,
  type World,
} from '@hydraflow/testkit';
import { Memory } from '../src/memory/memory';

const repo = { owner: 'acme', repo: 'widgets' };
const REF = `refs/heads/${MEMORY_BRANCH}`;
const config = { memory: { enabled: true, max_entries: 200, max_age_days: 90 } } as Pick<HydraflowConfig, 'memory'>;

let gh: GitHubEmulator | undefined;
let world: World | undefined;
afterEach(async () => {
  await gh?.close();
  await world?.close();
  gh = undefined;
  world = undefined;
});

/** One run's memory: its own client and warnings, as a workflow run builds it (src/app.ts). */
function run(emulator: GitHubEmulator, now = '2026-11-27T10:00:00Z') {
  const warnings: string[] = [];
  const memory = new Memory(
    new MemoryBranch(createRestClient({ token: emulator.botToken, baseUrl: emulator.url }), repo),
    {
      config,
      now: () => new Date(now),
      warn: (m) => warnings.push(m),
    },
  );
  return { memory, warnings };
}

const pref = (text: string, source: number, tags: string[] = []): MemoryDraft => ({
  kind: 'preference',
  text,
  source,
  tags,
  confidence: 0.7,
});

/** memory.md at the branch's head. */
function file(emulator: GitHubEmulator): string {
  const head = emulator.world.refs.get(REF);
  expect(head, 'the memory branch exists').toBeDefined();
  return emulator.world.gitData().fileAt(head!, 'memory.md')!.text;
}

/** A human's commit on the branch, as GitHub's web editor makes one (a commit on top of the head). */
async function humanEdit(emulator: GitHubEmulator, edit: (text: string) => string): Promise<void> {
  const token = emulator.addUser({ login: 'lee', permission: 'write' }).token;
  const api = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${emulator.url}/repos/acme/widgets${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return (await res.json()) as { sha: string };
  };
  const head = emulator.world.refs.get(REF)!;
  const tree = await api('POST', '/git/trees', {
    base_tree: emulator.world.gitData().commit(head)!.tree,
    tree: [{ path: 'memory.md', mode: '100644', type: 'blob', content: edit(file(emulator)) }],
  });
  const commit = await api('POST', '/git/commits', { message: 'Edit memory.md', tree: tree.sha, parents: [head] });
  await api('PATCH', `/git/refs/heads/${MEMORY_BRANCH}`, { sha: commit.sha });
}

const requestsSince = (emulator: GitHubEmulator, from: number) =>
  emulator.requests.slice(from).map((r) => `${r.method} ${r.operationId ?? r.path}`);

describe('the memory store on hydraflow/memory', () => {
  it('the first write creates the branch as a commit of its own; a second run merges into it, one row per memory', async () => {
    gh = await startGitHubEmulator(repo);
    const first = run(gh);
    expect(await first.memory.recall('onboarding')).toEqual({ recalled: [], block: '' });
    let from = gh.requests.length;
    expect(
      await first.memory.retain(
        [pref('Keep onboarding changes to the smallest MVP', 12, ['scope_narrow'])],
        'memory: #12',
      ),
    ).toMatchObject({ ok: true, added: 1, attempts: 1 });
    // a retain that creates the branch: the read, a tree, a commit, the ref
    expect(requestsSince(gh, from)).toEqual([
      'POST graphql/query repository',
      'POST git/create-tree',
      'POST git/create-commit',
      'POST git/create-ref',
    ]);
    const root = gh.world.refs.get(REF)!;
    expect(gh.world.gitData().commit(root)!.parents).toEqual([]);

    const second = run(gh, '2026-12-02T09:00:00Z');
    from = gh.requests.length;
    const outcome = await second.memory.retain(
      [
        pref('keep onboarding changes to the smallest MVP.', 20, ['positive']),
        pref('Prefer a CLI flag over a config key', 20),
      ],
      'memory: #20',
    );
    expect(outcome).toMatchObject({ ok: true, added: 1, confirmed: 1 });
    // a retain once the branch exists: one read, one compare-and-swap write
    expect(requestsSince(gh, from)).toEqual([
      'POST graphql/query repository',
      'POST graphql/mutation createCommitOnBranch',
    ]);
    expect(parseMemoryFile(file(gh)).entries).toEqual([
      expect.objectContaining({
        source: 12,
        uses: 2,
        created: '2026-11-27',
        updated: '2026-12-02',
        tags: ['scope_narrow', 'positive'],
      }),
      expect.objectContaining({ text: 'Prefer a CLI flag over a config key', source: 20, uses: 1 }),
    ]);
    expect(gh.world.gitData().commit(gh.world.refs.get(REF)!)!.parents).toEqual([root]);
    // recall: one request
    from = gh.requests.length;
    const recalled = await second.memory.recall('Improve onboarding for new users');
    expect(recalled.recalled.map((r) => r.entry.source)).toEqual([12]);
    expect(requestsSince(gh, from)).toEqual(['POST graphql/query repository']);
    expect(first.warnings.concat(second.warnings)).toEqual([]);
    expectNoViolations(gh);
  });

  it('a write that loses the race reads again and merges: neither run’s memory is lost (update and creation)', async () => {
    gh = await startGitHubEmulator(repo);
    const a = run(gh);
    const b = run(gh);
    // creation race: b creates the branch between a's read and a's create
    gh.faults.beforeNext({ pathIncludes: 'git/trees' }, () =>
      b.memory.retain([pref('Prefer small pull requests', 1)], 'memory: #1'),
    );
    expect(await a.memory.retain([pref('Write docs before code', 2)], 'memory: #2')).toMatchObject({
      ok: true,
      attempts: 2,
    });
    expect(parseMemoryFile(file(gh)).entries.map((e) => e.text)).toEqual([
      'Prefer small pull requests',
      'Write docs before code',
    ]);
    // update race: b writes between a's read and a's compare-and-swap
    gh.faults.beforeNext({ bodyIncludes: 'createCommitOnBranch' }, () =>
      b.memory.retain([pref('Prefer small pull requests', 3), pref('Use British spelling', 3)], 'memory: #3'),
    );
    expect(await a.memory.retain([pref('Name releases by date', 4)], 'memory: #4')).toMatchObject({
      ok: true,
      attempts: 2,
    });
    expect(parseMemoryFile(file(gh)).entries.map((e) => [e.text, e.uses])).toEqual([
      ['Prefer small pull requests', 2],
      ['Write docs before code', 1],
      ['Use British spelling', 1],
      ['Name releases by date', 1],
    ]);
    expect(a.warnings.concat(b.warnings)).toEqual([]);
  });

  it('a human’s edit on the branch survives the next write; a malformed row is one warning, ignored and kept', async () => {
    gh = await startGitHubEmulator(repo);
    const hf = run(gh);
    await hf.memory.retain(
      [pref('Keep onboarding changes to the smallest MVP', 12), pref('Prefer tabs', 12)],
      'memory: #12',
    );
    const malformed = '| Dark mode first | preference | | #9 | last week | 2026-11-20 | 1 | 0.5 | |';
    await humanEdit(gh, (text) =>
      text
        .replace('Keep onboarding changes to the smallest MVP', 'Onboarding: ship the MVP, never a guided tour')
        .replace(/\n\| Prefer tabs [^\n]*/, '') // deleted by the human
        .concat(
          `| Our users are mostly on Windows | preference | | - | 2026-11-26 | 2026-11-26 | 1 | 1 | |\n${malformed}\n`,
        ),
    );
    const next = run(gh, '2026-11-28T10:00:00Z');
    const outcome = await next.memory.retain(
      [pref('Keep onboarding changes to the smallest MVP', 30), pref('Ask before adding dependencies', 30)],
      'memory: #30',
    );
    expect(outcome).toMatchObject({ ok: true, added: 1, confirmed: 1 });
    expect(next.warnings).toEqual([
      expect.stringMatching(
        /^Memory: memory\.md line \d+: Created "last week" is not a date \(YYYY-MM-DD\); ignored and kept as written$/,
      ),
    ]);
    const after = file(gh);
    expect(after).toContain(`${malformed}\n`);
    expect(after).not.toContain('Prefer tabs');
    expect(parseMemoryFile(after).entries.map((e) => [e.text, e.uses, e.source])).toEqual([
      ['Onboarding: ship the MVP, never a guided tour', 2, 12],
      ['Our users are mostly on Windows', 1, null],
      ['Ask before adding dependencies', 1, 30],
    ]);
    // the broken row is recalled by nobody, the rest is
    expect((await next.memory.recall('dark mode and windows users')).recalled.map((r) => r.entry.text)).toEqual([
      'Our users are mostly on Windows',
    ]);
  });

  it('GitHub failing is a warning, never an error: the run goes on and the memory is as it was', async () => {
    gh = await startGitHubEmulator(repo);
    const hf = run(gh);
    await hf.memory.retain([pref('Prefer small pull requests', 1)], 'memory: #1');
    const before = file(gh);
    // the compare-and-swap answered with an error GitHub does not retry
    gh.faults.beforeNext({ bodyIncludes: 'createCommitOnBranch' }, () =>
      gh!.faults.failNext(1, 422, { pathIncludes: 'graphql' }),
    );
    expect(await hf.memory.retain([pref('Write docs first', 2)], 'memory: #2')).toMatchObject({ ok: false });
    // GitHub down: every attempt of the client answered 503
    gh.faults.failNext(10, 503, { pathIncludes: 'graphql' });
    expect(await hf.memory.recall('small pull requests')).toEqual({ recalled: [], block: '' });
    expect(hf.warnings).toEqual([
      expect.stringMatching(/^Memory not retained: /),
      expect.stringMatching(/^Memory not recalled: /),
    ]);
    gh.faults.reset();
    expect(file(gh)).toBe(before);
  });
});

const brief = {
  summary: 'New users install the CLI and do not know which command to run first, so many give up early.',
  existing_solutions: [{ name: 'The README quick start', what: 'Lists three commands.', gap: 'Out of date.' }],
  user_needs: ['See the next useful command right after installing.'],
  opportunities: ['Print a short getting-started hint on the first run of the CLI.'],
  open_questions: ['Should we add an interactive tour, or is a first-run hint enough?'],
  sources: [{ title: 'README quick start section', where: 'README.md' }],
};
const submit = (): ScriptEntry => ({ toolCalls: [{ name: 'submit_brief', input: brief }] });

describe('recall into the discover prompt (through dist)', () => {
  it('the research request carries the memory relevant to the issue and not an irrelevant one; a broken row is one warning', async () => {
    world = await createWorld({ script: { triage: { json: vague }, discover: (_r: ParsedRequest) => submit() } });
    // memory from earlier issues, as HydraFlow wrote it
    const earlier = new Memory(
      new MemoryBranch(createRestClient({ token: world.gh.botToken, baseUrl: world.gh.url }), repo),
      {
        config,
        now: () => new Date(world!.gh.world.clock()),
        warn: () => {},
      },
    );
    await earlier.retain(
      [
        pref('Onboarding work: ship the smallest MVP first, no interactive tour', 3, ['scope_narrow']),
        pref('Billing pages must show invoices in euros', 4),
      ],
      'memory: earlier issues',
    );
    await humanEdit(
      world.gh,
      (t) => `${t}| Broken onboarding row | preference | | #5 | soon | 2026-11-20 | 1 | 0.5 | |\n`,
    );
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const issue = world.gh.world.issue({
      title: 'Make onboarding better',
      body: 'New users of the CLI get lost after installing it. Should we add an interactive tour?',
      author: 'lee',
    });
    const discover = await world.run('issues', 'opened', { issue: issue.number }); // triage, then discovery
    expect(discover.exitCode, discover.stdout).toBe(0);
    const request = world.models.calls.find((c) => c.role === 'discover')!.request!;
    expect(request.system).toContain('Remembered from earlier issues in this repository (1)');
    expect(request.system).toContain('Onboarding work: ship the smallest MVP first, no interactive tour (from #3');
    expect(request.system).not.toContain('invoices');
    expect(request.system).not.toContain('Broken onboarding row');
    expect(discover.stdout).toMatch(/::warning::Memory: memory\.md line \d+: Created "soon" is not a date/);
    expect(world.gh.world.issues.get(issue.number)!.labels).toContain('hydraflow-shape');
  });
});

describe('shape retains what a human preferred; a later issue on the topic recalls it (through dist)', () => {
  const direction = (letter: 'A' | 'B' | 'C', name: string, size: 'S' | 'M' | 'L') => ({
    letter,
    name,
    scope: `${name}: what is in and what is out.`,
    tradeoffs: `${name}: what it gains and what it costs.`,
    size,
    defer: false,
  });
  const FIRST = [
    direction('A', 'First-Run Hint', 'S'),
    direction('B', 'Quick & Focused', 'M'),
    direction('C', 'Guided Tour', 'L'),
  ];
  const REVISED = [
    direction('A', 'First-Run Hint', 'S'),
    direction('B', 'Hint Plus Docs', 'M'),
    direction('C', 'Guided Tour', 'L'),
  ];
  const shaper = (request: ParsedRequest): ScriptEntry =>
    request.messages[0]!.content.includes('# Conversation so far')
      ? { json: { reply: 'A cheaper mix of hint and docs.', directions: REVISED } }
      : { json: { reply: '', directions: FIRST } };

  async function toShape(w: World, title: string, body: string): Promise<number> {
    const issue = w.gh.world.issue({ title, body, author: 'lee' });
    expect((await w.run('issues', 'opened', { issue: issue.number })).exitCode).toBe(0);
    expect((await w.runDispatch()).exitCode).toBe(0); // discover
    const shape = await w.runDispatch();
    expect(shape.exitCode, shape.stdout).toBe(0);
    return issue.number;
  }
  async function reply(w: World, n: number, body: string) {
    const c = w.gh.world.comment(n, { author: 'lee', body });
    const run = await w.run('issue_comment', 'created', { issue: n, comment: c.id, sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
  }

  it('"just the MVP" on one onboarding issue is in the next onboarding issue’s shape request; an unrelated memory is not', async () => {
    world = await createWorld({
      script: {
        triage: { json: vague },
        discover: { toolCalls: [{ name: 'submit_brief', input: brief }] },
        shape: shaper,
      },
    });
    world.gh.addUser({ login: 'lee', permission: 'write' });
    const seed = new Memory(
      new MemoryBranch(createRestClient({ token: world.gh.botToken, baseUrl: world.gh.url }), repo),
      {
        config,
        now: () => new Date(world!.gh.world.clock()),
        warn: () => {},
      },
    );
    await seed.retain([pref('Billing pages must show invoices in euros', 4)], 'memory: earlier issue');

    const first = await toShape(world, 'Make onboarding better', 'New users of the CLI get lost after installing it.');
    await reply(world, first, 'B or C? Just the MVP please, a tour sounds expensive.');
    await reply(world, first, 'ok, hint plus docs');
    expect(world.gh.world.issues.get(first)!.labels).toContain('hydraflow-plan');
    const retained = parseMemoryFile(file(world.gh)).entries.filter((e) => e.source === first);
    expect(retained.length).toBeGreaterThan(0);
    expect(retained.some((e) => e.text.includes('Just the MVP please') && e.tags.includes('scope_narrow'))).toBe(true);
    expect(retained.every((e) => e.tags.includes('onboarding'))).toBe(true);

    const second = await toShape(world, 'Onboarding for plugin authors', 'Plugin authors do not know where to start.');
    const shapeRequest = world.models.calls.filter((c) => c.role === 'shape').at(-1)!.request!.messages[0]!.content;
    expect(shapeRequest).toContain('Just the MVP please');
    expect(shapeRequest).toContain(`(from #${first})`);
    expect(shapeRequest).not.toContain('invoices');
    expect(second).toBeGreaterThan(first);
  });
});
