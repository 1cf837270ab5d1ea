/**
 * GitHub's OpenAPI description (`@octokit/openapi`), loaded lazily once per process and shared by every emulator.
 *
 * We load `api.github.com.json` (the non-dereferenced 13 MB file: ~0.3 s to read and parse, against ~0.85 s for the
 * 73 MB `.deref` variant) and resolve `$ref`s ourselves. Component schemas are converted from OpenAPI 3.0 to JSON
 * Schema (`nullable`) on demand and registered with a single Ajv instance; compiled validators are cached per
 * operation, so the cost of a validator is paid once per process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// CJS interop: both packages export the function itself plus a `default` property.
type AjvCtor = typeof AjvModule;
const Ajv: AjvCtor = ((AjvModule as unknown as { default?: AjvCtor }).default ?? AjvModule) as AjvCtor;
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as AddFormats;

export type JsonSchema = Record<string, unknown>;

interface RawParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

export interface RawOperation {
  operationId: string;
  parameters?: Array<RawParameter | { $ref: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, unknown>;
}

interface Spec {
  paths: Record<string, Record<string, RawOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, RawParameter>;
    responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  };
}

export const SPEC_FILE = 'api.github.com.json';
let spec: Spec | undefined;
export const specLoadStats = { loadMs: 0 };

export function loadSpec(): Spec {
  if (spec) return spec;
  const t0 = performance.now();
  const require = createRequire(import.meta.url);
  const file = require.resolve(`@octokit/openapi/generated/${SPEC_FILE}`);
  spec = JSON.parse(readFileSync(file, 'utf8')) as Spec;
  specLoadStats.loadMs = performance.now() - t0;
  return spec;
}

export function isSpecLoaded(): boolean {
  return spec !== undefined;
}

function deref<T>(node: unknown): T {
  let cur = node as { $ref?: string } | undefined;
  const s = loadSpec();
  while (cur && typeof cur === 'object' && typeof cur.$ref === 'string') {
    const parts = cur.$ref.replace(/^#\//, '').split('/');
    let n: unknown = s;
    for (const p of parts) n = (n as Record<string, unknown>)[p.replace(/~1/g, '/').replace(/~0/g, '~')];
    cur = n as { $ref?: string };
  }
  return cur as T;
}

export function getOperation(method: string, template: string): RawOperation | undefined {
  return loadSpec().paths[template]?.[method.toLowerCase()];
}

/** Find the operation a concrete path would hit in the description (for reporting unknown routes). */
export function matchSpecOperation(
  method: string,
  path: string,
): { template: string; operationId: string } | undefined {
  const s = loadSpec();
  const segs = path.split('/');
  let best: { template: string; operationId: string; literals: number } | undefined;
  for (const [template, item] of Object.entries(s.paths)) {
    const op = item[method.toLowerCase()];
    if (!op) continue;
    const tsegs = template.split('/');
    if (tsegs.length !== segs.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < tsegs.length; i++) {
      const t = tsegs[i]!;
      if (t.startsWith('{')) continue;
      if (t !== segs[i]) {
        ok = false;
        break;
      }
      literals++;
    }
    if (ok && (!best || literals > best.literals)) best = { template, operationId: op.operationId, literals };
  }
  return best && { template: best.template, operationId: best.operationId };
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAPI 3.0 → JSON Schema, lazily per component

const SCHEMA_BASE = 'https://hydraflow.invalid/openapi/schemas/';
const SKIP_KEYS = new Set(['example', 'examples', 'description', 'externalDocs', 'discriminator', 'xml', 'title']);

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: false,
    validateFormats: true,
  });
  addFormats(ajv);
  for (const f of ['repo.nwo', 'uri-template', 'timestamp', 'binary', 'int32', 'int64', 'double', 'float']) {
    ajv.addFormat(f, true);
  }
  return ajv;
}

let ajvBody: InstanceType<AjvCtor> | undefined;
let ajvParams: InstanceType<AjvCtor> | undefined;
const registered = new WeakMap<object, Set<string>>();

function ensureComponent(ajv: InstanceType<AjvCtor>, name: string): void {
  let set = registered.get(ajv);
  if (!set) registered.set(ajv, (set = new Set()));
  if (set.has(name)) return;
  set.add(name);
  const raw = loadSpec().components.schemas[name];
  if (!raw) throw new Error(`unknown component schema ${name}`);
  const converted = convert(ajv, raw);
  ajv.addSchema({ ...(converted as JsonSchema), $id: SCHEMA_BASE + encodeURIComponent(name) });
}

function convert(ajv: InstanceType<AjvCtor>, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => convert(ajv, n));
  if (!node || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (SKIP_KEYS.has(k) || k.startsWith('x-') || k === 'nullable' || k === 'readOnly' || k === 'writeOnly') continue;
    if (k === '$ref' && typeof v === 'string') {
      const m = /^#\/components\/schemas\/(.+)$/.exec(v);
      if (m) {
        ensureComponent(ajv, decodeURIComponent(m[1]!));
        out.$ref = SCHEMA_BASE + encodeURIComponent(decodeURIComponent(m[1]!));
      } else {
        return convert(ajv, deref(src));
      }
      continue;
    }
    if ((k === 'properties' || k === 'patternProperties') && v && typeof v === 'object') {
      const props: Record<string, unknown> = {};
      for (const [pk, pv] of Object.entries(v)) props[pk] = convert(ajv, pv);
      out[k] = props;
      continue;
    }
    out[k] = convert(ajv, v);
  }
  if (src.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else {
      return { anyOf: [out, { type: 'null' }] };
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Per-operation validators, cached at module level

export interface OperationValidators {
  operationId: string;
  params: ValidateFunction | undefined;
  paramNames: { path: string[]; query: string[] };
  body: ValidateFunction | undefined;
  bodyRequired: boolean;
  response(status: number): ValidateFunction | undefined | null;
}

const validatorCache = new Map<string, OperationValidators>();

export function getValidators(method: string, template: string): OperationValidators | undefined {
  const key = `${method.toUpperCase()} ${template}`;
  const hit = validatorCache.get(key);
  if (hit) return hit;
  const op = getOperation(method, template);
  if (!op) return undefined;
  ajvBody ??= makeAjv(false);
  ajvParams ??= makeAjv(true);
  const aP = ajvParams;
  const aB = ajvBody;

  const params = (op.parameters ?? []).map((p) => deref<RawParameter>(p));
  const props: Record<string, unknown> = {};
  const required: string[] = [];
  const paramNames = { path: [] as string[], query: [] as string[] };
  for (const p of params) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    paramNames[p.in].push(p.name);
    // A parameter arrives as a string; coerced, "123" matches both branches of `oneOf: [integer, string]`
    // (workflow_id), which GitHub accepts: any branch will do.
    const { oneOf, ...rest } = p.schema ?? {};
    const schema = oneOf ? { ...rest, anyOf: oneOf } : rest;
    props[p.name] = convert(aP, schema);
    if (p.required) required.push(p.name);
  }
  const paramsValidator = aP.compile({ type: 'object', properties: props, required });

  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const bodyValidator = bodySchema ? aB.compile(convert(aB, bodySchema) as JsonSchema) : undefined;

  const responseCache = new Map<number, ValidateFunction | null>();
  const v: OperationValidators = {
    operationId: op.operationId,
    params: paramsValidator,
    paramNames,
    body: bodyValidator,
    bodyRequired: op.requestBody?.required === true,
    response(status: number) {
      if (responseCache.has(status)) return responseCache.get(status);
      const r = op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`];
      let fn: ValidateFunction | null = null;
      if (r) {
        const resolved = deref<{ content?: Record<string, { schema?: JsonSchema }> }>(r);
        const schema = resolved.content?.['application/json']?.schema;
        fn = schema ? aB.compile(convert(aB, schema) as JsonSchema) : null;
      }
      responseCache.set(status, fn);
      return fn;
    },
  };
  validatorCache.set(key, v);
  return v;
}

/** Does the description list this status for the operation at all? */
export function describedStatuses(method: string, template: string): string[] {
  return Object.keys(getOperation(method, template)?.responses ?? {});
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined, prefix = ''): string[] {
  return (errors ?? []).map(
    (e) =>
      `${prefix}${e.instancePath || '/'} ${e.message ?? 'invalid'}${
        e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''
      }`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Response skeletons: fill every required field the emulator did not set with a plausible, schema-valid value.

export interface FillContext {
  apiUrl: string;
  now: string;
}

export function responseSchema(method: string, template: string, status: number): JsonSchema | undefined {
  const op = getOperation(method, template);
  const r = op?.responses?.[String(status)];
  if (!r) return undefined;
  return deref<{ content?: Record<string, { schema?: JsonSchema }> }>(r).content?.['application/json']?.schema;
}

export function fillRequired(schemaIn: unknown, value: unknown, ctx: FillContext, depth = 0): unknown {
  const schema = deref<JsonSchema | undefined>(schemaIn);
  if (!schema || depth > 12) return value;
  if (value === null) return null;
  if (Array.isArray(schema.allOf)) {
    let v: unknown = value;
    for (const s of schema.allOf as unknown[]) v = fillRequired(s, v, ctx, depth + 1);
    return v;
  }
  const branches = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(branches)) {
    if (value === undefined) {
      const first = branches.map((b) => deref<JsonSchema>(b)).find((b) => !b.nullable) ?? branches[0];
      return fillRequired(first, undefined, ctx, depth + 1);
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const keys = new Set(Object.keys(value));
      const objs = branches.map((b) => deref<JsonSchema>(b)).filter((b) => b.type === 'object' || b.properties);
      const best = objs.find((b) => ((b.required as string[] | undefined) ?? []).every((k) => keys.has(k))) ?? objs[0];
      return best ? fillRequired(best, value, ctx, depth + 1) : value;
    }
    return value;
  }
  if (value === undefined) {
    if (schema.nullable === true) return null;
    if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
    switch (schema.type) {
      case 'string':
        if (schema.format === 'date-time') return ctx.now;
        if (schema.format === 'date') return ctx.now.slice(0, 10);
        if (schema.format === 'uri') return `${ctx.apiUrl}/`;
        if (schema.format === 'email') return 'octocat@users.noreply.invalid';
        if (schema.format === 'uri-template') return `${ctx.apiUrl}/{template}`;
        return '';
      case 'integer':
      case 'number':
        return typeof schema.minimum === 'number' ? schema.minimum : 0;
      case 'boolean':
        return false;
      case 'array':
        return [];
      default:
        if (schema.type === 'object' || schema.properties) return fillRequired(schema, {}, ctx, depth + 1);
        return null;
    }
  }
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) return value.map((v) => fillRequired(items, v, ctx, depth + 1));
    return value;
  }
  if (typeof value === 'object' && (schema.type === 'object' || schema.properties)) {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, unknown>;
    const out: Record<string, unknown> = { ...obj };
    for (const k of (schema.required as string[] | undefined) ?? []) {
      if (out[k] === undefined) out[k] = fillRequired(props[k], undefined, ctx, depth + 1);
    }
    for (const [k, v] of Object.entries(obj)) {
      if (v && typeof v === 'object' && props[k]) out[k] = fillRequired(props[k], v, ctx, depth + 1);
    }
    return out;
  }
  return value;
}
