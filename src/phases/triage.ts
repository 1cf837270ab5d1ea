import {
  isFatal,
  issueTextHash,
  labelFor,
  pipelineLabelsOf,
  type IssueState,
  type PipelineStage,
  ModelOutputError,
  routeTriage,
  stagesBeside,
  type TriageRoute,
  type TriageVerdict,
} from '@hydraflow/core';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { escalate } from './escalate';
import { stopSpending } from './pause';
import { honourMovesRefusedByLock, setByPermittedHuman } from './refused-moves';
import { startNextPhase } from './next-phase';
import { triageCall } from './triage-call';
import { beginPlanDraft, planStands } from './plan-draft';
import { outsiderAuthor } from './outsider';
import type { EarlyCall } from '../agents/model-gateway';
import { endPhase } from './end-phase';
import { workingTreeOf } from '../runner/working-tree';

/** What the progress comment calls the phase a route starts, before "starts now" / "starts next". */
const ROUTE_WORK: Readonly<Record<TriageRoute, string>> = {
  plan: 'Planning',
  groom: 'Grooming (product, engineering, QA and research agents check it is ready to plan)',
  discover: 'Product discovery (research, then a direction to choose)',
};

/** What the progress comment says when an outsider's issue waits after triage (outsider.ts). */
function waitingNote(ctx: PhaseContext, route: TriageRoute, author: string): string {
  return `${ROUTE_WORK[route]} waits for a maintainer: \`${author}\` does not have ${ctx.config.commands.min_permission} access to this repository, so HydraFlow spends nothing more on this issue by itself (\`outsider_issues: wait\`). Someone with ${ctx.config.commands.min_permission} access comments \`/retry\` to go on.`;
}

function verdictDetails(verdict: TriageVerdict): string {
  return [
    `**Clarity** ${verdict.clarity_score}/10 · **Complexity** ${verdict.complexity_score}/10 · **Needs discovery** ${verdict.needs_discovery ? 'yes' : 'no'}`,
    '',
    verdict.enrichment,
    '',
    ...verdict.reasons.map((r) => `- ${r}`),
  ].join('\n');
}

/**
 * Triage (docs/adr/0012-product-track.md): one model call scores the issue, the route follows the clarity threshold, the next phase starts
 * (in this run when the job can run it, else dispatched). A verdict that cannot be parsed (after the one repair) fails
 * closed to HITL, never to a default route.
 */
/**
 * GitHub requests a triage makes once its state is read, at most: the lock, the author's permission, the label added
 * and described, the progress comment, the old label removed, the lock freed or the next phase dispatched, and one to
 * spare (a duplicate progress comment to delete).
 */
export const TRIAGE_REQUESTS = 8;

export async function runTriage(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session, config } = ctx;
  const hash = issueTextHash(issue);
  const done = session.state.triage;
  // A re-run of a run whose earlier attempt triaged and went on to the next phase in this run (the claim it left names
  // that phase): a human's /triage or /retry was acted on by that attempt, and is not a reason to triage again.
  const earlier = session.earlierAttemptsClaim?.phase;
  const wentOnTo = earlier !== undefined && earlier !== 'triage' ? earlier : undefined;
  let forced = ctx.forced && !wentOnTo;
  if (done && done.bodyHash === hash && !forced && ctx.swept) {
    // The hourly sweep finds hydraflow-find on an issue triaged on this very text. Beside the stage the state records,
    // it is a triage cut short after publishing its verdict (ADR 0014): finished without asking the model again.
    // Alone, a human set it again and the run it started could not (GitHub's rate limit): triage anew.
    // (hydraflow-find already taken off by this run, handlers/phase.ts finishCutMove: the same cut.)
    if (cutAfterVerdict(issue.labels, session.state.stage ?? null) || ctx.cutFinished === labelFor('find'))
      return resumeCutTriage(ctx, done);
    forced = true;
  }
  if (done && done.bodyHash === hash && !forced) {
    // A re-run of a run that died after its last publish but before removing its 👀 finds the work done: free the
    // lock that attempt left, unless it was handed to the next phase (property test tests/property/pipeline-histories).
    const deadAttempt = session.options.runAttempt > 1 && !session.state.claim?.runId.startsWith('handoff:');
    const refused = deadAttempt ? stagesBeside(issue.labels, session.state.stage ?? null) : [];
    if (refused.length === 0) {
      await session.freeDeadAttemptsLock();
      return {
        summary: `issue #${issue.number} was already triaged (route ${done.route}); nothing to do`,
        stage: session.currentStage,
      };
    }
    // hydraflow-find alone asks for a fresh triage (past the lock and the done verdict; the outsider wait still applies,
    // ADR 0019), only if a permitted human set it
    if (refused.length > 1 || refused[0] !== 'find' || !(await setByPermittedHuman(ctx, 'find')))
      return honourMovesRefusedByLock(ctx, refused, { resume: wentOnTo });
    forced = true;
  }

  // Nothing is written unless the token's hourly budget has room for the whole triage (ADR 0014): a run that could
  // not finish starts nothing, and the issue keeps hydraflow-find for the hourly sweep.
  await ctx.ensureRequests?.(TRIAGE_REQUESTS, `triage of #${issue.number}`);
  // A human asking for triage (label, /triage, /retry) takes over a lock only handed to a phase not yet started.
  const lock = await session.acquire({ takeOver: forced });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };

  // Whether an outsider's issue must wait for a human after triage (outsider.ts): known while the model reads.
  const outsider = outsiderAuthor(ctx);
  outsider.catch(() => undefined); // awaited once the verdict is in
  let verdict: TriageVerdict;
  try {
    // budgets.per_day.issues_per_author: an issue is started when it is triaged
    await ctx.daySpend?.assertAuthorMayStart(issue.number, issue.author?.login);
    verdict = await ctx.models.structured({ ...triageCall(issue), early: ctx.early });
    ctx.daySpend?.started(issue.number, issue.author?.login);
  } catch (error) {
    if (error instanceof ModelOutputError) {
      return escalate(ctx, {
        headline: 'Triage could not read the model’s verdict, so it did not guess a route',
        reason: `the triage verdict did not parse after one repair attempt: ${error.message}`,
      });
    }
    if (isFatal(error)) {
      return stopSpending(ctx, error, 'Triage stopped before spending more');
    }
    throw error;
  }

  const route = routeTriage(verdict, {
    clarityThreshold: config.clarity_threshold,
    groomRoute: config.grooming.route,
    groomComplexityThreshold: config.grooming.complexity_threshold,
  });
  const waitsFor = await outsider;
  // Planning that goes on in this run begins its first draft now: the planner reads while the verdict is written.
  const planDraft =
    !waitsFor && route === 'plan' && ctx.canContinueWith('plan') && !planStands(session.state.plan, hash)
      ? beginPlanDraft(ctx, verdict, await workingTreeOf(ctx))
      : undefined;
  try {
    return await finishTriage(ctx, verdict, { route, hash, waitsFor }, planDraft);
  } catch (error) {
    planDraft?.cancel();
    throw error;
  }
}

/** hydraflow-find beside the one stage label the state records: a triage cut short between publishing and unlabelling. */
function cutAfterVerdict(labels: readonly string[], recorded: PipelineStage | null): boolean {
  if (recorded === null || recorded === 'find') return false;
  const pipeline = pipelineLabelsOf(labels).sort();
  return pipeline.length === 2 && pipeline.join(',') === [labelFor('find'), labelFor(recorded)].sort().join(',');
}

/**
 * The sweep finishes a triage whose run published its verdict and was then stopped by GitHub's rate limit: the labels
 * and the next phase as that run would have left them, with the verdict it recorded (no second model call).
 */
async function resumeCutTriage(ctx: PhaseContext, done: NonNullable<IssueState['triage']>): Promise<PhaseOutcome> {
  const lock = await ctx.session.acquire({ takeOver: true });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: ctx.session.currentStage };
  const verdict: TriageVerdict = {
    clarity_score: done.clarity_score,
    complexity_score: done.complexity_score,
    needs_discovery: done.needs_discovery,
    enrichment: '',
    reasons: [],
  };
  const waitsFor = await outsiderAuthor(ctx);
  return finishTriage(ctx, verdict, { route: done.route, hash: done.bodyHash, waitsFor, resumed: true }, undefined);
}

async function finishTriage(
  ctx: PhaseContext,
  verdict: TriageVerdict,
  {
    route,
    hash,
    waitsFor,
    resumed = false,
  }: { route: TriageRoute; hash: string; waitsFor: string | undefined; resumed?: boolean },
  planDraft: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  // Add-first, and hydraflow-find comes off only once the state is published (ADR 0014): cut short at any request
  // (GitHub's rate limit), the issue keeps hydraflow-find for the hourly sweep, never a label with no verdict behind it.
  const stage = await session.moveTo(
    route,
    `triage${resumed ? ' (finished by the hourly sweep)' : ''}: clarity ${verdict.clarity_score}/10, needs_discovery ${verdict.needs_discovery}`,
    { removeLater: true },
  );
  const now = ctx.session.options.now();
  if (!resumed) {
    session.update((s) => ({
      ...s,
      triage: {
        clarity_score: verdict.clarity_score,
        complexity_score: verdict.complexity_score,
        needs_discovery: verdict.needs_discovery,
        route,
        at: now.toISOString(),
        bodyHash: hash,
      },
      lastError: undefined,
    }));
  }
  // the verdict's text is in the comment already when the sweep finishes a triage cut short
  const details = resumed ? undefined : verdictDetails(verdict);

  if (stage !== route) {
    // A human moved the issue while triage ran: their choice stands, and nothing is dispatched.
    await endPhase(session, {
      headline: `Triaged, but a human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
      ...(details ? { details } : {}),
    });
    planDraft?.cancel();
    return { summary: `triaged; human override to ${stage} honoured`, stage };
  }

  // Planning goes on in this run when the job can run it (next-phase.ts): no second workflow run to queue, boot and
  // check out. Grooming is dispatched: it is idempotent and checks its stage, so triage releases its lock rather than
  // handing it over (saves the groom run two requests; docs/grooming.md, request budget), and its four agents get a
  // run of their own.
  const handOff = route !== 'groom' && !waitsFor;
  const next = waitsFor
    ? { note: waitingNote(ctx, route, waitsFor), outcome: {} }
    : await startNextPhase(ctx, route, ROUTE_WORK[route], { handOff });
  if (waitsFor) session.releaseClaim();
  await session.publish({
    headline: `Triaged: clarity ${verdict.clarity_score}/10, complexity ${verdict.complexity_score}/10 → ${route}`,
    next: next.note,
    ...(details ? { details } : {}),
  });
  if (!handOff) await session.unlock();
  await session.finishMove();
  return {
    summary: `triaged → ${route}${waitsFor ? `; waits for a maintainer (${waitsFor} is outside the repository)` : ''}`,
    stage: route,
    ...(details ? { details } : {}),
    ...next.outcome,
    ...(planDraft ? { nextCall: planDraft } : {}),
  };
}
