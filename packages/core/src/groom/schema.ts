/**
 * Grooming's model-facing schemas (../shared/seeds/grooming-system.md, "Agent Responsibilities" and "Question
 * Properties"). They are the input schemas of the submit tools, converted to JSON Schema: no transforms, only checks.
 *
 * This file imports only zod: state/schema.ts reaches it through record.ts.
 */
import { z } from 'zod';

/** The seed's four built-in agents. Custom agents (config) join them under their own names. */
export const GROOM_AGENTS = ['pm', 'engineer', 'qa', 'research'] as const;
export type GroomAgent = (typeof GROOM_AGENTS)[number];

/** An agent's name: a built-in one or a custom agent's (same rule as config's grooming.custom_agents[].name). */
export const groomAgentNameSchema = z.string().regex(/^[a-z][a-z0-9_-]{1,30}$/, 'agent name');

/** A question id: a lower-case kebab slug (it persists across re-runs as `id:<slug>` in the issue body). */
export const QUESTION_ID_SOURCE = '[a-z0-9][a-z0-9-]{0,59}';
export const questionIdSchema = z
  .string()
  .regex(
    new RegExp(`^${QUESTION_ID_SOURCE}$`),
    'a lower-case slug of letters, digits and hyphens, at most 60 characters',
  );

export const confidenceSchema = z.enum(['low', 'medium', 'high']);
export type Confidence = z.infer<typeof confidenceSchema>;

export const agentVerdictSchema = z.strictObject({
  ready: z.boolean().describe('true only if, from your angle, work could start now without asking anyone'),
  confidence: confidenceSchema.describe('how sure you are of that verdict'),
  assessment: z.string().max(800).describe('one paragraph: what you found'),
  questions: z
    .array(z.string().min(1).max(300))
    .max(8)
    .describe('what a human must answer before work can start, one specific question each'),
});

export const subIssueSpecSchema = z.strictObject({
  phase_number: z.number().int().min(1).max(20).describe('1-based phase number'),
  title: z.string().min(1).max(80),
  description: z.string().max(4000),
  affected_areas: z
    .array(
      z.strictObject({
        path: z.string().min(1).max(300),
        change: z.enum(['add', 'modify', 'delete', 'rename']),
        note: z.string().max(300).optional(),
      }),
    )
    .max(40)
    .optional(),
  todos: z
    .array(z.strictObject({ text: z.string().min(1).max(300), manual: z.boolean() }))
    .max(40)
    .optional(),
  depends_on: z
    .array(z.number().int().min(1).max(20))
    .max(20)
    .optional()
    .describe('phase numbers this phase needs first'),
});
export type SubIssueSpec = z.infer<typeof subIssueSpecSchema>;

/** The engineer's verdict. Also the submit tool of every agent, hence optional phases (others' are dropped). */
export const engineerVerdictSchema = agentVerdictSchema.extend({
  recommended_phases: z
    .array(subIssueSpecSchema)
    .max(8)
    .optional()
    .describe('engineer only, when the work is too big for one pull request: 2 to 8 phases; otherwise []'),
});
export type EngineerVerdict = z.infer<typeof engineerVerdictSchema>;
/** Any agent's verdict (the engineer's carries recommended_phases). */
export type AgentVerdict = z.infer<typeof agentVerdictSchema> & { recommended_phases?: SubIssueSpec[] };

export const questionPrioritySchema = z.enum(['important', 'critical']);

export const consolidatedQuestionSchema = z.strictObject({
  id: questionIdSchema.describe('reuse the id of a matching existing question; else a kebab-case slug of the title'),
  title: z.string().min(1).max(60).describe('short question, at most 60 characters'),
  description: z.string().max(600).describe('full question context'),
  sources: z.array(groomAgentNameSchema).min(1).max(12).describe('the agents that asked it'),
  priority: questionPrioritySchema.describe('critical when work cannot start without the answer'),
});
export type ConsolidatedQuestion = z.infer<typeof consolidatedQuestionSchema>;

export const answeredQuestionSchema = z.strictObject({
  id: questionIdSchema.describe('the id of the question it answers'),
  title: z.string().min(1).max(60).describe('the original question'),
  answer_summary: z.string().min(1).max(600).describe('how it was answered (cite the comment)'),
});
export type AnsweredQuestion = z.infer<typeof answeredQuestionSchema>;

const summaryFields = z.strictObject({
  summary: z.string().min(1).max(2000).describe('overall assessment'),
  decision: z.enum(['ready', 'needs_info', 'blocked']),
  decision_rationale: z.string().min(1).max(1500).describe('why this decision'),
  // 64 = every question of 8 agents: the fallback summary's worst case.
  consolidated_questions: z.array(consolidatedQuestionSchema).max(64).describe('pending questions'),
  answered_questions: z.array(answeredQuestionSchema).max(64).describe('questions answered in comments or edits'),
  blocker_reason: z.string().min(1).max(1000).nullable().describe('the external blocker when blocked, else null'),
});

export const groomSummarySchema = summaryFields.superRefine((s, ctx) => {
  if ((s.decision === 'blocked') !== (s.blocker_reason !== null)) {
    ctx.addIssue({
      code: 'custom',
      path: ['blocker_reason'],
      message: 'blocker_reason is required when the decision is blocked, and null otherwise',
    });
  }
  // One id, one question: an id both pending and answered (or twice) would make the issue's list ambiguous.
  const seen = new Set<string>();
  for (const [list, items] of [
    ['consolidated_questions', s.consolidated_questions],
    ['answered_questions', s.answered_questions],
  ] as const) {
    items.forEach((q, i) => {
      if (seen.has(q.id))
        ctx.addIssue({ code: 'custom', path: [list, i, 'id'], message: `duplicate question id ${q.id}` });
      seen.add(q.id);
    });
  }
});
export type GroomSummary = z.infer<typeof groomSummarySchema>;

/**
 * The summary as accepted from a run whose agents are `agentNames`: every question's sources must be agents of the
 * run. Only agents — not "summary" or "comments" — because the seed's sources say which agents asked, and the
 * incremental re-run and the decision guard read them to find the asking agent.
 */
export function groomSummarySchemaFor(agentNames: readonly string[]) {
  const known = new Set(agentNames);
  return groomSummarySchema.superRefine((s, ctx) => {
    s.consolidated_questions.forEach((q, i) => {
      q.sources.forEach((source, j) => {
        if (!known.has(source)) {
          ctx.addIssue({
            code: 'custom',
            path: ['consolidated_questions', i, 'sources', j],
            message: `unknown agent ${source}: sources are agents of this run (${agentNames.join(', ')})`,
          });
        }
      });
    });
  });
}
