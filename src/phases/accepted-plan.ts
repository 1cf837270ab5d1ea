import { readPlanComment, type Plan } from '@hydraflow/core';
import type { IssueComment } from '@hydraflow/github';
import type { PhaseContext } from './phase-context';

/**
 * The plan accepted for this issue, read back from its plan comment and checked against the hash in state; undefined
 * when there is none or its comment no longer matches. The session's comments serve when they hold it: those read when
 * it opened (a plan posted by an earlier run: implement's publish step, the review) and the plan comment this run wrote
 * (plan going on into implement). Anything else is read anew.
 */
export async function acceptedPlan(ctx: PhaseContext): Promise<Plan | undefined> {
  const record = ctx.session.state.plan;
  if (record?.status !== 'accepted' || record.commentId === undefined) return undefined;
  const planIn = (comments: readonly IssueComment[]) =>
    readPlanComment(comments.find((c) => c.id === record.commentId)?.body, record.hash);
  return planIn(ctx.session.comments) ?? planIn(await ctx.issues.listComments(ctx.issue.number));
}
