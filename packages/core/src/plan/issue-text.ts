/**
 * The issue text a plan answers (ADR 0004): the plan record keeps the sha256 of the issue's title and body as they were
 * when the plan was made (`issueHash`), never the text. Work after planning — the coding agent, the refiner, the
 * reviewer — runs only on a text with that hash, so what it reads is what was planned; a text edited since is planned
 * again first.
 */
import { createHash } from 'node:crypto';
import type { PlanRecord } from './record';

/**
 * sha256 of an issue's title and body exactly as GitHub stores them. Every edit counts, a ticked task-list box or a
 * line ending included: any of them can change what a model reads (a ticked item reads as done, and grooming reads a
 * ticked box as an answer), and what GitHub records as no edit at all changes nothing here either.
 */
export function issueTextHash(issue: { title: string; body: string }): string {
  return createHash('sha256').update(`${issue.title}\n${issue.body}`).digest('hex');
}

/** True when the issue has an accepted plan made from another text than its title and body now. */
export function editedSincePlan(plan: PlanRecord | undefined, issue: { title: string; body: string }): boolean {
  return plan?.status === 'accepted' && plan.issueHash !== issueTextHash(issue);
}
