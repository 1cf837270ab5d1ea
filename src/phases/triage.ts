import {
  isFatal,
  issueTextHash,
  ModelOutputError,
  routeTriage,
  stagesBeside,
  type TriageRoute,
  type TriageVerdict,
} from '@hydraflow/core';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { escalate } from './escalate';
import { stopSpending } from './pause';
import { honourMovesRefusedByLock } from './refused-moves';
import { startNextPhase } from './next-phase';
import { triageCall } from './triage-call';
import { beginPlanDraft, planStands } from './plan-draft';
import { outsiderAuthor } from './outsider';
import type { EarlyCall } from '../agents/model-gateway';
import { endPhase } from './end-phase';

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
export async function runTriage(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session, config } = ctx;
  const hash = issueTextHash(issue);
  const done = session.state.triage;
  let forced = ctx.forced;
  if (done && done.bodyHash === hash && !forced) {
    // A re-run of a run that died after its last publish but before removing its 👀 finds the work done: free the
    // lock that attempt left, unless it was handed to the next phase (property test tests/property/pipeline-histories).
    const deadAttempt = session.options.runAttempt > 1 && !session.state.claim?.runId.startsWith('handoff:');
    const refused = deadAttempt ? stagesBeside(issue.labels, session.state.stage ?? null) : [];
    if (refused.length === 0) {
      if (deadAttempt) await session.dropLock();
      return {
        summary: `issue #${issue.number} was already triaged (route ${done.route}); nothing to do`,
        stage: session.currentStage,
      };
    }
    if (refused.length > 1 || refused[0] !== 'find') return honourMovesRefusedByLock(ctx, refused);
    forced = true; // hydraflow-find alone: the human asked for a fresh triage
  }

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
      ? beginPlanDraft(ctx, verdict)
      : undefined;
  try {
    return await finishTriage(ctx, verdict, { route, hash, waitsFor }, planDraft);
  } catch (error) {
    planDraft?.cancel();
    throw error;
  }
}

async function finishTriage(
  ctx: PhaseContext,
  verdict: TriageVerdict,
  { route, hash, waitsFor }: { route: TriageRoute; hash: string; waitsFor: string | undefined },
  planDraft: EarlyCall | undefined,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const stage = await session.moveTo(
    route,
    `triage: clarity ${verdict.clarity_score}/10, needs_discovery ${verdict.needs_discovery}`,
  );
  const now = ctx.session.options.now();
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

  if (stage !== route) {
    // A human moved the issue while triage ran: their choice stands, and nothing is dispatched.
    await endPhase(session, {
      headline: `Triaged, but a human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
      details: verdictDetails(verdict),
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
    details: verdictDetails(verdict),
  });
  if (!handOff) await session.unlock();
  return {
    summary: `triaged → ${route}${waitsFor ? `; waits for a maintainer (${waitsFor} is outside the repository)` : ''}`,
    stage: route,
    details: verdictDetails(verdict),
    ...next.outcome,
    ...(planDraft ? { nextCall: planDraft } : {}),
  };
}
