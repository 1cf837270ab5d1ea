/**
 * A clock the test controls, shared by the GitHub emulator (`clock: () => sim.now()`) and the HydraFlow steps the test
 * world starts: each step's process loads step-clock.mjs (`node --import`, through `stepEnv()`), so its "now" is this
 * clock and its waits (GitHub's rate limits) advance it instead of passing. Hours of rate-limit waiting pass in
 * seconds. Real time still flows underneath; the clock only ever moves forward. Steps run one at a time (the lifecycle
 * simulator), so a step's sleep is the only thing moving the clock while it runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const STEP_MODULE = new URL('./step-clock.mjs', import.meta.url);

export class SimulatedClock {
  /** simulated − real, ms */
  private offsetMs: number;
  private server: Server | undefined;
  private url: string | undefined;
  /** Every sleep a step asked for, in ms (what the runs waited out). */
  readonly sleeps: number[] = [];

  constructor(start: number = Date.now()) {
    this.offsetMs = start - Date.now();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.offsetMs += Math.max(0, ms);
  }

  /** Moves the clock forward to `at` (ms since the epoch), if it is not past it already. */
  advanceTo(at: number): void {
    this.advance(at - this.now());
  }

  /** Starts the endpoint steps call to sleep (once). */
  async listen(): Promise<this> {
    if (this.server) return this;
    this.server = createServer((req, res) => {
      const ms = Number(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('ms') ?? '0');
      this.sleeps.push(ms);
      this.advance(ms);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(String(this.offsetMs));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The environment that installs this clock in a step's node process (call when the step starts). */
  stepEnv(): Record<string, string> {
    if (!this.url) throw new Error('SimulatedClock: call listen() before starting steps');
    return {
      NODE_OPTIONS: `--import=${STEP_MODULE.href}`,
      SIMULATED_CLOCK_URL: this.url,
      SIMULATED_CLOCK_OFFSET_MS: String(this.offsetMs),
    };
  }

  /** The step module's path (for a harness that passes `--import` itself). */
  static get stepModule(): string {
    return fileURLToPath(STEP_MODULE);
  }

  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  }
}
