export type {
  AgentRole,
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ProviderName,
  StructuredRequest,
  Usage,
} from './types';
export { OpenAIProvider, openaiUsage, schemaName, type OpenAIProviderOptions, type JsonMode } from './openai';
export { AnthropicProvider, anthropicUsage, type AnthropicProviderOptions } from './anthropic';
export { createProvider, type CreateProviderOptions } from './factory';
export {
  generateStructured,
  toStrictJsonSchema,
  repairMessages,
  StructuredOutputError,
  type GenerateStructuredArgs,
} from './structured';
export { withRetries, classifyError, retryAfterMs, type RetryOptions, type RetryContext, type ErrorClass } from './retry';
