import type { z } from 'zod';
import {
  BudgetExceededError,
  checkBudget,
  costOf,
  estimateCall,
  findPrice,
  type Budgets,
  type LedgerEntry,
  type ModelPrice,
  type PriceTable,
} from '@hydraflow/core';
import {
  answerUsage,
  generateStructured,
  type CompletionRequest,
  type CompletionResult,
  type ModelProvider,
  type ToolTurnRequest,
  type ToolTurnResult,
} from '@hydraflow/providers';

export interface LedgerSink {
  readonly state: { readonly ledger: readonly LedgerEntry[] };
  record(entries: readonly LedgerEntry[]): void;
}

/** The repository's day (budgets.per_day) as seen by the calls for one issue: checked before, told after each call. */
export interface DayGuard {
  /** Throws DailyLimitError when a call estimated at `usd` does not fit the day. */
  assertRoom(usd: number): Promise<void>;
  spent(entries: readonly LedgerEntry[]): void;
}

/** What a structured call needs: the role, the request, and the schema its answer must match. */
export interface StructuredCall<T> {
  role: string;
  request: Omit<CompletionRequest, 'role'>;
  schema: z.ZodType<T>;
  schemaName: string;
}

/**
 * A structured call started ahead of its phase (`ModelGateway.begin`), while the phase is still reading the issue and
 * taking its lock: the phase adopts it by asking for the very same call, or it is cancelled.
 */
export interface EarlyCall {
  /** The call it is: adopted only by a `structured()` request with the same key. */
  readonly key: string;
  readonly outcome: Promise<{ value: unknown; calls: CompletionResult[] }>;
  /** Settles once the request is on its way (or the call failed before it could be): see `begin`. */
  readonly sent: Promise<void>;
  /** Stops the call if it is still running (a no-op once it has settled). */
  cancel(): void;
}

export interface ModelGatewayOptions {
  /** The configured provider/model for an agent role. */
  providerFor: (role: string) => Promise<ModelProvider>;
  prices: { table: PriceTable; fallback: ModelPrice };
  budgets: Budgets;
  /** Where calls are ledgered and the spend so far is read: the issue session, or the agent step's copy. */
  session: LedgerSink;
  phase: string;
  runId: string;
  now: () => Date;
  /** Set when budgets.per_day limits the day. */
  day?: DayGuard | undefined;
}

/**
 * Every model call of a phase goes through here: the budget is checked before the call (work stops before a limit is
 * exceeded), and every billed call — including failed parses and repairs — lands in the ledger.
 */
export class ModelGateway {
  constructor(private readonly options: ModelGatewayOptions) {}

  /** The gateway of one phase of this run, ledgering into `ledger` (the issue session, or a copy of its ledger). */
  static forRun(
    run: Pick<ModelGatewayOptions, 'providerFor' | 'prices' | 'now'> & {
      config: { budgets: Budgets };
      runner: { runId: string };
    },
    phase: string,
    ledger: LedgerSink,
    day?: DayGuard,
  ): ModelGateway {
    return new ModelGateway({
      providerFor: run.providerFor,
      prices: run.prices,
      budgets: run.config.budgets,
      session: ledger,
      phase,
      runId: run.runner.runId,
      now: run.now,
      day,
    });
  }

  /** A gateway like this one with some of its options replaced (another ledger, another provider source). */
  with(overrides: Partial<ModelGatewayOptions>): ModelGateway {
    return new ModelGateway({ ...this.options, ...overrides });
  }

  /** The price a call to `model` is ledgered at, and whether the price table knows the model (else the fallback's). */
  priceOf(model: string): { price: ModelPrice; priced: boolean } {
    const found = findPrice(model, this.options.prices.table);
    return found ? { price: found.price, priced: true } : { price: this.options.prices.fallback, priced: false };
  }

  /**
   * Starts loading `role`'s provider (its SDK is the largest module a run loads) without waiting for it, so the load
   * overlaps work that waits on something else (git, GitHub). A failure surfaces at the first call instead.
   */
  prepare(role: string): void {
    this.options.providerFor(role).catch(() => undefined);
  }

  /**
   * Starts `call` now, checking the budget against this gateway's ledger (for an early call: an empty one, since it is
   * begun only for an issue that was just opened and has spent nothing). The phase's own gateway checks the budget
   * again against the real ledger when it adopts the call, and ledgers it; a call nobody adopts is cancelled,
   * and if the provider had already begun answering it, it may still be billed (never more than one call). `started`,
   * a call begun earlier, is returned instead when it is this call, else cancelled.
   */
  begin<T>(call: StructuredCall<T>, started?: EarlyCall): EarlyCall {
    // A call the phase before already began (PhaseOutcome.nextCall) is taken when it is this very call.
    if (started?.key === callKey(call)) return started;
    started?.cancel();
    const controller = new AbortController();
    const prepared = (async () => {
      const provider = await this.options.providerFor(call.role);
      const request: CompletionRequest = { ...call.request, role: call.role, signal: controller.signal };
      await this.checkBudget(provider.model, request);
      return { provider, request };
    })();
    const outcome = prepared.then(({ provider, request }) =>
      generateStructured({ provider, request, schema: call.schema, schemaName: call.schemaName }),
    );
    // The SDK hands the request to fetch within the microtasks that follow the call; a macrotask later it is sent.
    const sent = prepared.then(
      () => new Promise<void>((resolve) => setImmediate(resolve)),
      () => undefined,
    );
    outcome.catch(() => undefined); // a cancelled call's failure is nobody's to handle
    return { key: callKey(call), outcome, sent, cancel: () => controller.abort() };
  }

  /** A structured call, validated against `schema` (see generateStructured); `early` is adopted if it is this call. */
  async structured<T>(args: StructuredCall<T> & { early?: EarlyCall | undefined }): Promise<T> {
    const provider = await this.options.providerFor(args.role);
    const request: CompletionRequest = { ...args.request, role: args.role };
    try {
      await this.checkBudget(provider.model, request);
    } catch (error) {
      args.early?.cancel();
      throw error;
    }
    const early = args.early?.key === callKey(args) ? args.early : undefined;
    if (!early) args.early?.cancel(); // another call: this one is not what the phase needs
    try {
      const { value, calls } = early
        ? // same key: the same role, request, schema name and so the same schema (each phase names its schema)
          ((await early.outcome) as { value: T; calls: CompletionResult[] })
        : await generateStructured({ provider, request, schema: args.schema, schemaName: args.schemaName });
      this.ledger(args.role, calls, provider.model);
      return value;
    } catch (error) {
      const calls = (error as { calls?: CompletionResult[] }).calls;
      if (calls) this.ledger(args.role, calls, provider.model);
      throw error;
    }
  }

  /**
   * One tool-using turn (see `runToolLoop`): the budget is checked first with an estimate of the whole request (tools,
   * system, every message, tool call and tool result), and the billed call is ledgered. Provider errors propagate
   * unchanged (credit exhaustion above all); a failed call was not billed and is not ledgered.
   */
  async turn(args: { role: string; request: Omit<ToolTurnRequest, 'role'> }): Promise<ToolTurnResult> {
    const provider = await this.options.providerFor(args.role);
    const request: ToolTurnRequest = { ...args.request, role: args.role };
    await this.checkBudget(provider.model, request, turnInputChars(request));
    const result = await provider.turn(request);
    this.ledger(args.role, [result], provider.model);
    return result;
  }

  /**
   * Ledgers an answer billed outside this gateway's own calls, read from its body (answerUsage): the first turn the
   * model proxy sent for the agent, which the agent did not take (src/agents/model-proxy.ts). Nothing when the body
   * is no answer (an error bills nothing).
   */
  async recordAnswer(role: string, body: string): Promise<void> {
    const provider = await this.options.providerFor(role);
    const billed = answerUsage(provider.name, body);
    if (!billed) return;
    const call = { text: '', usage: billed.usage, model: billed.model || provider.model, provider: provider.name };
    this.ledger(role, [{ ...call, durationMs: 0 }], provider.model);
  }

  private async checkBudget(
    model: string,
    request: Pick<CompletionRequest, 'system' | 'maxOutputTokens'> & { messages: readonly { content: string }[] },
    chars?: number,
  ): Promise<void> {
    const inputChars =
      chars ??
      request.system.reduce((n, s) => n + s.text.length, 0) +
        request.messages.reduce((n, m) => n + m.content.length, 0);
    const estimate = estimateCall(
      { inputChars, maxOutputTokens: request.maxOutputTokens ?? 2_000, model },
      this.options.prices.table,
      this.options.prices.fallback,
    );
    const check = checkBudget({
      ledger: this.options.session.state.ledger,
      runId: this.options.runId,
      budgets: this.options.budgets,
      estimate,
    });
    if (!check.ok) throw new BudgetExceededError(check.message, check.scope, { [check.metric]: check.limit });
    await this.options.day?.assertRoom(estimate.usd);
  }

  /**
   * Ledgers `calls` made with the configured model `requested`. Priced by the model the provider says answered, or
   * else by the configured one: a llama.cpp server answers with its model file's name, while `pricing` is keyed by
   * the model id in the config.
   */
  private ledger(role: string, calls: readonly CompletionResult[], requested: string): void {
    const { table, fallback } = this.options.prices;
    const entries: LedgerEntry[] = calls.map((call) => {
      const priceKey = findPrice(call.model, table) || !findPrice(requested, table) ? call.model : requested;
      const cost = costOf(call.usage, priceKey, table, fallback);
      return {
        at: this.options.now().toISOString(),
        runId: this.options.runId,
        phase: this.options.phase,
        role,
        provider: call.provider,
        model: call.model,
        inputTokens: call.usage.inputTokens,
        cachedInputTokens: call.usage.cachedInputTokens,
        cacheWriteTokens: call.usage.cacheWriteTokens,
        outputTokens: call.usage.outputTokens,
        costUsd: cost.usd,
        ...(cost.priced ? {} : { priced: false }),
      };
    });
    this.options.session.record(entries);
    this.options.day?.spent(entries);
  }
}

function callKey(call: Pick<StructuredCall<unknown>, 'role' | 'request' | 'schemaName'>): string {
  return JSON.stringify([call.role, call.schemaName, call.request]);
}

/** Characters of everything a tool turn sends: tool definitions, system, messages, tool calls and results. */
export function turnInputChars(request: Pick<ToolTurnRequest, 'system' | 'tools' | 'messages'>): number {
  let n = request.system.reduce((sum, s) => sum + s.text.length, 0);
  for (const t of request.tools) n += t.name.length + t.description.length + JSON.stringify(t.inputSchema).length;
  for (const m of request.messages) {
    n += m.content.length;
    if (m.role === 'assistant')
      for (const c of m.toolCalls ?? []) n += c.name.length + (c.invalidInput ?? JSON.stringify(c.input)).length;
  }
  return n;
}
