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
