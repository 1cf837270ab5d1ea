import { readFileSync } from 'node:fs';
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
  stateKeyId,
  type IssueState,
  type LedgerEntry,
} from '../src/index';

const KEY = 'test-secret-key';
const REPO = 1296269;
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
  let s = emptyState(issue, REPO);
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
      expect(block).toMatch(/^<!-- hydraflow:state v=2 (kid=[0-9a-f]{12} sig=[0-9a-f]{64}|sig=none) \{.*\} -->$/);
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
        const s = recordError(emptyState(7, REPO), { phase: 'plan', message: msg, now });
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
    // the key id is public (it is in every block): naming the right one does not make a signature
    const forged = encodeStateBlock(sample(), { key: 'another-key' }).replace(
      /kid=[0-9a-f]{12}/,
      `kid=${stateKeyId(KEY)}`,
    );
    expect(reasonOf(forged, { key: KEY, issue: 42 })).toBe('bad-signature');
    expect(reasonOf(block, { key: 'another-key', issue: 42 })).toBe('unknown-key');
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
    let s = emptyState(3, REPO);
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

describe('what the signature binds (issue #17, item 6)', () => {
  const reasonOf = (body: string, opts: { key?: string; previousKey?: string; issue: number; repo?: number }) => {
    const d = decodeStateBlock(body, opts);
    return d.status === 'rejected' ? d.reason : d.status;
  };

  it('the repository: a block from another repository sharing the key is refused, by id or by signature', () => {
    const other = encodeStateBlock({ ...sample(), repo: 777 }, { key: KEY });
    expect(reasonOf(other, { key: KEY, issue: 42, repo: REPO })).toBe('wrong-repository');
    expect(reasonOf(other.replace('"repo":777', `"repo":${REPO}`), { key: KEY, issue: 42, repo: REPO })).toBe(
      'bad-signature',
    );
    expect(reasonOf(other, { key: KEY, issue: 42, repo: 777 })).toBe('valid');
  });

  it('the sequence number: a block whose seq was raised by hand does not verify', () => {
    const block = encodeStateBlock({ ...sample(), seq: 3 }, { key: KEY });
    expect(reasonOf(block.replace('"seq":3', '"seq":30'), { key: KEY, issue: 42, repo: REPO })).toBe('bad-signature');
  });

  it('key rotation: the previous key verifies its blocks; the current one signs; an unknown key is named', () => {
    const old = encodeStateBlock(sample(), { key: 'old-key' });
    expect(old).toContain(`kid=${stateKeyId('old-key')}`);
    expect(reasonOf(old, { key: KEY, previousKey: 'old-key', issue: 42, repo: REPO })).toBe('valid');
    const d = decodeStateBlock(old, { key: KEY, previousKey: 'old-key', issue: 42, repo: REPO });
    const resigned = encodeStateBlock(d.status === 'valid' ? d.state : sample(), { key: KEY, previousKey: 'old-key' });
    expect(resigned).toContain(`kid=${stateKeyId(KEY)}`);
    expect(reasonOf(resigned, { key: KEY, issue: 42, repo: REPO })).toBe('valid');
    expect(reasonOf(old, { key: KEY, issue: 42, repo: REPO })).toBe('unknown-key');
    const refused = decodeStateBlock(old, { key: KEY, issue: 42 });
    expect(refused.status === 'rejected' && refused.detail).toMatch(/HYDRAFLOW_STATE_KEY_PREVIOUS/);
    expect(stateKeyId(KEY)).toMatch(/^[0-9a-f]{12}$/);
    expect(stateKeyId(KEY)).not.toBe(stateKeyId('old-key'));
  });

  it('a block written by the first release (v1) is read: signed with the current or the previous key', () => {
    const v1 = readFileSync(new URL('./fixtures/state-v1.txt', import.meta.url), 'utf8');
    expect(v1).toContain('hydraflow:state v=1 sig=');
    for (const keys of [{ key: 'release-1-key' }, { key: 'the-new-key', previousKey: 'release-1-key' }]) {
      const d = decodeStateBlock(v1, { ...keys, issue: 7, repo: REPO });
      expect(d.status).toBe('valid');
      if (d.status === 'valid') {
        expect(d.state).toMatchObject({ v: 2, repo: REPO, issue: 7, seq: 0, stage: 'plan' });
        expect(d.state.ledger.map((e) => e.costUsd)).toEqual([0.0039]);
      }
    }
    expect(reasonOf(v1, { key: 'the-new-key', issue: 7, repo: REPO })).toBe('bad-signature');
    expect(
      reasonOf(v1.replace('"stage":"plan"', '"stage":"ready"'), { key: 'release-1-key', issue: 7, repo: REPO }),
    ).toBe('bad-signature');
  });

  it('findStateComment reads the newest of HydraFlow’s valid blocks (highest sequence)', () => {
    const bot = { login: 'github-actions[bot]', type: 'Bot' };
    const at = (seq: number) => encodeStateBlock({ ...sample(), seq }, { key: KEY });
    const r = findStateComment(
      [
        { id: 1, body: at(2), user: bot },
        { id: 2, body: at(5), user: bot },
        { id: 3, body: at(4), user: bot },
      ],
      { botLogins: ['github-actions[bot]'], key: KEY, issue: 42, repo: REPO },
    );
    expect([r.comment?.id, r.state?.seq, r.duplicates.map((c) => c.id)]).toEqual([2, 5, [1, 3]]);
  });
});

describe('migrations', () => {
  it('lifts v0 to the current version', () => {
    const v0 = {
      version: 0,
      issue: 42,
      label: 'hydraflow-plan',
      verdict: { clarity: 8, complexity: 2, discovery: false },
      updated_at: now.toISOString(),
      body_sha: 'b'.repeat(64),
    };
    const s = migrateState(v0, { repo: REPO });
    expect(s).toMatchObject({ v: 2, repo: REPO, issue: 42, seq: 0, stage: 'plan', ledger: [], history: [] });
    expect(s.triage).toMatchObject({ clarity_score: 8, complexity_score: 2, needs_discovery: false, route: 'plan' });
    // and through the codec
    const block = `<!-- hydraflow:state v=0 sig=none ${JSON.stringify(v0)} -->`;
    expect(decodeStateBlock(block, { issue: 42, repo: REPO })).toMatchObject({
      status: 'valid',
      state: { stage: 'plan' },
    });
  });
  it('rejects bad v0 and unknown versions with a clear error', () => {
    expect(() => migrateState({ version: 0, issue: 1, label: 'wontfix' })).toThrow(/not a pipeline label/);
    expect(() => migrateState({ v: 3, issue: 1 })).toThrow(StateRejectedError);
    expect(() => migrateState({ v: 3, issue: 1 })).toThrow(/newer than this HydraFlow understands/);
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

  it('a release names the 👀 its run still holds; the next claim supersedes it; another run cannot set it', () => {
    const s = claimIssue(sample(), { runId: '1001', phase: 'plan', now, ttlMs: 60_000 })!;
    const released = releaseClaim(s, '1001', now, 250_000_007);
    expect(released.released).toBe(250_000_007);
    // it round-trips through the signed block (the schema knows the field)
    const decoded = decodeStateBlock(encodeStateBlock(released, { key: 'k' }), { key: 'k', issue: released.issue });
    expect(decoded).toEqual({ status: 'valid', state: released });
    expect(releaseClaim(s, '1001', now).released).toBeUndefined();
    expect(releaseClaim(s, '2002', now, 250_000_008)).toEqual(s); // another run's active claim: nothing changes
    expect(claimIssue(released, { runId: '3003', phase: 'review', now })!.released).toBeUndefined();
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

  it('a send of a phase whose dispatch still waits for its run is that dispatch again, now the later sender’s', () => {
    // triage handed discover on; its run starts late, and the hourly sweep dispatches discover again meanwhile
    const sent = recordDispatch(sample(), { phase: 'discover', runId: '1001', now });
    const later = new Date(now.getTime() + 31 * 60_000);
    const resent = recordDispatch(sent, { phase: 'discover', runId: '5005', now: later });
    expect(resent.dispatches).toEqual([{ phase: 'discover', runId: '5005', at: later.toISOString() }]);
    expect(untakenDispatches(resent, '5005').map((d) => d.phase)).toEqual(['discover']);
    expect(untakenDispatches(resent, '1001')).toEqual([]);
    // whichever of the two runs starts first takes it; the other does nothing
    const taking = takeDispatch(resent, 'discover', '2002');
    if (taking.kind !== 'taken') throw new Error(taking.kind);
    expect(takeDispatch(taking.state, 'discover', '3003')).toEqual({ kind: 'duplicate', by: '2002' });
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
    expect(r.refused?.reason).toBe('schema');
    expect(r.rejected).toEqual([]);
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
    let s = emptyState(5, REPO);
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
