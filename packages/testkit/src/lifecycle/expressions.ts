/**
 * GitHub Actions expressions, evaluated with `@actions/expressions` (the parser and evaluator GitHub publishes) against
 * plain JSON contexts, plus the status functions the runner provides (success(), always(), failure(), cancelled()).
 */
import { Evaluator, Lexer, Parser, data } from '@actions/expressions';
import type { FunctionDefinition } from '@actions/expressions/funcs/info';
import type { ExpressionData } from '@actions/expressions/data/expressiondata';

export type Contexts = Record<string, unknown>;

export interface JobStatus {
  /** the job (or, for a job's if:, its needs) has failed so far */
  failed: boolean;
  cancelled: boolean;
}

const STATUS_FUNCS = ['success', 'always', 'failure', 'cancelled'] as const;

function statusFunctions(status: JobStatus): Map<string, FunctionDefinition> {
  const fns = new Map<string, FunctionDefinition>();
  const def = (name: string, value: () => boolean) =>
    fns.set(name, { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(value()) });
  def('success', () => !status.failed && !status.cancelled);
  def('always', () => true);
  def('failure', () => status.failed && !status.cancelled);
  def('cancelled', () => status.cancelled);
  return fns;
}

/** Plain JSON → the evaluator's data model (dictionaries are case-insensitive, like GitHub's contexts). */
export function toData(value: unknown): ExpressionData {
  return JSON.parse(JSON.stringify(value ?? null), data.reviver) as ExpressionData;
}

export function fromData(value: ExpressionData): unknown {
  return JSON.parse(JSON.stringify(value, data.replacer)) as unknown;
}

export function truthy(d: ExpressionData): boolean {
  switch (d.kind) {
    case data.Kind.Null:
      return false;
    case data.Kind.Boolean:
      return (d as data.BooleanData).value;
    case data.Kind.Number: {
      const n = (d as data.NumberData).value;
      return n !== 0 && !Number.isNaN(n);
    }
    case data.Kind.String:
      return (d as data.StringData).value.length > 0;
    default:
      return true;
  }
}

/** Evaluate one expression (without `${{ }}`). */
export function evaluate(
  expression: string,
  contexts: Contexts,
  status: JobStatus = { failed: false, cancelled: false },
) {
  const lexed = new Lexer(expression).lex();
  const parser = new Parser(
    lexed.tokens,
    Object.keys(contexts),
    STATUS_FUNCS.map((name) => ({ name, minArgs: 0, maxArgs: 0 })),
  );
  const expr = parser.parse();
  const ctx = new data.Dictionary(...Object.entries(contexts).map(([key, value]) => ({ key, value: toData(value) })));
  return new Evaluator(expr, ctx, statusFunctions(status)).evaluate();
}

export function evaluateBoolean(expression: string, contexts: Contexts, status?: JobStatus): boolean {
  return truthy(evaluate(expression, contexts, status));
}

export function evaluateString(expression: string, contexts: Contexts, status?: JobStatus): string {
  return evaluate(expression, contexts, status).coerceString();
}

/** A string that may hold `${{ }}` interpolations (action.yml defaults, plain YAML values). */
export function interpolate(text: string, contexts: Contexts): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expr: string) => evaluateString(expr.trim(), contexts));
}
