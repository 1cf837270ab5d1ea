/** Fault injection for the GitHub emulator. */

export interface FaultFilter {
  /** HTTP methods to match (upper-case); default: any (failNext) or writes (writeSucceedsThen502) */
  methods?: string[];
  /** substring of the request path */
  pathIncludes?: string;
  /** substring of the request body (a GraphQL document's text, say) */
  bodyIncludes?: string;
}

interface PendingFault {
  remaining: number;
  status: number;
  filter: FaultFilter;
}

export const WRITE_METHODS = ['POST', 'PATCH', 'PUT', 'DELETE'];

function matches(filter: FaultFilter, method: string, path: string, body = ''): boolean {
  if (filter.methods && !filter.methods.map((m) => m.toUpperCase()).includes(method)) return false;
  if (filter.pathIncludes && !path.includes(filter.pathIncludes)) return false;
  if (filter.bodyIncludes && !body.includes(filter.bodyIncludes)) return false;
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
  private beforeQueue: { filter: FaultFilter; act: () => Promise<unknown> | unknown }[] = [];

  /**
   * The next matching request waits, unserved, until `act` has run (and its promise settled): whatever `act` does to
   * the world — another run's writes, a human's edit — lands between that request and the one before it.
   */
  beforeNext(filter: FaultFilter, act: () => Promise<unknown> | unknown): void {
    this.beforeQueue.push({ filter, act });
  }

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
    this.beforeQueue = [];
  }

  /** @internal */
  async runBefore(method: string, path: string, body: string): Promise<void> {
    const at = this.beforeQueue.findIndex((b) => matches(b.filter, method, path, body));
    if (at < 0) return;
    const [hook] = this.beforeQueue.splice(at, 1);
    await hook!.act();
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
