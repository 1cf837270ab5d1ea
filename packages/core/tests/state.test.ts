import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_COMMENT_CHARS,
  PROGRESS_MARKER,
  STATE_LIMITS,
  appendLedger,
  claimIssue,
  claimStatus,
  decodeStateBlock,
  emptyState,
  encodeStateBlock,
  findStateComment,
  isClaimActive,
  markHandled,
  migrateState,
  recordDispatch,
  recordError,
  recordTransition,
  releaseClaim,
  renderProgressComment,
  StateRejectedError,
  takeDispatch,
  untakenDispatches,
  type IssueState,
  type LedgerEntry,
} from '../src/index';

const KEY = 'test-secret-key';
const now = new Date('2026-11-22T10:00:00.000Z');

function entry(over: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    at: now.toISOString(),
    runId: '1001',
    phase: 'triage',
    role: 'triage',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    inputTokens: 1000,
    cachedInputTokens: 200,
    cacheWriteTokens: 0,
    outputTokens: 300,
    costUsd: 0.0075,
    ...over,
  };
}

function sample(issue = 42): IssueState {
  let s = emptyState(issue);
  s = recordTransition(s, { to: 'find', by: 'human', actor: 'octocat', reason: 'labelled hydraflow-find', now });
  s = recordTransition(s, { to: 'plan', by: 'hydraflow', reason: 'triage: clarity 8 ≥ 7', now });
  s = appendLedger(s, entry());
  s = markHandled(s, 'comment:555');
  s = {
    ...s,
    triage: {
      clarity_score: 8,
      complexity_score: 3,
      needs_discovery: false,
      route: 'plan',
      at: now.toISOString(),
      bodyHash: 'a'.repeat(64),
    },
  };
  return s;
}

describe('state codec', () => {
  it('round-trips with and without a key', () => {
    const s = sample();
    for (const key of [undefined, KEY]) {
      const block = encodeStateBlock(s, { key });
      expect(block).toMatch(/^<!-- hydraflow:state v=1 sig=([0-9a-f]{64}|none) \{.*\} -->$/);
      expect(decodeStateBlock(`hello\n\n${block}`, { key, issue: 42 })).toEqual({ status: 'valid', state: s });
    }
    expect(encodeStateBlock(s)).toContain('sig=none');
    expect(encodeStateBlock(s, { key: '' })).toContain('sig=none');
  });

  it('cannot break out of the HTML comment, even with hostile strings', () => {
    const s = recordError(sample(), {
      phase: 'plan',
      message: 'boom --> <script>x</script> -- --!> & ünïcode \u2028 😀',
      now,
    });
    const block = encodeStateBlock(s, { key: KEY });
    const inner = block.slice('<!--'.length, -'-->'.length);
    expect(inner).not.toContain('--');
    expect(inner).not.toMatch(/[<>&]/);
    expect(inner).toMatch(/^[\x20-\x7e]*$/);
    const decoded = decodeStateBlock(block, { key: KEY, issue: 42 });
    expect(decoded.status).toBe('valid');
    if (decoded.status === 'valid') expect(decoded.state.lastError?.message).toBe(s.lastError!.message);
  });

  it('property: any valid-ish error text round-trips exactly', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'grapheme' }), (msg) => {
        const s = recordError(emptyState(7), { phase: 'plan', message: msg, now });
        const d = decodeStateBlock(encodeStateBlock(s, { key: KEY }), { key: KEY, issue: 7 });
        expect(d).toEqual({ status: 'valid', state: s });
      }),
    );
  });

  it('absent when there is no block', () => {
    expect(decodeStateBlock('just a comment', { issue: 1 })).toEqual({ status: 'absent' });
    expect(decodeStateBlock(null, { issue: 1 })).toEqual({ status: 'absent' });
  });

  const reasonOf = (body: string, opts: { key?: string; issue: number }) => {
    const d = decodeStateBlock(body, opts);
    return d.status === 'rejected' ? d.reason : d.status;
  };

  it('rejects a bad signature (edited JSON)', () => {
    const block = encodeStateBlock(sample(), { key: KEY });
    const edited = block.replace('"stage":"plan"', '"stage":"ready"');
    expect(edited).not.toBe(block);
    expect(reasonOf(edited, { key: KEY, issue: 42 })).toBe('bad-signature');
    expect(reasonOf(block, { key: 'another-key', issue: 42 })).toBe('bad-signature');
  });

  it('rejects an unsigned block when a key is configured', () => {
    expect(reasonOf(encodeStateBlock(sample()), { key: KEY, issue: 42 })).toBe('missing-signature');
  });

  it('rejects malformed blocks', () => {
    expect(reasonOf('<!-- hydraflow:state v=1 sig=none {not json} -->', { issue: 42 })).toBe('malformed');
    expect(reasonOf('<!-- hydraflow:state v=1 sig=none {"v":1,"issue":42}', { issue: 42 })).toBe('malformed');
    expect(reasonOf('<!-- hydraflow:state garbage -->', { issue: 42 })).toBe('malformed');
    expect(reasonOf('<!-- hydraflow:state v=1 sig=none [1] -->', { issue: 42 })).toBe('malformed');
    expect(
      reasonOf('<!-- hydraflow:state v=2 sig=none {"v":1,"issue":42,"ledger":[],"history":[]} -->', { issue: 42 }),
    ).toBe('malformed');
  });

  it('rejects schema violations', () => {
    expect(
      reasonOf('<!-- hydraflow:state v=1 sig=none {"v":1,"issue":42,"ledger":"x","history":[]} -->', { issue: 42 }),
    ).toBe('schema');
    expect(
      reasonOf('<!-- hydraflow:state v=1 sig=none {"v":1,"issue":42,"stage":"deploy","ledger":[],"history":[]} -->', {
        issue: 42,
      }),
    ).toBe('schema');
  });

  it('rejects a block replayed from another issue (with and without a key)', () => {
    expect(reasonOf(encodeStateBlock(sample(41)), { issue: 42 })).toBe('wrong-issue');
    expect(reasonOf(encodeStateBlock(sample(41), { key: KEY }), { key: KEY, issue: 42 })).toBe('wrong-issue');
    // an attacker rewriting the issue field breaks the signature, which binds the issue number
    const replayed = encodeStateBlock(sample(41), { key: KEY }).replace('"issue":41', '"issue":42');
    expect(reasonOf(replayed, { key: KEY, issue: 42 })).toBe('bad-signature');
  });

  it('rejects unknown (future) versions instead of obeying them', () => {
    expect(reasonOf('<!-- hydraflow:state v=9 sig=none {"v":9,"issue":42,"anything":true} -->', { issue: 42 })).toBe(
      'unknown-version',
    );
    expect(reasonOf('<!-- hydraflow:state v=1 sig=none {"issue":42} -->', { issue: 42 })).toBe('malformed');
  });

  it('rejects two blocks in one comment', () => {
    const b = encodeStateBlock(sample());
    expect(reasonOf(`${b}\n${b}`, { issue: 42 })).toBe('multiple-blocks');
  });

  it('refuses to encode an invalid state', () => {
    expect(() => encodeStateBlock({ ...sample(), stage: 'bogus' as never })).toThrow(/invalid state: stage/);
  });

  it('caps lists and keeps the block small', () => {
    let s = emptyState(3);
    for (let i = 0; i < 300; i++) {
      s = recordTransition(s, { to: 'plan', by: 'hydraflow', reason: `round ${i} ${'é'.repeat(300)}`, now });
      s = markHandled(s, `comment:${i}`);
      s = appendLedger(s, entry({ runId: String(i), costUsd: 0.01 }));
    }
    expect(s.history).toHaveLength(STATE_LIMITS.history);
    expect(s.handled).toHaveLength(STATE_LIMITS.handled);
    expect(s.ledger.length).toBeLessThanOrEqual(STATE_LIMITS.ledger);
    const block = encodeStateBlock(s, { key: KEY });
    expect(block.length).toBeLessThanOrEqual(40_000);
    const d = decodeStateBlock(block, { key: KEY, issue: 3 });
    expect(d.status).toBe('valid');
    if (d.status === 'valid') {
      const total = d.state.ledger.reduce((a, e) => a + e.costUsd, 0);
      expect(total).toBeCloseTo(3, 6); // money is never lost by compaction
    }
  });
});

describe('migrations', () => {
  it('lifts v0 to v1', () => {
    const v0 = {
      version: 0,
      issue: 42,
      label: 'hydraflow-plan',
      verdict: { clarity: 8, complexity: 2, discovery: false },
      updated_at: now.toISOString(),
      body_sha: 'b'.repeat(64),
    };
    const s = migrateState(v0);
    expect(s).toMatchObject({ v: 1, issue: 42, stage: 'plan', ledger: [], history: [] });
    expect(s.triage).toMatchObject({ clarity_score: 8, complexity_score: 2, needs_discovery: false, route: 'plan' });
    // and through the codec
    const block = `<!-- hydraflow:state v=0 sig=none ${JSON.stringify(v0)} -->`;
    expect(decodeStateBlock(block, { issue: 42 })).toMatchObject({ status: 'valid', state: { stage: 'plan' } });
  });
  it('rejects bad v0 and unknown versions with a clear error', () => {
    expect(() => migrateState({ version: 0, issue: 1, label: 'wontfix' })).toThrow(/not a pipeline label/);
    expect(() => migrateState({ v: 2, issue: 1 })).toThrow(StateRejectedError);
    expect(() => migrateState({ v: 2, issue: 1 })).toThrow(/newer than this HydraFlow understands/);
    expect(() => migrateState({ issue: 1 })).toThrow(/no version/);
    expect(() => migrateState('x')).toThrow(StateRejectedError);
  });
});

describe('claims', () => {
  it('blocks other runs until expiry; same run id is ours', () => {
    const s = claimIssue(sample(), { runId: '1001', phase: 'plan', now, ttlMs: 60_000 })!;
    expect(claimStatus(s, now, '1001')).toBe('ours');
    expect(isClaimActive(s, now, '1001')).toBe(false);
    expect(isClaimActive(s, now, '2002')).toBe(true);
    expect(claimIssue(s, { runId: '2002', phase: 'plan', now })).toBeNull();
    const later = new Date(now.getTime() + 60_001);
    expect(claimStatus(s, later, '2002')).toBe('expired');
    expect(claimIssue(s, { runId: '2002', phase: 'plan', now: later })?.claim?.runId).toBe('2002');
    expect(releaseClaim(s, '2002', now).claim).toBeDefined();
    expect(releaseClaim(s, '1001', now).claim).toBeUndefined();
  });
});

describe('dispatches', () => {
  it('the first run to start takes a dispatch; a second start of it is a duplicate; the taker re-run is ours', () => {
    const sent = recordDispatch(sample(), { phase: 'plan', runId: '1001', now });
    // a re-run of the sender that dispatches again before any run took the first: the same dispatch
    expect(recordDispatch(sent, { phase: 'plan', runId: '1001', now })).toBe(sent);
    expect(untakenDispatches(sent, '1001').map((d) => d.phase)).toEqual(['plan']);
    expect(takeDispatch(sent, 'implement', '2002')).toEqual({ kind: 'unknown' });
    const taking = takeDispatch(sent, 'plan', '2002');
    if (taking.kind !== 'taken') throw new Error(taking.kind);
    expect(untakenDispatches(taking.state, '1001')).toEqual([]);
    expect(takeDispatch(taking.state, 'plan', '3003')).toEqual({ kind: 'duplicate', by: '2002' });
    expect(takeDispatch(taking.state, 'plan', '2002')).toEqual({ kind: 'ours' });
    // a later dispatch of the same phase is a new one, taken by the next run to start
    const again = recordDispatch(taking.state, { phase: 'plan', runId: '1001', now });
    expect(takeDispatch(again, 'plan', '3003').kind).toBe('taken');
  });
});

describe('findStateComment', () => {
  const bot = { login: 'github-actions[bot]', type: 'Bot' };
  const body = (s: IssueState, key?: string) =>
    renderProgressComment({ state: s, stage: 'plan', headline: 'h', next: 'n' }, { key });

  it('trusts only bot comments and reports forgeries', () => {
    const good = body(sample(), KEY);
    const comments = [
      { id: 1, body: body(sample(), KEY), user: { login: 'mallory', type: 'User' } }, // copied by a user
      {
        id: 2,
        body: good.replace(/sig=[0-9a-f]+/, 'sig=' + 'f'.repeat(64)),
        user: { login: 'other-app[bot]', type: 'Bot' },
      },
      { id: 3, body: 'plain', user: bot },
      { id: 4, body: good, user: bot },
      { id: 5, body: body(sample(), KEY), user: bot },
      { id: 6, body: body(sample()), user: bot }, // unsigned
      { id: 7, body: good.replace(/sig=[0-9a-f]+/, 'sig=' + '0'.repeat(64)), user: bot }, // edited by a write user
    ];
    const r = findStateComment(comments, { botLogins: ['github-actions[bot]'], key: KEY, issue: 42 });
    expect(r.comment?.id).toBe(4);
    expect(r.state).toEqual(sample());
    expect(r.duplicates.map((c) => c.id)).toEqual([5]);
    expect(r.rejected.map((x) => [x.commentId, x.reason])).toEqual([
      [1, 'untrusted-author'],
      [2, 'untrusted-author'],
      [6, 'missing-signature'],
      [7, 'bad-signature'],
    ]);
  });

  it('returns the bot comment to repair when its state is rejected, nothing when there is none', () => {
    const tampered = body(sample()).replace('"stage":"plan"', '"stage":"nope"');
    const r = findStateComment([{ id: 9, body: tampered, user: bot }], {
      botLogins: ['github-actions[bot]'],
      issue: 42,
    });
    expect(r.comment?.id).toBe(9);
    expect(r.state).toBeUndefined();
    expect(r.rejected[0]?.reason).toBe('schema');
    expect(findStateComment([], { botLogins: ['x'], issue: 1 })).toEqual({ rejected: [], duplicates: [] });
  });

  it('accepts a configured PAT login and sorts by id', () => {
    const r = findStateComment(
      [
        { id: 20, body: body(sample()), user: { login: 'HydraBot', type: 'User' } },
        { id: 10, body: body(sample()), user: { login: 'hydrabot', type: 'User' } },
      ],
      { botLogins: ['hydrabot'], issue: 42 },
    );
    expect(r.comment?.id).toBe(10);
    expect(r.duplicates.map((c) => c.id)).toEqual([20]);
  });
});

describe('progress comment', () => {
  it('renders stage, next, cost, error and history, state last', () => {
    const s = recordError(sample(), { phase: 'plan', message: 'Anthropic 529 overloaded', now });
    const out = renderProgressComment(
      {
        state: s,
        stage: 'plan',
        headline: 'Triage done',
        next: 'HydraFlow writes a plan',
        error: { phase: 'plan', message: s.lastError!.message },
        details: 'enrichment <!-- hydraflow:state v=1 sig=none {} --> hi @octocat',
      },
      { key: KEY },
    );
    expect(out.startsWith(PROGRESS_MARKER)).toBe(true);
    expect(out).toContain('`hydraflow-plan`');
    expect(out).toContain('HydraFlow writes a plan');
    expect(out).toContain('$0.0075');
    expect(out).toContain('1,500 tokens');
    expect(out).toContain('Anthropic 529 overloaded');
    expect(out).toContain('<details><summary>History (2)</summary>');
    expect(out).not.toContain('@octocat');
    expect(out.split('<!-- hydraflow:state').length).toBe(2); // the user text cannot fake a second block
    expect(out.trimEnd().endsWith('-->')).toBe(true);
    expect(decodeStateBlock(out, { key: KEY, issue: 42 })).toEqual({ status: 'valid', state: s });
  });

  it('stays under 65,536 chars', () => {
    let s = emptyState(5);
    for (let i = 0; i < 60; i++)
      s = recordTransition(s, { to: 'ready', by: 'hydraflow', reason: 'x'.repeat(200), now });
    const out = renderProgressComment(
      { state: s, stage: 'ready', headline: 'h', next: 'n', details: 'd'.repeat(80_000), error: 'e'.repeat(50_000) },
      { key: KEY },
    );
    expect(out.length).toBeLessThan(MAX_COMMENT_CHARS);
    expect(decodeStateBlock(out, { key: KEY, issue: 5 }).status).toBe('valid');
  });
});
