/**
 * The JSON Schema HydraFlow sends to a provider: a simplified form of the zod schema that every structured-output
 * engine can compile, while zod still checks the full schema on the answer (an answer beyond a dropped bound goes
 * through the repair path like any invalid one). ADR 0006.
 *
 * OpenAI-compatible servers compile the schema into a grammar and are stricter than OpenAI about what they accept:
 * llama.cpp refuses a string `maxLength` of 2,000 or more ("failed to parse grammar"), does not enforce bounds on a
 * `number` at all (a 0-10 score came back as 27e1950), and vLLM's xgrammar refuses unknown `format`s. So:
 *
 * - a string keeps `maxLength` / `minLength` up to MAX_PORTABLE_LENGTH; a larger bound is dropped and written into the
 *   description instead, so the model still reads it;
 * - `format` is dropped (engines differ in which they know; zod checks it);
 * - an integer's bounds that zod adds for "any safe integer" (±2^53−1) are dropped; exclusive bounds become inclusive;
 *   an integer range of at most MAX_ENUM_INTEGERS values becomes an `enum` of them (scores 0-10), which any grammar
 *   engine enforces;
 * - an array keeps `minItems` / `maxItems` up to MAX_PORTABLE_ITEMS;
 * - `multipleOf`, `default` and `$schema` are dropped.
 *
 * Non-integer numbers keep their bounds (OpenAI enforces them) but no engine is relied on for them: a schema HydraFlow
 * sends has no bounded non-integer number (tested).
 */

import { z } from 'zod';

type JsonObject = Record<string, unknown>;

/** The largest string length bound sent: well below llama.cpp's 2,000-repetition grammar limit. */
export const MAX_PORTABLE_LENGTH = 1_000;
/** The largest array length bound sent. */
export const MAX_PORTABLE_ITEMS = 100;
/** An integer range of at most this many values is sent as an enum. */
export const MAX_ENUM_INTEGERS = 32;

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions'];
const DROPPED = new Set(['$schema', 'default', 'format', 'multipleOf']);

/**
 * The JSON Schema a provider is sent for `schema` — as a tool's input schema, or (made strict by structured.ts) as a
 * structured answer's: zod's JSON Schema of the input shape, made portable.
 */
export function providerJsonSchema(schema: z.ZodType): JsonObject {
  return portableJsonSchema(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject);
}

/** A portable copy of the JSON Schema `schema` (a new object at every level; the input is not changed). */
export function portableJsonSchema(schema: JsonObject): JsonObject {
  return portable(schema) as JsonObject;
}

function portable(node: unknown): unknown {
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (SUBSCHEMA_LISTS.includes(key) && Array.isArray(value)) out[key] = value.map(portable);
    else if (SUBSCHEMA_MAPS.includes(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, portable(v)]));
    else if ((key === 'items' || key === 'not' || key === 'additionalProperties') && isObject(value))
      out[key] = portable(value);
    else out[key] = value;
  }
  if (out.type === 'string') boundStrings(out);
  if (out.type === 'integer') boundIntegers(out);
  if (out.type === 'array') {
    for (const key of ['minItems', 'maxItems'] as const)
      if (typeof out[key] === 'number' && out[key] > MAX_PORTABLE_ITEMS) delete out[key];
  }
  return out;
}

function boundStrings(out: JsonObject): void {
  const notes: string[] = [];
  if (typeof out.maxLength === 'number' && out.maxLength > MAX_PORTABLE_LENGTH) {
    notes.push(`at most ${out.maxLength} characters`);
    delete out.maxLength;
  }
  if (typeof out.minLength === 'number' && out.minLength > MAX_PORTABLE_LENGTH) {
    notes.push(`at least ${out.minLength} characters`);
    delete out.minLength;
  }
  if (notes.length > 0) {
    const description = typeof out.description === 'string' ? `${out.description} ` : '';
    out.description = `${description}(${notes.join(', ')})`;
  }
}

function boundIntegers(out: JsonObject): void {
  if (typeof out.exclusiveMinimum === 'number') {
    out.minimum = Math.floor(out.exclusiveMinimum) + 1;
    delete out.exclusiveMinimum;
  }
  if (typeof out.exclusiveMaximum === 'number') {
    out.maximum = Math.ceil(out.exclusiveMaximum) - 1;
    delete out.exclusiveMaximum;
  }
  if (out.minimum === -Number.MAX_SAFE_INTEGER) delete out.minimum;
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  const { minimum, maximum } = out;
  if (
    typeof minimum === 'number' &&
    typeof maximum === 'number' &&
    out.enum === undefined &&
    maximum >= minimum &&
    maximum - minimum < MAX_ENUM_INTEGERS
  ) {
    out.enum = Array.from({ length: maximum - minimum + 1 }, (_, i) => Math.ceil(minimum) + i).filter(
      (n) => n <= maximum,
    );
    delete out.minimum;
    delete out.maximum;
  }
}
