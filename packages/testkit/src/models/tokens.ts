/**
 * Deterministic token estimator shared by both wires of the scripted model server.
 *
 * Model: one token per 4 UTF-16 code units, rounded up (`ceil(chars / 4)`). Real tokenizers differ per model
 * (English prose is ~4 chars/token for both OpenAI and Anthropic tokenizers, code and JSON denser), but a fixed rule
 * keeps every test, the demo and the benchmarks reproducible. The rule is applied identically to both wires: each
 * request is rendered into one canonical prompt string (see `renderOpenAIPrompt` / `renderAnthropicPrompt` in
 * caching.ts) and a prefix of that string of `n` characters is worth `ceil(n / 4)` tokens.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** A string that is exactly `tokens` tokens long under the estimator (handy for cache tests and benchmarks). */
export function textOfTokens(tokens: number, seed = 'lorem ipsum dolor sit amet '): string {
  const chars = tokens * CHARS_PER_TOKEN;
  return seed.repeat(Math.ceil(chars / seed.length)).slice(0, chars);
}
