/**
 * The spec stage (ADR-0064's SpecACGenerator + SpecJudge; packages/core/src/adversarial/spec-criteria.ts) after the
 * plan reviewer accepted the plan and before the issue goes to implement, when `adversarial.enabled` and the
 * complexity gate (decided by the plan council, plan-council.ts) called the issue load-bearing:
 *
 * - the generator writes acceptance criteria from the issue and the accepted plan (the stage's first agent run, a
 *   model call of the stage: the table's `agentFirstRun`); they replace the plan's own, so the implementer and code
 *   review work to them;
 * - the Spec Judge checks them against the spec and each other; a blocking inconsistency → the generator revises with
 *   it attached (the retry loop, stage-driver.ts); an answer that does not parse is a high blocking concern of its own
 *   (answers.ts: the stage fails closed, never "consistent");
 * - what the loop cannot settle (exhausted, oscillation, budget) is forwarded to code review
 *   (code-review-concerns.ts), which answers it or carries it to the merge.
 *
 * The criteria live in this run until the plan comment is written with them: a run killed mid-stage re-plans (no
 * accepted plan is recorded yet) and the stage resumes at its recorded step with the new plan's criteria.
 */
import {
  adversarialOf,
  adversarialSummaryLines,
  revisionRequest,
  SPEC_CRITERIA_ROLE,
  specCriteriaRequest,
  specCriteriaSchema,
  specSubject,
  stageSpec,
  type Plan,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { askVoter } from './voters';
import { driveStage } from './stage-driver';

export const SPEC_JUDGE = stageSpec('spec-judge');

/**
 * The accepted plan with the criteria the stage settled on, and the stage's lines for the progress comment; the plan
 * unchanged (and no line) when the gate said trivial or the stage is off.
 */
export async function runSpecJudge(ctx: PhaseContext, accepted: Plan): Promise<{ plan: Plan; lines: string[] }> {
  const gate = adversarialOf(ctx.session.state).gate;
  if (!ctx.config.adversarial.enabled || gate?.decision !== 'load_bearing') return { plan: accepted, lines: [] };
  const spec = SPEC_JUDGE;
  let plan = accepted;
  const result = await driveStage(
    ctx,
    { spec, then: 'The issue goes to implement.', lines: adversarialSummaryLines },
    {
      runAgent: async ({ concerns }) => {
        const request = specCriteriaRequest({ issue: ctx.issue, plan, revision: revisionRequest(concerns) });
        const written = await ctx.models.structured({
          role: SPEC_CRITERIA_ROLE,
          schema: specCriteriaSchema,
          schemaName: 'spec_criteria',
          request: {
            issue: ctx.issue.number,
            system: request.system,
            messages: [{ role: 'user', content: request.user }],
            maxOutputTokens: 2_000,
            temperature: 0,
          },
        });
        plan = { ...plan, acceptance_criteria: written.acceptance_criteria };
      },
      vote: ({ voter, round, previous }) => askVoter(ctx, { spec, voter, round, subject: specSubject(plan), previous }),
    },
  );
  return { plan, lines: adversarialSummaryLines(result.state) };
}
