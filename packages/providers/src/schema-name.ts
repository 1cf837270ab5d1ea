/**
 * A structured-output schema's name on the wire, in the form OpenAI requires (`^[a-zA-Z0-9_-]{1,64}$`), which the
 * Anthropic adapter uses for its forced tool too. A module of its own so that neither adapter loads the other's SDK
 * (importing it from the OpenAI adapter made every Anthropic run parse the whole OpenAI SDK).
 */
export function schemaName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'output';
}
