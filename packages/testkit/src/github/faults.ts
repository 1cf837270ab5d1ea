/** Fault injection for the GitHub emulator. */

export interface FaultFilter {
  /** HTTP methods to match (upper-case); default: any (failNext) or writes (writeSucceedsThen502) */
  methods?: string[];
  /** substring of the request path */
  pathIncludes?: string;
}

interface PendingFault {
  remaining: number;
  status: number;
  filter: FaultFilter;
}

export const WRITE_METHODS = ['POST', 'PATCH', 'PUT', 'DELETE'];

function matches(filter: FaultFilter, method: string, path: string): boolean {
  if (filter.methods && !filter.methods.map((m) => m.toUpperCase()).includes(method)) return false;
  if (filter.pathIncludes && !path.includes(filter.pathIncludes)) return false;
  return true;
}

export class Faults {
  /** added to every response */
  latencyMs = 0;
  /** writes-per-minute budget per actor; undefined = no secondary limit */
  secondary: { writesPerMinute: number } | undefined;
  /** primary rate-limit override: remaining requests for every token from now on (per token) */
  primaryOverride: number | undefined;
  /** bumped whenever primaryRemaining() is called so per-token counters pick it up */
  primaryEpoch = 0;

  private failQueue: PendingFault[] = [];
  private after502Queue: PendingFault[] = [];

  /** The next `count` matching requests get `status` and are NOT performed. */
  failNext(count: number, status = 502, filter: FaultFilter = {}): void {
    this.failQueue.push({ remaining: count, status, filter });
  }

  /** The next `count` matching writes ARE performed, then answered with 502 (the duplicate-comment trap). */
  writeSucceedsThen502(count: number, filter: FaultFilter = {}): void {
    this.after502Queue.push({ remaining: count, status: 502, filter: { methods: WRITE_METHODS, ...filter } });
  }

  /** Content-creating requests beyond `writesPerMinute` per actor in a rolling minute get a secondary-limit 403. */
  secondaryRateLimit(opts: { writesPerMinute: number } | false = { writesPerMinute: 80 }): void {
    this.secondary = opts === false ? undefined : { ...opts };
  }

  /** Every token has `n` requests left in the current primary window. */
  primaryRemaining(n: number): void {
    this.primaryOverride = n;
    this.primaryEpoch++;
  }

  reset(): void {
    this.latencyMs = 0;
    this.secondary = undefined;
    this.primaryOverride = undefined;
    this.primaryEpoch++;
    this.failQueue = [];
    this.after502Queue = [];
  }

  /** @internal */
  takeFailure(method: string, path: string): number | undefined {
    return take(this.failQueue, method, path);
  }

  /** @internal */
  takeAfterWrite(method: string, path: string): number | undefined {
    return take(this.after502Queue, method, path);
  }
}

function take(queue: PendingFault[], method: string, path: string): number | undefined {
  for (const f of queue) {
    if (f.remaining > 0 && matches(f.filter, method, path)) {
      f.remaining--;
      if (f.remaining === 0) queue.splice(queue.indexOf(f), 1);
      return f.status;
    }
  }
  return undefined;
}
