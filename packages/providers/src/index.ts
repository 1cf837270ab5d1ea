export type {
  AgentRole,
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  ModelProvider,
  ProviderName,
  StructuredRequest,
  Usage,
  ToolDefinition,
  ToolCall,
  TurnMessage,
  ToolTurnRequest,
  ToolTurnResult,
  StopReason,
} from './types';
// The adapters (and their SDKs) are not re-exported: createProvider loads the one a run uses, on demand.
export type { OpenAIProviderOptions, JsonMode } from './openai';
export type { AnthropicProviderOptions } from './anthropic';
export { createProvider, type CreateProviderOptions } from './factory';
export { answerUsage } from './usage';
export {
  providerJsonSchema,
  portableJsonSchema,
  MAX_PORTABLE_LENGTH,
  MAX_PORTABLE_ITEMS,
  MAX_ENUM_INTEGERS,
} from './portable-schema';
export {
  generateStructured,
  toStrictJsonSchema,
  repairMessages,
  StructuredOutputError,
  type GenerateStructuredArgs,
} from './structured';
export {
  withRetries,
  classifyError,
  retryAfterMs,
  type RetryOptions,
  type RetryContext,
  type ErrorClass,
} from './retry';
