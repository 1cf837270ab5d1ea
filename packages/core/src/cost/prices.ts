/**
 * Model prices in USD per million tokens.
 *
 * Source: the providers' public price lists (openai.com/api/pricing, docs.anthropic.com "Pricing"), as HydraFlow's
 * authors last knew them — dated 2025-11. Prices change: override or add models with the `pricing` key of
 * .github/hydraflow.yml. OpenAI bills cache writes at the normal input rate (no premium), so `cacheWrite = input`;
 * Anthropic's `cacheWrite` is the 5-minute cache write (1.25 × input), `cachedInput` the cache read (0.1 × input).
 */
export interface ModelPrice {
  /** Uncached input tokens. */
  input: number;
  /** Input tokens read from the prompt cache. */
  cachedInput: number;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number;
  output: number;
  /** USD per server-side web search (default WEB_SEARCH_USD, cost.ts). */
  webSearch?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const PRICES_AS_OF = '2025-11';

const openai = (input: number, cachedInput: number, output: number): ModelPrice => ({
  input,
  cachedInput,
  cacheWrite: input,
  output,
});
const anthropic = (input: number, output: number): ModelPrice => ({
  input,
  cachedInput: round(input * 0.1),
  cacheWrite: round(input * 1.25),
  output,
});

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export const DEFAULT_PRICES: PriceTable = {
  // OpenAI
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  o3: openai(2, 0.5, 8),
  'o4-mini': openai(1.1, 0.275, 4.4),
  // Anthropic
  'claude-opus-4-6': anthropic(5, 25),
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-4-6': anthropic(3, 15),
  'claude-sonnet-4-5': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
};

/**
 * Price used for a model that is in no table. Deliberately on the expensive side, so budgets stay conservative.
 * Overridable with `pricing.default` in the config.
 */
export const FALLBACK_PRICE: ModelPrice = { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 };

export const ZERO_PRICE: ModelPrice = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 };

/**
 * The price of a model in no table, before `pricing.default`: an OpenAI-compatible endpoint's model (a local llama.cpp,
 * Ollama or vLLM, as often as not) costs nothing, reported as unpriced and counted as $0, so a free local model does
 * not run into the USD budgets at $5 / $25 per million tokens; OpenAI's and Anthropic's unknown models are priced high
 * (FALLBACK_PRICE). ADR 0006.
 */
export function unknownModelPrice(provider: string): ModelPrice {
  return provider === 'openai-compatible' ? ZERO_PRICE : FALLBACK_PRICE;
}
