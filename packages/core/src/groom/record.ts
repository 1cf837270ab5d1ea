/**
 * Grooming's part of the signed issue state. No model text (field notes: never echo user or model text inside a
 * state block): the decision, hashes, each agent's readiness, the open question ids and the sub-issues. The agents'
 * verdicts live in a hidden data block of the progress comment whose hash is `dataHash` (data.ts).
 *
 * state/schema.ts imports this file: it must not import the state module back.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { confidenceSchema, groomAgentNameSchema, questionIdSchema } from './schema';
import { PHASES_SECTION, QUESTIONS_SECTION, stripManagedSections } from './sections';

const isoTime = z.iso.datetime({ offset: false });
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const groomRecordSchema = z.object({
  /** Grooming runs so far on this issue. */
  runs: z.number().int().positive(),
  decision: z.enum(['ready', 'needs_info', 'blocked']),
  decidedAt: isoTime,
  /** groomBodyHash of the body as HydraFlow wrote it: a different hash later means a human edited the text. */
  bodyHash: sha256Hex,
  /** What the run was made for (body, ticked boxes, last human comment): the same input twice does nothing. */
  inputHash: sha256Hex,
  /** sha256 of the verdicts' data block (renderGroomData): only that block's verdicts are reused. */
  dataHash: sha256Hex,
  agents: z
    .record(
      groomAgentNameSchema,
      z.object({ ready: z.boolean(), confidence: confidenceSchema, failed: z.boolean(), at: isoTime }),
    )
    .refine((agents) => Object.keys(agents).length <= 12, 'at most 12 agents'),
  /** Ids of the questions left open (unchecked) by the run. */
  openQuestionIds: z.array(questionIdSchema).max(100),
  subIssues: z.array(z.object({ phase: z.number().int().min(1).max(20), number: z.number().int().positive() })).max(20),
});
export type GroomRecord = z.infer<typeof groomRecordSchema>;

/** sha256 hex of the humans' text of the body: HydraFlow's Questions and Phases sections out, whitespace folded. */
export function groomBodyHash(body: string): string {
  const text = stripManagedSections(body, [QUESTIONS_SECTION, PHASES_SECTION]).replace(/\s+/g, ' ').trim();
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Incremental re-run (docs/grooming.md, "Beyond the seed"): which agents run again and whose verdict is reused.
 * Everyone runs without a previous record or when the body changed (a material edit, /groom). Otherwise an agent
 * runs again when its verdict can have changed: it is new, it failed, it was not ready (its concerns may be answered
 * now), or it asked a question that is still open (the new comment may answer it). A ready agent with no open
 * question is reused: nothing it asked is pending. A question counts as open unless its id is in `answeredIds`.
 */
export function agentsToRerun(
  record: GroomRecord | undefined,
  names: readonly string[],
  options: {
    bodyChanged: boolean;
    answeredIds: readonly string[];
    openQuestions: readonly { id?: string; sources?: readonly string[] }[];
  },
): { run: string[]; reuse: string[] } {
  if (!record || options.bodyChanged) return { run: [...names], reuse: [] };
  const answered = new Set(options.answeredIds);
  const open = options.openQuestions.filter((q) => q.id === undefined || !answered.has(q.id));
  const run: string[] = [];
  const reuse: string[] = [];
  for (const name of names) {
    const last = record.agents[name];
    const stale = !last || last.failed || !last.ready || open.some((q) => q.sources?.includes(name));
    (stale ? run : reuse).push(name);
  }
  return { run, reuse };
}
