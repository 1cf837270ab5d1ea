import { RateLimitedError } from '@hydraflow/core';

/** The time a run waits on: real time on a runner; a test's simulated clock in the test world (src/runner/clock.ts). */
export interface RunClock {
  /** ms since the epoch */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: RunClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

/** GitHub's primary budget of the token, as its last answer (or GET /rate_limit) told it. */
export interface CoreBudget {
  limit: number;
  remaining: number;
  /** when the window resets, ms since the epoch */
  resetAt: number;
}

export interface RateBudgetOptions {
  clock?: RunClock;
  /** The longest single wait on a rate limit, ms (default 2 minutes). */
  maxWaitMs?: number;
  /** All the run's waits on rate limits together, ms (default 10 minutes). */
  maxTotalWaitMs?: number;
  log?: (message: string) => void;
  /** Another token's budget of the same run: the waits are counted together (the run's time is one). */
  sharesWaitsWith?: RateBudget;
}

/**
 * The run's rate-limit policy (ADR 0014): a wait GitHub asks for is waited out when it fits the run — at most
 * `maxWaitMs` at once and `maxTotalWaitMs` in all — otherwise the run stops with a RateLimitedError and leaves its issue
 * for a later run. It also remembers the primary budget every answer reports (`x-ratelimit-*` headers), so a phase can
 * check that its requests fit before it writes anything (`ensure`), at no request's cost.
 */
export class RateBudget {
  readonly clock: RunClock;
  private readonly maxWaitMs: number;
  private readonly maxTotalWaitMs: number;
  /** The run's waits on rate limits so far: ms, and how many (shared with `sharesWaitsWith`). */
  private readonly spent: { ms: number; count: number };
  core: CoreBudget | undefined;

  constructor(private readonly options: RateBudgetOptions = {}) {
    this.clock = options.clock ?? REAL_CLOCK;
    this.maxWaitMs = options.maxWaitMs ?? 120_000;
    this.maxTotalWaitMs = options.maxTotalWaitMs ?? 600_000;
    this.spent = options.sharesWaitsWith?.spent ?? { ms: 0, count: 0 };
  }

  /** ms waited on rate limits so far in this run */
  get waitedMs(): number {
    return this.spent.ms;
  }

  /** how many times the run waited on a rate limit */
  get waits(): number {
    return this.spent.count;
  }

  /**
   * Takes in the primary budget an answer reports (the core resource; GraphQL has a budget of its own). The reset is
   * kept on GitHub's clock (the answer's `date`), so a runner whose clock is off still knows how far away it is.
   */
  observe(headers: Record<string, unknown> | undefined): void {
    if (!headers) return;
    const resource = headers['x-ratelimit-resource'];
    if (resource !== undefined && resource !== 'core') return;
    const remaining = Number(headers['x-ratelimit-remaining']);
    const reset = Number(headers['x-ratelimit-reset']);
    const limit = Number(headers['x-ratelimit-limit']);
    if (!Number.isFinite(remaining) || !Number.isFinite(reset)) return;
    const now = this.clock.now();
    const serverNow = Date.parse(String(headers.date ?? ''));
    // the reset as a time on this run's clock
    const resetAt = reset * 1000 - (Number.isFinite(serverNow) ? serverNow : now) + now;
    this.core = { limit: Number.isFinite(limit) ? limit : remaining, remaining, resetAt };
  }

  /** Whether a wait of `ms` fits what the run may still wait. */
  fits(ms: number): boolean {
    return ms <= this.maxWaitMs && this.waitedMs + ms <= this.maxTotalWaitMs;
  }

  /** Waits `ms` for `what` if it fits the run, else throws RateLimitedError (nothing more is sent). */
  async wait(ms: number, what: string): Promise<void> {
    if (!this.fits(ms)) {
      throw new RateLimitedError(
        `GitHub's rate limit: ${what} asks to wait ${Math.ceil(ms / 1000)} s, more than this run may wait (${this.maxWaitMs / 1000} s at once, ${this.maxTotalWaitMs / 1000} s in all; waited ${Math.round(this.waitedMs / 1000)} s)`,
      );
    }
    this.options.log?.(`GitHub rate limit on ${what}; waiting ${Math.ceil(ms / 1000)} s`);
    this.spent.ms += ms;
    this.spent.count++;
    await this.clock.sleep(ms);
  }

  /**
   * Makes sure `requests` primary requests are left before a phase starts writing: from the last answer's headers, or
   * `read` (GET /rate_limit, which GitHub does not count; its answer's headers are observed) when nothing was asked yet. Too few left: waits for the
   * reset when that fits the run, else throws RateLimitedError, so that the phase writes nothing it cannot finish.
   */
  async ensure(requests: number, what: string, read: () => Promise<unknown>): Promise<void> {
    if (!this.core || this.core.resetAt <= this.clock.now()) {
      // GitHub Enterprise without rate limits answers 404 here: nothing to wait for
      await read().catch(() => undefined);
    }
    const core = this.core;
    if (!core || core.remaining >= requests || core.resetAt <= this.clock.now()) return;
    // a second past the reset: GitHub's reset time has whole seconds
    const ms = core.resetAt - this.clock.now() + 1_000;
    if (!this.fits(ms)) {
      throw new RateLimitedError(
        `${what} needs about ${requests} GitHub requests and ${core.remaining} of the token's ${core.limit} an hour are left, for ${Math.ceil((core.resetAt - this.clock.now()) / 60_000)} more minute(s): longer than this run may wait`,
      );
    }
    await this.wait(ms, what);
    this.core = undefined;
  }
}
