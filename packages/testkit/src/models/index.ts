export { startModelServer, anthropicCacheParts, openaiPrompt } from './server';
export type { Clock, ModelCall, ModelServer, ModelServerOptions } from './server';
export { ScriptRunner, parseRoleAndIssue } from './script';
export type { Fault, ParsedRequest, Script, ScriptEntry, ScriptValue, Wire } from './script';
export {
  AnthropicPromptCache,
  OpenAIPromptCache,
  anthropicMinCacheableTokens,
  FIVE_MINUTES_MS,
  ONE_HOUR_MS,
  OPENAI_MIN_CACHE_TOKENS,
  OPENAI_CACHE_INCREMENT,
} from './caching';
export { estimateTokens, textOfTokens, CHARS_PER_TOKEN } from './tokens';
export {
  LLAMA_FORMAT_ERROR,
  LLAMA_GRAMMAR_ERROR,
  LLAMA_GRAMMAR_LIMIT,
  LLAMA_MODEL_FILE,
  UNBOUNDED_NUMBER,
  grammarRefused,
  llamaJsonText,
} from './llama-cpp';
export { jsonSchemaErrors } from './json-schema';
