import { redactSecrets } from '@hydraflow/core';

/** What routes a request rather than carries its content: never rewritten. */
const ROUTING = new Set(['method', 'url', 'baseUrl', 'headers', 'request', 'mediaType']);

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, secrets)]));
  return value;
}

/**
 * Masks every known secret value in the request's parameters (bodies, titles, review comments, GraphQL variables), in
 * place: the options object is the one Octokit's later hooks (auth) and the request itself read. The last line of
 * defence for "no secret of the run is ever written to GitHub", whatever text a phase writes — a failing test's output,
 * an agent's summary, a path it chose.
 */
export function redactRequest(options: Record<string, unknown>, secrets: readonly string[]): void {
  for (const [key, value] of Object.entries(options)) if (!ROUTING.has(key)) options[key] = redactValue(value, secrets);
}
