import { describe, expect, it } from 'vitest';
import {
  BudgetExceededError,
  DEFAULT_PRICES,
  assertBudget,
  checkBudget,
  costOf,
  estimateCall,
  ledgerTotals,
  normalizeModelId,
  priceTable,
  runTotals,
  unknownModelPrice,
  unpricedNote,
  type LedgerEntry,
} from '../src/index';

const e = (runId: string, costUsd: number, tokens = 1000): LedgerEntry => ({
  at: '2026-11-22T10:00:00.000Z',
  runId,
  phase: 'plan',
  role: 'plan',
  provider: 'openai',
  model: 'gpt-4.1',
  inputTokens: tokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  costUsd,
});

describe('costOf', () => {
  it('prices known models per million tokens', () => {
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 1_000_000 }, 'gpt-4.1')).toEqual({
      usd: 10,
      priced: true,
      matched: 'gpt-4.1',
    });
    const c = costOf(
      { inputTokens: 1e6, cachedInputTokens: 1e6, cacheWriteTokens: 1e6, outputTokens: 1e6 },
      'claude-sonnet-4-5-20250929',
    );
    expect(c).toEqual({ usd: 3 + 0.3 + 3.75 + 15, priced: true, matched: 'claude-sonnet-4-5' });
    expect(costOf({ inputTokens: 1e6, outputTokens: 0 }, 'gpt-4o-mini-2024-07-18').matched).toBe('gpt-4o-mini');
    expect(normalizeModelId('anthropic/Claude-Haiku-4-5-latest')).toBe('claude-haiku-4-5');
  });
  it('never crashes on unknown models and flags them', () => {
    const c = costOf({ inputTokens: 1e6, outputTokens: 0 }, 'gpt-5-pro');
    expect(c.priced).toBe(false);
    expect(c.usd).toBeGreaterThan(0);
    expect(costOf({ inputTokens: NaN, outputTokens: -5 }, 'x').usd).toBe(0);
  });
  it('config overrides and default', () => {
    const { table, fallback } = priceTable({ 'my-model': { input: 1, output: 2 }, default: { input: 0, output: 0 } });
    expect(costOf({ inputTokens: 1e6, outputTokens: 1e6 }, 'my-model', table, fallback)).toMatchObject({
      usd: 3,
      priced: true,
    });
    expect(costOf({ inputTokens: 1e6, outputTokens: 1e6 }, 'other', table, fallback)).toMatchObject({
      usd: 0,
      priced: false,
    });
    expect(Object.keys(DEFAULT_PRICES)).toEqual(
      expect.arrayContaining(['gpt-4.1', 'gpt-5-mini', 'o4-mini', 'claude-opus-4-1', 'claude-3-5-haiku']),
    );
  });
});

describe('models no table prices (ADR 0006)', () => {
  it("an OpenAI-compatible endpoint's unknown model costs $0 unless priced; OpenAI's and Anthropic's are priced high", () => {
    const local = priceTable({}, unknownModelPrice('openai-compatible'));
    expect(costOf({ inputTokens: 1e6, outputTokens: 1e6 }, 'qwen2.5-7b', local.table, local.fallback)).toEqual({
      usd: 0,
      priced: false,
    });
    // A price in the config counts: for the model, or as the default.
    const priced = priceTable({ default: { input: 1, output: 1 } }, unknownModelPrice('openai-compatible'));
    expect(costOf({ inputTokens: 1e6, outputTokens: 0 }, 'qwen2.5-7b', priced.table, priced.fallback).usd).toBe(1);
    // Known models keep their price behind any endpoint.
    expect(costOf({ inputTokens: 1e6, outputTokens: 0 }, 'gpt-4.1', local.table, local.fallback).usd).toBe(2);
    for (const provider of ['openai', 'anthropic']) {
      const { table, fallback } = priceTable({}, unknownModelPrice(provider));
      expect(costOf({ inputTokens: 1e6, outputTokens: 0 }, 'gpt-5-pro', table, fallback).usd).toBe(5);
    }
  });

  it('the cost report says which models were unpriced and how they were counted', () => {
    const free: LedgerEntry = { ...e('1', 0), model: 'qwen2.5-7b', priced: false };
    const fallback: LedgerEntry = { ...e('1', 0.5), model: 'gpt-5-pro', priced: false };
    expect(unpricedNote([e('1', 1)])).toBeUndefined();
    expect(unpricedNote([e('1', 1), free, free])).toBe(
      'unpriced: `qwen2.5-7b` counted as $0 (USD budgets do not limit it, token budgets do; give it a price under `pricing` to count it)',
    );
    expect(unpricedNote([free, fallback])).toBe(
      'unpriced: `qwen2.5-7b`, `gpt-5-pro` counted at the fallback price (`pricing.default`)',
    );
    // A model id from a server's answer carries nothing but a model id's characters into the report.
    expect(unpricedNote([{ ...free, model: 'evil`](x)<b>|' }])).toContain('`evilxb`');
  });
});

describe('ledger and budgets', () => {
  const ledger = [e('1', 1.5), e('2', 0.5), e('2', 0.25, 500)];
  it('totals', () => {
    expect(ledgerTotals(ledger)).toMatchObject({ calls: 3, usd: 2.25, tokens: 2500 });
    expect(runTotals(ledger, '2')).toMatchObject({ calls: 2, usd: 0.75 });
  });
  it('stops before a budget is exceeded and names scope, limit and spend', () => {
    expect(
      checkBudget({
        ledger,
        runId: '2',
        budgets: { per_run: { usd: 2 }, per_issue: { usd: 10 } },
        estimate: { usd: 0.5, tokens: 10 },
      }),
    ).toEqual({
      ok: true,
    });
    const run = checkBudget({
      ledger,
      runId: '2',
      budgets: { per_run: { usd: 1 } },
      estimate: { usd: 0.5, tokens: 10 },
    });
    expect(run).toMatchObject({ ok: false, scope: 'run', metric: 'usd', limit: 1, spent: 0.75 });
    const issue = checkBudget({
      ledger,
      runId: '3',
      budgets: { per_run: { usd: 2 }, per_issue: { usd: 2.5 } },
      estimate: { usd: 0.3, tokens: 10 },
    });
    expect(issue).toMatchObject({ ok: false, scope: 'issue', limit: 2.5, spent: 2.25 });
    if (!issue.ok) expect(issue.message).toMatch(/per-issue budget of \$2\.50.*\$2\.2500 spent/);
    const tok = checkBudget({
      ledger,
      runId: '3',
      budgets: { per_issue: { tokens: 3000 } },
      estimate: { usd: 0, tokens: 600 },
    });
    expect(tok).toMatchObject({ ok: false, metric: 'tokens', spent: 2500 });
    expect(() => assertBudget(tok)).toThrow(BudgetExceededError);
  });
  it('estimates', () => {
    expect(estimateCall({ inputChars: 4_000_000, maxOutputTokens: 0, model: 'gpt-4.1' })).toEqual({
      usd: 2,
      tokens: 1_000_000,
    });
  });
});
