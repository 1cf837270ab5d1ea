/**
 * Every JSON Schema HydraFlow sends to a model provider, checked against the portable rules (ADR 0006): the structured
 * answers (triage, plan, plan review, review, the product plan, shape), the submit tools (grooming: every agent's verdict, the summary; discover: the brief) and the
 * agents' workspace tools. Each is what providerJsonSchema derives from the zod schema the answer is checked with.
 *
 * The real compile is the opt-in llama-cpp.interop.test.ts; here, in CI: no bound a grammar engine chokes on, scores
 * as enums, and the portable schema never refuses an answer zod accepts (it only relaxes).
 */
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  decompositionSchema,
  discoverBriefSchema,
  shapeTurnSchema,
  specReviewVerdictSchema,
  engineerVerdictSchema,
  groomSummarySchema,
  planReviewSchema,
  planSchema,
  reviewVerdictSchema,
  triageVerdictSchema,
  voterAnswerSchema,
  specCriteriaSchema,
  specJudgeAnswerSchema,
} from '@hydraflow/core';
import {
  MAX_ENUM_INTEGERS,
  MAX_PORTABLE_ITEMS,
  MAX_PORTABLE_LENGTH,
  portableJsonSchema,
  providerJsonSchema,
  toStrictJsonSchema,
} from '@hydraflow/providers';
import { grammarRefused, jsonSchemaErrors, LLAMA_GRAMMAR_LIMIT } from '@hydraflow/testkit';
import { createWorkspaceTools } from '../src/agents/tools/index';
import { planReviewWithConcernsSchema } from '../src/phases/adversarial/plan-review-concerns';
import { reviewWithConcernsSchema, specReviewWithConcernsSchema } from '../src/phases/adversarial/code-review-concerns';
import { averagePlan, planAccepted, reviewClean, reviewCriticalNaN, triageClear } from './lifecycle/scenario';
import { groomReady } from './lifecycle/grooming';
import { completeBrief, shapedDirections } from './support/briefs';

type JsonObject = Record<string, unknown>;

/** The structured answers, by the schema name each phase sends (the source is checked for new ones below). */
const STRUCTURED: Record<string, z.ZodType> = {
  triage_verdict: triageVerdictSchema,
  plan: planSchema,
  plan_review: planReviewSchema,
  review: reviewVerdictSchema,
  decomposition: decompositionSchema,
  shape_turn: shapeTurnSchema,
  // the adversarial layer (src/phases/adversarial/): a plan council voter's concerns; the plan reviewer's answer when
  // forwarded concerns wait for it, and code review's
  adversarial_answer: voterAnswerSchema,
  plan_review_with_concerns: planReviewWithConcernsSchema,
  review_with_concerns: reviewWithConcernsSchema,
  // the spec stage: the acceptance criteria generator's answer
  spec_criteria: specCriteriaSchema,
};

/** Sent under a name above, in another shape: the review of a product-track pull request (spec-match). */
const VARIANTS: Record<string, z.ZodType> = {
  'review (spec-match)': specReviewVerdictSchema,
  'review_with_concerns (spec-match)': specReviewWithConcernsSchema,
  'adversarial_answer (spec-judge)': specJudgeAnswerSchema,
};

/** The submit tools: grooming's (every agent submits an engineer-shaped verdict, the summary agent the summary) and the research agent's brief (discover). */
const SUBMIT_TOOLS: Record<string, z.ZodType> = {
  submit_verdict: engineerVerdictSchema,
  submit_summary: groomSummarySchema,
  submit_brief: discoverBriefSchema,
};

const root = mkdtempSync(join(tmpdir(), 'hf-schemas-'));
const workspace = await createWorkspaceTools({ root, commands: { test: 'true' } });
afterAll(async () => {
  await workspace.dispose();
  rmSync(root, { recursive: true, force: true });
});

const sent: [string, JsonObject][] = [
  ...Object.entries(STRUCTURED).map(([name, s]): [string, JsonObject] => [name, toStrictJsonSchema(s)]),
  ...Object.entries(VARIANTS).map(([name, s]): [string, JsonObject] => [name, toStrictJsonSchema(s)]),
  ...Object.entries(SUBMIT_TOOLS).map(([name, s]): [string, JsonObject] => [name, providerJsonSchema(s)]),
  ...workspace.tools.map((t): [string, JsonObject] => [t.name, providerJsonSchema(t.input)]),
];

/** Every subschema of `schema` with its path. */
function* nodes(schema: unknown, path = '#'): Generator<[string, JsonObject]> {
  if (Array.isArray(schema)) {
    for (const [i, s] of schema.entries()) yield* nodes(s, `${path}/${i}`);
    return;
  }
  if (!schema || typeof schema !== 'object') return;
  yield [path, schema as JsonObject];
  for (const [key, value] of Object.entries(schema))
    if (typeof value === 'object') yield* nodes(value, `${path}/${key}`);
}

describe('the schemas HydraFlow sends are portable', () => {
  it('covers every structured answer a phase asks for', () => {
    const names = new Set<string>();
    const scan = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) scan(path);
        else if (entry.name.endsWith('.ts'))
          for (const m of readFileSync(path, 'utf8').matchAll(/schemaName: '(\w+)'/g)) names.add(m[1]!);
      }
    };
    scan(join(import.meta.dirname, '../src'));
    expect([...names].sort()).toEqual(Object.keys(STRUCTURED).sort());
  });

  it.each(sent)('%s: no bound a grammar engine cannot compile or does not enforce', (_name, schema) => {
    for (const [path, node] of nodes(schema)) {
      for (const key of ['maxLength', 'minLength'] as const)
        if (typeof node[key] === 'number') expect(node[key], `${path}.${key}`).toBeLessThanOrEqual(MAX_PORTABLE_LENGTH);
      for (const key of ['maxItems', 'minItems'] as const)
        if (typeof node[key] === 'number') expect(node[key], `${path}.${key}`).toBeLessThanOrEqual(MAX_PORTABLE_ITEMS);
      expect(node.format, `${path}.format`).toBeUndefined();
      expect(node.multipleOf, `${path}.multipleOf`).toBeUndefined();
      // A number a grammar would not bound: none is bounded (scores are whole numbers, sent as an enum).
      if (node.type === 'number') {
        expect(node.minimum, `${path}.minimum`).toBeUndefined();
        expect(node.maximum, `${path}.maximum`).toBeUndefined();
      }
      if (node.type === 'integer') {
        expect(node.exclusiveMinimum, path).toBeUndefined();
        expect(node.exclusiveMaximum, path).toBeUndefined();
        expect(Math.abs(Number(node.maximum ?? 0)), `${path}.maximum`).toBeLessThan(Number.MAX_SAFE_INTEGER);
        if (typeof node.minimum === 'number' && typeof node.maximum === 'number')
          expect(node.maximum - node.minimum, `${path}: a small range goes as an enum`).toBeGreaterThanOrEqual(
            MAX_ENUM_INTEGERS,
          );
      }
      // Patterns stay in the subset every engine reads: anchors, classes, literals, bounded repetition.
      if (typeof node.pattern === 'string')
        expect(node.pattern, `${path}.pattern`).toMatch(/^\^(\[[a-z0-9_-]+\]|[a-z0-9-]|\{\d+,\d+\})+\$$/);
    }
    expect(
      grammarRefused({ response_format: { type: 'json_schema', json_schema: { schema } } }, LLAMA_GRAMMAR_LIMIT),
    ).toBe(false);
  });

  it('the scores are an enum of the whole numbers 0-10', () => {
    const triage = toStrictJsonSchema(triageVerdictSchema) as { properties: Record<string, JsonObject> };
    expect(triage.properties.clarity_score).toMatchObject({
      type: 'integer',
      enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    });
    const review = toStrictJsonSchema(planReviewSchema) as {
      properties: { scores: { properties: Record<string, JsonObject> } };
    };
    for (const score of Object.values(review.properties.scores.properties))
      expect(score).toMatchObject({ type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
  });

  it('a dropped length bound is still told to the model, in the description', () => {
    const plan = toStrictJsonSchema(planSchema) as { properties: Record<string, JsonObject> };
    expect(plan.properties.approach).toEqual({
      type: 'string',
      minLength: 1,
      description: 'How to get there: the design, step by step (markdown). (at most 4000 characters)',
    });
    expect(plan.properties.goal).toMatchObject({ maxLength: 1000 });
  });

  it("only relaxes: every answer zod accepts, the portable schema accepts; zod's bounds still hold after", () => {
    const answers: [z.ZodType, unknown][] = [
      [triageVerdictSchema, triageClear.json],
      [planSchema, averagePlan.json],
      [planReviewSchema, planAccepted.json],
      [
        voterAnswerSchema,
        { concerns: [{ severity: 'high', blocking: true, text: 'No backup.', evidence: ['src/change.js'] }] },
      ],
      [
        planReviewWithConcernsSchema,
        {
          ...planAccepted.json,
          concerns: [{ id: '0123456789abcdef', verdict: 'carried', why: 'Code review checks it.' }],
        },
      ],
      [reviewVerdictSchema, reviewClean.json],
      [reviewVerdictSchema, reviewCriticalNaN.json],
      [discoverBriefSchema, completeBrief],
      [shapeTurnSchema, { reply: '', directions: shapedDirections }],
      ...Object.values(groomReady()).flatMap((v) =>
        (Array.isArray(v) ? v : [v]).flatMap((e) =>
          typeof e === 'function'
            ? []
            : (e.toolCalls ?? [])
                .filter((c) => c.name in SUBMIT_TOOLS)
                .map((c): [z.ZodType, unknown] => [SUBMIT_TOOLS[c.name]!, c.input]),
        ),
      ),
    ];
    expect(answers.length).toBeGreaterThan(6);
    for (const [schema, value] of answers) {
      expect(schema.safeParse(value).success).toBe(true);
      expect(jsonSchemaErrors(providerJsonSchema(schema), value)).toBeUndefined();
    }
    // Too long for zod, fine for the provider's schema: the repair path, not the grammar, catches it.
    const tooLong = { ...(averagePlan.json as JsonObject), approach: 'x'.repeat(4001) };
    expect(jsonSchemaErrors(providerJsonSchema(planSchema), tooLong)).toBeUndefined();
    expect(planSchema.safeParse(tooLong).success).toBe(false);
  });

  it('portableJsonSchema: the rules on a schema of every kind', () => {
    expect(
      portableJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          long: { type: 'string', maxLength: 4000, minLength: 1, description: 'Long.' },
          huge: { type: 'string', minLength: 2000 },
          url: { type: 'string', format: 'uri', default: 'x' },
          score: { type: 'number', minimum: 0, maximum: 10, multipleOf: 0.5 },
          small: { type: 'integer', exclusiveMinimum: 0, maximum: 3 },
          any: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
          wide: { type: 'integer', minimum: 1, maximum: 1000 },
          list: {
            type: 'array',
            items: { anyOf: [{ type: 'string', maxLength: 5000 }, { type: 'null' }] },
            maxItems: 500,
          },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        long: { type: 'string', minLength: 1, description: 'Long. (at most 4000 characters)' },
        huge: { type: 'string', description: '(at least 2000 characters)' },
        url: { type: 'string' },
        score: { type: 'number', minimum: 0, maximum: 10 },
        small: { type: 'integer', enum: [1, 2, 3] },
        any: { type: 'integer' },
        wide: { type: 'integer', minimum: 1, maximum: 1000 },
        list: {
          type: 'array',
          items: { anyOf: [{ type: 'string', description: '(at most 5000 characters)' }, { type: 'null' }] },
        },
      },
    });
  });
});
