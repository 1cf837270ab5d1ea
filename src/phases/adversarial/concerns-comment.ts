/**
 * The comment that holds a stage's concerns (model text), visible and in a hidden, hash-checked data block
 * (packages/core/src/adversarial/data.ts): one comment per stage, updated in place; the signed state keeps its id and
 * the block's hash (record.ts `block`), so a resumed run reads the concerns back only if nobody changed them.
 */
import {
  hasLogin,
  ADVERSARIAL_VOTERS,
  neutralizeModelText,
  readConcernsData,
  renderConcernsData,
  type AdversarialStageSpec,
  type Concern,
  type StageRecord,
} from '@hydraflow/core';
import type { IssueComment } from '@hydraflow/github';
import type { PhaseContext } from '../phase-context';

export function concernsMarker(spec: AdversarialStageSpec): string {
  return `<!-- hydraflow:adversarial-stage ${spec.name} -->`;
}

function render(spec: AdversarialStageSpec, concerns: readonly Concern[], block: string): string {
  const flat = (t: string) => neutralizeModelText(t).replace(/\s+/g, ' ').trim();
  const lines = [
    concernsMarker(spec),
    `### Adversarial review: ${spec.name}`,
    '',
    `${spec.does}. Voters: ${spec.voters.map((v) => ADVERSARIAL_VOTERS[v].title).join(', ')}.`,
    '',
  ];
  if (concerns.length === 0) lines.push('No concerns raised so far.');
  for (const c of concerns)
    lines.push(
      `- **${c.severity}${c.blocking ? ', blocking' : ''}** (${ADVERSARIAL_VOTERS[c.voter].title}): ${flat(c.text)}`,
    );
  lines.push('', block);
  return lines.join('\n');
}

/** Writes the stage's concerns (creating the comment once) and returns where they are, for the stage's record. */
export async function writeConcerns(
  ctx: PhaseContext,
  spec: AdversarialStageSpec,
  known: StageRecord['block'],
  concerns: readonly Concern[],
): Promise<NonNullable<StageRecord['block']>> {
  const { block, hash } = renderConcernsData(concerns);
  if (known && known.hash === hash) return known;
  const body = render(spec, concerns, block);
  let comment: IssueComment | undefined;
  if (known) {
    try {
      comment = await ctx.issues.updateComment(known.commentId, body);
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error; // deleted by a human: a new one
    }
  }
  comment ??= await ctx.issues.createComment(ctx.issue.number, body, concernsMarker(spec));
  ctx.session.noteWritten(comment);
  return { commentId: comment.id, hash };
}

/** The concerns the stage's record names, if their comment is HydraFlow's and its block is intact; else none. */
export function readConcerns(ctx: PhaseContext, known: StageRecord['block']): Concern[] {
  if (!known) return [];
  const bots = ctx.config.bot_logins;
  const comment = ctx.session.comments.find(
    (c) => c.id === known.commentId && c.user !== null && hasLogin(bots, c.user.login),
  );
  return readConcernsData(comment?.body, known.hash) ?? [];
}
