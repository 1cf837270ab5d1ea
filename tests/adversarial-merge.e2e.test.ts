/**
 * The adversarial layer at the end of an issue (issue #19; docs/adr/0018-adversarial-layer.md), through the built
 * dist: the merge gate carries the concerns still open over into the memory store as knowledge and records
 * ShippedWithKnownGap once however often the merge is run again, and closing an issue takes off a transient
 * `hydraflow-adv-*-running` label a dead run left. Assertions are on the emulated GitHub (the pull request, the issue's
 * labels, memory.md on hydraflow/memory, the requests made) and the signed state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stateOf } from './support/state';
import {
  emptyAdversarialState,
  emptyState,
  encodeStateBlock,
  fingerprint,
  parseMemoryFile,
  PROGRESS_MARKER,
  renderConcernsData,
  type AdversarialState,
  type Concern,
  type IssueState,
} from '@hydraflow/core';
import { MEMORY_BRANCH } from '@hydraflow/github';
import { BOT_LOGIN, createWorld, fakeSha, type Script, type World } from '@hydraflow/testkit';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const ON = 'adversarial:\n  enabled: true\n';
const MEMORY = 'memory:\n  enabled: true\n';
const AUTO = 'merge:\n  policy: auto\n';
const HEAD = fakeSha('v1');
const iso = (ms: number) => new Date(ms).toISOString();
/** HydraFlow's pull request opened with a push token: its own review can really APPROVE it (tests/review-diff). */
const PUSHER = 'hydraflow-pusher[bot]';
const FILE = {
  filename: 'src/export.js',
  status: 'added' as const,
  additions: 1,
  deletions: 0,
  patch: '@@ -0,0 +1,1 @@\n+export const exportUsers = () => backup().then(writeCsv);',
};
const approve = { json: { summary: 'Looks right.', findings: [] } };

const RISK: Concern = {
  voter: 'risk-skeptic',
  stage: 'plan-council',
  severity: 'high',
  blocking: true,
  text: 'The change rewrites stored user records with no backup or way back.',
  evidence: ['src/change.js rewrites records in place'],
  must_address_by: 'plan-review',
};
const TESTS: Concern = {
  voter: 'tester',
  stage: 'plan-council',
  severity: 'medium',
  blocking: false,
  text: 'No test covers an export of zero users.',
  evidence: [],
  must_address_by: 'plan-review',
};

/**
 * The issue at review with HydraFlow's pull request approved by its review (merge.policy auto merges it), and the plan
 * council's record: `open` concerns still pending (the first already carried on by code review), their text in the
 * stage's concerns comment. `review`: the pull request is not reviewed yet and the reviewer answers with this script;
 * `waitFor: 'code-review'`: every concern waits for code review (the plan reviewer carried them on).
 */
async function setup(config: string, open: Concern[], opts: { review?: Script; waitFor?: 'code-review' } = {}) {
  world = await createWorld({
    config: opts.review ? `${config}bot_logins: ['github-actions[bot]', '${PUSHER}']\n` : config,
    ...(opts.review ? { script: opts.review } : {}),
  });
  const w = world;
  w.gh.addUser({ login: 'lee', permission: 'write' });
  const issue = w.gh.world.issue({ title: 'Export users', body: 'Add a CSV export of the users.', author: 'lee' });
  w.gh.world.label('hydraflow-review');
  issue.labels.push('hydraflow-review');
  const branch = `hydraflow/issue-${issue.number}`;
  const pusher = w.gh.addApp({ login: PUSHER });
  const { pull } = w.gh.world.pull({
    title: 'Export users',
    body: `Fixes #${issue.number}`,
    author: opts.review ? PUSHER : BOT_LOGIN,
    head: branch,
    headSha: HEAD,
    ...(opts.review ? { draft: true, files: [FILE] } : {}),
  });
  const now = Date.now();
  let adversarial: AdversarialState | undefined;
  if (open.length > 0) {
    const { block, hash } = renderConcernsData(open);
    const comment = w.gh.world.comment(issue.number, {
      author: BOT_LOGIN,
      body: `<!-- hydraflow:adversarial-stage plan-council -->\n### Adversarial review: plan-council\n\n${block}`,
    });
    adversarial = {
      ...emptyAdversarialState(),
      stages: {
        'plan-council': {
          status: 'exhausted',
          next: null,
          retries: 2,
          agentRuns: 2,
          calls: 9,
          rounds: [],
          startedAt: iso(now - 600_000),
          endedAt: iso(now - 500_000),
          block: { commentId: comment.id, hash },
        },
      },
      pending: open.map((c, i) => ({
        fingerprint: fingerprint(c),
        stage: c.stage,
        voter: c.voter,
        severity: c.severity,
        blocking: c.blocking,
        must_address_by: i === 0 || opts.waitFor ? ('code-review' as const) : ('plan-review' as const),
        round: 3,
        ...(i === 0 && !opts.waitFor ? { carried: true } : {}),
      })),
    };
  }
  const state: IssueState = {
    ...emptyState(issue.number, w.gh.world.repoId),
    stage: 'review',
    implement: {
      branch,
      pull: pull.number,
      headSha: HEAD,
      attempts: 1,
      mode: 'build',
      fixAttempts: 0,
      at: iso(now - 60_000),
    },
    ...(opts.review
      ? {}
      : {
          review: {
            pull: pull.number,
            rounds: [
              { sha: HEAD, score: 9, findingKeys: [], criticalHighKeys: [], event: 'APPROVE', at: iso(now - 10_000) },
            ],
            raised: [],
            outcome: 'approve' as const,
          },
        }),
    ...(adversarial ? { adversarial } : {}),
  };
  w.gh.world.comment(issue.number, {
    author: BOT_LOGIN,
    body: `${PROGRESS_MARKER}\nreviewed\n${encodeStateBlock(state, { key: w.stateKey })}`,
  });
  const gate = () =>
    w.run('workflow_dispatch', undefined, {
      inputs: { issue: String(issue.number), phase: 'merge', actor: 'lee' },
      sender: 'lee',
    });
  // the review phase, as the implement phase's publish step dispatches it (HydraFlow's pull request, a push token)
  const review = () =>
    w.run(
      'workflow_dispatch',
      undefined,
      { inputs: { issue: String(issue.number), phase: 'review', actor: 'lee' } },
      { inputs: { 'push-token': pusher.token } },
    );
  return { w, n: issue.number, pull, gate, review };
}

function memoryFile(w: World): string | undefined {
  const head = w.gh.world.refs.get(`refs/heads/${MEMORY_BRANCH}`);
  return head ? w.gh.world.gitData().fileAt(head, 'memory.md')?.text : undefined;
}

/** The requests of a run, without the ids and numbers that differ between two worlds. */
const requestsSince = (w: World, from: number) =>
  w.gh.requests.slice(from).map((r) => `${r.method} ${r.operationId ?? r.path}`);

describe('carryover at the merge', () => {
  it('open concerns become knowledge once, however often the merge is run again; ShippedWithKnownGap is logged once', async () => {
    const { w, n, pull, gate } = await setup(`${ON}${MEMORY}${AUTO}`, [RISK, TESTS]);
    for (let i = 0; i < 3; i++) {
      const run = await gate();
      expect(run.exitCode, run.stdout).toBe(0);
    }
    expect(w.gh.world.pulls.get(pull.number)!.merged).toBe(true);
    expect(w.gh.world.issues.get(n)!.state).toBe('closed');

    expect(memoryFile(w), 'memory.md written').toBeDefined();
    const entries = parseMemoryFile(memoryFile(w)!).entries;
    expect(entries).toHaveLength(2);
    expect(entries.map((e) => e.kind)).toEqual(['knowledge', 'knowledge']);
    expect(entries.map((e) => e.source)).toEqual([pull.number, pull.number]);
    expect(entries.every((e) => e.uses === 1 && e.confidence === 0.3 && e.tags.includes(`pr-${pull.number}`))).toBe(
      true,
    );
    expect(entries.map((e) => e.text).join('\n')).toContain(RISK.text);
    expect(entries.map((e) => e.text).join('\n')).toContain(TESTS.text);
    // one commit on the memory branch: the re-runs never wrote again
    const head = w.gh.world.refs.get(`refs/heads/${MEMORY_BRANCH}`)!;
    expect(w.gh.world.gitData().commit(head)!.parents).toEqual([]);

    const adv = stateOf(w, n).adversarial!;
    expect(adv.log.filter((e) => e.type === 'ShippedWithKnownGap')).toEqual([
      expect.objectContaining({ pr: pull.number, n: 2 }),
    ]);
    expect(adv.pending).toEqual([]);
    expect(adv.shipped).toEqual([expect.objectContaining({ pr: pull.number, concerns: 2 })]);
    expect(adv.counters.shippedWithKnownGap).toBe(1);
  });

  it('a human’s /ship-it delivered three times: one merge, the entry written once, one ShippedWithKnownGap', async () => {
    const { w, n, pull } = await setup(`${ON}${MEMORY}`, [RISK]);
    const go = w.gh.world.comment(pull.number, { author: 'lee', body: '/ship-it' });
    for (let i = 0; i < 3; i++) {
      const run = await w.run('issue_comment', 'created', { issue: pull.number, comment: go.id, sender: 'lee' });
      expect(run.exitCode, run.stdout).toBe(0);
    }
    expect(w.gh.world.pulls.get(pull.number)!.merged).toBe(true);
    expect(w.gh.world.issues.get(n)!.state).toBe('closed');
    const file = memoryFile(w);
    expect(file, 'memory.md written').toBeDefined();
    expect(parseMemoryFile(file!).entries.map((e) => [e.text, e.uses])).toEqual([
      [expect.stringContaining(RISK.text), 1],
    ]);
    expect(stateOf(w, n).adversarial!.log.filter((e) => e.type === 'ShippedWithKnownGap')).toHaveLength(1);
  });

  it('a run that fails after the carryover, before the issue closes, is re-run: the entry is still written once', async () => {
    const { w, n, pull, gate } = await setup(`${ON}${MEMORY}${AUTO}`, [RISK]);
    w.gh.faults.failNext(1, 422, { methods: ['PATCH'], pathIncludes: `/issues/${n}` });
    await gate();
    expect(w.gh.world.pulls.get(pull.number)!.merged).toBe(true);
    expect(w.gh.world.issues.get(n)!.state).toBe('open');
    expect(memoryFile(w), 'memory.md written').toBeDefined();
    for (let i = 0; i < 2; i++) expect((await gate()).exitCode).toBe(0);
    expect(w.gh.world.issues.get(n)!.state).toBe('closed');
    const entries = parseMemoryFile(memoryFile(w)!).entries;
    // one use: the re-run found the merge carried over in the state and did not retain again
    expect(entries.map((e) => e.uses)).toEqual([1]);
    expect(entries.map((e) => e.text)).toEqual([expect.stringContaining(RISK.text)]);
    expect(stateOf(w, n).adversarial!.log.filter((e) => e.type === 'ShippedWithKnownGap')).toHaveLength(1);
  });

  it('a retain GitHub refuses does not stop the merge: nothing recorded, the concerns stay open, the comment says so', async () => {
    const { w, n, pull, gate } = await setup(`${ON}${MEMORY}${AUTO}`, [RISK]);
    w.gh.faults.failNext(1, 422, { methods: ['POST'], pathIncludes: '/git/trees' });
    const run = await gate();
    expect(run.exitCode, run.stdout).toBe(0);
    expect(w.gh.world.pulls.get(pull.number)!.merged).toBe(true);
    expect(w.gh.world.issues.get(n)!.state).toBe('closed');
    expect(w.gh.world.issues.get(n)!.labels).toEqual(['hydraflow-fixed']);
    expect(memoryFile(w)).toBeUndefined();
    const adv = stateOf(w, n).adversarial!;
    expect(adv.log).toEqual([]);
    expect(adv.pending.map((p) => p.fingerprint)).toEqual([fingerprint(RISK)]);
    const progress = w.gh.world.commentsOn(n).find((c) => c.body.includes('hydraflow:progress'))!.body;
    expect(progress).toContain('1 open concern not kept in memory');
  });

  it('no concern open, or the layer off: the merge makes exactly the requests it makes without the layer', async () => {
    const baseline = await setup(`${MEMORY}${AUTO}`, []);
    let from = baseline.w.gh.requests.length;
    expect((await baseline.gate()).exitCode).toBe(0);
    expect(baseline.w.gh.world.pulls.get(baseline.pull.number)!.merged).toBe(true);
    const expected = requestsSince(baseline.w, from);
    await baseline.w.close();
    world = undefined;

    for (const [config, open] of [
      [`${ON}${MEMORY}${AUTO}`, []],
      [`${MEMORY}${AUTO}`, [RISK]],
    ] as const) {
      const s = await setup(config, [...open]);
      from = s.w.gh.requests.length;
      expect((await s.gate()).exitCode).toBe(0);
      expect(s.w.gh.world.pulls.get(s.pull.number)!.merged).toBe(true);
      expect(requestsSince(s.w, from)).toEqual(expected);
      expect(memoryFile(s.w)).toBeUndefined();
      await s.w.close();
      world = undefined;
    }
  });
});

describe('closing an issue', () => {
  it('takes off a hydraflow-adv-*-running label a dead run left', async () => {
    const { w, n } = await setup(ON, []);
    w.gh.world.label('hydraflow-adv-plan-running');
    w.gh.world.issues.get(n)!.labels.push('hydraflow-adv-plan-running');
    w.gh.world.issues.get(n)!.state = 'closed';
    const run = await w.run('issues', 'closed', { issue: n, sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(w.gh.world.issues.get(n)!.labels).toEqual([]);
  });

  it('with none on, makes no request for it', async () => {
    const { w, n } = await setup(ON, []);
    w.gh.world.issues.get(n)!.state = 'closed';
    const from = w.gh.requests.length;
    const run = await w.run('issues', 'closed', { issue: n, sender: 'lee' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(w.gh.world.issues.get(n)!.labels).toEqual([]);
    expect(w.gh.requests.slice(from).filter((r) => r.path.includes('hydraflow-adv'))).toEqual([]);
  });
});

describe('code review answers the concerns waiting for it', () => {
  it('sees them with their ids; what it addresses is closed, what it leaves unanswered ships as a known gap at the merge', async () => {
    const answer = {
      json: {
        ...approve.json,
        concerns: [{ id: fingerprint(RISK), verdict: 'addressed', why: 'The export only reads; a backup runs first.' }],
      },
    };
    // both wait for code review: RISK forwarded and carried on by the plan reviewer, TESTS likewise
    const { w, n, pull, review } = await setup(`${ON}${MEMORY}${AUTO}`, [RISK, TESTS], {
      review: { review: [answer] },
      waitFor: 'code-review',
    });
    const run = await review();
    expect(run.exitCode, run.stdout).toBe(0);
    const calls = w.models.calls.filter((c) => c.role === 'review');
    expect(calls).toHaveLength(1);
    const shown = calls[0]!.request!.messages[0]!.content;
    expect(shown).toContain('## Concerns forwarded by the adversarial review');
    expect(shown).toContain(`id ${fingerprint(RISK)}`);
    expect(shown).toContain(TESTS.text);
    expect(w.gh.world.pulls.get(pull.number)!.merged).toBe(true);

    const adv = stateOf(w, n).adversarial!;
    expect(adv.resolutions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ fingerprint: fingerprint(RISK), how: 'addressed', by: 'code-review' }),
        expect.objectContaining({ fingerprint: fingerprint(TESTS), how: 'carried', by: 'code-review', to: 'merge' }),
      ]),
    );
    expect(adv.log.map((e) => e.type)).toEqual(['ConcernsAnswered', 'ShippedWithKnownGap']);
    expect(adv.pending).toEqual([]);
    // only the unaddressed concern became knowledge
    const entries = parseMemoryFile(memoryFile(w)!).entries;
    expect(entries.map((e) => e.text)).toEqual([expect.stringContaining(TESTS.text)]);
  });

  it('with the layer off, concerns in the state change nothing: the review request is the one without them', async () => {
    const plain = await setup(AUTO, [], { review: { review: [approve] } });
    expect((await plain.review()).exitCode).toBe(0);
    const expected = plain.w.models.calls.find((c) => c.role === 'review')!.request;
    await plain.w.close();
    world = undefined;

    const off = await setup(AUTO, [RISK], { review: { review: [approve] }, waitFor: 'code-review' });
    expect((await off.review()).exitCode).toBe(0);
    expect(off.w.models.calls.find((c) => c.role === 'review')!.request).toEqual(expected);
    expect(stateOf(off.w, off.n).adversarial!.log).toEqual([]);
  });
});
