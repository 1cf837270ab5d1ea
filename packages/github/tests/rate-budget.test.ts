import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '@hydraflow/core';
import { RateBudget } from '../src/index';

/** A clock whose sleeps pass at once and are recorded. */
function fakeClock(start = Date.parse('2026-11-27T09:00:00Z')) {
  const clock = {
    t: start,
    sleeps: [] as number[],
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

const headers = (remaining: number, resetInS: number, at: number, extra: Record<string, string> = {}) => ({
  'x-ratelimit-limit': '1000',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(Math.floor(at / 1000) + resetInS),
  'x-ratelimit-resource': 'core',
  date: new Date(at).toUTCString(),
  ...extra,
});

describe('RateBudget: wait when the wait fits the run, else give up', () => {
  it('waits up to 2 minutes at once, and no more than 10 minutes in all', async () => {
    const clock = fakeClock();
    const budget = new RateBudget({ clock });
    await budget.wait(120_000, 'POST /x');
    await expect(budget.wait(121_000, 'POST /x')).rejects.toThrow(RateLimitedError);
    for (let i = 0; i < 4; i++) await budget.wait(120_000, 'POST /x'); // 10 minutes now
    await expect(budget.wait(1_000, 'POST /x')).rejects.toThrow(/more than this run may wait/);
    expect(clock.sleeps).toEqual([120_000, 120_000, 120_000, 120_000, 120_000]);
    expect(budget.waits).toBe(5);
  });

  it('ensure: enough requests left goes on at once, reading GET /rate_limit only when no answer told the budget', async () => {
    const clock = fakeClock();
    const budget = new RateBudget({ clock });
    let reads = 0;
    const read = async () => {
      reads++;
      budget.observe(headers(500, 1800, clock.now()));
    };
    await budget.ensure(12, 'triage', read);
    await budget.ensure(12, 'triage', read);
    expect(reads).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('ensure: too few left and the reset within 2 minutes waits for it; an hour away gives up without waiting', async () => {
    const clock = fakeClock();
    const soon = new RateBudget({ clock });
    soon.observe(headers(3, 90, clock.now()));
    await soon.ensure(12, 'triage', async () => soon.observe(headers(1000, 3600, clock.now())));
    expect(clock.sleeps).toEqual([91_000]);

    const late = new RateBudget({ clock });
    late.observe(headers(3, 3000, clock.now()));
    await expect(late.ensure(12, 'triage', async () => undefined)).rejects.toThrow(RateLimitedError);
    expect(clock.sleeps).toEqual([91_000]);
  });

  it('keeps the reset on GitHub’s clock: a runner whose clock is a day off still knows it is an hour away', () => {
    const clock = fakeClock();
    const budget = new RateBudget({ clock });
    const github = clock.now() - 86_400_000; // GitHub's date, a day behind the runner's clock
    budget.observe(headers(0, 3600, github));
    expect(budget.core!.resetAt - clock.now()).toBe(3_600_000 - (github % 1000));
  });

  it('ignores GraphQL’s budget, which is another one', () => {
    const budget = new RateBudget({ clock: fakeClock() });
    budget.observe({ ...headers(0, 60, Date.now()), 'x-ratelimit-resource': 'graphql' });
    expect(budget.core).toBeUndefined();
  });

  it('GitHub Enterprise without rate limits (GET /rate_limit answers 404): nothing to wait for', async () => {
    const budget = new RateBudget({ clock: fakeClock() });
    await budget.ensure(12, 'triage', async () => {
      throw Object.assign(new Error('Rate limiting is not enabled.'), { status: 404 });
    });
    expect(budget.core).toBeUndefined();
  });
});
