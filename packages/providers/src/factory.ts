import { UserError } from '@hydraflow/core';
import type { JsonMode } from './openai';
import type { RetryOptions } from './retry';
import type { ModelProvider, ProviderName } from './types';

export interface CreateProviderOptions extends Omit<RetryOptions, 'maxAttempts'> {
  provider: ProviderName;
  model: string;
  apiKey: string;
  /** Required for 'openai-compatible'; optional override for the others (e.g. the scripted model server). */
  baseUrl?: string;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3, i.e. 4 attempts in all). */
  maxRetries?: number;
  /** The HTTP client the SDK sends with (default: HydraFlow's fetch over node:http). */
  fetch?: typeof fetch;
  /** Structured-output mode for OpenAI / OpenAI-compatible endpoints. */
  jsonMode?: JsonMode;
}

/**
 * The adapter for a provider. Async because each SDK is loaded only when it is used: one run talks to one provider, and
 * loading both SDKs would cost most of the action's start-up time.
 */
export async function createProvider(options: CreateProviderOptions): Promise<ModelProvider> {
  const { provider, maxRetries, jsonMode, ...rest } = options;
  if (!rest.apiKey) throw new UserError(`No API key for provider '${provider}': set the model API key secret`);
  if (!rest.model) throw new UserError(`No model configured for provider '${provider}'`);
  const common = { ...rest, maxAttempts: (maxRetries ?? 3) + 1 };
  switch (provider) {
    case 'openai': {
      const { OpenAIProvider } = await import('./openai');
      return new OpenAIProvider({ ...common, name: 'openai', ...(jsonMode ? { jsonMode } : {}) });
    }
    case 'openai-compatible': {
      if (!rest.baseUrl)
        throw new UserError("Provider 'openai-compatible' needs a base URL (e.g. http://localhost:11434/v1)");
      const { OpenAIProvider } = await import('./openai');
      return new OpenAIProvider({ ...common, name: 'openai-compatible', ...(jsonMode ? { jsonMode } : {}) });
    }
    case 'anthropic': {
      const { AnthropicProvider } = await import('./anthropic');
      return new AnthropicProvider(common);
    }
    default:
      throw new UserError(
        `Unknown model provider '${String(provider)}': expected openai, anthropic or openai-compatible`,
      );
  }
}
