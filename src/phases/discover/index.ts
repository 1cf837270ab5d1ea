/**
 * Discover (docs/adr/0012-product-track.md, product track): a read-only research agent writes a structured brief —
 * existing solutions, user needs, opportunities, open questions, sources — posted as ONE comment, updated in place on
 * a re-run, and kept in signed state by its hash; then the issue moves to `hydraflow-shape`. A brief that fails its
 * completeness check (discover/completeness.ts in packages/core) is redone once with the gaps named, then goes to a
 * human. No human in the loop otherwise.
 */
import {
  hasLogin,
  BRIEF_MARKER,
  briefGaps,
  ConcernsUnavailableError,
  briefHash,
  isBuiltPhase,
  isFatal,
  issueTextHash,
  labelFor,
  renderBriefComment,
  type DiscoverBrief,
} from '@hydraflow/core';
import type { IssueComment } from '@hydraflow/github';
import type { PhaseContext, PhaseOutcome } from '../phase-context';
import { endPhase } from '../end-phase';
import { startNextPhase } from '../next-phase';
import { escalate } from '../escalate';
import { stopSpending } from '../pause';
import { humanComments } from '../groom/context';
import { research, webSearchFor, type ResearchResult } from './research';
import { runDiscoveryCouncil } from '../adversarial/discovery-council';
import { forgetRunningStages } from '../adversarial/stage-driver';
import { clearLeftoverRunningLabels } from '../adversarial/running-label';
import { workingTreeOf } from '../../runner/working-tree';

/**
 * Requests a discovery makes at most after its start: the lock taken over (2), the memory read, the brief, the label
 * move (2), the state and progress published, the lock freed.
 */
export const DISCOVER_REQUESTS = 9;

export async function runDiscover(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session } = ctx;
  const stageAtStart = session.currentStage;
  // A redelivered or late event finds the issue moved on; a human's /retry after a failed discovery may start it again.
  if (stageAtStart !== 'discover' && !ctx.forced) {
    return {
      summary: `issue #${issue.number} does not wait for discovery (${stageAtStart ?? 'no stage'})`,
      stage: stageAtStart,
    };
  }
  // Nothing is spent unless the token's hourly budget has room for the whole discovery (ADR 0014): a run that could
  // not record its brief would have paid a research call for nothing. Stopped here, the lock stays as it was handed
  // on, and the hourly sweep dispatches discovery again once its claim expires.
  await ctx.ensureRequests?.(DISCOVER_REQUESTS, `discovery of #${issue.number}`);
  const lock = await session.acquire({ takeOver: ctx.forced });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: stageAtStart };
  // a run killed while a discover stage ran left its transient label: no stage of this run runs yet
  await clearLeftoverRunningLabels(ctx);

  const text = `${issue.title}\n${issue.body}`;
  // what earlier issues taught (a human's preferences), by relevance to this one; nothing when memory is off or unread
  const memories = (await ctx.memory?.recall(text))?.block ?? '';
  const input = {
    gateway: ctx.models,
    memories,
    issue,
    comments: humanComments(session.comments, ctx.config.bot_logins),
    state: session.state,
    workspace: await workingTreeOf(ctx),
    grooming: ctx.grooming,
    webSearch: webSearchFor(ctx.config),
  };
  let first: ResearchResult;
  let second: ResearchResult | undefined;
  try {
    first = await research(input);
    const gaps = 'brief' in first ? briefGaps(first.brief, text) : [];
    if ('brief' in first && gaps.length > 0) second = await research({ ...input, redo: { brief: first.brief, gaps } });
  } catch (error) {
    if (isFatal(error)) return stopSpending(ctx, error, 'Discovery stopped before spending more');
    throw error;
  }
  const last = second ?? first;
  if (!('brief' in last)) {
    return escalate(ctx, {
      headline: 'Discovery did not produce a brief, so nothing was guessed',
      reason: `the research agent stopped after ${last.turns} turn(s): ${last.failure}`,
    });
  }
  const firstGaps = 'brief' in first ? briefGaps(first.brief, text) : [];
  let brief = last.brief;
  let council: string[] = [];
  // The adversarial discover stages (adversarial/discovery-council.ts), on a complete brief, before anyone sees it.
  if (ctx.config.adversarial.enabled && briefGaps(brief, text).length === 0) {
    try {
      const result = await runDiscoveryCouncil(ctx, brief, async (current, notes) => {
        const redone = await research({ ...input, redo: { brief: current, gaps: [], concerns: notes } });
        if (!('brief' in redone)) throw new UnusableBrief(redone.failure);
        return redone.brief;
      });
      brief = result.brief;
      council = result.lines;
    } catch (error) {
      if (isFatal(error)) return stopSpending(ctx, error, 'Discovery stopped before spending more');
      if (error instanceof UnusableBrief)
        return escalate(ctx, {
          headline: 'Discovery did not produce a brief for the council’s concerns, so nothing was guessed',
          reason: error.message,
        });
      if (error instanceof ConcernsUnavailableError) {
        forgetRunningStages(ctx, 'discover');
        return escalate(ctx, {
          headline: 'A discover stage’s recorded concerns are gone, so it did not guess them; /retry starts it over',
          reason: error.message,
        });
      }
      throw error;
    }
  }
  const gaps = briefGaps(brief, text);
  const attempts = second ? 2 : 1;
  const comment = await upsertBrief(ctx, renderBriefComment(brief, { attempts, gaps: firstGaps }));
  record(ctx, brief, comment, attempts);
  if (gaps.length > 0) {
    return escalate(ctx, {
      headline: 'The discovery brief is still incomplete after one redo',
      reason: `the brief lacks: ${gaps.join('; ')}`,
      next: 'A human completes the brief (or the issue), then comments /retry, or moves the issue on by label.',
    });
  }
  // Add-first, and hydraflow-discover comes off only once the state is published (as triage does, ADR 0014): a run cut
  // short in between leaves both labels and the state at discover, so its re-run discovers again (the brief is updated
  // in place), never a stage label whose brief the state does not know (property test: a /retry that died there).
  const stage = await session.moveTo('shape', 'research brief posted', { removeLater: true });
  const shown = `[the discovery brief](${comment.htmlUrl})${council.length ? `.\n\n${council.join('\n')}\n` : ''}`;
  if (stage !== 'shape') {
    await endPhase(session, {
      headline: `Researched, but a human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
      details: `See ${shown}.`,
    });
    return { summary: `brief posted; human override to ${stage} honoured`, stage };
  }
  const headline = `Discovery brief posted: ${counts(brief)}${attempts > 1 ? ' (redone once to fill its gaps)' : ''}`;
  if (!isBuiltPhase('shape')) {
    await endPhase(session, {
      headline,
      next: `Shape (directions to choose from) is not in this HydraFlow version: the issue waits at \`${labelFor('shape')}\` for a human to choose a direction, then set \`${labelFor('plan')}\`.`,
      details: `See ${shown}.`,
    });
    return { summary: `discovery brief posted (${counts(brief)}) → shape`, stage: 'shape' };
  }
  // shape runs in a run of its own (phases.ts: ownRun), which takes this run's lock over
  const next = await startNextPhase(ctx, 'shape', 'Shape (product directions to choose from)');
  await session.publish({ headline, next: next.note, details: `See ${shown}.` });
  await session.finishMove(); // hydraflow-discover goes once the state that says shape is published (as triage does)
  // the adversarial stages' outcome goes to the job summary too (run.ts shows an outcome's details there)
  const details = council.length ? { details: council.join('\n') } : {};
  return { summary: `discovery brief posted (${counts(brief)}) → shape`, stage: 'shape', ...details, ...next.outcome };
}

/** The research agent's redo for the discovery council did not end with a brief. */
class UnusableBrief extends Error {}

function counts(brief: DiscoverBrief): string {
  return [
    `${brief.existing_solutions.length} existing solution(s)`,
    `${brief.user_needs.length} user need(s)`,
    `${brief.opportunities.length} opportunit${brief.opportunities.length === 1 ? 'y' : 'ies'}`,
    `${brief.open_questions.length} open question(s)`,
  ].join(', ');
}

function record(ctx: PhaseContext, brief: DiscoverBrief, comment: IssueComment, attempts: number): void {
  const at = ctx.session.options.now().toISOString();
  const discover = { commentId: comment.id, hash: briefHash(brief), attempts, issueHash: issueTextHash(ctx.issue), at };
  // a new brief starts shaping over: the directions of an earlier one (its comment is updated in place) no longer apply
  ctx.session.update((s) => ({ ...s, discover, shape: undefined, lastError: undefined }));
}

/**
 * THE brief comment: by the id in state, else by marker among HydraFlow's comments (a re-run after a crash between
 * writing it and publishing the state), else new. Never two.
 */
async function upsertBrief(ctx: PhaseContext, body: string): Promise<IssueComment> {
  const known = ctx.session.state.discover?.commentId;
  if (known !== undefined) {
    try {
      return await ctx.issues.updateComment(known, body);
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error; // deleted by a human: post a new one
    }
  }
  const bots = ctx.config.bot_logins;
  const existing = ctx.session.comments.find(
    (c) => c.id !== known && c.user !== null && hasLogin(bots, c.user.login) && c.body.startsWith(BRIEF_MARKER),
  );
  if (existing) return ctx.issues.updateComment(existing.id, body);
  return ctx.issues.createComment(ctx.issue.number, body, BRIEF_MARKER);
}
