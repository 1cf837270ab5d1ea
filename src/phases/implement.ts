import {
  budgetLeft,
  editedSincePlan,
  DailyLimitError,
  modelFor,
  runTotals,
  planAsMarkdown,
  readReviewFindings,
  sanitizeUntrusted,
  untrustedTitle,
  type Finding,
  type ImplementRecord,
} from '@hydraflow/core';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { GitWorkspace } from '@hydraflow/git';
import { acceptedPlan } from './accepted-plan';
import { feedbackMarkdown, pendingFeedback, takeFeedback } from './feedback';
import { escalate } from './escalate';
import { planEditedIssue } from './edited-issue';
import { pauseForTheDay } from './pause';
import { artifactName, taskDir, taskFile, writeHandoff, type ImplementTask } from './implement-handoff';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { workingTreeOf } from '../runner/working-tree';
import { captureFirstTurn, firstTurnFile } from '../agents/first-turn';
import { PROXY_LIMITS_FILE, type ProxyLimits } from '../agents/proxy-meter';
import { TURN_OUTPUT_TOKENS } from '../agents/tool-loop';

export const branchFor = (issue: number) => `hydraflow/issue-${issue}`;

/**
 * Work on an issue's branch begun ahead of the implement phase this run goes on with (prefetchBranch, then
 * checkoutBranchAhead), by workspace and issue, until prepareImplement takes it.
 */
const ahead = new Map<string, { fetched: Promise<boolean>; checkout?: Promise<{ head: string }> }>();
const aheadKey = (ctx: PhaseContext) => `${ctx.workspace}\0${ctx.issue.number}`;

/** git in the job's working tree (put in place first when the job has no checkout), fetching from the repository. */
const workingGit = (ctx: PhaseContext) =>
  workingTreeOf(ctx).then((tree) => GitWorkspace.open(tree, { remoteUrl: ctx.remoteUrl }));

/**
 * Begins fetching the issue's branch from the remote, for the implement phase this run goes on with: the plan phase
 * calls it while its reviewer reads, so that on GitHub the round trip to the git server is off the critical path. It
 * only updates the remote-tracking ref, never the working tree the plan is read from. Without it, prepareImplement
 * fetches as it checks the branch out.
 */
export function prefetchBranch(ctx: PhaseContext): void {
  const key = aheadKey(ctx);
  if (ahead.has(key)) return;
  const fetched = workingGit(ctx).then((git) =>
    git.fetch(branchFor(ctx.issue.number), ctx.gitToken ? { token: ctx.gitToken } : {}),
  );
  fetched.catch(() => undefined); // checkoutBranch awaits it: a failed fetch falls back to what the checkout has
  ahead.set(key, { fetched });
}

/**
 * Puts the issue's branch in place as soon as its plan is accepted, for the implement phase this run goes on with:
 * git works while the plan is written to GitHub. The plan phase has read the working tree by then (its context and
 * path checks) and nothing after it in this step does. A no-op unless prefetchBranch began the fetch.
 */
export function checkoutBranchAhead(ctx: PhaseContext): void {
  const entry = ahead.get(aheadKey(ctx));
  if (!entry || entry.checkout) return;
  entry.checkout = workingGit(ctx).then((git) => checkoutIssueBranch(ctx, git, entry.fetched));
  entry.checkout.catch(() => undefined); // prepareImplement awaits it
}

function checkoutIssueBranch(
  ctx: PhaseContext,
  git: GitWorkspace,
  fetched: Promise<boolean> | undefined,
): Promise<{ head: string }> {
  return git.checkoutBranch(branchFor(ctx.issue.number), {
    from: `origin/${ctx.next.ref}`,
    ...(ctx.gitToken ? { token: ctx.gitToken } : {}),
    ...(fetched ? { fetched } : {}),
  });
}

function findingsMarkdown(findings: readonly Finding[]): string {
  return findings
    .map(
      (f) =>
        `- **${f.severity}** ${f.path}${f.line ? `:${f.line}` : ''} — ${f.title}\n  Fix: ${f.recommendation.replace(/\n/g, ' ')}`,
    )
    .join('\n');
}

/** What the refiner must address: the open findings of HydraFlow's last review, read back from GitHub and hash-checked. */
async function reviewFindings(ctx: PhaseContext, pull: number): Promise<string> {
  const last = ctx.session.state.review?.rounds.at(-1);
  if (!last?.reviewId) return '';
  const review = (await ctx.pulls.listReviews(pull)).find((r) => r.id === last.reviewId);
  const findings = readReviewFindings(review?.body, last.findingsHash);
  return findings ? findingsMarkdown(findings) : '';
}

/** Why a fix round runs: the failing checks or the conflict, as the merge gate saw them. */
async function fixReason(ctx: PhaseContext, record: ImplementRecord): Promise<string> {
  if (!record.pull) return '';
  const pull = await ctx.pulls.getPull(record.pull);
  if (pull.mergeable === false) {
    return `- The branch conflicts with \`${pull.baseRef}\`: merge \`${pull.baseRef}\` into it and resolve the conflicts.`;
  }
  const checks = await ctx.pulls.checks(pull.headSha);
  return checks.failing
    .map((name) => `- The required check \`${name}\` failed on the last push: make it pass.`)
    .join('\n');
}

/**
 * Implement in the routing job (GitHub token and model keys, runs no repository code): takes the lock, puts the branch
 * in place, records the start commit in signed state and writes the task for the agent job, which gets no GitHub token
 * (implement-handoff.ts). Output `agent=implement` starts the agent and publish jobs of the user's workflow.
 */
export async function prepareImplement(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { session, issue } = ctx;
  const state = session.state;
  const previous = state.implement;
  const mode = previous?.mode ?? 'build';
  if (previous?.pull && mode === 'build' && !ctx.forced) {
    await session.unlock(); // held when a plan went on into implement in this run, or handed to this dispatched one
    return { summary: `pull request #${previous.pull} is already open for this issue`, stage: session.currentStage };
  }
  const lock = await session.acquire({ takeOver: ctx.forced });
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  // The agent works on the text that was planned: the issue as read here is what goes into its task (ADR 0004).
  if (editedSincePlan(state.plan, issue)) return planEditedIssue(ctx);

  const branch = branchFor(issue.number);
  const base = ctx.next.ref;
  // The branch is put in place while the plan is read (when it is not, the job's checkout is left on it: harmless).
  const begun = ahead.get(aheadKey(ctx));
  ahead.delete(aheadKey(ctx));
  const checkout = begun?.checkout ?? workingGit(ctx).then((git) => checkoutIssueBranch(ctx, git, begun?.fetched));
  checkout.catch(() => undefined); // awaited below, once the plan is known to be there
  const plan = await acceptedPlan(ctx);
  if (!plan) {
    return escalate(ctx, {
      headline: 'Implementation needs an accepted plan',
      reason: 'there is no accepted plan for this issue (or its plan comment was edited); run the plan phase first',
    });
  }
  // budgets.per_day: the coding agent may spend what the day has left (at most what this run's budget leaves), reserved
  // for it until the publish job settles what it spent; a day with nothing left pauses the issue before the agent starts.
  let dayUsd: number | undefined;
  try {
    const runLeft = ctx.config.budgets.per_run.usd - runTotals(session.state.ledger, session.options.runId).usd;
    dayUsd = await ctx.daySpend?.reserveForAgent(issue.number, runLeft, ctx.config.implement.max_minutes);
  } catch (error) {
    if (error instanceof DailyLimitError) return pauseForTheDay(ctx, error);
    throw error;
  }
  const { head } = await checkout;

  // A human's review feedback (phases/feedback.ts) is read by every round on an open pull request, whatever started it.
  const [modeFindings, feedback] = await Promise.all([
    mode === 'refine' && previous?.pull
      ? reviewFindings(ctx, previous.pull)
      : mode === 'fix' && previous
        ? fixReason(ctx, previous)
        : '',
    pendingFeedback(ctx, previous?.pull),
  ]);
  const findings = [modeFindings, feedbackMarkdown(feedback)].filter(Boolean).join('\n\n');
  const handled = takeFeedback(previous, feedback);
  const now = session.options.now();
  const record: ImplementRecord = {
    branch,
    ...(previous?.pull ? { pull: previous.pull } : {}),
    ...(previous?.headSha ? { headSha: previous.headSha } : {}),
    startSha: head,
    attempts: (previous?.attempts ?? 0) + 1,
    mode,
    fixAttempts: previous?.fixAttempts ?? 0,
    ...(handled ? { feedback: handled } : {}),
    at: now.toISOString(),
  };
  session.update((s) => ({ ...s, implement: record }));

  const task: ImplementTask = {
    v: 2,
    issue: issue.number,
    title: untrustedTitle(issue.title),
    body: sanitizeUntrusted(issue.body),
    plan: planAsMarkdown(plan),
    findings,
    branch,
    base,
    startSha: head,
    commands: ctx.config.implement.commands,
    protectedPaths: ctx.config.implement.protected_paths,
    limits: { maxTurns: ctx.config.implement.max_turns, maxMinutes: ctx.config.implement.max_minutes },
    ledger: [...session.state.ledger],
    runId: session.options.runId,
    ...(dayUsd !== undefined ? { dayUsd } : {}),
  };
  const dir = taskDir(ctx.tempDir);
  writeHandoff(taskFile(dir), task);
  writeHandoff(proxyLimitsFile(dir), proxyLimits(ctx, task));
  // built while the progress comment is written: the model proxy sends it before the agent job's checkout and setup
  const firstTurn = captureFirstTurn(ctx, task).catch(() => undefined);
  const { runId, runAttempt } = session.options;

  const what = {
    build: 'implementing the plan',
    refine: 'addressing the review',
    fix: 'fixing the checks',
    feedback: 'addressing the human review',
  }[mode];
  await session.publish({
    headline: `The coding agent is ${what} on \`${branch}\` (attempt ${record.attempts})`,
    next: 'HydraFlow then checks what it changed, pushes it and opens (or updates) the pull request.',
  });
  const turn = await firstTurn;
  if (turn) writeHandoff(firstTurnFile(dir), turn);
  else rmSync(firstTurnFile(dir), { force: true });
  const files = [taskFile(dir), proxyLimitsFile(dir), ...(turn ? [firstTurnFile(dir)] : [])];
  return {
    summary: `implement prepared on ${branch} (${mode}, attempt ${record.attempts})`,
    stage: session.currentStage,
    outputs: {
      agent: 'implement',
      issue: String(issue.number),
      // The workflow uploads the task as an artifact under this name, for the agent job to download.
      'task-artifact': artifactName('task', issue.number, runId, runAttempt, files),
      'task-path': dir,
      // The agent job checks it out: the patch it hands back is against it.
      'start-sha': head,
    },
  };
}

const proxyLimitsFile = (dir: string) => join(dir, PROXY_LIMITS_FILE);

/**
 * What the agent job's model proxy lets through (src/agents/proxy-meter.ts): the implement model at its price, a turn's
 * output, and what the run's, the issue's and the day's budgets leave the agent.
 */
function proxyLimits(ctx: PhaseContext, task: ImplementTask): ProxyLimits {
  const model = modelFor(ctx.config, 'implement');
  const left = budgetLeft({ ledger: task.ledger, runId: task.runId, budgets: ctx.config.budgets });
  const usd = task.dayUsd === undefined ? left.usd : Math.min(left.usd ?? Infinity, task.dayUsd);
  return {
    v: 1,
    issue: task.issue,
    startSha: task.startSha,
    runId: task.runId,
    provider: ctx.config.provider,
    model,
    ...ctx.models.priceOf(model),
    maxOutputTokens: TURN_OUTPUT_TOKENS,
    ...(usd !== undefined ? { usd } : {}),
    ...(left.tokens !== undefined ? { tokens: left.tokens } : {}),
  };
}
