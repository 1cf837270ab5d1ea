import { describe, expect, it } from 'vitest';
import {
  CARRYOVER_CONFIDENCE,
  carryoverDrafts,
  carryoverDue,
  carryoverKey,
  fingerprint,
  parseMemoryFile,
  recallMemories,
  reduceAdversarialEvents,
  renderMemoryFile,
  retainInDocument,
  shippedWithKnownGap,
  type AdversarialEvent,
  type Concern,
  type MemoryDraft,
} from '../src/index';

const NOW = new Date('2026-11-27T10:00:00Z');
const bounds = { maxEntries: 200, maxAgeDays: 90, now: NOW };

const c = (text: string, over: Partial<Concern> = {}): Concern => ({
  voter: 'risk-skeptic',
  stage: 'plan-council',
  severity: 'high',
  blocking: true,
  text,
  evidence: ['src/config/load.ts'],
  must_address_by: 'code-review',
  ...over,
});

function retain(text: string | null, drafts: MemoryDraft[]) {
  const result = retainInDocument(parseMemoryFile(text).document, drafts, bounds);
  const file = renderMemoryFile(result.document);
  return { ...result, file, entries: parseMemoryFile(file).entries };
}

const OPEN = [
  c('Renaming the config key breaks existing installs that still use the old key'),
  c('No test covers reading a config file written by v1', { voter: 'tester', severity: 'medium', blocking: false }),
];

describe('carryover: open concerns at merge become knowledge', () => {
  it('one low-confidence knowledge draft per concern, tagged with the pull request, keyed by fingerprint', () => {
    const drafts = carryoverDrafts(57, OPEN);
    expect(drafts).toHaveLength(2);
    expect(drafts[0]).toEqual({
      kind: 'knowledge',
      key: carryoverKey(fingerprint(OPEN[0]!)),
      text: 'Shipped with a known gap in #57 (high, Risk-Skeptic at plan-council): Renaming the config key breaks existing installs that still use the old key',
      tags: ['known-gap', 'pr-57', 'plan-council', 'risk-skeptic'],
      source: 57,
      confidence: CARRYOVER_CONFIDENCE,
    });
    expect(CARRYOVER_CONFIDENCE).toBeLessThan(0.5);
  });

  it('written once: a re-delivered merge, a reworded concern, a second voter or pull request confirm the same row', () => {
    const first = retain(null, carryoverDrafts(57, OPEN));
    expect(first.added).toBe(2);
    const entry = first.entries.find((e) => e.key === carryoverKey(fingerprint(OPEN[0]!)))!;
    expect(entry).toMatchObject({
      kind: 'knowledge',
      source: 57,
      confidence: 0.3,
      created: '2026-11-27',
      updated: '2026-11-27',
    });

    const reworded = c('renaming the CONFIG key breaks existing installs, that still use the "old key".', {
      voter: 'builder',
    });
    const same = [...carryoverDrafts(57, [OPEN[0]!, reworded]), ...carryoverDrafts(61, [reworded])];
    expect(new Set(same.map((d) => d.key)).size).toBe(1);
    const again = retain(first.file, same);
    expect(again.added).toBe(0);
    expect(again.entries).toHaveLength(2);
    const row = again.entries.find((e) => e.key === entry.key)!;
    expect(row.tags).toEqual(expect.arrayContaining(['pr-57', 'pr-61']));
    expect(row.text).toBe(entry.text); // the first wording stands
  });

  it('the merge is carried over once in the state: a re-delivered merge event yields no event and no drafts to write', () => {
    const gate: AdversarialEvent = {
      type: 'ComplexityGateRouted',
      at: NOW.toISOString(),
      decision: 'load_bearing',
      source: 'signals',
      reasons: ['complex'],
    };
    let s = reduceAdversarialEvents([gate]);
    expect(carryoverDue(s, 57)).toBe(true);
    const events = shippedWithKnownGap(s, 57, OPEN, NOW.toISOString());
    expect(events).toEqual([
      { type: 'ShippedWithKnownGap', at: NOW.toISOString(), pr: 57, concerns: OPEN.map(fingerprint).sort() },
    ]);
    s = reduceAdversarialEvents(events, s);
    expect(carryoverDue(s, 57)).toBe(false);
    expect(shippedWithKnownGap(s, 57, OPEN, NOW.toISOString())).toEqual([]);
    expect(s.shipped).toEqual([{ pr: 57, concerns: 2, at: NOW.toISOString() }]);
    expect(shippedWithKnownGap(s, 58, [], NOW.toISOString())).toEqual([]);
  });

  it('later issues recall it by topic', () => {
    const { entries } = retain(null, carryoverDrafts(57, OPEN));
    const recalled = recallMemories(entries, 'Rename the config key used by installs', { now: NOW, maxAgeDays: 90 });
    expect(recalled.map((r) => r.entry.source)).toContain(57);
  });
});
