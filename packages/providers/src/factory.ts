import { UserError } from '../../core/src/errors';
import { AnthropicProvider } from './anthropic';
import { OpenAIProvider, type JsonMode } from './openai';
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
  /** Structured-output mode for OpenAI / OpenAI-compatible endpoints. */
  jsonMode?: JsonMode;
}

export function createProvider(options: CreateProviderOptions): ModelProvider {
  const { provider, maxRetries, jsonMode, ...rest } = options;
  if (!rest.apiKey) throw new UserError(`No API key for provider '${provider}': set the model API key secret`);
  if (!rest.model) throw new UserError(`No model configured for provider '${provider}'`);
  const common = { ...rest, maxAttempts: (maxRetries ?? 3) + 1 };
  switch (provider) {
    case 'openai':
      return new OpenAIProvider({ ...common, name: 'openai', ...(jsonMode ? { jsonMode } : {}) });
    case 'openai-compatible':
      if (!rest.baseUrl) throw new UserError("Provider 'openai-compatible' needs a base URL (e.g. http://localhost:11434/v1)");
      return new OpenAIProvider({ ...common, name: 'openai-compatible', ...(jsonMode ? { jsonMode } : {}) });
    case 'anthropic':
      return new AnthropicProvider(common);
    default:
      throw new UserError(`Unknown model provider '${String(provider)}': expected openai, anthropic or openai-compatible`);
  }
}
