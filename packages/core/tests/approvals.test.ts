import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { approversOfHead, headSeenAt, type ReviewGo, type ShipItGo } from '../src/index';

const H1 = '1'.repeat(40);
const H2 = '2'.repeat(40);
const round = (sha: string, at: string) => ({ sha, score: 9, findingKeys: [], criticalHighKeys: [], at });

describe('approvals bound to the head', () => {
  it('the head was seen when HydraFlow pushed it, else at its first review round on it', () => {
    const review = {
      pull: 2,
      rounds: [round(H1, '2026-01-01T00:00:10.000Z'), round(H2, '2026-01-01T00:05:00.000Z')],
      raised: [],
    };
    const implement = {
      branch: 'hydraflow/issue-1',
      headSha: H2,
      pushedAt: '2026-01-01T00:04:00.000Z',
      attempts: 2,
      mode: 'refine' as const,
      fixAttempts: 0,
      at: '2026-01-01T00:00:00.000Z',
    };
    expect(headSeenAt({ implement, review }, H2)).toBe('2026-01-01T00:04:00.000Z');
    expect(headSeenAt({ implement: { ...implement, pushedAt: undefined }, review }, H2)).toBe(
      '2026-01-01T00:05:00.000Z',
    );
    expect(headSeenAt({ implement, review }, H1)).toBe('2026-01-01T00:00:10.000Z');
    expect(headSeenAt({ implement, review }, '3'.repeat(40))).toBeUndefined();
  });

  it('a review counts only on its commit and only as the reviewer’s latest decision; /ship-it only after the head was seen', () => {
    const reviews: ReviewGo[] = [
      { login: 'lee', state: 'APPROVED', commitId: H1 },
      { login: 'kim', state: 'APPROVED', commitId: H2 },
      { login: 'max', state: 'APPROVED', commitId: H2 },
      { login: 'max', state: 'CHANGES_REQUESTED', commitId: H2 },
      { login: 'kim', state: 'COMMENTED', commitId: H2 },
    ];
    const shipIts: ShipItGo[] = [
      { login: 'ann', createdAt: '2026-01-01T00:04:59Z' },
      { login: 'bob', createdAt: '2026-01-01T00:05:00Z' },
      { login: 'cid', createdAt: '2026-01-01T00:05:01Z' },
    ];
    // seen at 00:05:00.400: a comment of that very second may be older than the head
    expect(approversOfHead({ head: H2, seenAt: '2026-01-01T00:05:00.400Z', reviews, shipIts })).toEqual(['kim', 'cid']);
    expect(approversOfHead({ head: H2, seenAt: undefined, reviews, shipIts })).toEqual(['kim']);
  });

  it('property: nobody counts whose every go was given on another head or before the head was seen', () => {
    const sha = fc.constantFrom(H1, H2);
    const second = fc.integer({ min: 0, max: 600 });
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString().replace('.000Z', 'Z');
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            login: fc.constantFrom('a', 'b', 'c'),
            state: fc.constantFrom('APPROVED', 'CHANGES_REQUESTED', 'COMMENTED'),
            commitId: sha,
          }),
        ),
        fc.array(fc.record({ login: fc.constantFrom('a', 'b', 'c'), s: second })),
        second,
        (reviews, comments, seen) => {
          const shipIts = comments.map((c) => ({ login: c.login, createdAt: at(c.s) }));
          const approvers = approversOfHead({ head: H2, seenAt: at(seen), reviews, shipIts });
          for (const login of approvers) {
            const onHead = reviews.filter((r) => r.login === login && r.state !== 'COMMENTED').at(-1);
            const approvedHead = onHead?.state === 'APPROVED' && onHead.commitId === H2;
            const saidAfter = comments.some((c) => c.login === login && c.s > seen);
            expect(approvedHead || saidAfter).toBe(true);
          }
        },
      ),
    );
  });
});
