/**
 * Prompt-caching model of the scripted model server. Both providers' documented rules, made deterministic.
 *
 * Common ground
 * - Tokens come from `estimateTokens` (ceil(chars / 4)) applied to ONE canonical rendering of the prompt: the prompt's
 *   parts joined with '\n'. A prefix of k parts is worth ceil(len(join(parts[0..k])) / 4) tokens, the whole prompt
 *   ceil(len(join(parts)) / 4). No per-message formatting overhead is added (the real APIs add a few tokens).
 * - Caches are per server instance and per model (the real caches are also per organization; one server = one org).
 * - Time comes from the injected clock (ms), so TTL behaviour is testable without waiting.
 * - Timing: a request looks the cache up when it arrives (`lookup`), and what it writes becomes readable only when its
 *   response is sent (`commit`): an entry is readable once the response that wrote it has begun, so two concurrent
 *   requests with the same new prefix both miss and both pay the write, and only a later request reads it. A request
 *   answered with an error writes nothing.
 *
 * Anthropic (explicit breakpoints, https://platform.claude.com/docs/en/build-with-claude/prompt-caching)
 * - Render order is tools → system → messages; every tool definition, system block and message content block is one
 *   part. `cache_control: {type: 'ephemeral', ttl?: '5m' | '1h'}` on a part makes it a breakpoint; the cached prefix is
 *   every part up to and including that block. A top-level `cache_control` (automatic caching) puts the breakpoint on
 *   the last block of the last message. At most 4 breakpoints (more → 400, like the API). The hash ignores the
 *   `cache_control` markers themselves, so moving a breakpoint does not change the prefix's bytes.
 * - A prefix shorter than the model's minimum cacheable length is neither written nor read (silently, like the API).
 *   Minimums: see `anthropicMinCacheableTokens`.
 * - Lookup: breakpoints are tried from the last to the first; for each, the block boundaries at the breakpoint and up
 *   to 19 blocks before it are checked (the documented 20-block lookback) against entries that earlier requests
 *   wrote. The longest live hit is read: `cache_read_input_tokens` = its prefix tokens, and its TTL is refreshed.
 * - Write: every breakpoint after the hit whose prefix reaches the minimum is written with its TTL (5 min default,
 *   1 h with ttl '1h'); `cache_creation_input_tokens` = tokens(last written breakpoint) − tokens read.
 * - `input_tokens` = total − read − written, i.e. only the tokens after the last cache breakpoint (or all of them
 *   when nothing was cacheable).
 *
 * OpenAI (automatic, https://platform.openai.com/docs/guides/prompt-caching)
 * - Rendering: tool definitions, then the `response_format` (the schema is part of the cached prefix), then every
 *   message as `role: content`, each one part.
 * - Prompts of fewer than 1,024 tokens are never cached. Otherwise the cache hit is the longest prefix, in 128-token
 *   increments starting at 1,024 (1,024, 1,152, 1,280, ...), that an earlier live request also had.
 *   `prompt_tokens` is the whole prompt (cached included), `prompt_tokens_details.cached_tokens` the hit.
 * - Every request ≥ 1,024 tokens stores all its 128-token boundaries. Entries expire after 5 minutes of inactivity
 *   (the documented range is 5–10 min, up to 1 h off-peak; we take the deterministic lower bound), refreshed on use;
 *   `prompt_cache_retention: '24h'` keeps them 24 h. `prompt_cache_key` only influences routing in the real service
 *   and is ignored here.
 */
import { createHash, type Hash } from 'node:crypto';
import { CHARS_PER_TOKEN, estimateTokens } from './tokens';

export const FIVE_MINUTES_MS = 5 * 60_000;
export const ONE_HOUR_MS = 60 * 60_000;
const LOOKBACK_BLOCKS = 20;
export const OPENAI_MIN_CACHE_TOKENS = 1024;
export const OPENAI_CACHE_INCREMENT = 128;

/**
 * Minimum cacheable prompt length per Anthropic model (the published table as of late 2025 for the 4.x models).
 * Newer families default to 1,024 (2,048 for Haiku) as HydraFlow's design assumes; the server accepts an override
 * (`anthropicMinCacheTokens`) for experiments with other thresholds.
 */
export function anthropicMinCacheableTokens(model: string): number {
  const table: [RegExp, number][] = [
    [/^claude-(opus-4-5|opus-4-6|haiku-4-5)/, 4096],
    [/^claude-(3-5-haiku|3-haiku|haiku-3)/, 2048],
    [/^claude-(sonnet-4-6|sonnet-4-5|sonnet-4|opus-4-1|opus-4|3-7-sonnet)/, 1024],
    [/haiku/, 2048],
  ];
  for (const [pattern, min] of table) if (pattern.test(model)) return min;
  return 1024;
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

/** A request's cache usage, decided at arrival; `commit` applies its writes when the response is sent. */
export interface PendingCache<T> {
  usage: T;
  commit(): void;
}

export interface CachePart {
  text: string;
  /** TTL in ms when this part carries a cache breakpoint. */
  breakpointTtlMs?: number;
}

/** Incremental prefix hashing: digest of parts[0..k] joined by '\n', for every k, in one pass. */
function prefixHashes(model: string, parts: string[]): { hashes: string[]; chars: number[] } {
  const hash: Hash = createHash('sha256').update(model).update('\0');
  const hashes: string[] = [];
  const chars: number[] = [];
  let length = 0;
  parts.forEach((part, i) => {
    if (i > 0) {
      hash.update('\n');
      length += 1;
    }
    hash.update(part);
    length += part.length;
    hashes.push(hash.copy().digest('hex'));
    chars.push(length);
  });
  return { hashes, chars };
}

export interface AnthropicCacheResult {
  totalTokens: number;
  inputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  ephemeral5mInputTokens: number;
  ephemeral1hInputTokens: number;
}

export class AnthropicPromptCache {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly now: () => number,
    private readonly minTokens: (model: string) => number = anthropicMinCacheableTokens,
  ) {}

  /** Usage for a request arriving now; `commit()` when its response is sent makes its writes (and read) take effect. */
  lookup(model: string, parts: CachePart[]): PendingCache<AnthropicCacheResult> {
    const now = this.now();
    const { hashes, chars } = prefixHashes(
      model,
      parts.map((p) => p.text),
    );
    const totalTokens = estimateTokens(parts.map((p) => p.text).join('\n'));
    const tokensAt = (i: number) => Math.ceil((chars[i] ?? 0) / CHARS_PER_TOKEN);
    const min = this.minTokens(model);
    const breakpoints = parts.flatMap((p, i) => (p.breakpointTtlMs !== undefined ? [i] : []));
    const live = (i: number) => (this.entries.get(hashes[i] ?? '')?.expiresAt ?? 0) > now;

    let readIndex = -1;
    for (const bp of [...breakpoints].reverse()) {
      for (let i = bp; i >= 0 && i > bp - LOOKBACK_BLOCKS; i--) {
        if (tokensAt(i) < min) break;
        if (live(i)) {
          readIndex = i;
          break;
        }
      }
      if (readIndex >= 0) break;
    }
    const read = readIndex >= 0 ? tokensAt(readIndex) : 0;

    const writes: { hash: string; ttlMs: number }[] = [];
    let w5m = 0;
    let w1h = 0;
    let lastWrittenTokens = read;
    for (const bp of breakpoints) {
      if (bp <= readIndex || tokensAt(bp) < min) continue;
      const ttlMs = parts[bp]?.breakpointTtlMs ?? FIVE_MINUTES_MS;
      writes.push({ hash: hashes[bp] ?? '', ttlMs });
      const delta = tokensAt(bp) - lastWrittenTokens;
      if (ttlMs >= ONE_HOUR_MS) w1h += delta;
      else w5m += delta;
      lastWrittenTokens = tokensAt(bp);
    }
    const written = lastWrittenTokens - read;
    return {
      usage: {
        totalTokens,
        inputTokens: totalTokens - read - written,
        cacheReadInputTokens: read,
        cacheCreationInputTokens: written,
        ephemeral5mInputTokens: w5m,
        ephemeral1hInputTokens: w1h,
      },
      commit: () => {
        const at = this.now();
        const hit = readIndex >= 0 ? this.entries.get(hashes[readIndex] ?? '') : undefined;
        if (hit) hit.expiresAt = Math.max(hit.expiresAt, at + hit.ttlMs); // TTL refreshed on every hit
        for (const w of writes) this.entries.set(w.hash, { expiresAt: at + w.ttlMs, ttlMs: w.ttlMs });
      },
    };
  }
}

export interface OpenAICacheResult {
  promptTokens: number;
  cachedTokens: number;
}

export class OpenAIPromptCache {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly now: () => number,
    private readonly defaultTtlMs = FIVE_MINUTES_MS,
  ) {}

  /** Usage for a request arriving now; `commit()` when its response is sent stores its prefixes. */
  lookup(model: string, prompt: string, retention?: string): PendingCache<OpenAICacheResult> {
    const now = this.now();
    const promptTokens = estimateTokens(prompt);
    if (promptTokens < OPENAI_MIN_CACHE_TOKENS) return { usage: { promptTokens, cachedTokens: 0 }, commit: () => {} };
    const ttlMs = retention === '24h' ? 24 * ONE_HOUR_MS : this.defaultTtlMs;
    // Boundaries fully inside the prompt: 1024, 1152, ... tokens, i.e. the first 4·L characters.
    const boundaries: { tokens: number; key: string }[] = [];
    const hash = createHash('sha256').update(model).update('\0');
    let consumed = 0;
    for (let L = OPENAI_MIN_CACHE_TOKENS; L * CHARS_PER_TOKEN <= prompt.length; L += OPENAI_CACHE_INCREMENT) {
      const end = L * CHARS_PER_TOKEN;
      hash.update(prompt.slice(consumed, end));
      consumed = end;
      boundaries.push({ tokens: L, key: hash.copy().digest('hex') });
    }
    let cachedTokens = 0;
    for (const b of [...boundaries].reverse()) {
      const entry = this.entries.get(b.key);
      if (entry && entry.expiresAt > now) {
        cachedTokens = b.tokens;
        break;
      }
    }
    return {
      usage: { promptTokens, cachedTokens },
      commit: () => {
        const at = this.now();
        for (const b of boundaries) {
          const entry = this.entries.get(b.key);
          const keep = Math.max(ttlMs, entry && entry.expiresAt > at ? entry.ttlMs : 0);
          this.entries.set(b.key, { expiresAt: at + keep, ttlMs: keep });
        }
      },
    };
  }
}
