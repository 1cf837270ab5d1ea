import { BudgetExceededError } from '../errors';
import type { LedgerEntry } from '../state/schema';
import { DEFAULT_PRICES, FALLBACK_PRICE, type ModelPrice, type PriceTable } from './prices';

/** Token usage of one call. `inputTokens` excludes cache reads and cache writes (same as the providers' Usage). */
export interface TokenUsage {
  inputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  outputTokens: number;
  /** Server-side web searches, billed per search (Anthropic: $10 per 1,000). */
  webSearches?: number;
}

/** USD per server-side web search where the price table names none (Anthropic's and OpenAI's list price). */
export const WEB_SEARCH_USD = 0.01;

export interface CostResult {
  usd: number;
  /** false when the model was not found and the default price was used. */
  priced: boolean;
  /** The table key that matched, if any. */
  matched?: string;
}

/**
 * Normalize a model id for lookup: drop a `provider/` prefix, a `-latest` suffix and a date suffix
 * (`-20250929`, `-2024-08-06`). No fuzzy prefix matching: `gpt-5-pro` must not be billed as `gpt-5`.
 */
export function normalizeModelId(model: string): string {
  let m = model.trim().toLowerCase();
  const slash = m.lastIndexOf('/');
  if (slash >= 0) m = m.slice(slash + 1);
  m = m
    .replace(/-latest$/, '')
    .replace(/-\d{8}$/, '')
    .replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return m;
}

export function findPrice(
  model: string,
  table: PriceTable = DEFAULT_PRICES,
): { price: ModelPrice; key: string } | undefined {
  const exact = table[model];
  if (exact) return { price: exact, key: model };
  const norm = normalizeModelId(model);
  const hit = table[norm];
  return hit ? { price: hit, key: norm } : undefined;
}

/**
 * The cost of one call. Never throws: an unknown model is priced with `fallback` and flagged `priced: false`.
 * `table` is usually `priceTable(config.pricing)`.
 */
export function costOf(
  usage: TokenUsage,
  model: string,
  table: PriceTable = DEFAULT_PRICES,
  fallback: ModelPrice = FALLBACK_PRICE,
): CostResult {
  const found = findPrice(model, table);
  const p = found?.price ?? fallback;
  const n = (x: number | undefined) => (Number.isFinite(x) && (x as number) > 0 ? (x as number) : 0);
  const usd =
    (n(usage.inputTokens) * p.input +
      n(usage.cachedInputTokens) * p.cachedInput +
      n(usage.cacheWriteTokens) * p.cacheWrite +
      n(usage.outputTokens) * p.output) /
      1_000_000 +
    n(usage.webSearches) * (p.webSearch ?? WEB_SEARCH_USD);
  const rounded = Math.round(usd * 1e6) / 1e6;
  return found ? { usd: rounded, priced: true, matched: found.key } : { usd: rounded, priced: false };
}

/**
 * The built-in table with the config's `pricing` overrides (keys are model ids; `default` is the fallback, else
 * `unknown`: see unknownModelPrice).
 */
export function priceTable(
  overrides: Readonly<Record<string, Partial<ModelPrice> & { input: number; output: number }>> = {},
  unknown: ModelPrice = FALLBACK_PRICE,
): {
  table: PriceTable;
  fallback: ModelPrice;
} {
  const table: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  let fallback = unknown;
  for (const [model, o] of Object.entries(overrides)) {
    const full: ModelPrice = {
      input: o.input,
      output: o.output,
      cachedInput: o.cachedInput ?? o.input,
      cacheWrite: o.cacheWrite ?? o.input,
    };
    if (model === 'default') fallback = full;
    else table[model] = full;
  }
  return { table, fallback };
}

// ---------------------------------------------------------------------------------------------------------------
// Ledger

export interface Totals {
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** All four token counts added up (what token budgets count). */
  tokens: number;
  usd: number;
  /** true when any entry used the fallback price. */
  unpriced: boolean;
}

export function ledgerTotals(entries: readonly LedgerEntry[]): Totals {
  const t: Totals = {
    calls: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    tokens: 0,
    usd: 0,
    unpriced: false,
  };
  for (const e of entries) {
    t.calls += e.calls ?? 1;
    t.inputTokens += e.inputTokens;
    t.cachedInputTokens += e.cachedInputTokens;
    t.cacheWriteTokens += e.cacheWriteTokens;
    t.outputTokens += e.outputTokens;
    t.usd += e.costUsd;
    if (e.priced === false) t.unpriced = true;
  }
  t.tokens = t.inputTokens + t.cachedInputTokens + t.cacheWriteTokens + t.outputTokens;
  t.usd = Math.round(t.usd * 1e6) / 1e6;
  return t;
}

export function runTotals(entries: readonly LedgerEntry[], runId: string): Totals {
  return ledgerTotals(entries.filter((e) => e.runId === runId));
}

/**
 * What a cost report says about calls to models with no known price, or undefined when there were none: which models,
 * and whether they were counted as $0 (an OpenAI-compatible endpoint's, unless priced: unknownModelPrice) — which no
 * USD budget can limit — or at the fallback price.
 */
export function unpricedNote(entries: readonly LedgerEntry[]): string | undefined {
  const unpriced = entries.filter((e) => e.priced === false);
  if (unpriced.length === 0) return undefined;
  // Model ids come from the provider's answers: only the characters a model id has reach the report.
  const models = [...new Set(unpriced.map((e) => `\`${e.model.replace(/[^\w.:/@-]/g, '')}\``))].join(', ');
  return unpriced.every((e) => e.costUsd === 0)
    ? `unpriced: ${models} counted as $0 (USD budgets do not limit it, token budgets do; give it a price under \`pricing\` to count it)`
    : `unpriced: ${models} counted at the fallback price (\`pricing.default\`)`;
}

// ---------------------------------------------------------------------------------------------------------------
// Budgets

export interface BudgetLimit {
  usd?: number | undefined;
  tokens?: number | undefined;
}

export interface Budgets {
  per_run?: BudgetLimit | undefined;
  per_issue?: BudgetLimit | undefined;
}

export type BudgetCheck =
  | { ok: true }
  | {
      ok: false;
      scope: 'run' | 'issue';
      metric: 'usd' | 'tokens';
      limit: number;
      /** Spent so far in this scope. */
      spent: number;
      /** The estimate of the next call. */
      estimate: number;
      message: string;
    };

/**
 * Call BEFORE a model call with an estimate of it: not ok when spent + estimate would exceed a run or issue limit,
 * so work stops before the budget is exceeded. The issue scope is the whole ledger (all runs on the issue).
 */
export function checkBudget(args: {
  ledger: readonly LedgerEntry[];
  runId: string;
  budgets: Budgets;
  estimate: { usd: number; tokens: number };
}): BudgetCheck {
  const scopes: { scope: 'run' | 'issue'; totals: Totals; limit: BudgetLimit | undefined }[] = [
    { scope: 'run', totals: runTotals(args.ledger, args.runId), limit: args.budgets.per_run },
    { scope: 'issue', totals: ledgerTotals(args.ledger), limit: args.budgets.per_issue },
  ];
  for (const { scope, totals, limit } of scopes) {
    if (!limit) continue;
    if (limit.usd !== undefined && totals.usd + args.estimate.usd > limit.usd) {
      return {
        ok: false,
        scope,
        metric: 'usd',
        limit: limit.usd,
        spent: totals.usd,
        estimate: args.estimate.usd,
        message: `the per-${scope} budget of $${limit.usd.toFixed(2)} would be exceeded: $${totals.usd.toFixed(4)} spent, next call estimated at $${args.estimate.usd.toFixed(4)} (raise budgets.per_${scope}.usd in .github/hydraflow.yml)`,
      };
    }
    if (limit.tokens !== undefined && totals.tokens + args.estimate.tokens > limit.tokens) {
      return {
        ok: false,
        scope,
        metric: 'tokens',
        limit: limit.tokens,
        spent: totals.tokens,
        estimate: args.estimate.tokens,
        message: `the per-${scope} budget of ${limit.tokens} tokens would be exceeded: ${totals.tokens} spent, next call estimated at ${args.estimate.tokens} tokens (raise budgets.per_${scope}.tokens in .github/hydraflow.yml)`,
      };
    }
  }
  return { ok: true };
}

/**
 * What the run and issue budgets leave to spend, in USD and tokens (never below 0); a kind with no limit is absent.
 * The coding agent's model proxy is given it as the agent job's allowance (src/phases/implement.ts).
 */
export function budgetLeft(args: { ledger: readonly LedgerEntry[]; runId: string; budgets: Budgets }): BudgetLimit {
  const left: BudgetLimit = {};
  const scopes = [
    { totals: runTotals(args.ledger, args.runId), limit: args.budgets.per_run },
    { totals: ledgerTotals(args.ledger), limit: args.budgets.per_issue },
  ];
  for (const { totals, limit } of scopes) {
    if (limit?.usd !== undefined) left.usd = Math.max(0, Math.min(left.usd ?? Infinity, limit.usd - totals.usd));
    if (limit?.tokens !== undefined)
      left.tokens = Math.max(0, Math.min(left.tokens ?? Infinity, limit.tokens - totals.tokens));
  }
  return left;
}

/** Throw BudgetExceededError for a failed check (convenience for phases). */
export function assertBudget(check: BudgetCheck): void {
  if (check.ok) return;
  throw new BudgetExceededError(check.message, check.scope, { [check.metric]: check.limit });
}

/** A rough pre-call estimate: input chars / 4 tokens at the input price, plus the max output tokens at the output price. */
export function estimateCall(
  args: { inputChars: number; maxOutputTokens: number; model: string },
  table: PriceTable = DEFAULT_PRICES,
  fallback: ModelPrice = FALLBACK_PRICE,
): { usd: number; tokens: number } {
  const inputTokens = Math.ceil(args.inputChars / 4);
  const { usd } = costOf({ inputTokens, outputTokens: args.maxOutputTokens }, args.model, table, fallback);
  return { usd, tokens: inputTokens + args.maxOutputTokens };
}
