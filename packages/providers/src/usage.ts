/**
 * What a provider's answer says it billed, as HydraFlow's Usage. Apart from the adapters (and their SDKs, which it
 * only takes types from): the agent step also reads the usage of an answer it never asked its SDK for, the first turn
 * the model proxy sent and the agent did not take (src/agents/model-proxy.ts).
 */
import type { Usage as AnthropicUsage } from '@anthropic-ai/sdk/resources/messages';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ProviderName, Usage } from './types';

/** Anthropic usage → Usage: input_tokens already excludes cache reads and writes. */
export function anthropicUsage(usage: Partial<AnthropicUsage> | undefined): Usage {
  const searches = (usage as { server_tool_use?: { web_search_requests?: unknown } } | undefined)?.server_tool_use
    ?.web_search_requests;
  return {
    inputTokens: usage?.input_tokens ?? 0,
    cachedInputTokens: usage?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage?.cache_creation_input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof searches === 'number' && searches > 0 ? { webSearches: searches } : {}),
  };
}

/** OpenAI usage → Usage: prompt_tokens includes cached tokens, so the uncached rest is the difference. */
export function openaiUsage(usage: CompletionUsage | undefined): Usage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
    cachedInputTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: usage?.completion_tokens ?? 0,
  };
}

/**
 * The usage and model of a provider's answer body (Messages, or Chat Completions), read without its SDK; undefined
 * when the body is not one (an error answer bills nothing).
 */
export function answerUsage(provider: ProviderName, body: string): { usage: Usage; model: string } | undefined {
  let answer: { usage?: unknown; model?: unknown };
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    return undefined;
  }
  if (!answer || typeof answer.usage !== 'object' || answer.usage === null) return undefined;
  const model = typeof answer.model === 'string' ? answer.model : '';
  const usage =
    provider === 'anthropic'
      ? anthropicUsage(answer.usage as Partial<AnthropicUsage>)
      : openaiUsage(answer.usage as CompletionUsage);
  return { usage, model };
}
