/**
 * Structured output: zod schema → portable, strict JSON Schema → the adapter's native structured mode → parse +
 * validate, with exactly one repair attempt. Every call, including a failed one and the repair, is returned for the
 * ledger.
 *
 * JSON Schema conversion: `providerJsonSchema` (portable-schema.ts: zod 4's `z.toJSONSchema` of the input shape, with
 * the bounds grammar engines cannot compile dropped — zod still checks them on the answer), adapted to OpenAI strict
 * mode: every object gets `additionalProperties: false` and lists all of its properties in `required`; a property that
 * was optional becomes nullable (`anyOf: [schema, {type: 'null'}]`) and nulls in such properties are removed again
 * before zod validates. Limits: the root must be an object; records / maps (`additionalProperties` with a schema),
 * tuples, and transforms or refinements the JSON Schema cannot express are not enforced by the API (zod still
 * validates them after the fact).
 *
 * An answer the server itself could not parse (llama.cpp's HTTP 500 "The model produced output that does not match
 * the expected … format", an OutputFormatError) is a bad answer like any other: one repair, no blind retry.
 *
 * Ledger: the result carries every call. On failure after the repair, a StructuredOutputError (a ModelOutputError)
 * carries them in `calls`; if the repair call itself throws (e.g. CreditExhaustedError), the error is rethrown
 * unchanged except for a `calls` property holding the first, already-billed call.
 */
import { z } from 'zod';
import { ModelOutputError, OutputFormatError } from '@hydraflow/core';
import { providerJsonSchema } from './portable-schema';
import type { ChatMessage, CompletionRequest, CompletionResult, ModelProvider } from './types';

type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** zod → JSON Schema compatible with OpenAI strict structured outputs (and fine for Anthropic tool input). */
export function toStrictJsonSchema(schema: z.ZodType): JsonObject {
  return structuredClone(jsonSchemasOf(schema).strict);
}

const converted = new WeakMap<z.ZodType, { original: JsonObject; strict: JsonObject }>();

/**
 * Both JSON Schemas of a zod schema (the portable one, and its strict form), converted once per process (a conversion
 * costs milliseconds on the cold path). Shared and never mutated: the adapters copy what they send.
 */
function jsonSchemasOf(schema: z.ZodType): { original: JsonObject; strict: JsonObject } {
  let schemas = converted.get(schema);
  if (!schemas) {
    const original = providerJsonSchema(schema);
    const strict = strictify(original) as JsonObject; // a new object at every level it changes
    schemas = { original, strict };
    converted.set(schema, schemas);
  }
  return schemas;
}

function strictify(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictify);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictify(v)]));
    } else if (['items', 'anyOf', 'oneOf', 'allOf', 'prefixItems', 'not'].includes(key)) {
      out[key] = strictify(value);
    } else if ((key === '$defs' || key === 'definitions') && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictify(v)]));
    } else {
      out[key] = value;
    }
  }
  if (isObject(out.properties)) {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    const props = out.properties;
    for (const key of Object.keys(props)) {
      if (!required.has(key)) props[key] = { anyOf: [props[key], { type: 'null' }] };
    }
    out.required = Object.keys(props);
    out.additionalProperties = false;
    if (out.type === undefined) out.type = 'object';
  }
  return out;
}

/** Remove nulls the strict schema forced into originally-optional properties. */
function stripOptionalNulls(value: unknown, schema: unknown, root: JsonObject, depth = 0): void {
  if (depth > 64 || !isObject(schema)) return;
  if (typeof schema.$ref === 'string') {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(schema.$ref);
    const defs = match ? (root[match[1] ?? ''] as JsonObject | undefined) : undefined;
    return stripOptionalNulls(value, defs?.[match?.[2] ?? ''], root, depth + 1);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) stripOptionalNulls(value, b, root, depth + 1);
  }
  if (Array.isArray(value) && schema.items) {
    for (const item of value) stripOptionalNulls(item, schema.items, root, depth + 1);
  }
  if (isObject(value) && isObject(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (!(key in value)) continue;
      if (value[key] === null && !required.has(key)) delete value[key];
      else stripOptionalNulls(value[key], sub, root, depth + 1);
    }
  }
}

/** Lenient JSON extraction: trims, removes a Markdown code fence around the JSON. */
function extractJson(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(trimmed);
  return fenced?.[1]?.trim() ?? trimmed;
}

type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A reply, or why the server could not read it (an OutputFormatError: the call is kept, with no usage known). */
interface Reply {
  result: CompletionResult;
  unreadable?: string;
}

async function reply(
  provider: ModelProvider,
  request: CompletionRequest,
  jsonSchema: { name: string; jsonSchema: JsonObject },
): Promise<Reply> {
  const started = Date.now();
  try {
    return { result: await provider.completeJson(request, jsonSchema) };
  } catch (error) {
    if (!(error instanceof OutputFormatError)) throw error;
    const usage = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
    const result = {
      text: '',
      usage,
      model: provider.model,
      provider: provider.name,
      durationMs: Date.now() - started,
    };
    return { result, unreadable: error.message };
  }
}

function check<T>({ result, unreadable }: Reply, schema: z.ZodType<T>, originalJsonSchema: JsonObject): Checked<T> {
  if (unreadable !== undefined) return { ok: false, reason: `the server could not read the reply (${unreadable})` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(extractJson(result.text));
  } catch (error) {
    const why = result.truncated ? 'the output was cut off at the output-token limit' : 'the output is not valid JSON';
    return { ok: false, reason: `${why} (${(error as Error).message})` };
  }
  stripOptionalNulls(parsed, originalJsonSchema, originalJsonSchema);
  const validated = schema.safeParse(parsed);
  if (validated.success) return { ok: true, value: validated.data };
  return {
    ok: false,
    reason: `${result.truncated ? 'the output was cut off at the output-token limit; ' : ''}the JSON does not match the schema:\n${z.prettifyError(validated.error)}`,
  };
}

/** A ModelOutputError that also carries every call made, so the caller can still ledger their cost. */
export class StructuredOutputError extends ModelOutputError {
  override name = 'ModelOutputError';
  constructor(
    message: string,
    raw: string,
    readonly calls: CompletionResult[],
    readonly reason: string,
  ) {
    super(message, raw);
  }
}

export interface GenerateStructuredArgs<T> {
  provider: ModelProvider;
  request: CompletionRequest;
  schema: z.ZodType<T>;
  schemaName: string;
}

export function repairMessages(request: CompletionRequest, raw: string, reason: string): ChatMessage[] {
  return [
    ...request.messages,
    { role: 'assistant', content: raw.trim() === '' ? '(empty reply)' : raw },
    {
      role: 'user',
      content: `Your previous reply could not be used: ${reason}\n\nReply again with only the corrected, complete JSON object that matches the required schema. No prose.`,
    },
  ];
}

export async function generateStructured<T>({
  provider,
  request,
  schema,
  schemaName,
}: GenerateStructuredArgs<T>): Promise<{ value: T; calls: CompletionResult[] }> {
  const { original: originalJsonSchema, strict } = jsonSchemasOf(schema);
  const jsonSchema = { name: schemaName, jsonSchema: strict };
  const calls: CompletionResult[] = [];

  const first = await reply(provider, request, jsonSchema);
  calls.push(first.result);
  const firstCheck = check(first, schema, originalJsonSchema);
  if (firstCheck.ok) return { value: firstCheck.value, calls };

  let repair: Reply;
  try {
    repair = await reply(
      provider,
      { ...request, messages: repairMessages(request, first.result.text, firstCheck.reason) },
      jsonSchema,
    );
  } catch (error) {
    // Never swallowed (credit exhaustion must propagate); the billed first call rides along for the ledger.
    if (error && typeof error === 'object' && !('calls' in error)) Object.assign(error, { calls });
    throw error;
  }
  calls.push(repair.result);
  const secondCheck = check(repair, schema, originalJsonSchema);
  if (secondCheck.ok) return { value: secondCheck.value, calls };

  throw new StructuredOutputError(
    `${provider.name} (${provider.model}) returned no valid ${schemaName} after one repair attempt: ${secondCheck.reason}`,
    repair.result.text,
    calls,
    secondCheck.reason,
  );
}
