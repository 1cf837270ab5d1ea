/**
 * The review and merge phases: what happens to HydraFlow's pull request after the implement phase opened or updated
 * it (seeds §4 builder → reviewer → refiner, §6 merge gate).
 *
 * - `review` (the implement publish step's workflow_dispatch, or a human's push to HydraFlow's branch): one review
 *   round (runReview). approve → the pull request is marked ready and the merge gate runs in the same run; refine →
 *   the issue goes back to `hydraflow-ready` and the implement phase is dispatched in refine mode (the lock goes with
 *   it); escalate → runReview already handed the issue to a human.
 * - `merge` (the gate; also reached by a human's approval, `/ship-it` on the pull request, and CI finishing on
 *   HydraFlow's branch): decideMerge over the signed review outcome, a human's approval, the checks and GitHub's
 *   mergeability. merge → squash (merge.method) at the reviewed head, branch deleted, `hydraflow-fixed`, issue closed,
 *   a final progress comment with the cost; wait → say why and release the lock so the next event resumes; fix → one
 *   implement run in fix mode; escalate → a human.
 *
 * Pull-request events name a pull request (`trigger.pull`): the phases act only when it is the one recorded in the
 * issue's signed state (`implement.pull`), so a human's lookalike `hydraflow/issue-<n>` branch changes nothing.
 * Idempotent: a round already reviewed on the head replays its decision; a merged pull request only makes sure the
 * issue is `hydraflow-fixed` and closed.
 */
import {
  hasLogin,
  approversOfHead,
  decideMerge,
  formatCount,
  headSeenAt,
  ledgerTotals,
  unpricedNote,
  neutralizeReferences,
  parseCommand,
  permissionAtLeast,
  stricterPermission,
  UNSIGNED_STATE_NOTE,
  type ImplementRecord,
  type MergeDecision,
} from '@hydraflow/core';
import type { ChecksSummary, PullRequest } from '@hydraflow/github';
import { escalate } from './escalate';
import { isHuman } from './feedback';
import { advanceParentEpic } from './epic';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { startNextPhase } from './next-phase';
import { runReview } from './review';
import { endPhase } from './end-phase';
import { carryOverAtMerge } from './adversarial/carryover';

/** What the event that started the run says (empty for a workflow_dispatch of the phase). */
export interface PullTrigger {
  /** The pull request the event was about: must be the issue's recorded pull request (`implement.pull`). */
  pull?: number;
  /** A human whose `/ship-it` on the pull request was permission-checked by the command handler. */
  approvedBy?: string;
  /**
   * Check names to leave out of the checks: HydraFlow's own job runs as a check on the pull request's head when a
   * pull-request event starts it, and must not wait for itself. `hydraflow` (the template's job) is always left out.
   */
  ownChecks?: readonly string[];
}

/** The template's job id, which is the name of the check run HydraFlow's own job shows on a pull request. */
const OWN_CHECK = 'hydraflow';
/** How many human approvers (reviews or /ship-it) without write permission are looked up before giving up. */
const MAX_APPROVER_LOOKUPS = 5;

type Ctx = PhaseContext;

function pullsOf(ctx: Ctx) {
  if (!ctx.pulls) throw new Error('review/merge: the phase context has no PullsPort (ctx.pulls)');
  return ctx.pulls;
}

/** The issue's recorded pull request, checked against the event's. A string is the reason to do nothing. */
function recordedPull(ctx: Ctx, trigger: PullTrigger, what: string): { impl: ImplementRecord; pull: number } | string {
  const impl = ctx.session.state.implement;
  if (!impl?.pull) return `issue #${ctx.issue.number} has no HydraFlow pull request recorded; nothing to ${what}`;
  if (trigger.pull !== undefined && trigger.pull !== impl.pull) {
    return `pull request #${trigger.pull} is not HydraFlow's pull request for issue #${ctx.issue.number} (#${impl.pull}); nothing to ${what}`;
  }
  return { impl, pull: impl.pull };
}

/** Nothing to do: the 👀 this run holds (the publish step went on into the review) or was handed is freed. */
async function nothing(ctx: Ctx, summary: string): Promise<PhaseOutcome> {
  await ctx.session.unlock();
  return { summary, stage: ctx.session.currentStage };
}

// ---------------------------------------------------------------------------------------------------------------
// review

/** The `review` phase: one review round of the issue's pull request, then merge gate (approve) or refiner (refine). */
export async function runReviewPhase(ctx: Ctx, trigger: PullTrigger = {}): Promise<PhaseOutcome> {
  const { session } = ctx;
  const pulls = pullsOf(ctx);
  const found = recordedPull(ctx, trigger, 'review');
  if (typeof found === 'string') return nothing(ctx, found);
  const pull = await pulls.getPull(found.pull);
  if (pull.merged) return runMergeGate(ctx, trigger);
  if (pull.state === 'closed') return nothing(ctx, `pull request #${pull.number} is closed; nothing to review`);
  if (ctx.issue.state === 'closed') return nothing(ctx, `issue #${ctx.issue.number} is closed; nothing to review`);

  const outcome = await runReview(ctx, pull);
  if (outcome.kind === 'skipped' || outcome.kind === 'escalate') return outcome.phase;

  // A round replayed from state (same head) took no lock: take it now (a no-op when runReview already holds it).
  const lock = await session.acquire({ takeOver: ctx.forced });
  if (!lock.ok) return nothing(ctx, `skipped: ${lock.reason}`);

  if (outcome.kind === 'approve') {
    // The merge gate reads while the pull request is marked ready (begun by the round, or here for a replayed one); it
    // writes nothing before that is done.
    const ready = outcome.ready ?? pulls.markReady(pull);
    ready.catch(() => undefined);
    return runMergeGate(ctx, trigger, { locked: true, ready });
  }

  // refine: the implement phase addresses the findings (it reads them back from HydraFlow's review).
  const round = session.state.review?.rounds[session.state.review.rounds.length - 1];
  const handed = [...(session.state.dispatches ?? [])]
    .reverse()
    .find((d) => d.phase === 'implement' && round !== undefined && Date.parse(d.at) >= Date.parse(round.at));
  if (handed && session.state.implement?.mode === 'refine' && session.currentStage === 'ready') {
    session.releaseClaim();
    await session.unlock();
    return nothing(ctx, `review round ${outcome.round} already handed to the implement phase (refine)`);
  }
  const now = session.options.now().toISOString();
  session.update((s) => ({ ...s, implement: s.implement ? { ...s.implement, mode: 'refine', at: now } : s.implement }));
  const stage = await session.moveTo('ready', `review round ${outcome.round} requested changes (refine)`);
  if (stage !== 'ready') return humanMovedIt(ctx, stage, outcome.phase.details);
  const next = await startNextPhase(ctx, 'implement', 'The refiner (the implement phase, with the findings)');
  const open = outcome.findings.length;
  await session.publish({
    headline: `Review round ${outcome.round} of #${pull.number}: changes requested (score ${outcome.score}/10, ${open} open finding${open === 1 ? '' : 's'}) → refine`,
    next: `${next.note} The review runs again on its push.`,
    ...(outcome.phase.details ? { details: outcome.phase.details } : {}),
  });
  return {
    summary: `review requested changes on #${pull.number} (round ${outcome.round}); implement ${next.inline ? 'continues in this run' : 'dispatched'} (refine)`,
    stage: 'ready',
    ...(outcome.phase.details ? { details: outcome.phase.details } : {}),
    ...next.outcome,
  };
}

async function humanMovedIt(ctx: Ctx, stage: string | null, details?: string): Promise<PhaseOutcome> {
  const { session } = ctx;
  await endPhase(session, {
    headline: `A human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
    next: 'HydraFlow waits for the human’s next step.',
    ...(details ? { details } : {}),
  });
  return { summary: `human override to ${stage ?? 'no stage'} honoured`, stage };
}

// ---------------------------------------------------------------------------------------------------------------
// merge gate

/**
 * The merge gate. `locked`: the caller (the review phase) already holds the issue's lock. Never merges a head that
 * HydraFlow's review did not approve: the approval is the signed review outcome of the last round, on this very sha.
 */
export async function runMergeGate(
  ctx: Ctx,
  trigger: PullTrigger = {},
  opts: {
    locked?: boolean;
    sleep?: (ms: number) => Promise<void>;
    /** Marking the pull request ready, under way: awaited before the gate writes anything. */
    ready?: Promise<void>;
  } = {},
): Promise<PhaseOutcome> {
  const { session, config } = ctx;
  const pulls = pullsOf(ctx);
  const found = recordedPull(ctx, trigger, 'merge');
  if (typeof found === 'string') return nothing(ctx, found);
  const review = session.state.review;
  const previous = session.state.merge;
  // The gate's first reads do not depend on each other: the pull request, the lock and, when a human's approval may
  // decide, the reviews and comments that name the approver. On GitHub that is one round trip instead of three.
  const reading = pulls.getPull(found.pull);
  const locking = opts.locked ? undefined : session.acquire({ takeOver: ctx.forced });
  // A go recorded earlier counts only for the head it was given on: on GitHub the head is known once the read is back,
  // so the approvals are read whenever one may decide (they are ignored if the recorded go turns out to cover the head).
  const approvals =
    config.merge.policy === 'human' && review?.pull === found.pull && review.outcome === 'approve'
      ? approvalsOf(ctx, found.pull)
      : undefined;
  for (const p of [locking, approvals]) p?.catch(() => undefined); // awaited below, or unused on an early exit
  let pull = await reading;
  const lock = (await locking) ?? { ok: true as const };
  // The gate writes only where it leaves: here on an unusual state, or after its reads, below.
  if (pull.merged || pull.state === 'closed' || ctx.issue.state === 'closed') await opts.ready;

  const foreign = notHydraflows(ctx, pull, found.impl);
  if (foreign) {
    if (!lock.ok) return nothing(ctx, `skipped: ${lock.reason}`);
    return escalate(ctx, {
      headline: `HydraFlow will not merge or finish pull request #${pull.number}; a human decides`,
      reason: foreign,
    });
  }
  if (pull.merged) return finishMerged(ctx, pull, found.impl, lock.ok);
  if (ctx.issue.state === 'closed') return nothing(ctx, `issue #${ctx.issue.number} is closed; nothing to merge`);
  if (!lock.ok) return nothing(ctx, `skipped: ${lock.reason}`);
  if (pull.state === 'closed') {
    return escalate(ctx, {
      headline: `Pull request #${pull.number} was closed without merging; a human decides`,
      reason: `pull request #${pull.number} is closed and not merged`,
    });
  }

  if (!session.options.stateKey) {
    // the review outcome below comes from the state: without a key, anyone who can edit HydraFlow's comment wrote it
    await opts.ready;
    return escalate(ctx, {
      headline: `HydraFlow does not merge pull request #${pull.number} on state it cannot verify; a human decides`,
      reason: UNSIGNED_STATE_NOTE,
    });
  }

  const last = review?.rounds[review.rounds.length - 1];
  const reviewed = review?.pull === pull.number && last !== undefined;
  const pipelineApproved = reviewed && review.outcome === 'approve' && last.sha === pull.headSha;

  const required = config.merge.required_approvals;
  let approvers = previous?.approvedSha === pull.headSha ? (previous.approvers ?? []) : [];
  if (approvers.length < required && pipelineApproved && config.merge.policy === 'human') {
    const found = await humanApprovers(ctx, approvals ?? approvalsOf(ctx, pull.number), pull.headSha, {
      required,
      ...(trigger.approvedBy ? { writer: trigger.approvedBy } : {}),
    });
    if (found.length > approvers.length) {
      approvers = found;
      const at = session.options.now().toISOString();
      session.update((s) => ({
        ...s,
        merge: { ...s.merge, approvedBy: found[0], approvers: found, approvedSha: pull.headSha, at },
      }));
    }
  }
  const approvedBy = approvers.length > 0 ? approvers.join(', ') : undefined;
  const humanApproved = approvers.length >= required;

  // GitHub computes mergeability lazily: the first read of a fresh head may say null.
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let i = 0; pipelineApproved && pull.mergeable === null && i < 3; i++) {
    await sleep(2_000 * (i + 1));
    pull = await pulls.getPull(pull.number);
  }
  if (pull.merged) return finishMerged(ctx, pull, found.impl, true);

  const gateOpen = pipelineApproved && (humanApproved || config.merge.policy === 'auto');
  const checks = gateOpen
    ? withRequired(withoutOwn(await pulls.checks(pull.headSha), trigger), config.merge.required_checks)
    : undefined;
  let decision: MergeDecision = decideMerge({
    policy: config.merge.policy,
    pipelineApproved,
    humanApproved,
    checks: checks?.state ?? 'pending',
    mergeable: pull.mergeable,
    fixAttempts: found.impl.fixAttempts,
  });
  if (decision.action === 'wait' && !pipelineApproved && reviewed && last.sha !== pull.headSha) {
    decision = {
      action: 'wait',
      reason: `the head moved to ${pull.headSha.slice(0, 7)} after HydraFlow’s review; a new review round decides`,
    };
  }
  if ((decision.action === 'fix' || decision.action === 'escalate') && checks?.failing.length) {
    decision = { ...decision, reason: `${decision.reason}: ${checks.failing.join(', ')}` };
  }

  await opts.ready;
  switch (decision.action) {
    case 'merge':
      return merge(ctx, pull, found.impl, approvedBy);
    case 'wait':
      return wait(ctx, pull, decision.reason, checks);
    case 'fix':
      return fix(ctx, pull, found.impl, decision.reason);
    case 'escalate':
      return escalate(ctx, {
        headline: `Pull request #${pull.number} cannot be merged as it is; a human decides`,
        reason: decision.reason,
      });
  }
}

/**
 * Why the pull request is not HydraFlow's own, whatever the state says (a state forged without a key, or a stale one,
 * may name any pull request): its head branch must be the recorded one, in this repository (not a fork), and it must
 * have been opened by one of HydraFlow's identities (bot_logins: the Actions bot, the push App or account).
 */
function notHydraflows(ctx: Ctx, pull: PullRequest, impl: ImplementRecord): string | undefined {
  if (pull.headRef !== impl.branch) return `its head branch is \`${pull.headRef}\`, not HydraFlow's \`${impl.branch}\``;
  if (pull.headRepo !== ctx.repository)
    return `its head branch is in ${pull.headRepo ?? 'a deleted repository'}, not in ${ctx.repository}`;
  if (!hasLogin(ctx.config.bot_logins, pull.author?.login))
    return `it was opened by ${pull.author?.login ?? 'a deleted account'}, not by HydraFlow (bot_logins: ${ctx.config.bot_logins.join(', ')})`;
  return undefined;
}

function withoutOwn(checks: ChecksSummary, trigger: PullTrigger): ChecksSummary {
  const own = new Set([OWN_CHECK, ...(trigger.ownChecks ?? [])].map((n) => n.toLowerCase()));
  const failing = checks.failing.filter((n) => !own.has(n.toLowerCase()));
  const pending = checks.pending.filter((n) => !own.has(n.toLowerCase()));
  return { ...checksState(failing, pending), passed: checks.passed };
}

/** `merge.required_checks` that have not reported on the head yet count as pending: a merge never races CI's start. */
function withRequired(checks: ChecksSummary, required: readonly string[]): ChecksSummary {
  const reported = new Set([...checks.failing, ...checks.pending, ...checks.passed].map((n) => n.toLowerCase()));
  const missing = required.filter((n) => !reported.has(n.toLowerCase())).map((n) => `${n} (not reported yet)`);
  if (missing.length === 0) return checks;
  return { ...checksState(checks.failing, [...checks.pending, ...missing]), passed: checks.passed };
}

function checksState(failing: string[], pending: string[]): Pick<ChecksSummary, 'state' | 'failing' | 'pending'> {
  return { state: failing.length ? 'failure' : pending.length ? 'pending' : 'success', failing, pending };
}

/** What names a human approver of pull request `pull`: its reviews and its comments (`/ship-it`). */
function approvalsOf(ctx: Ctx, pull: number) {
  return Promise.all([pullsOf(ctx).listReviews(pull), ctx.issues.listComments(pull)]);
}

/**
 * The humans with write permission (or commands.min_permission, if stricter) whose go counts for `head` (merge/approvals.ts: an approving review of that commit,
 * or `/ship-it` written after HydraFlow saw it), up to `required` of them. Bots never count. The comment scan makes a
 * `/ship-it` durable: said while HydraFlow was busy, or before its own review approved, it still counts when the gate
 * runs, as long as the head has not moved since. `writer`: a login whose write permission is already checked (the
 * `/ship-it` that started this run).
 */
async function humanApprovers(
  ctx: Ctx,
  approvals: ReturnType<typeof approvalsOf>,
  head: string,
  opts: { required: number; writer?: string },
): Promise<string[]> {
  const [reviews, comments] = await approvals;
  const candidates = approversOfHead({
    head,
    seenAt: headSeenAt(ctx.session.state, head),
    reviews: reviews.flatMap((r) =>
      isHuman(ctx.config, r.author) ? [{ login: r.author!.login, state: r.state, commitId: r.commitId }] : [],
    ),
    shipIts: comments.flatMap((c) =>
      isHuman(ctx.config, c.user) && parseCommand(c.body)?.name === 'ship-it'
        ? [{ login: c.user!.login, createdAt: c.createdAt }]
        : [],
    ),
  });
  // The bar /ship-it has as a command (the stricter of write and commands.min_permission), for reviews as well: a
  // repository that raised it to admin does not merge on a writer's approval (ADR 0019).
  const needed = stricterPermission('write', ctx.config.commands.min_permission);
  const approvers: string[] = [];
  for (const login of candidates.slice(0, opts.required + MAX_APPROVER_LOOKUPS)) {
    if (approvers.length >= opts.required) break;
    if (login === opts.writer || permissionAtLeast(await ctx.issues.getPermission(login), needed))
      approvers.push(login);
  }
  return approvers;
}

async function wait(ctx: Ctx, pull: PullRequest, reason: string, checks?: ChecksSummary): Promise<PhaseOutcome> {
  const { session } = ctx;
  const pending = checks?.pending.length ? ` (pending: ${checks.pending.join(', ')})` : '';
  await endPhase(session, {
    headline: `Pull request #${pull.number}: ${reason}${pending}`,
    next: /human/.test(reason)
      ? `A person with write access approves ${pull.htmlUrl} or comments /ship-it on it; HydraFlow then merges once the checks are green.`
      : 'HydraFlow checks again when CI finishes, a review is submitted or the branch moves.',
  });
  return { summary: `merge gate waits on #${pull.number}: ${reason}`, stage: session.currentStage };
}

async function fix(ctx: Ctx, pull: PullRequest, impl: ImplementRecord, reason: string): Promise<PhaseOutcome> {
  const { session } = ctx;
  const now = session.options.now().toISOString();
  session.update((s) => ({
    ...s,
    implement: { ...impl, ...s.implement, mode: 'fix', fixAttempts: impl.fixAttempts + 1, at: now },
  }));
  const stage = await session.moveTo('ready', `merge gate: ${reason}; fix attempt ${impl.fixAttempts + 1}`);
  if (stage !== 'ready') return humanMovedIt(ctx, stage);
  const next = await startNextPhase(ctx, 'implement', 'The fix (the implement phase)');
  await session.publish({
    headline: `Pull request #${pull.number}: ${reason} → one fix attempt`,
    next: `${next.note} If it still fails after that, a human decides.`,
  });
  return {
    summary: `merge gate: ${reason}; implement ${next.inline ? 'continues in this run' : 'dispatched'} (fix)`,
    stage: 'ready',
    ...next.outcome,
  };
}

async function merge(
  ctx: Ctx,
  pull: PullRequest,
  impl: ImplementRecord,
  approvedBy: string | undefined,
): Promise<PhaseOutcome> {
  const { session, config } = ctx;
  const review = session.state.review;
  const rounds = review?.rounds.length ?? 0;
  const score = review?.rounds[rounds - 1]?.score;
  let sha: string;
  try {
    // With a push token, the merge is that identity's, so the push it makes to the default branch starts the user's
    // `push` workflows (deploys, releases); a merge made with GITHUB_TOKEN starts none.
    sha = await (ctx.pullsToOpen ?? pullsOf(ctx)).merge(pull.number, {
      method: config.merge.method,
      sha: pull.headSha,
      // a human can edit the pull request's title (it starts as the issue's): no mention or closing keyword of theirs
      title: `${neutralizeReferences(pull.title)} (#${pull.number})`,
      // No closing keyword here: HydraFlow closes the issue itself, after labelling it, so a crash in between
      // never leaves a closed issue without hydraflow-fixed.
      message: [
        `Issue #${ctx.issue.number}.`,
        '',
        `Reviewed by HydraFlow in ${rounds} round${rounds === 1 ? '' : 's'}${score !== undefined ? ` (score ${score}/10)` : ''}; ${approvedBy ? `approved by ${approvedBy}` : 'merged under merge.policy auto'}.`,
      ].join('\n'),
    });
  } catch (error) {
    const fresh = await pullsOf(ctx)
      .getPull(pull.number)
      .catch(() => undefined);
    if (fresh?.merged) return finishMerged(ctx, fresh, impl, true);
    const message = error instanceof Error ? error.message : String(error);
    if (fresh && fresh.headSha !== pull.headSha) {
      return wait(
        ctx,
        fresh,
        `the head moved to ${fresh.headSha.slice(0, 7)} while merging; a new review round decides`,
      );
    }
    return escalate(ctx, {
      headline: `GitHub refused to merge pull request #${pull.number}; a human decides`,
      reason: `merge refused: ${message}`.slice(0, 500),
    });
  }
  return finishMerged(ctx, { ...pull, merged: true }, impl, true, sha);
}

/**
 * The pull request is merged: record it, delete the branch, `hydraflow-fixed`, close the issue (GitHub may already
 * have, from a closing keyword in the pull request), one final progress comment, unlock. Every step is idempotent;
 * an issue already finished is left alone.
 */
async function finishMerged(
  ctx: Ctx,
  pull: PullRequest,
  impl: ImplementRecord,
  locked: boolean,
  mergedSha?: string,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const done = session.state.merge?.mergedSha !== undefined && session.currentStage === 'fixed';
  if (done && ctx.issue.state === 'closed') {
    return nothing(ctx, `pull request #${pull.number} is merged and issue #${ctx.issue.number} closed; nothing to do`);
  }
  if (!locked) {
    // Finishing a merged pull request cannot conflict with anything: take over a hand-off if need be.
    const lock = await session.acquire({ takeOver: true });
    if (!lock.ok) return nothing(ctx, `skipped: ${lock.reason}`);
  }
  const sha = mergedSha ?? session.state.merge?.mergedSha;
  const now = session.options.now().toISOString();
  session.update((s) => ({
    ...s,
    merge: { ...s.merge, ...(sha && /^[0-9a-f]{40}$/.test(sha) ? { mergedSha: sha } : {}), at: now },
    implement: s.implement ? { ...s.implement, headSha: pull.headSha } : s.implement,
    lastError: undefined,
  }));
  // Open adversarial concerns become knowledge (adversarial/carryover.ts), recorded in the state published below; before
  // the issue closes, since a closed issue is never run again (handlers/phase.ts): a run that dies here is re-run.
  const gaps = await carryOverAtMerge(ctx, pull.number);
  // The branch goes, the label moves and the issue closes at once: writes that do not depend on each other.
  const [, stage] = await Promise.all([
    pull.headRef === impl.branch ? pullsOf(ctx).deleteBranch(impl.branch) : undefined,
    session.currentStage === 'fixed'
      ? 'fixed'
      : session.moveTo('fixed', `pull request #${pull.number} merged`, { happened: true }),
    ctx.issue.state !== 'closed' ? pullsOf(ctx).closeIssue(ctx.issue.number, 'completed') : undefined,
  ]);
  await advanceParentEpic(ctx);
  const details = [summary(ctx, pull, sha), ...(gaps.length ? ['', ...gaps] : [])].join('\n');
  await endPhase(session, {
    headline: `Merged #${pull.number} → ${stage === 'fixed' ? 'fixed' : (stage ?? 'no stage')}`,
    next: 'Nothing: the issue is closed as completed.',
    details,
  });
  return { summary: `merged #${pull.number}${sha ? ` (${sha.slice(0, 7)})` : ''}; issue closed`, stage, details };
}

function summary(ctx: Ctx, pull: PullRequest, sha: string | undefined): string {
  const { state } = ctx.session;
  const totals = ledgerTotals(state.ledger);
  const unpriced = unpricedNote(state.ledger);
  const rounds = state.review?.pull === pull.number ? state.review.rounds : [];
  const last = rounds[rounds.length - 1];
  const approvedBy = state.merge?.approvedBy;
  return [
    `**Merged: [#${pull.number}](${pull.htmlUrl})**${sha ? ` as \`${sha.slice(0, 7)}\`` : ''}`,
    '',
    `- Review: ${rounds.length} round${rounds.length === 1 ? '' : 's'}${last ? `, last score ${last.score}/10` : ''}`,
    `- Approved by: ${approvedBy ? `\`${approvedBy}\`` : 'HydraFlow’s review (merge.policy auto)'}`,
    `- Implement runs: ${state.implement?.attempts ?? 0}${state.implement?.fixAttempts ? ` (${state.implement.fixAttempts} fix)` : ''}`,
    `- Cost: $${totals.usd.toFixed(2)}, ${formatCount(totals.tokens)} tokens in ${totals.calls} model call${totals.calls === 1 ? '' : 's'}${unpriced ? ` (${unpriced})` : ''}`,
  ].join('\n');
}
