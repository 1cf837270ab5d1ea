/**
 * Grooming (../shared/seeds/grooming-system.md; docs/grooming.md): PM, engineer, QA, research (and custom) agents in
 * parallel, then a summary agent that decides ready / needs_info / blocked.
 *
 * GitHub requests of a run (budget: 8 + 1 per sub-issue batch): the issue (dispatched runs only), the comments
 * (state), the 👀 lock, ONE GraphQL read of sub-issues + related issues + label ids, the issue again just before
 * writing, ONE PATCH of body + labels, then the progress comment and the dispatch (ready); sub-issues are created in
 * one GraphQL mutation each (../sub-issues.ts, shared with a product-track plan) and the first phase is dispatched.
 */
import { createHash } from 'node:crypto';
import {
  isFatal,
  agentsToRerun,
  buildFallbackSummary,
  CreditExhaustedError,
  finalGroomDecision,
  formatCount,
  formatUsd,
  GROOMED_LABEL,
  groomFailsClosed,
  groomBodyHash,
  labelFor,
  ledgerTotals,
  unpricedNote,
  mergeQuestions,
  neutralizeModelText,
  normalizePhases,
  openQuestions,
  parseQuestionsSection,
  readGroomData,
  renderGroomData,
  sanitizeUntrusted,
  stabilizeQuestionIds,
  upsertPhasesSection,
  upsertQuestionsSection,
  weighVerdicts,
  type AgentVerdict,
  type GroomRecord,
  type GroomSummary,
  type MergedQuestion,
  type PipelineStage,
  type SubIssueSpec,
} from '@hydraflow/core';
import type { GroomContext } from '@hydraflow/github';
import type { PhaseContext, PhaseOutcome } from '../phase-context';
import { escalate } from '../escalate';
import { stopSpending } from '../pause';
import { outsiderAuthor } from '../outsider';
import { runAgent, runSummary, type AgentRun, type LoopSetup } from './agents';
import { humanComments, RELATED_LIMIT, relatedSearch, sharedContext } from './context';
import { groomRoles, SHARED_INSTRUCTIONS, SUMMARY_BRIEF } from './prompts';
import { endPhase } from '../end-phase';
import { createPhaseSubIssues } from '../sub-issues';
import { workingTreeOf } from '../../runner/working-tree';

/** Stages /groom may start from: not once a pull request is open, the work split, or done. */
const GROOMABLE: ReadonlySet<PipelineStage | null> = new Set([
  null,
  'find',
  'discover',
  'shape',
  'plan',
  'ready',
  'hitl',
  'groom',
]);

/** What identifies the input of a grooming run: the same input twice (a re-run of the same event) does nothing. */
function inputFingerprint(body: string, lastHumanComment: number | undefined): string {
  const checked = parseQuestionsSection(body)
    .lines.filter((l) => l.checked && l.id)
    .map((l) => l.id)
    .sort();
  return createHash('sha256')
    .update(`${groomBodyHash(body)}\n${checked.join(',')}\n${lastHumanComment ?? ''}`)
    .digest('hex');
}

export async function runGroom(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { issue, session, config } = ctx;
  const stageAtStart = session.currentStage;
  if (!GROOMABLE.has(stageAtStart)) {
    return {
      summary: `grooming does not run on an issue at ${stageAtStart}: its work is already under way or done`,
      stage: stageAtStart,
    };
  }
  // An answer or an edit re-runs grooming only while the issue still waits in it (the event may be older than the
  // run that already moved the issue on); /groom, a human's explicit ask, may start it from any groomable stage.
  if (!ctx.forced && stageAtStart !== 'groom') {
    return {
      summary: `issue #${issue.number} no longer waits in grooming (${stageAtStart ?? 'no stage'})`,
      stage: stageAtStart,
    };
  }
  const comments = humanComments(session.comments, config.bot_logins);
  const fingerprint = inputFingerprint(issue.body, comments.at(-1)?.id);
  const previous = session.state.groom;
  // An outsider's issue that triage left waiting (outsider.ts) is not groomed because its author answered or edited
  // it: a permitted human's /groom or /retry starts the first grooming, whose questions the author may then answer.
  const outsider = previous ? undefined : await outsiderAuthor(ctx);
  if (outsider) {
    return {
      summary: `issue #${issue.number} waits for a maintainer (${outsider} is outside the repository): not groomed`,
      stage: stageAtStart,
    };
  }
  if (previous?.inputHash === fingerprint && !ctx.forced) {
    if (session.options.runAttempt > 1 && !session.state.claim?.runId.startsWith('handoff:')) await session.dropLock();
    return {
      summary: `issue #${issue.number} was already groomed with this input (${previous.decision})`,
      stage: stageAtStart,
    };
  }
  // The shared read starts with the lock (it writes nothing): one round trip less before the agents start.
  const reading = ctx.grooming.groomContext(issue.number, {
    search: relatedSearch(issue),
    relatedLimit: RELATED_LIMIT,
    labels: [labelFor('plan'), GROOMED_LABEL.name],
  });
  reading.catch(() => undefined); // awaited below; a lock refused makes it moot
  const lock = await session.acquire({ takeOver: ctx.forced });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: stageAtStart };

  try {
    return await groom(ctx, { comments, fingerprint, found: await reading });
  } catch (error) {
    if (isFatal(error)) {
      const why = error instanceof CreditExhaustedError ? 'the model account is out of credit' : 'its budget is spent';
      return stopSpending(ctx, error, `Grooming stopped: ${why}`);
    }
    throw error;
  }
}

async function groom(
  ctx: PhaseContext,
  input: { comments: ReturnType<typeof humanComments>; fingerprint: string; found: GroomContext },
): Promise<PhaseOutcome> {
  const { issue, session, config } = ctx;
  const { found } = input;
  const grooming = config.grooming;
  const roles = groomRoles(grooming);
  const names = roles.map((r) => r.name);
  const workspace = await workingTreeOf(ctx);
  const context = sharedContext({ issue, comments: input.comments, state: session.state, found, workspace });
  const setup: LoopSetup = {
    gateway: ctx.models,
    issue: issue.number,
    system: [{ text: `${SHARED_INSTRUCTIONS}\n\n${context}`, cache: true }],
    workspace,
    grooming: ctx.grooming,
    agentNames: names,
    maxTurns: grooming.max_turns,
    maxMs: 10 * 60_000,
    maxTokens: 400_000,
  };

  // Incremental re-run: only the agents whose verdict can have changed run again; the others' verdicts are reused.
  const previous = session.state.groom;
  const existing = parseQuestionsSection(issue.body).lines;
  const reusable = previous ? readGroomData(session.progressBody, previous.dataHash) : undefined;
  const plan = agentsToRerun(reusable && previous ? previous : undefined, names, {
    bodyChanged: !previous || previous.bodyHash !== groomBodyHash(issue.body) || ctx.forced,
    answeredIds: existing.filter((l) => l.checked && l.id).map((l) => l.id!),
    openQuestions: openQuestions(existing),
  });
  const runs = await runAgents(
    setup,
    roles.filter((r) => plan.run.includes(r.name)),
    grooming.cache_warmup,
  );
  const verdicts: Record<string, AgentVerdict> = {};
  for (const name of names) {
    const fresh = runs.find((r) => r.name === name);
    verdicts[name] = fresh ? fresh.verdict : reusable![name]!;
  }
  // Reused verdicts are verdicts: only when no agent has one does grooming stop here.
  const outcomes = [...runs, ...plan.reuse.map((name) => ({ name, failed: false }))];
  const noVerdict = groomFailsClosed(outcomes);
  if (noVerdict) return escalate(ctx, { ...noVerdict, failed: true });

  // The summary (after all agents). It answers badly → the seed's fallback summary of raw questions; it cannot be
  // reached → a human, with the provider's message.
  const task = summaryTask(verdicts, runs, existing);
  const summaryRun = await runSummary(setup, task);
  const unreachable = groomFailsClosed(outcomes, {
    name: 'summary',
    failed: !summaryRun.summary,
    ...(summaryRun.failure ? { failure: summaryRun.failure } : {}),
    ...(summaryRun.provider ? { provider: true } : {}),
  });
  if (unreachable) return escalate(ctx, { ...unreachable, failed: true });
  const summary: GroomSummary = summaryRun.summary
    ? stabilizeQuestionIds(summaryRun.summary, existing)
    : buildFallbackSummary(verdicts);
  const merged = mergeQuestions(existing, summary);
  const decided = finalGroomDecision(summary, merged, verdicts);

  // Phases: only when ready, from the engineer's recommendation (at most max_sub_issues, never duplicated).
  const phases = decided.decision === 'ready' ? normalizePhases(engineerPhases(verdicts)) : { phases: [], notes: [] };
  const split = phases.phases.length >= 2 && grooming.max_sub_issues > 0;

  const fresh = await ctx.issues.getIssue(issue.number); // just before writing: keep a human's concurrent edits
  let body = upsertQuestionsSection(fresh.body, merged);
  let subIssues: { phase: number; number: number; title: string }[] = [];
  let started: number | undefined;
  if (split) {
    const created = await createPhaseSubIssues(ctx, found, phases.phases, {
      cap: grooming.max_sub_issues,
      labels: [GROOMED_LABEL],
    });
    subIssues = created.all;
    started = created.started;
    body = upsertPhasesSection(
      body,
      subIssues.map((s) => ({ ...s, state: 'open' as const })),
    );
  }

  const target: PipelineStage =
    decided.decision === 'blocked' ? 'hitl' : decided.decision === 'needs_info' ? 'groom' : split ? 'epic' : 'plan';
  const extra = decided.decision === 'ready' ? [GROOMED_LABEL.name] : [];
  const reason = `grooming: ${decided.decision}${split ? ` in ${subIssues.length} phases` : ''}`;
  const stage = await session.moveWithEdit(target, reason, fresh.labels, extra, async (labels) => {
    const updated = await ctx.issues.updateIssue(issue.number, { body, ...(labels ? { labels } : {}) });
    return updated.labelSpecs;
  });

  const now = ctx.session.options.now().toISOString();
  const record: GroomRecord = {
    runs: (session.state.groom?.runs ?? 0) + 1,
    decision: decided.decision,
    decidedAt: now,
    bodyHash: groomBodyHash(body),
    inputHash: input.fingerprint,
    dataHash: '',
    agents: Object.fromEntries(
      names.map((name) => {
        const fresh = runs.find((r) => r.name === name);
        const before = previous?.agents[name];
        return [
          name,
          {
            ready: verdicts[name]!.ready,
            confidence: verdicts[name]!.confidence,
            failed: fresh ? fresh.failed : (before?.failed ?? false),
            at: fresh ? now : (before?.at ?? now),
          },
        ];
      }),
    ),
    openQuestionIds: openQuestions(merged).flatMap((q) => (q.id ? [q.id] : [])),
    subIssues: subIssues.map((s) => ({ phase: s.phase, number: s.number })),
  };
  const data = renderGroomData(verdicts);
  record.dataHash = data.hash;
  session.update((s) => ({ ...s, groom: record, lastError: undefined }));

  const details = groomDetails({
    summary,
    decided,
    runs,
    reused: plan.reuse,
    subIssues,
    summaryFailure: summaryRun.failure,
    notes: phases.notes,
    session,
  });

  if (stage !== target) {
    await endPhase(session, {
      headline: `Groomed (${decided.decision}), but a human moved the issue to ${stage ?? 'no stage'} meanwhile; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
      details,
      dataBlock: data.block,
    });
    return { summary: `groomed (${decided.decision}); human override to ${stage} honoured`, stage, details };
  }

  if (target === 'plan') session.dispatch(ctx.next.workflow, ctx.next.ref, 'plan', ctx.actor);
  if (started !== undefined) {
    await ctx.issues.dispatchWorkflow(ctx.next.workflow, ctx.next.ref, {
      issue: String(started),
      phase: 'plan',
      ...(ctx.actor ? { actor: ctx.actor } : {}),
    });
  }
  // An epic keeps its 👀 while its phases run (HydraFlow is working on it); the epic run a finished phase starts takes
  // it over.
  if (target === 'epic') session.handOff('epic');
  else if (target !== 'plan') session.releaseClaim();
  await session.publish({
    headline: headline(decided.decision, merged, subIssues, started),
    next: nextText(target, started),
    details,
    dataBlock: data.block,
    ...(target === 'hitl' ? { error: summary.blocker_reason ?? decided.reason ?? 'blocked' } : {}),
  });
  if (target !== 'plan' && target !== 'epic') await session.unlock();
  return {
    summary: `groomed → ${decided.decision}${split ? ` (${subIssues.length} phase sub-issues)` : ''}`,
    stage: target,
    details,
  };
}

/**
 * Agents in parallel, laid out for the prompt cache (docs/grooming.md, "Prompt caching"). Anthropic makes a cache
 * entry readable only once the response that writes it has begun, so agents started together would each pay to write
 * the shared prefix. With cache_warmup, the engineer (the agent that usually takes the most turns: the critical path)
 * starts alone and writes it; the others start when its first turn has answered — usually a short tool call — or after
 * LEADER_WAIT_MS at the latest, and read it.
 */
async function runAgents(setup: LoopSetup, roles: ReturnType<typeof groomRoles>, warmup: boolean): Promise<AgentRun[]> {
  if (!warmup || roles.length < 2) return Promise.all(roles.map((r) => runAgent(setup, r)));
  const leader = roles.find((r) => r.name === 'engineer') ?? roles.find((r) => r.explores) ?? roles[0]!;
  let release!: () => void;
  const cacheWritten = new Promise<void>((resolve) => (release = resolve));
  const cap = setTimeout(release, LEADER_WAIT_MS);
  const lead = runAgent(setup, leader, release).finally(release); // a failed first turn must not hold the rest back
  lead.catch(() => undefined); // its error surfaces from Promise.all below
  await cacheWritten;
  clearTimeout(cap);
  const rest = roles.filter((r) => r !== leader).map((r) => runAgent(setup, r));
  const all = await Promise.all([lead, ...rest]);
  return roles.map((r) => all.find((a) => a.name === r.name)!);
}

/** The longest the other agents wait for the engineer's first turn (a first turn that is a long verdict). */
const LEADER_WAIT_MS = 4_000;

function engineerPhases(verdicts: Record<string, AgentVerdict>): SubIssueSpec[] {
  const engineer = verdicts.engineer as (AgentVerdict & { recommended_phases?: SubIssueSpec[] }) | undefined;
  return engineer?.recommended_phases ?? [];
}

/** The summary's task: the role, then every verdict (with confidence) and the questions already on the issue. */
function summaryTask(
  verdicts: Record<string, AgentVerdict>,
  runs: AgentRun[],
  existing: ReturnType<typeof parseQuestionsSection>['lines'],
): string {
  const open = existing.filter((q) => q.id);
  return [
    SUMMARY_BRIEF,
    '',
    '# Agent verdicts',
    JSON.stringify(
      Object.entries(verdicts).map(([agent, v]) => ({
        agent,
        ...v,
        failed: runs.find((r) => r.name === agent)?.failed ?? false,
      })),
      null,
      1,
    ),
    '',
    weighVerdicts(verdicts),
    '',
    '# Questions already on the issue (reuse their ids)',
    open.length === 0
      ? '(none)'
      : // The Questions section is in the issue body: anyone who can edit the issue writes these titles.
        open.map((q) => `- ${q.checked ? '[x]' : '[ ]'} ${sanitizeUntrusted(q.title, 200)} (id: ${q.id})`).join('\n'),
  ].join('\n');
}

function headline(
  decision: string,
  merged: MergedQuestion[],
  subIssues: { number: number }[],
  started: number | undefined,
): string {
  const open = openQuestions(merged).length;
  if (decision === 'ready' && subIssues.length > 0)
    return `Groomed: ready, split into ${subIssues.length} phases${started ? ` (phase 1 is #${started})` : ''}`;
  if (decision === 'ready') return 'Groomed: ready to plan';
  if (decision === 'blocked') return 'Grooming found a blocker';
  return `Groomed: ${open} question${open === 1 ? '' : 's'} to answer before planning`;
}

function nextText(target: PipelineStage, started: number | undefined): string {
  if (target === 'plan') return 'Planning starts next (HydraFlow dispatches the plan phase).';
  if (target === 'epic')
    return `The phases are sub-issues of this issue${started ? `; phase 1 (#${started}) is being planned` : ''}. Each starts when the one before it is done; this issue is done when all are.`;
  if (target === 'hitl') return 'A human must remove the blocker, then comment /groom (or /retry).';
  return 'Answer the questions in the issue (tick a box, edit the issue, or reply in a comment): grooming runs again on a likely answer, or comment /groom.';
}

function groomDetails(args: {
  summary: GroomSummary;
  decided: { decision: string; reason?: string };
  runs: AgentRun[];
  reused: readonly string[];
  subIssues: { phase: number; number: number; title: string }[];
  summaryFailure: string | undefined;
  notes: readonly string[];
  session: PhaseContext['session'];
}): string {
  const { summary, decided, runs } = args;
  const usd = new Map<string, number>();
  for (const e of args.session.runLedger) usd.set(e.role, (usd.get(e.role) ?? 0) + e.costUsd);
  const cost = (name: string) => formatUsd(usd.get(`groom_${name}`) ?? 0);
  const rows = runs.map(
    (r) =>
      `| ${r.name} | ${r.failed ? 'failed' : r.verdict.ready ? 'ready' : 'not ready'} | ${r.verdict.confidence} | ${r.verdict.questions.length} | ${r.turns} | ${(r.ms / 1000).toFixed(1)} s | ${cost(r.name)} |`,
  );
  const total = ledgerTotals(args.session.runLedger);
  const unpriced = unpricedNote(args.session.runLedger);
  return [
    `**Decision: ${decided.decision}**${decided.reason ? ` — ${decided.reason}` : ''}`,
    '',
    neutralizeModelText(summary.summary),
    '',
    `_Why:_ ${neutralizeModelText(summary.decision_rationale)}`,
    ...(summary.blocker_reason ? ['', `**Blocker:** ${neutralizeModelText(summary.blocker_reason)}`] : []),
    ...(args.summaryFailure
      ? [
          '',
          `_The summary agent failed (${neutralizeModelText(args.summaryFailure)}); the questions are the agents' own._`,
        ]
      : []),
    '',
    '| Agent | Verdict | Confidence | Questions | Turns | Time | Cost |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    ...args.reused.map((name) => `| ${name} | reused (nothing it asked changed) | | | 0 | | ${formatUsd(0)} |`),
    `| summary | ${args.summaryFailure ? 'failed' : summary.decision} | | ${summary.consolidated_questions.length} | | | ${cost('summary')} |`,
    '',
    `Cost of this grooming run: ${formatUsd(total.usd)} (${formatCount(total.tokens)} tokens in ${total.calls} model calls${unpriced ? `; ${unpriced}` : ''}).`,
    ...runs.filter((r) => r.failure).map((r) => `- ${r.name} failed: ${neutralizeModelText(r.failure!)}`),
    ...(args.subIssues.length ? ['', '**Phases:** ' + args.subIssues.map((s) => `#${s.number}`).join(', ')] : []),
    ...args.notes.map((n) => `- ${neutralizeModelText(n)}`),
  ].join('\n');
}
