/**
 * What the agent job's model proxy lets through and what it counts (docs/adr/0022-the-model-proxy-meters-the-agent.md).
 * The proxy's token is in the agent step's environment, which the code the agent's commands run can read from /proc:
 * that code can call the model through the proxy. So the proxy, not the agent step, is where the agent job's spend is
 * bounded and counted. It forwards only the configured model, whole answers (no stream), one call at a time, with no
 * more output than the agent asks for, and only while the allowance the routing job computed has room for the call's
 * output; it ledgers every answer it forwarded and, when it stops, signs that ledger with a key made before any
 * repository code ran. The publish job takes the agent's spend from the signed report, never from the result record
 * the agent's commands could rewrite.
 *
 * Loaded by the proxy and its launcher, on the agent job's critical path: node's crypto, the usage reader and the cost
 * function, nothing that loads zod or an SDK.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { LedgerEntry, ModelPrice } from '@hydraflow/core';
import { costOf } from '@hydraflow/core/cost';
import type { ProviderName } from '@hydraflow/providers';
import { answerUsage } from '@hydraflow/providers/usage';

/**
 * The limits the routing job hands the proxy in the task artifact (file PROXY_LIMITS_FILE): the implement model and its
 * price, the agent's output per call, and what its budgets leave it (budgets.per_run, per_issue, per_day).
 */
export interface ProxyLimits {
  v: 1;
  issue: number;
  startSha: string;
  runId: string;
  provider: ProviderName;
  model: string;
  price: ModelPrice;
  /** false when the model is not in the price table and the fallback price is used. */
  priced: boolean;
  /** The most output tokens one call may ask for (the agent's tool loop asks for this many). */
  maxOutputTokens: number;
  /** What the agent may spend, in USD and tokens; absent: no limit of that kind. */
  usd?: number | undefined;
  tokens?: number | undefined;
}

export const PROXY_LIMITS_FILE = 'proxy-limits.json';

/** What the proxy signs when it stops: every answer it forwarded, and how many calls it refused. */
export interface MeterReport {
  v: 1;
  issue: number;
  startSha: string;
  runId: string;
  ledger: LedgerEntry[];
  refused: number;
}

/** The report as the proxy hands it on: its JSON text and an Ed25519 signature of that text (base64). */
export interface SignedMeter {
  report: string;
  signature: string;
}

/**
 * Calls past this many are added into the last entry (a rolled-up entry): a report stays small whatever is called.
 * The publish job refuses a report with more (src/phases/implement-handoff.ts, meterReportSchema).
 */
export const MAX_METERED_ENTRIES = 100;

const number = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The limits file as the routing job wrote it, checked field by field; an error naming what is wrong otherwise. */
export function parseProxyLimits(text: string): ProxyLimits | string {
  let raw: Partial<Record<keyof ProxyLimits, unknown>>;
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch {
    return 'not JSON';
  }
  const price = (raw.price ?? {}) as Partial<Record<keyof ModelPrice, unknown>>;
  const prices = [price.input, price.output, price.cachedInput, price.cacheWrite].map(number);
  const limit = (v: unknown) => v === undefined || (number(v) ?? -1) >= 0;
  const ok =
    raw.v === 1 &&
    Number.isInteger(raw.issue) &&
    typeof raw.startSha === 'string' &&
    typeof raw.runId === 'string' &&
    (raw.provider === 'anthropic' || raw.provider === 'openai' || raw.provider === 'openai-compatible') &&
    typeof raw.model === 'string' &&
    raw.model !== '' &&
    prices.every((p) => p !== undefined && p >= 0) &&
    typeof raw.priced === 'boolean' &&
    (number(raw.maxOutputTokens) ?? 0) > 0 &&
    limit(raw.usd) &&
    limit(raw.tokens);
  return ok ? (raw as ProxyLimits) : 'not the limits the routing job writes';
}

/** A request body's JSON object; undefined when it is not one. */
function parsedObject(raw: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The output tokens a request asks for at most (Messages: max_tokens; Chat Completions: max_completion_tokens). */
function askedOutput(body: Record<string, unknown>): number | undefined {
  return number(body.max_completion_tokens) ?? number(body.max_tokens);
}

/**
 * The proxy's account of one agent job: decides whether a call may go upstream and ledgers every answer that came back.
 * The proxy sends one call at a time (src/agents/model-proxy.ts), so a call is admitted against everything billed
 * before it.
 */
export class ProxyMeter {
  private readonly entries: LedgerEntry[] = [];
  private refusedCalls = 0;
  private usd = 0;
  private tokens = 0;

  constructor(
    private readonly limits: ProxyLimits,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Why the call whose body is `raw` is not sent upstream (one line), or undefined when it may be. `headers`: the
   * request's, lower-cased.
   */
  admit(raw: Buffer, headers: Record<string, unknown> = {}): string | undefined {
    const why = headers['anthropic-beta']
      ? 'beta features are not forwarded (header anthropic-beta)'
      : this.refusal(raw);
    if (why) this.refusedCalls += 1;
    return why;
  }

  private refusal(raw: Buffer): string | undefined {
    const { limits } = this;
    const body = parsedObject(raw);
    if (!body) return 'the request body is not a JSON object';
    if (body.model !== limits.model)
      return `only the configured implement model, ${limits.model}, is called through this proxy, not ${JSON.stringify(body.model)}`;
    if (body.stream === true)
      return 'streamed answers are not forwarded: the proxy counts what each whole answer billed';
    if (body.n !== undefined && body.n !== 1) return 'one answer per call (n = 1)';
    // billed apart from tokens (per search, per container hour) and outside what the agent's tools do
    const tools = Array.isArray(body.tools) ? (body.tools as { type?: unknown }[]) : [];
    const server = tools.find((t) => t && t.type !== undefined && t.type !== 'custom' && t.type !== 'function');
    if (server || body.mcp_servers !== undefined || body.container !== undefined)
      return `server-side tools are not forwarded (${server ? String(server.type) : body.mcp_servers !== undefined ? 'mcp_servers' : 'container'}): the agent's tools run in its job`;
    const output = askedOutput(body);
    if (output === undefined || output > limits.maxOutputTokens)
      return `a call may ask for at most ${limits.maxOutputTokens} output tokens (max_tokens), got ${output ?? 'no limit'}`;
    // The call's output at the most is what it may add: the agent's own budget check estimates the input on top, so
    // this never refuses a call the agent would make, and a call that crosses the limit is the last one.
    const outputUsd = (output * limits.price.output) / 1_000_000;
    if (limits.usd !== undefined && this.usd + outputUsd > limits.usd)
      return `the coding agent's model budget is spent: $${this.usd.toFixed(4)} of the $${limits.usd.toFixed(4)} its budgets (budgets.per_run, per_issue, per_day) left it`;
    if (limits.tokens !== undefined && this.tokens + output > limits.tokens)
      return `the coding agent's token budget is spent: ${this.tokens} of the ${limits.tokens} tokens its budgets left it`;
    return undefined;
  }

  /**
   * Ledgers an answer the proxy forwarded: what its body says it billed; an answer that says nothing (a server that
   * reports no usage) is counted at the request's size and the output it asked for. An error answer bills nothing.
   */
  account(status: number, answer: Buffer, request: Buffer): void {
    if (status < 200 || status >= 300) return;
    const { limits } = this;
    const billed = answerUsage(limits.provider, answer.toString('utf8'));
    const usage = billed?.usage ?? {
      inputTokens: Math.ceil(request.length / 3),
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: askedOutput(parsedObject(request) ?? {}) ?? limits.maxOutputTokens,
    };
    const cost = costOf(usage, limits.model, { [limits.model]: limits.price }).usd;
    const model = billed?.model && /^[A-Za-z0-9._:/@*-]{1,100}$/.test(billed.model) ? billed.model : limits.model;
    const entry: LedgerEntry = {
      at: this.now().toISOString(),
      runId: limits.runId,
      phase: 'implement',
      role: 'implement',
      provider: limits.provider,
      model,
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      outputTokens: usage.outputTokens,
      costUsd: cost,
      ...(limits.priced ? {} : { priced: false as const }),
    };
    this.usd += cost;
    this.tokens += entry.inputTokens + entry.cachedInputTokens + entry.cacheWriteTokens + entry.outputTokens;
    const last = this.entries.at(-1);
    if (this.entries.length < MAX_METERED_ENTRIES || !last) this.entries.push(entry);
    else this.entries[this.entries.length - 1] = rolledUp(last, entry);
  }

  report(): MeterReport {
    const { issue, startSha, runId } = this.limits;
    return { v: 1, issue, startSha, runId, ledger: [...this.entries], refused: this.refusedCalls };
  }
}

function rolledUp(a: LedgerEntry, b: LedgerEntry): LedgerEntry {
  return {
    ...b,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: Math.round((a.costUsd + b.costUsd) * 1e6) / 1e6,
    calls: (a.calls ?? 1) + 1,
  };
}

/**
 * The proxy's signing key pair, made by actions/model-proxy before any repository code runs: the private key goes to
 * the proxy through its standard input, the public key out as the step's output meter-key (an Ed25519 JWK's `x`).
 */
export function meterKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: String(publicKey.export({ format: 'jwk' }).x),
  };
}

export function signMeter(report: MeterReport, privateKey: string): SignedMeter {
  const text = JSON.stringify(report);
  const key = createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' });
  return { report: text, signature: sign(null, Buffer.from(text), key).toString('base64') };
}

/** The report `signed` holds if `publicKey` (input meter-key) signed it; undefined when it did not. */
export function verifiedMeter(signed: SignedMeter, publicKey: string): MeterReport | undefined {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    if (!verify(null, Buffer.from(signed.report), key, Buffer.from(signed.signature, 'base64'))) return undefined;
    return JSON.parse(signed.report) as MeterReport;
  } catch {
    return undefined;
  }
}
