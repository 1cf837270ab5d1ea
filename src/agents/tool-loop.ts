/**
 * The agent's tool loop: ask the model for a turn, run the tools it calls, feed the results back, until it answers
 * without calling a tool (its text is the summary) or a cap is hit. A cap is a typed result, never an exception: the
 * transcript, the tool calls made and the usage so far are always returned, and the work in the workspace stays.
 *
 * - Tool failures (unknown tool, arguments that are not JSON or fail the tool's schema, a tool that throws, a refused
 *   path) go back to the model as error tool results; the loop goes on.
 * - Caps are checked before every model call: `maxTurns` (model calls), `maxMs` (wall time; a command gets at most the
 *   time left), `maxTokens` (all tokens billed by the turns so far: input, cached, cache writes, output). The run and
 *   issue budgets of the ModelGateway end the loop the same way (`cap: 'budget'`).
 * - A reply the server itself could not read (an OutputFormatError) is said back to the model once; a second one
 *   propagates like the errors below.
 * - Any other error (credit exhausted, provider down) propagates unchanged, carrying the loop so far in
 *   `error.toolLoop` (see `partialToolLoop`), so the caller can still report the work.
 */
import { z } from 'zod';
import { BudgetExceededError, OutputFormatError, redactSecrets } from '@hydraflow/core';
import { providerJsonSchema } from '@hydraflow/providers';
import type {
  StopReason,
  ToolCall,
  ToolDefinition,
  ToolTurnRequest,
  ToolTurnResult,
  TurnMessage,
  Usage,
} from '@hydraflow/providers';

export interface ToolOutcome {
  content: string;
  isError?: boolean;
  /**
   * Set by a submit tool (e.g. grooming's submit_verdict): the agent's validated final answer. The loop ends after
   * the turn that produced it, with `final` in its result — structured output for an agent that also uses tools.
   */
  final?: unknown;
}

export interface ToolContext {
  /** Epoch ms (by the loop's clock) by which the loop must end. */
  deadline: number;
  /** Time left before that deadline, in ms; long-running tools (commands) stop within it. */
  remainingMs: number;
}

/** A tool the agent can call. Build one with `defineTool` (typed input). */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** zod schema of the input; its JSON Schema is what the model sees. */
  readonly input: z.ZodType;
  run(input: unknown, context: ToolContext): Promise<ToolOutcome>;
}

export function defineTool<I>(tool: {
  name: string;
  description: string;
  input: z.ZodType<I>;
  run(input: I, context: ToolContext): Promise<ToolOutcome>;
}): AgentTool {
  return tool as unknown as AgentTool;
}

/** What the model is told about a tool: its input schema in the portable form every provider compiles. */
export function toolDefinition(tool: AgentTool): ToolDefinition {
  return { name: tool.name, description: tool.description, inputSchema: providerJsonSchema(tool.input) };
}

export interface ToolLoopLimits {
  /** Model calls at most. */
  maxTurns: number;
  /** Wall time at most, in ms. */
  maxMs: number;
  /** Tokens billed by all turns together at most (input + cached input + cache writes + output). */
  maxTokens: number;
}

export type LoopCap = 'turns' | 'time' | 'tokens' | 'budget';

/** What the loop needs from the ModelGateway. */
export interface TurnGateway {
  turn(args: { role: string; request: Omit<ToolTurnRequest, 'role'> }): Promise<ToolTurnResult>;
}

export interface ToolLoopArgs {
  gateway: TurnGateway;
  role: string;
  /** Issue the work is about (ledger attribution; the task should say `Issue #<n>` too). */
  issue?: number;
  /** System prompt segments; mark the stable ones `cache: true`. */
  system: { text: string; cache?: boolean }[];
  /** The first user message. */
  task: string;
  tools: AgentTool[];
  limits: ToolLoopLimits;
  /** Output tokens per turn (default 8,000). */
  maxOutputTokens?: number;
  /** Characters of one tool result sent to the model at most (default 30,000; the end is cut with a note). */
  maxResultChars?: number;
  /** Tool calls executed per turn at most (default 16); the rest get an error result. */
  maxToolCallsPerTurn?: number;
  /** Clock (epoch ms), injectable for tests. */
  now?: () => number;
  /** Called after every model turn (grooming starts its other agents once the first turn has written the cache). */
  onTurn?: (turns: number) => void;
  /** Called after a turn's tool calls ran, before the next model call: work to do while the model thinks. */
  afterTools?: (context: ToolContext) => void;
  /**
   * Once aborted (the agent step was cancelled: src/runner/step-cancel.ts), no further model call or tool call starts
   * and the loop rejects with the signal's reason. The call in flight is let finish, so that the model proxy counts it.
   */
  signal?: AbortSignal;
  /** The submit tool that ends the task: an answer without any tool call is sent back once, asking for it. */
  finalTool?: string;
  /** The provider's server-side web search, offered in every turn (ToolTurnRequest.webSearch). */
  webSearch?: { maxUses: number };
  /**
   * Secret values masked (`***`) in every tool result before the model reads it: a command's output or a file it wrote
   * can hold what repository code found in the process table, and a model that never sees a secret cannot repeat it.
   */
  redact?: readonly string[];
}

export interface ToolCallRecord {
  turn: number;
  id: string;
  name: string;
  input: unknown;
  isError: boolean;
  /** The result as the model saw it (already capped). */
  content: string;
  durationMs: number;
}

interface ToolLoopCommon {
  /** Model calls made. */
  turns: number;
  /** Tokens billed by those calls (see ToolLoopLimits.maxTokens). */
  tokens: number;
  usage: Usage;
  elapsedMs: number;
  toolCalls: ToolCallRecord[];
  /** The whole conversation after the task (assistant turns and tool results), for the phase's record or a resume. */
  messages: TurnMessage[];
  /** Stop reason of the last turn, if any. */
  stopReason: StopReason | undefined;
}

export type ToolLoopResult =
  | (ToolLoopCommon & { outcome: 'finished'; summary: string; final?: unknown })
  | (ToolLoopCommon & {
      outcome: 'capped';
      cap: LoopCap;
      /** Human-readable: which limit, its value, and what was used. */
      detail: string;
      /** The model's last text, if any (not a summary: the model did not finish). */
      lastText: string;
      /** For cap 'budget': the gateway's error, so the phase can report it the usual way. */
      error?: BudgetExceededError;
    });

/** The loop so far, attached to an error that ended it (`error.toolLoop`). */
export function partialToolLoop(error: unknown): ToolLoopCommon | undefined {
  return (error as { toolLoop?: ToolLoopCommon } | null)?.toolLoop;
}

const tokensOf = (u: Usage) => u.inputTokens + u.cachedInputTokens + u.cacheWriteTokens + u.outputTokens;

function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters cut; ask for less, e.g. a line range or a narrower path]`;
}

/** The output a turn asks for unless told otherwise (the model proxy allows no more: src/phases/implement.ts). */
export const TURN_OUTPUT_TOKENS = 8_000;

type TurnArgs = Pick<ToolLoopArgs, 'issue' | 'system' | 'maxOutputTokens' | 'webSearch'>;

/** What one turn asks the model: the loop's fixed parts and the conversation so far. */
function turnRequest(
  args: TurnArgs,
  definitions: ToolDefinition[],
  conversation: readonly TurnMessage[],
): Omit<ToolTurnRequest, 'role'> {
  return {
    ...(args.issue !== undefined ? { issue: args.issue } : {}),
    system: args.system,
    tools: definitions,
    messages: [...conversation],
    maxOutputTokens: args.maxOutputTokens ?? TURN_OUTPUT_TOKENS,
    ...(args.webSearch ? { webSearch: args.webSearch } : {}),
  };
}

/** The first turn's request of a loop with these arguments, before any of it runs (src/agents/first-turn.ts). */
export function firstTurnRequest(args: TurnArgs & Pick<ToolLoopArgs, 'task' | 'tools'>): Omit<ToolTurnRequest, 'role'> {
  return turnRequest(args, args.tools.map(toolDefinition), [{ role: 'user', content: args.task }]);
}

export async function runToolLoop(args: ToolLoopArgs): Promise<ToolLoopResult> {
  const now = args.now ?? Date.now;
  const started = now();
  const deadline = started + args.limits.maxMs;
  const maxResult = args.maxResultChars ?? 30_000;
  const maxPerTurn = args.maxToolCallsPerTurn ?? 16;
  const byName = new Map(args.tools.map((t) => [t.name, t]));
  const definitions = args.tools.map(toolDefinition);
  const conversation: TurnMessage[] = [{ role: 'user', content: args.task }];
  const usage: Usage = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
  const records: ToolCallRecord[] = [];
  let turns = 0;
  let lastText = '';
  let nudged = false;
  let unreadable = false;
  let stopReason: StopReason | undefined;

  const common = (): ToolLoopCommon => ({
    turns,
    tokens: tokensOf(usage),
    usage: { ...usage },
    elapsedMs: now() - started,
    toolCalls: records,
    messages: conversation.slice(1),
    stopReason,
  });
  const capped = (cap: LoopCap, detail: string, error?: BudgetExceededError): ToolLoopResult => ({
    ...common(),
    outcome: 'capped',
    cap,
    detail,
    lastText,
    ...(error ? { error } : {}),
  });

  const stopIfCancelled = () => {
    if (args.signal?.aborted) throw args.signal.reason;
  };
  for (;;) {
    stopIfCancelled();
    if (turns >= args.limits.maxTurns)
      return capped('turns', `turn limit reached: ${turns} of ${args.limits.maxTurns} model calls made`);
    if (now() >= deadline)
      return capped('time', `time limit reached: ${now() - started} ms of ${args.limits.maxMs} ms used`);
    if (tokensOf(usage) >= args.limits.maxTokens)
      return capped('tokens', `token limit reached: ${tokensOf(usage)} of ${args.limits.maxTokens} tokens used`);

    let result: ToolTurnResult;
    try {
      result = await args.gateway.turn({ role: args.role, request: turnRequest(args, definitions, conversation) });
    } catch (error) {
      if (error instanceof BudgetExceededError) return capped('budget', error.message, error);
      if (error instanceof OutputFormatError && !unreadable) {
        // The server could not read the reply (llama.cpp's format 500): a bad answer, said once like any other.
        unreadable = true;
        turns++;
        conversation.push(
          { role: 'assistant', content: '(a reply the server could not read)' },
          {
            role: 'user',
            content: `Your reply could not be read (${error.message}). Reply again${args.finalTool ? `, calling ${args.finalTool} with your answer` : ''}.`,
          },
        );
        continue;
      }
      if (error && typeof error === 'object') Object.assign(error, { toolLoop: common() });
      throw error;
    }
    turns++;
    args.onTurn?.(turns);
    usage.inputTokens += result.usage.inputTokens;
    usage.cachedInputTokens += result.usage.cachedInputTokens;
    usage.cacheWriteTokens += result.usage.cacheWriteTokens;
    usage.outputTokens += result.usage.outputTokens;
    stopReason = result.stopReason;
    if (result.text) lastText = result.text;

    if (result.toolCalls.length === 0) {
      conversation.push({ role: 'assistant', content: result.text });
      if (result.stopReason === 'max_tokens') {
        // Cut off mid-answer: let it continue rather than take half a sentence as the summary.
        conversation.push({ role: 'user', content: 'Your reply was cut off at the output limit. Continue.' });
        continue;
      }
      if (args.finalTool && !nudged) {
        // Models sometimes write their answer as prose instead of calling the submit tool: ask once.
        nudged = true;
        conversation.push({ role: 'user', content: `Call ${args.finalTool} now with your answer; prose is not read.` });
        continue;
      }
      return { ...common(), outcome: 'finished', summary: result.text };
    }

    conversation.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
    let final: { value: unknown } | undefined;
    for (const [index, call] of result.toolCalls.entries()) {
      stopIfCancelled();
      const t0 = now();
      const outcome =
        index >= maxPerTurn
          ? { content: `Not run: at most ${maxPerTurn} tool calls per turn.`, isError: true }
          : now() >= deadline
            ? { content: 'Not run: the time limit of this task was reached.', isError: true }
            : await runOne(byName, call, { deadline, remainingMs: deadline - now() });
      const content = capText(redactSecrets(outcome.content, args.redact ?? []), maxResult);
      const isError = outcome.isError === true;
      if (!isError && 'final' in outcome && final === undefined) final = { value: outcome.final };
      conversation.push({ role: 'tool', toolCallId: call.id, content, ...(isError ? { isError } : {}) });
      records.push({
        turn: turns,
        id: call.id,
        name: call.name,
        input: call.invalidInput ?? call.input,
        isError,
        content,
        durationMs: now() - t0,
      });
    }
    if (final) return { ...common(), outcome: 'finished', summary: result.text, final: final.value };
    args.afterTools?.({ deadline, remainingMs: deadline - now() });
  }
}

async function runOne(tools: Map<string, AgentTool>, call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
  const tool = tools.get(call.name);
  if (!tool)
    return { content: `Unknown tool '${call.name}'. Available: ${[...tools.keys()].join(', ')}.`, isError: true };
  if (call.invalidInput !== undefined)
    return { content: `The arguments were not a JSON object: ${call.invalidInput.slice(0, 500)}`, isError: true };
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success)
    return { content: `Invalid arguments for ${call.name}:\n${z.prettifyError(parsed.error)}`, isError: true };
  try {
    return await tool.run(parsed.data, context);
  } catch (error) {
    return { content: `${call.name} failed: ${error instanceof Error ? error.message : String(error)}`, isError: true };
  }
}
