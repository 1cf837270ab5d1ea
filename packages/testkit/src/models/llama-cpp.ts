/**
 * How llama.cpp's server (`llama-server`) differs from OpenAI on the Chat Completions wire, for the scripted model
 * server's `llamaCpp` mode: what users of real builds reported, and what HydraFlow's interop test met.
 *
 * - It compiles `response_format.json_schema.schema` and every tool's `parameters` into a grammar. A bounded
 *   repetition of 2,000 or more (a string's `maxLength`, an array's `maxItems`) fails that, in the builds users
 *   reported (issue #17; llama.cpp issues 25746, 27859), with an HTTP 400 that names nothing.
 * - Its grammar does not bound a `number`: a 0-10 score came back as `27e1950` (JSON.parse reads Infinity).
 * - A reply its own chat parser cannot read is an HTTP 500 (the `format` fault).
 * - Errors are `{error: {code, message, type}}`, without OpenAI's `param`.
 * - An answer names the model file the server was started with (`-m`), whatever model the request asked for.
 */

type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** The bounded repetition that fails llama.cpp's grammar parser, in the builds users reported. */
export const LLAMA_GRAMMAR_LIMIT = 2_000;

/** What llama.cpp answers when a grammar does not compile (HTTP 400). */
export const LLAMA_GRAMMAR_ERROR = 'Failed to initialize samplers: failed to parse grammar';

/** What llama.cpp answers when its chat parser cannot read the model's reply (HTTP 500). */
export const LLAMA_FORMAT_ERROR = 'The model produced output that does not match the expected peg-native format';

/** The `model` of llama.cpp's answers: the file it serves. */
export const LLAMA_MODEL_FILE = '/models/ggml-model-q4_k_m.gguf';

/** What a llama.cpp number looks like when the grammar let the model write any number. */
export const UNBOUNDED_NUMBER = '27e1950';

export function llamaError(code: number, message: string, type: string): JsonObject {
  return { error: { code, message, type } };
}

/** The largest bounded repetition in a JSON Schema (string lengths, array sizes). */
function largestRepetition(schema: unknown, depth = 0): number {
  if (depth > 64) return 0;
  if (Array.isArray(schema)) return Math.max(0, ...schema.map((s) => largestRepetition(s, depth + 1)));
  if (!isObject(schema)) return 0;
  let largest = 0;
  for (const [key, value] of Object.entries(schema)) {
    if (['maxLength', 'minLength', 'maxItems', 'minItems'].includes(key) && typeof value === 'number')
      largest = Math.max(largest, value);
    else if (typeof value === 'object') largest = Math.max(largest, largestRepetition(value, depth + 1));
  }
  return largest;
}

/** The schemas of a Chat Completions request that llama.cpp compiles into a grammar. */
function grammarSchemas(body: JsonObject): unknown[] {
  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  const tools = (Array.isArray(body.tools) ? body.tools : []) as { function?: { parameters?: unknown } }[];
  return [
    ...(format?.type === 'json_schema' ? [format.json_schema?.schema] : []),
    ...tools.map((t) => t.function?.parameters),
  ];
}

/** True when llama.cpp would fail to compile the request's grammar. */
export function grammarRefused(body: JsonObject, limit: number): boolean {
  return grammarSchemas(body).some((schema) => largestRepetition(schema) >= limit);
}

function resolve(schema: unknown, root: unknown): JsonObject | undefined {
  if (!isObject(schema)) return undefined;
  const ref = typeof schema.$ref === 'string' ? /^#\/(\$defs|definitions)\/(.+)$/.exec(schema.$ref) : null;
  if (ref && isObject(root)) return resolve((root[ref[1]!] as JsonObject | undefined)?.[ref[2]!], root);
  return schema;
}

/** The branch of `schema` that `value` is written by (anyOf: the first that takes its JSON type). */
function branchFor(value: unknown, schema: JsonObject, root: unknown): JsonObject {
  const branches = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(branches)) return schema;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  for (const b of branches) {
    const branch = resolve(b, root);
    const t = branch?.type;
    if (t === type || (type === 'number' && t === 'integer') || (type === 'object' && t === undefined)) return branch!;
  }
  return schema;
}

/**
 * The JSON text llama.cpp's grammar would let through for the scripted `value`: the same, but a `number` whose schema
 * bounds it (the grammar does not) comes out as UNBOUNDED_NUMBER. An integer (enum or range) is enforced.
 */
export function llamaJsonText(value: unknown, schema: unknown, root: unknown = schema): string {
  const node = resolve(schema, root);
  if (!node) return JSON.stringify(value);
  const s = branchFor(value, node, root);
  if (typeof value === 'number' && s.type === 'number' && (s.minimum !== undefined || s.maximum !== undefined))
    return UNBOUNDED_NUMBER;
  if (Array.isArray(value)) return `[${value.map((v) => llamaJsonText(v, s.items, root)).join(',')}]`;
  if (isObject(value)) {
    const props = isObject(s.properties) ? s.properties : {};
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${llamaJsonText(v, props[k], root)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
