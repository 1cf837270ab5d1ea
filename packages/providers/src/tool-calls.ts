/** Helpers shared by the adapters' tool-using turns. */
import type { StopReason, ToolCall } from './types';

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** OpenAI tool arguments arrive as a JSON string; anything but a JSON object is kept raw as `invalidInput`. */
export function toolCallFromArguments(id: string, name: string, raw: string): ToolCall {
  try {
    const parsed: unknown = JSON.parse(raw === '' ? '{}' : raw);
    if (isObject(parsed)) return { id, name, input: parsed };
  } catch {
    // fall through: keep the raw text so the loop can tell the model what was wrong
  }
  return { id, name, input: {}, invalidInput: raw };
}

/** Anthropic tool_use input is already parsed; it should always be an object. */
export function toolCallFromInput(id: string, name: string, input: unknown): ToolCall {
  return isObject(input) ? { id, name, input } : { id, name, input: {}, invalidInput: JSON.stringify(input) };
}

export function openaiStopReason(finish: string | null | undefined): StopReason {
  switch (finish) {
    case 'stop':
      return 'end';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return 'other';
  }
}

export function anthropicStopReason(stop: string | null | undefined): StopReason {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}
