import { Octokit } from '@octokit/core';
import { paginateRest } from '@octokit/plugin-paginate-rest';
import { RequestError } from '@octokit/request-error';
import { HydraflowError, RateLimitedError } from '@hydraflow/core';
import { nodeFetch } from '@hydraflow/http';
import { redactRequest } from './redact';
import { RateBudget } from './rate-budget';

export { RateLimitedError };

// Requests name their route ('GET /repos/{owner}/{repo}/issues/{issue_number}'): the REST endpoint-methods plugin
// would parse and build a map of every GitHub endpoint (~85 KB) in each step's process for the 26 used here.
const HydraflowOctokit = Octokit.plugin(paginateRest);
export type RestClient = InstanceType<typeof HydraflowOctokit>;

export interface ClientOptions {
  token: string;
  /** GITHUB_API_URL: https://api.github.com, a GHES URL, or the test world's emulator. */
  baseUrl: string;
  /** Attempts for a request GitHub failed with 5xx or a network error (only where repeating it is safe). */
  maxAttempts?: number;
  /** Longest secondary-rate-limit wait we accept before giving up, in seconds (without `budget`). */
  maxRateLimitWaitSeconds?: number;
  /** How a wait passes (without `budget`; default real time). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The run's rate-limit policy and clock, shared by every client of the run (rate-budget.ts): which waits fit, and the
   * primary budget the answers report. Default: one of this client's own, on real time.
   */
  budget?: RateBudget;
  log?: (message: string) => void;
  /** The fetch Octokit uses (default: nodeFetch from @hydraflow/http, which is much cheaper per request). */
  fetch?: typeof fetch;
  /** Secret values masked (`***`) wherever they appear in what is sent (redact.ts): the run's own secrets. */
  redact?: readonly string[];
}

/**
 * A write whose outcome is unknown: GitHub answered 5xx (or the connection dropped) after a non-idempotent request.
 * The write may have happened, so the caller must look before writing again (find-by-marker), never blindly retry.
 */
export class UncertainWriteError extends HydraflowError {
  override name = 'UncertainWriteError';
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** Safe to repeat after a 5xx: the request's effect is the same whether it ran once or twice. */
function isIdempotent(method: string, url: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'PUT' || method === 'DELETE' || method === 'PATCH')
    return true;
  // Adding labels to an issue is a set union; adding an existing label changes nothing.
  return method === 'POST' && /\/issues\/\{?[\w-]+\}?\/labels$/.test(url);
}

function secondsToWait(headers: Record<string, unknown> = {}, now: number): number | undefined {
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) return Number(retryAfter);
  if (headers['x-ratelimit-remaining'] === '0' && headers['x-ratelimit-reset'] !== undefined) {
    // on GitHub's clock (the answer's date) when it says: a runner's clock may be off
    const serverNow = Date.parse(String(headers.date ?? ''));
    return Math.max(
      0,
      Number(headers['x-ratelimit-reset']) - Math.floor((Number.isFinite(serverNow) ? serverNow : now) / 1000),
    );
  }
  return undefined;
}

/**
 * Octokit with HydraFlow's request policy. @octokit/plugin-retry would repeat POSTs after a 5xx and duplicate
 * comments; here only idempotent requests repeat, rate-limit answers (which GitHub did not perform) wait for
 * `retry-after`, and an uncertain write surfaces as UncertainWriteError for the caller to reconcile.
 */
export function createRestClient(options: ClientOptions): RestClient {
  const budget =
    options.budget ??
    new RateBudget({
      ...(options.sleep ? { clock: { now: () => Date.now(), sleep: options.sleep } } : {}),
      maxWaitMs: (options.maxRateLimitWaitSeconds ?? 120) * 1000,
      maxTotalWaitMs: Number.POSITIVE_INFINITY,
      ...(options.log ? { log: options.log } : {}),
    });
  const sleep = (ms: number) => budget.clock.sleep(ms);
  const maxAttempts = options.maxAttempts ?? 4;
  const octokit = new HydraflowOctokit({
    auth: options.token,
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    userAgent: 'hydraflow',
    request: { fetch: options.fetch ?? nodeFetch },
    log: { debug: () => {}, info: () => {}, warn: options.log ?? (() => {}), error: options.log ?? (() => {}) },
  });

  const secrets = options.redact ?? [];
  octokit.hook.wrap('request', async (request, requestOptions) => {
    if (secrets.length > 0) redactRequest(requestOptions, secrets);
    const method = String(requestOptions.method).toUpperCase();
    const url = String(requestOptions.url);
    const waitForRateLimit = async (headers: Record<string, unknown> | undefined, attempt: number) => {
      const wait = secondsToWait(headers, budget.clock.now()) ?? 60;
      if (attempt >= maxAttempts + 2) {
        throw new RateLimitedError(`GitHub rate limit on ${method} ${url}: still limited after ${attempt} attempts`);
      }
      await budget.wait(wait * 1000, `${method} ${url}`);
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await request(requestOptions);
        budget.observe(response.headers as Record<string, unknown>);
        // GraphQL answers an exhausted budget with HTTP 200 and a RATE_LIMITED error: nothing ran, so wait and retry.
        const errors = (response.data as { errors?: { type?: string }[] } | undefined)?.errors;
        if (url === '/graphql' && errors?.some((e) => e.type === 'RATE_LIMITED')) {
          await waitForRateLimit(response.headers, attempt);
          continue;
        }
        return response;
      } catch (error) {
        if (error instanceof RateLimitedError) throw error;
        const status = error instanceof RequestError ? error.status : undefined;
        const rateLimited =
          error instanceof RequestError &&
          (status === 429 ||
            (status === 403 &&
              (error.response?.headers['retry-after'] !== undefined ||
                error.response?.headers['x-ratelimit-remaining'] === '0' ||
                /rate limit/i.test(error.message))));
        if (error instanceof RequestError) budget.observe(error.response?.headers as Record<string, unknown>);
        if (rateLimited) {
          await waitForRateLimit(error.response?.headers, attempt);
          continue;
        }
        const transient = status === undefined || status >= 500;
        if (!transient) throw error;
        if (
          !isIdempotent(method, url) &&
          !(requestOptions.request as { hydraflowIdempotent?: boolean } | undefined)?.hydraflowIdempotent
        ) {
          const path = error instanceof RequestError ? new URL(error.request.url).pathname : url;
          throw new UncertainWriteError(
            `GitHub answered ${status ?? 'a network error'} to ${method} ${path}: the write may or may not have happened; re-run this workflow run to finish (HydraFlow looks before it writes again)`,
            status,
          );
        }
        if (attempt >= maxAttempts) throw error;
        await sleep(Math.min(8000, 250 * 2 ** (attempt - 1)));
      }
    }
  });
  return octokit;
}

/**
 * Asks GET /rate_limit, which GitHub does not count against the budget it reports; the client's hook takes the budget
 * in from the answer's headers (RateBudget.observe).
 */
export async function readRateLimit(octokit: RestClient): Promise<void> {
  await octokit.request('GET /rate_limit');
}
