/**
 * A JSON Schema check (draft 2020-12, what zod emits), for tests of the schemas HydraFlow sends to providers: does a
 * server that enforces this schema let `value` through?
 */
import Ajv2020Module from 'ajv/dist/2020.js';

type Ajv2020Ctor = typeof Ajv2020Module;
const Ajv2020: Ajv2020Ctor = ((Ajv2020Module as unknown as { default?: Ajv2020Ctor }).default ??
  Ajv2020Module) as Ajv2020Ctor;
const ajv = new Ajv2020({ strict: false, allErrors: true });

/** Undefined when `value` matches `schema`, else ajv's errors as one line. */
export function jsonSchemaErrors(schema: Record<string, unknown>, value: unknown): string | undefined {
  return ajv.validate(schema, value) ? undefined : ajv.errorsText(ajv.errors);
}
