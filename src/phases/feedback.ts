/**
 * Humans reviewing HydraFlow's pull request (issue #16): a person with `commands.min_permission` who requests changes,
 * leaves inline comments (a review with comments), or says `/fix <what to change>` on the pull request or the issue,
 * starts a refine round that addresses it; the publish job then answers each inline comment's thread (resolved when
 * the agent says it did it, or why not). Feedback is read from GitHub, not from the event, so a dropped or redelivered
 * event loses nothing and takes nothing twice: what a round took is recorded by id in the signed state. Bounded by
 * `review.max_rounds` human rounds and the budgets. A plain comment-only review (no inline comment) is conversation,
 * not a request: it starts nothing (docs/architecture.md).
 */
import {
  neutralizeModelText,
  parseCommand,
  permissionAtLeast,
  sanitizeUntrusted,
  type HydraflowConfig,
  type ImplementRecord,
} from '@hydraflow/core';
import type { IssueComment, Review, ReviewComment } from '@hydraflow/github';
import { escalate } from './escalate';
import { startNextPhase } from './next-phase';
import type { PhaseContext, PhaseOutcome } from './phase-context';

type Author = { login: string; type: string } | null;

/** A person, not automation: never a bot account nor one of HydraFlow's own identities. */
export function isHuman(
  config: Pick<HydraflowConfig, 'bot_logins'>,
  author: Author,
): author is { login: string; type: string } {
  const bots = new Set(config.bot_logins.map((l) => l.toLowerCase()));
  return (
    author !== null && author.type !== 'Bot' && !author.login.endsWith('[bot]') && !bots.has(author.login.toLowerCase())
  );
}

export interface PendingFeedback {
  reviews: { review: Review; comments: ReviewComment[] }[];
  fixes: IssueComment[];
}

const NONE: PendingFeedback = { reviews: [], fixes: [] };
/** Distinct authors whose permission is looked up (each is a request). */
const MAX_AUTHORS = 10;

export const isEmpty = (f: PendingFeedback) => f.reviews.length === 0 && f.fixes.length === 0;

/**
 * Feedback on pull request `pull` that no round took yet, from people with `commands.min_permission`: reviews that
 * request changes or carry inline comments, and `/fix` comments on the pull request or the issue.
 */
export async function pendingFeedback(ctx: PhaseContext, pull: number | undefined): Promise<PendingFeedback> {
  if (pull === undefined) return NONE;
  const handled = ctx.session.state.implement?.feedback;
  const human = (a: Author) => isHuman(ctx.config, a);
  const [reviews, onPull, onIssue] = await Promise.all([
    ctx.pulls.listReviews(pull),
    ctx.issues.listComments(pull),
    ctx.issues.listComments(ctx.issue.number),
  ]);
  const candidates = reviews.filter(
    (r) =>
      human(r.author) &&
      (r.state === 'CHANGES_REQUESTED' || r.state === 'COMMENTED') &&
      !handled?.reviews.includes(r.id),
  );
  const fixes = [...onPull, ...onIssue].filter(
    (c) => human(c.user) && parseCommand(c.body)?.name === 'fix' && !handled?.fixes.includes(c.id),
  );
  const authors = [...new Set([...candidates.map((r) => r.author!.login), ...fixes.map((c) => c.user!.login)])];
  const allowed = new Set<string>();
  for (const login of authors.slice(0, MAX_AUTHORS))
    if (permissionAtLeast(await ctx.issues.getPermission(login), ctx.config.commands.min_permission))
      allowed.add(login);
  const withComments = await Promise.all(
    candidates
      .filter((r) => allowed.has(r.author!.login))
      .map(async (review) => ({
        review,
        comments: (await ctx.pulls.listReviewComments(pull, review.id)).filter((c) => c.inReplyTo === null),
      })),
  );
  return {
    // a comment-only review without an inline comment is conversation, not a request to change something
    reviews: withComments.filter((r) => r.review.state === 'CHANGES_REQUESTED' || r.comments.length > 0),
    fixes: fixes.filter((c) => allowed.has(c.user!.login)),
  };
}

/** The feedback as the agent's task reads it: untrusted text sanitised, each inline comment with its id. */
export function feedbackMarkdown(f: PendingFeedback): string {
  if (isEmpty(f)) return '';
  const parts = [
    'A human reviewed the pull request. Address every point below. End your final summary with one line per numbered comment: `[c<id>] done: <what you changed>` or `[c<id>] not done: <why>`.',
  ];
  for (const { review, comments } of f.reviews) {
    const what = review.state === 'CHANGES_REQUESTED' ? 'changes requested' : 'comments';
    parts.push(`### Review by ${review.author!.login} (${what})`);
    if (review.body.trim()) parts.push(sanitizeUntrusted(review.body, 4_000));
    for (const c of comments)
      parts.push(`- [c${c.id}] \`${c.path}\`${c.line ? ` line ${c.line}` : ''}: ${sanitizeUntrusted(c.body, 2_000)}`);
  }
  for (const fix of f.fixes) {
    const instruction = fix.body
      .trimStart()
      .split('\n')[0]!
      .replace(/^\/fix\s*/i, '');
    const rest = fix.body.trimStart().split('\n').slice(1).join('\n');
    parts.push(`### /fix by ${fix.user!.login}`, sanitizeUntrusted(`${instruction}\n${rest}`.trim(), 4_000));
  }
  return parts.join('\n\n');
}

/** The implement record once a round takes `f`: its ids handled, its inline comments to answer after the push. */
export function takeFeedback(record: ImplementRecord | undefined, f: PendingFeedback): ImplementRecord['feedback'] {
  const before = record?.feedback ?? { reviews: [], fixes: [], comments: [], rounds: 0 };
  if (isEmpty(f)) return record?.feedback ? { ...before, comments: [] } : undefined;
  return {
    reviews: [...before.reviews, ...f.reviews.map((r) => r.review.id)],
    fixes: [...before.fixes, ...f.fixes.map((c) => c.id)],
    comments: f.reviews.flatMap((r) => r.comments.map((c) => c.id)),
    rounds: before.rounds + 1,
  };
}

/** What the agent said of inline comment `id` in its summary (`[c<id>] done: …` / `[c<id>] not done: …`). */
export function reportOn(summary: string, id: number): { done: boolean; text: string } | undefined {
  const line = new RegExp(`^\\s*[-*]?\\s*\\[c${id}\\]\\s*(done|not done)\\s*:?\\s*(.*)$`, 'im').exec(summary);
  return line ? { done: line[1]!.toLowerCase() === 'done', text: line[2]!.trim().slice(0, 500) } : undefined;
}

/** Answers the threads of the inline comments the round took, after its push to `sha` (the publish job). */
export async function answerThreads(ctx: PhaseContext, pull: number, sha: string, summary: string): Promise<void> {
  const comments = ctx.session.state.implement?.feedback?.comments ?? [];
  for (const id of comments) {
    const report = reportOn(summary, id);
    const body = !report
      ? `HydraFlow pushed ${sha.slice(0, 7)} for this review; its coding agent did not report on this comment, so please check it.`
      : report.done
        ? `Done in ${sha.slice(0, 7)}: ${neutralizeModelText(report.text) || 'addressed.'}`
        : `Not changed in ${sha.slice(0, 7)}: ${neutralizeModelText(report.text) || 'the coding agent gave no reason.'}`;
    await ctx.pulls.answerReviewThread(pull, id, body, report?.done === true);
  }
  ctx.session.update((s) =>
    s.implement?.feedback
      ? { ...s, implement: { ...s.implement, feedback: { ...s.implement.feedback, comments: [] } } }
      : s,
  );
}

/**
 * The feedback phase: a human's review or `/fix` on HydraFlow's pull request while it waits in review. It starts the
 * implement phase (a refine round in feedback mode, in this run: the agent and publish jobs follow), which reads the
 * feedback itself. In another stage, the next implement round reads it anyway; nothing is started.
 */
export async function runFeedback(ctx: PhaseContext, trigger: { pull?: number } = {}): Promise<PhaseOutcome> {
  const { session, config } = ctx;
  const record = session.state.implement;
  const stage = session.currentStage;
  if (!record?.pull || (trigger.pull !== undefined && trigger.pull !== record.pull))
    return { summary: 'no pull request of HydraFlow’s for this issue: nothing to address', stage };
  if (stage !== 'review')
    return { summary: `the issue is in ${stage ?? 'no stage'}: its next implement round reads the review`, stage };
  const lock = await session.acquire();
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage };
  const pending = await pendingFeedback(ctx, record.pull);
  if (isEmpty(pending)) {
    session.releaseClaim();
    await session.unlock();
    return { summary: `no review feedback on #${record.pull} to address`, stage };
  }
  const rounds = record.feedback?.rounds ?? 0;
  if (rounds >= config.review.max_rounds) {
    return escalate(ctx, {
      headline: `Review feedback on #${record.pull}: the rounds are used up`,
      reason: `HydraFlow addressed ${rounds} rounds of human review already (review.max_rounds ${config.review.max_rounds}); a human takes it from here`,
    });
  }
  const now = session.options.now().toISOString();
  session.update((s) => ({ ...s, implement: { ...record, mode: 'feedback', at: now } }));
  const moved = await session.moveTo('ready', `human review feedback on #${record.pull}`);
  if (moved !== 'ready') {
    session.releaseClaim();
    await session.unlock();
    return { summary: `a human moved the issue to ${moved ?? 'no stage'} meanwhile`, stage: moved };
  }
  const next = await startNextPhase(ctx, 'implement', 'The implement phase, with the review');
  const who = [
    ...new Set([...pending.reviews.map((r) => r.review.author!.login), ...pending.fixes.map((c) => c.user!.login)]),
  ];
  await session.publish({
    headline: `Review feedback on #${record.pull} from ${who.join(', ')}: HydraFlow addresses it (round ${rounds + 1})`,
    next: `${next.note} Each inline comment gets an answer once the fix is pushed.`,
  });
  return {
    summary: `feedback on #${record.pull}: implement ${next.inline ? 'continues in this run' : 'dispatched'}`,
    stage: 'ready',
    ...next.outcome,
  };
}
