import { readPlanComment, type Plan } from '@hydraflow/core';
import type { IssueComment } from '@hydraflow/github';
import type { PhaseContext } from './phase-context';

/**
 * The plan accepted for this issue, read back from its plan comment and checked against the hash in state; undefined
 * when there is none or its comment no longer matches. The comments the session read when it opened serve when they
 * hold it (the plan was posted by an earlier run: implement's publish step, the review); a plan posted or revised in
 * this very session (plan going on into implement) fails the hash there and is read anew.
 */
export async function acceptedPlan(ctx: PhaseContext): Promise<Plan | undefined> {
  const record = ctx.session.state.plan;
  if (record?.status !== 'accepted' || record.commentId === undefined) return undefined;
  const planIn = (comments: readonly IssueComment[]) =>
    readPlanComment(comments.find((c) => c.id === record.commentId)?.body, record.hash);
  return planIn(ctx.session.comments) ?? planIn(await ctx.issues.listComments(ctx.issue.number));
}
