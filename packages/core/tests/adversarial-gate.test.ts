import { describe, expect, it } from 'vitest';
import { decideComplexity, gateEvent, reduceAdversarialEvents, type GateSignals } from '../src/index';

const clearSmall: GateSignals = {
  labels: ['hydraflow-plan'],
  triage: {
    clarity_score: 9,
    complexity_score: 1,
    needs_discovery: false,
    route: 'plan',
    reasons: ['A typo in the README.'],
  },
  plan: { files: [{ path: 'README.md', action: 'modify' }], risks: [] },
};
const codes = (...args: Parameters<typeof decideComplexity>) => decideComplexity(...args).reasons.map((r) => r.code);

describe('ComplexityGate', () => {
  it('a clear, simple, small change is trivial, with the signals that earned it', () => {
    const r = decideComplexity(clearSmall);
    expect(r).toMatchObject({ decision: 'trivial', source: 'signals' });
    expect(r.reasons.map((x) => x.code)).toEqual(['clear', 'simple', 'small-change']);
    expect(r.reasons[0]!.detail).toBe('clarity 9/10');
  });

  it.each<[string, GateSignals, string]>([
    ['no triage verdict', { labels: [] }, 'no-triage'],
    ['product intent', { ...clearSmall, triage: { ...clearSmall.triage!, needs_discovery: true } }, 'product-track'],
    ['a chosen shape direction', { ...clearSmall, productTrack: true }, 'product-track'],
    ['low clarity', { ...clearSmall, triage: { ...clearSmall.triage!, clarity_score: 5 } }, 'unclear'],
    [
      'complexity at the threshold',
      { ...clearSmall, triage: { ...clearSmall.triage!, complexity_score: 4 } },
      'complex',
    ],
    [
      'risk words in triage’s reasons',
      { ...clearSmall, triage: { ...clearSmall.triage!, reasons: ['Touches the auth middleware.'] } },
      'triage-risk-words',
    ],
    [
      'many files',
      {
        ...clearSmall,
        plan: {
          files: ['a', 'b', 'c', 'd'].map((p) => ({ path: `src/${p}.ts`, action: 'modify' as const })),
          risks: [],
        },
      },
      'many-files',
    ],
    [
      'a deleted source file',
      { ...clearSmall, plan: { files: [{ path: 'src/old.ts', action: 'delete' }], risks: [] } },
      'deletes-code',
    ],
    ['several risks', { ...clearSmall, plan: { files: clearSmall.plan!.files, risks: [{}, {}] } }, 'risks'],
    ['a CI workflow', { ...clearSmall, paths: ['.github/workflows/ci.yml'] }, 'sensitive-path'],
    [
      'a lockfile',
      { ...clearSmall, plan: { files: [{ path: 'pnpm-lock.yaml', action: 'modify' }], risks: [] } },
      'sensitive-path',
    ],
    ['a migration', { ...clearSmall, paths: ['db/migrations/0042_users.sql'] }, 'sensitive-path'],
    ['auth code', { ...clearSmall, paths: ['src/auth/session.ts'] }, 'sensitive-path'],
    ['a schema', { ...clearSmall, paths: ['packages/core/src/state/schema.ts'] }, 'sensitive-path'],
  ])('%s makes it load-bearing', (_what, signals, code) => {
    const r = decideComplexity(signals);
    expect(r.decision).toBe('load_bearing');
    expect(r.reasons.map((x) => x.code)).toContain(code);
  });

  it('deleting a doc file alone is still trivial', () => {
    expect(
      decideComplexity({ ...clearSmall, plan: { files: [{ path: 'docs/old.md', action: 'delete' }], risks: [] } })
        .decision,
    ).toBe('trivial');
  });

  it('names every load-bearing signal, and the path that tripped it', () => {
    const r = decideComplexity({
      ...clearSmall,
      triage: { ...clearSmall.triage!, complexity_score: 8, reasons: ['A breaking change of the public API.'] },
      paths: ['.github/workflows/release.yml'],
    });
    expect(r.reasons.map((x) => x.code)).toEqual(['complex', 'triage-risk-words', 'sensitive-path']);
    expect(r.reasons[2]!.detail).toBe('.github/workflows/release.yml (CI workflow or action)');
  });

  it('thresholds are options', () => {
    const s = { ...clearSmall, triage: { ...clearSmall.triage!, complexity_score: 5 } };
    expect(decideComplexity(s).decision).toBe('load_bearing');
    expect(decideComplexity(s, { complexityThreshold: 6 }).decision).toBe('trivial');
  });

  it('a human label overrides: force → load-bearing, skip → trivial, both → force', () => {
    expect(decideComplexity({ ...clearSmall, labels: ['hydraflow-adv-force'] })).toMatchObject({
      decision: 'load_bearing',
      source: 'label',
    });
    const heavy = { ...clearSmall, triage: { ...clearSmall.triage!, complexity_score: 9 } };
    expect(decideComplexity({ ...heavy, labels: ['hydraflow-adv-skip'] })).toMatchObject({
      decision: 'trivial',
      source: 'label',
    });
    const both = decideComplexity({ ...clearSmall, labels: ['hydraflow-adv-skip', 'hydraflow-adv-force'] });
    expect(both).toMatchObject({ decision: 'load_bearing', source: 'label' });
    expect(both.reasons[0]!.detail).toMatch(/force wins/);
  });

  it('never goes back from load-bearing to trivial within an issue, except by a label', () => {
    const earlier = { decision: 'load_bearing', source: 'signals' } as const;
    expect(codes(clearSmall, {}, earlier)).toEqual(['earlier-load-bearing']);
    expect(decideComplexity({ ...clearSmall, labels: ['hydraflow-adv-skip'] }, {}, earlier).decision).toBe('trivial');
    // a label-made decision is no precedent once the label is gone
    expect(decideComplexity(clearSmall, {}, { decision: 'load_bearing', source: 'label' }).decision).toBe('trivial');
  });

  it('its event records the decision with reason codes (no paths) in the state', () => {
    const r = decideComplexity({ ...clearSmall, paths: ['src/auth/x.ts'] });
    const s = reduceAdversarialEvents([gateEvent(r, '2026-11-27T10:00:00.000Z')]);
    expect(s.gate).toEqual({
      decision: 'load_bearing',
      source: 'signals',
      reasons: ['sensitive-path'],
      at: '2026-11-27T10:00:00.000Z',
    });
    expect(s.log).toEqual([{ type: 'ComplexityGateRouted', at: '2026-11-27T10:00:00.000Z', outcome: 'load_bearing' }]);
  });
});
