import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  blockingFingerprints,
  concernSchema,
  distinctConcerns,
  fingerprint,
  normalizeConcernText,
  type Concern,
} from '../src/index';

const concern = (text: string, evidence: string[] = [], over: Partial<Concern> = {}): Concern => ({
  voter: 'risk-skeptic',
  stage: 'plan-council',
  severity: 'high',
  blocking: true,
  text,
  evidence,
  must_address_by: null,
  ...over,
});

const BASE = concern('The migration drops the users.email index before the backfill finishes', [
  'plan step: drop index',
  'src/db/migrate.ts',
]);

describe('Concern.fingerprint: structurally equal concerns', () => {
  it('is 16 hex characters and stable', () => {
    expect(fingerprint(BASE)).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint(BASE)).toBe(fingerprint({ ...BASE }));
  });

  it.each([
    ['case', 'THE MIGRATION drops the Users.Email index before the backfill finishes'],
    ['whitespace', '  The   migration drops\nthe users.email index\tbefore the backfill finishes  '],
    ['punctuation', 'The migration drops the users.email index, before the backfill finishes!'],
    ['quotes', 'The migration drops the “users.email” index before the `backfill` finishes'],
    ['numbering', '1. The migration drops the users.email index before the backfill finishes'],
    ['numbering (paren)', '(a) The migration drops the users.email index before the backfill finishes'],
    ['a bullet', '- The migration drops the users.email index before the backfill finishes'],
    ['a line reference', 'The migration drops the users.email index (line 42) before the backfill finishes'],
    ['unicode width', '\uff34\uff48\uff45 migration drops the users.email index before the backfill finishes'],
  ])('ignores %s', (_what, text) => {
    expect(fingerprint({ ...BASE, text })).toBe(fingerprint(BASE));
  });

  it('ignores the order, repeats, empty items and numbering of the evidence, and line numbers in paths', () => {
    const reordered = {
      ...BASE,
      evidence: ['src/db/migrate.ts:88', '2. Plan step: drop index', '', 'src/db/migrate.ts'],
    };
    expect(fingerprint(reordered)).toBe(fingerprint(BASE));
  });

  it('ignores the voter, the stage, the severity and blocking', () => {
    const other = { ...BASE, voter: 'builder', stage: 'spec-judge', severity: 'critical', blocking: false } as const;
    expect(fingerprint(other)).toBe(fingerprint(BASE));
  });

  it('different substance gives a different fingerprint', () => {
    const variants = [
      { ...BASE, text: 'The migration drops the users.name index before the backfill finishes' },
      { ...BASE, text: 'The migration keeps the users.email index before the backfill finishes' },
      { ...BASE, text: 'The backfill finishes before the migration drops the users.email index' },
      { ...BASE, evidence: ['plan step: drop index'] },
      { ...BASE, evidence: [...BASE.evidence, 'src/db/backfill.ts'] },
      { ...BASE, text: 'A 30-second timeout is too short for the backfill' },
      { ...BASE, text: 'A 300-second timeout is too short for the backfill' },
      { ...BASE, text: 'Retry 2.5 times' },
      { ...BASE, text: 'Retry 25 times' },
    ];
    const prints = new Set([fingerprint(BASE), ...variants.map(fingerprint)]);
    expect(prints.size).toBe(variants.length + 1);
  });

  it('keeps numbers that are substance: "30-second" and "2.5" are not list markers', () => {
    expect(normalizeConcernText('30-second timeout')).toBe('30 second timeout');
    expect(normalizeConcernText('2.5 s is too long')).toBe('2 5 s is too long');
    expect(normalizeConcernText('2. s is too long')).toBe('s is too long');
  });

  const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
  const words = fc.array(word, { minLength: 1, maxLength: 8 });
  const noisy = (ws: string[], seed: number) => {
    const seps = [' ', '  ', '\n', ', ', ' - ', '; '];
    const cased = ws.map((w, i) => ((seed >> i) & 1 ? w.toUpperCase() : w));
    const body = cased.map((w, i) => (i === 0 ? w : `${seps[(seed + i) % seps.length]}${w}`)).join('');
    const quoted = seed % 3 === 0 ? `"${body}"` : seed % 3 === 1 ? `“${body}”.` : `${body}!`;
    return seed % 2 === 0 ? `${(seed % 9) + 1}. ${quoted}` : `- ${quoted}`;
  };

  it('property: noise (case, spacing, punctuation, quotes, numbering, evidence order) never changes it', () => {
    fc.assert(
      fc.property(words, fc.array(words, { maxLength: 4 }), fc.nat(1_000), (text, evidence, seed) => {
        const clean = concern(
          text.join(' '),
          evidence.map((e) => e.join(' ')),
        );
        const shuffled = [...evidence].reverse().map((e, i) => noisy(e, seed + i));
        expect(fingerprint(concern(noisy(text, seed), shuffled))).toBe(fingerprint(clean));
      }),
    );
  });

  it('property: concerns whose normalized words differ have different fingerprints', () => {
    fc.assert(
      fc.property(words, words, (a, b) => {
        // ("l5" is a line reference and normalizes away: that is noise by definition)
        fc.pre(normalizeConcernText(a.join(' ')) !== normalizeConcernText(b.join(' ')));
        expect(fingerprint(concern(a.join(' ')))).not.toBe(fingerprint(concern(b.join(' '))));
      }),
    );
  });
});

describe('concerns as a set', () => {
  it('distinctConcerns keeps one per fingerprint, the most severe copy, blocking if any copy blocks', () => {
    const a = concern('X is unhandled', [], { severity: 'medium', blocking: false, voter: 'builder' });
    const b = concern('x is UNHANDLED.', [], { severity: 'high', blocking: false, voter: 'tester' });
    const c = concern('X is unhandled', [], { severity: 'medium', blocking: true, voter: 'risk-skeptic' });
    const d = distinctConcerns([a, b, c, concern('Y', [], { severity: 'low', blocking: false })]);
    expect(d).toHaveLength(2);
    expect(d[0]).toMatchObject({ severity: 'high', blocking: true, voter: 'tester' });
  });

  it('blockingFingerprints is the sorted set of the blocking ones', () => {
    const set = blockingFingerprints([
      BASE,
      { ...BASE, text: BASE.text.toUpperCase() },
      concern('Y', [], { blocking: false }),
    ]);
    expect(set).toEqual([fingerprint(BASE)]);
  });

  it('the schema refuses an unknown voter or stage and over-long text', () => {
    expect(concernSchema.safeParse(BASE).success).toBe(true);
    expect(concernSchema.safeParse({ ...BASE, voter: 'nobody' }).success).toBe(false);
    expect(concernSchema.safeParse({ ...BASE, stage: 'review' }).success).toBe(false);
    expect(concernSchema.safeParse({ ...BASE, text: 'x'.repeat(501) }).success).toBe(false);
  });
});
