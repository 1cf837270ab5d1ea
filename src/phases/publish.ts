import { existsSync } from 'node:fs';
import {
  budgetLeft,
  checkChanges,
  DailyLimitError,
  findSecrets,
  MAX_FILE_BYTES,
  modelFor,
  neutralizeModelText,
  neutralizeReferences,
  secretValuesOf,
  type ChangedFile as CheckedFile,
  type LedgerEntry,
  type OutputProblem,
} from '@hydraflow/core';
import { GitError, GitWorkspace, isRefusedPush, type BranchFile } from '@hydraflow/git';
import type { PullRequest } from '@hydraflow/github';
import type { EarlyCall } from '../agents/model-gateway';
import { verifiedMeter } from '../agents/proxy-meter';
import { escalate } from './escalate';
import { agentJobFailure } from './agent-job-failure';
import { answerThreads } from './feedback';
import { pauseForTheDay } from './pause';
import {
  implementResultSchema,
  meterReportSchema,
  patchFile,
  readHandoff,
  readSmallRegularFile,
  resultDir,
  resultFile,
  type ImplementResult,
} from './implement-handoff';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { startNextPhase } from './next-phase';
import { publishBase } from './publish-fetch';
import { beginReview, type ReviewHead } from './review';
import { endPhase } from './end-phase';

const AUTHOR = { name: 'hydraflow[bot]', email: 'hydraflow[bot]@users.noreply.github.com' };
/** The agent's patch, read whole: files over MAX_FILE_BYTES are left out of it by the agent job (binary as base85). */
const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/** Lines added and removed per file, from a unified diff. */
function diffLines(diff: string): Map<string, number> {
  const lines = new Map<string, number>();
  let file: string | undefined;
  for (const line of diff.split('\n')) {
    const header = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (header) file = header[2];
    else if (file && /^[+-](?![+-]{2} )/.test(line)) lines.set(file, (lines.get(file) ?? 0) + 1);
  }
  return lines;
}

/**
 * The agent job's result, as data: its record and its patch, from the artifact the workflow downloaded into this
 * job's RUNNER_TEMP. Undefined when there is none (the agent job died before uploading one); an error message when it
 * is there but is not a small regular file, or not a result record (whether it is for this issue and start commit, and
 * whether git can apply the patch, is checked by the caller).
 */
function readResult(tempDir: string): { result: ImplementResult; patch: Buffer } | { error: string } | undefined {
  const dir = resultDir(tempDir);
  if (!existsSync(resultFile(dir))) return undefined;
  try {
    const result = readHandoff(resultFile(dir), implementResultSchema, 'implement result');
    const patch = existsSync(patchFile(dir)) ? readSmallRegularFile(patchFile(dir), MAX_PATCH_BYTES) : Buffer.alloc(0);
    return { result, patch };
  } catch (error) {
    return { error: `the agent job's result cannot be read: ${(error as Error).message}` };
  }
}

/**
 * The staged change, file by file (modes and sizes from git's object database), and the text to search for secrets:
 * the staged diff, binary files as text, which is what the commit will hold. Nothing is read through the working tree.
 */
async function describeChanges(git: GitWorkspace, start: string): Promise<{ files: CheckedFile[]; text: string }> {
  const [entries, diff] = await Promise.all([git.stagedEntries(start), git.diff({ staged: true })]);
  const lines = diffLines(diff);
  const status = { A: 'added', D: 'deleted', M: 'modified', T: 'typechange' } as Record<string, string>;
  const files = entries.map((e) => ({
    path: e.path,
    status: status[e.status] ?? e.status,
    lines: lines.get(e.path) ?? 0,
    bytes: e.bytes,
    oldMode: e.oldMode,
    newMode: e.newMode,
  }));
  return { files, text: diff };
}

/**
 * Applies the agent's patch to a fresh index on the start commit (git parses it as data; the working tree is never
 * written), then describes what the commit would hold. A patch git cannot apply is reported as a problem.
 */
async function applyPatch(git: GitWorkspace, start: string, patch: Buffer, token: string | undefined) {
  await git.resetIndexTo(start, token ? { token } : {});
  if (patch.length === 0) return undefined;
  try {
    await git.applyToIndex(patch);
    return undefined;
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    return `the agent's patch does not apply to the start commit: ${error.message}`;
  }
}

/** What the commit would hold once the patch is applied, or why it could not be. */
async function describeApplied(git: GitWorkspace, start: string, applied: Promise<string | undefined>) {
  const unapplied = await applied;
  return unapplied ? { files: [], text: '', unapplied } : { ...(await describeChanges(git, start)), unapplied };
}

/**
 * Why the agent job handed on no result, from its result as GitHub reports it (input agent-result), with a link to the
 * run's log. A failure there is most often a setup step of the user's (a new project's first run: `npm ci` against a
 * registry it cannot reach, a toolchain version that does not exist), which the agent never saw: the step that failed
 * and GitHub's error lines for it are named when they can be read (agent-job-failure.ts). An older template gives no
 * result, and the message then covers every case.
 */
async function noResult(ctx: PhaseContext): Promise<{ headline: string; reason: string }> {
  const job = ctx.agentJob;
  const failed = job?.result === 'failure' || job?.result === 'cancelled' ? await agentJobFailure(ctx) : undefined;
  const log = failed ? ` Its log: ${failed.logUrl}` : job ? ` Its log: ${job.runUrl}` : ' See the workflow run’s log.';
  switch (job?.result) {
    case 'failure':
      return {
        headline: 'The agent job failed before the coding agent handed on its work',
        reason: failed
          ? `${failed.what}. Nothing was pushed.${log}`
          : `a step of the agent job failed: most often one of your setup steps (installing the toolchain or the dependencies, before the agent starts), else the agent step itself. Nothing was pushed.${log}`,
      };
    case 'cancelled':
      return {
        headline: 'The agent job was cancelled',
        reason: `it ran past its timeout-minutes, or someone cancelled the run, before the coding agent handed on its work${failed ? ` (${failed.what})` : ''}. Nothing was pushed.${log}`,
      };
    case 'success':
      return {
        headline: 'The agent job handed on no result',
        reason: `it succeeded, but no result artifact reached this job: check that your workflow passes the agent step's output artifact-id on to the publish job as workflows-templates/hydraflow.yml does. Nothing was pushed.${log}`,
      };
    case 'skipped':
      return {
        headline: 'The agent job did not run',
        reason: `GitHub skipped it (its \`if:\` was false, or a job it needs did not succeed). Nothing was pushed.${log}`,
      };
    default:
      return {
        headline: 'The coding agent did not finish',
        reason: `the agent job handed on no result: a step of it failed (most often a setup step, before the agent started), or it was cancelled. Nothing was pushed.${log}`,
      };
  }
}

function problemList(problems: readonly OutputProblem[]): string {
  return problems.map((p) => `- ${p.path ? `\`${p.path}\`: ` : ''}${p.problem}`).join('\n');
}

function pullBody(issue: number, result: ImplementResult): string {
  return [
    `Fixes #${issue}`,
    '',
    '### What changed',
    '',
    // the model's text: no closing keyword of its own (only the line above closes an issue), mention or link
    neutralizeModelText(result.summary),
    '',
    `<sub>Written by HydraFlow's coding agent in ${result.turns} turns${result.testExitCode === 0 ? '; the tests pass' : ''}. HydraFlow reviews it next.</sub>`,
  ].join('\n');
}

/**
 * Implement in the publish job (GitHub token; a model key only for the review it goes on with): a fresh runner that
 * runs nothing the agent produced. It takes the agent job's result as data — the record and the patch — applies the
 * patch to a fresh index on the start commit recorded in signed state, validates what the commit would hold (paths,
 * protected paths, modes, size, anything shaped like a secret) and only then commits, pushes and opens or updates the
 * pull request, moves the issue to review and starts the review (in this run, begun from the staged diff while it
 * pushes, or dispatched). Anything wrong goes to a human, with the diagnosis; nothing is pushed.
 */
export async function publishImplement(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { session, issue, config } = ctx;
  const record = session.state.implement;
  if (!record)
    return { summary: 'nothing to publish: implement was not prepared in this run', stage: session.currentStage };
  const git = await GitWorkspace.open(ctx.workspace, { remoteUrl: ctx.remoteUrl });
  const agentResult = readResult(ctx.tempDir);
  // The publish job checks nothing out: it fetches the base branch and the start commit into a repository of its own
  // (begun as the step started, publish-fetch.ts; a checkout step before it, as older templates have, is simply
  // reused). That, staging and reading the change touch
  // only this job's repository: they go on while the lock is taken. So does the diff the review this step goes on with
  // reads (handed to it only if the change passes the checks below).
  const repository = publishBase({
    workspace: ctx.workspace,
    remoteUrl: ctx.remoteUrl,
    base: ctx.next.ref,
    token: ctx.gitToken,
  });
  const applied =
    record.startSha && agentResult && 'patch' in agentResult
      ? repository.then(() => applyPatch(git, record.startSha!, agentResult.patch, ctx.gitToken))
      : undefined;
  // the checks' view of the change and the review's diff are read side by side, once the patch is in the index
  const staged = applied ? describeApplied(git, record.startSha!, applied) : undefined;
  const reviewFiles = ctx.canContinueWith('review')
    ? applied?.then(() => git.branchFiles(`origin/${ctx.next.ref}`, { staged: true }))
    : undefined;
  for (const pending of [staged, reviewFiles]) pending?.catch(() => undefined); // awaited below, where they count
  // So is the pull request to update, if there is one (unused if the change goes to a human instead).
  const lookup = record.pull ? ctx.pulls.getPull(record.pull) : ctx.pulls.findOpenPull(record.branch);
  lookup.catch(() => undefined); // awaited below; a failure surfaces there
  const lock = await session.acquire();
  if (!lock.ok) return { summary: `skipped: ${lock.reason}`, stage: session.currentStage };
  if (!agentResult) return escalate(ctx, await noResult(ctx));
  if ('error' in agentResult) {
    return escalate(ctx, { headline: 'HydraFlow refused the agent job’s result', reason: agentResult.error });
  }
  const { result } = agentResult;
  const spend = agentSpend(ctx, result, record.startSha);
  session.record(spend.ledger);
  ctx.daySpend?.settle(issue.number, spend.ledger);
  if (spend.problem) {
    return escalate(ctx, { headline: 'HydraFlow cannot tell what the coding agent spent', reason: spend.problem });
  }
  // the agent step handed on nothing: this result only carried what the model proxy spent (agent-leftovers.ts)
  if (result.spendOnly) return escalate(ctx, await noResult(ctx));
  if (spend.refused && result.status !== 'failed') {
    // the agent makes none of the calls the proxy refuses (a refusal of its own would have failed it): something else
    // in the job called the model with the proxy's token
    return escalate(ctx, {
      headline: 'Code in the agent job called the model behind the agent’s back',
      reason: `the model proxy refused ${spend.refused} model call${spend.refused === 1 ? '' : 's'} that HydraFlow’s agent does not make (another model, a streamed or oversized answer, server-side tools, or a call past the budget): code the agent’s commands ran — a test it wrote, a dependency — may be hostile. Nothing was pushed; look at the change and the agent job’s log (${ctx.agentJob?.runUrl ?? 'the run'}) before \`/retry\``,
    });
  }
  if (!staged) {
    return escalate(ctx, {
      headline: 'HydraFlow cannot check the agent’s change',
      reason:
        'the implement record has no start commit (it was prepared by an older HydraFlow); nothing was pushed. `/retry` prepares it again',
    });
  }
  if (result.issue !== issue.number || result.startSha !== record.startSha) {
    return escalate(ctx, {
      headline: 'HydraFlow refused the agent job’s result',
      reason: `it is for issue #${result.issue} at ${result.startSha.slice(0, 12)}, not #${issue.number} at ${record.startSha?.slice(0, 12)}; nothing was pushed`,
    });
  }

  const { files, text, unapplied } = await staged;
  const problems = checkChanges(files, {
    maxFiles: config.implement.max_files,
    maxLines: config.implement.max_lines,
    maxFileBytes: MAX_FILE_BYTES,
    protectedPaths: config.implement.protected_paths,
  });
  if (unapplied) problems.push({ problem: unapplied });
  for (const r of result.refusals)
    problems.push({ path: r.path, problem: `the agent tried to ${r.tool} it: ${r.reason}` });
  const secrets = findSecrets(`${text}\n${result.summary}`, secretValuesOf(process.env));
  for (const s of secrets) problems.push({ problem: `the change contains ${s}` });

  if (result.status === 'failed') {
    return escalate(ctx, { headline: 'The coding agent failed', reason: result.summary });
  }
  if (problems.length > 0) {
    return escalate(ctx, {
      headline: 'HydraFlow refused to push the agent’s change',
      reason: `nothing was committed or pushed:\n${problemList(problems)}`,
    });
  }
  if (files.length === 0 && result.cap === 'day') {
    // the day's allowance ran out before the agent changed anything: the issue waits for the next day's
    return pauseForTheDay(ctx, new DailyLimitError(result.summary.split('\n', 1)[0]!, 'day'), 'implement');
  }
  if (files.length === 0) {
    // Never a blind retry (field notes: zero-commit retries doubled the attempts): a human looks first.
    return escalate(ctx, {
      headline: 'The coding agent changed nothing',
      reason: `no file changed after ${result.turns} turns${result.cap ? ` (stopped by the ${result.cap} cap)` : ''}. The agent said: ${result.summary}`,
    });
  }

  const testsPass = result.testExitCode === null || result.testExitCode === 0;
  const commit = git
    .commitStaged(
      // the issue's author wrote its title: a closing keyword in it would close another issue when this commit lands
      `${neutralizeReferences(issue.title)} (#${issue.number})\n\nHydraFlow implement, attempt ${record.attempts} (${record.mode}).`,
      AUTHOR,
    )
    .then((sha) => sha ?? git.headSha());
  const pushed = commit.then((sha) => pushOrAdopt(git, record.branch, sha, ctx.gitToken));
  const head = pushed.then((sha) => sha ?? commit);
  for (const p of [pushed, head]) p.catch(() => undefined); // awaited below
  // The review this step goes on with begins as soon as the change passed, from the local diff: the model reads while
  // git commits and pushes and GitHub opens the pull request. It is handed to the review (nextCall) or cancelled.
  const review = testsPass && reviewFiles ? reviewAhead(ctx, lookup, reviewFiles, head) : undefined;
  let handed = false;
  try {
    const headSha = await pushed;
    if (headSha === undefined) return await branchMoved(ctx, record, await lookup);
    // from now on the branch's head is headSha: a /ship-it counts for it only if written after this (merge/approvals.ts)
    const pushedAt = session.options.now().toISOString();

    if (!testsPass) {
      session.update((s) => ({ ...s, implement: { ...record, headSha, pushedAt } }));
      return await escalate(ctx, {
        headline: 'The tests still fail after the coding agent’s work',
        reason: `the branch \`${record.branch}\` was pushed for a human to look at; no pull request was opened. The test command ended with exit code ${result.testExitCode}:\n${result.testOutput.slice(-3_000)}`,
      });
    }
    const opened = await openOrUpdate(ctx, { ...record, pushedAt }, result, headSha, files.length, await lookup);
    handed = opened.continueWith === 'review';
    return handed ? { ...opened, ...(review ? { nextCall: await review } : {}) } : opened;
  } finally {
    if (!handed) void review?.then((call) => call?.cancel());
  }
}

/**
 * Pushes HEAD (`sha`) to the branch; the branch's head as HydraFlow pushed it, or undefined when someone else moved the
 * branch since the agent started (the push is refused and the branch does not hold this change). A push refused because
 * the branch already holds the same change — the same tree on the same parent, pushed by an earlier attempt of this
 * job that died before recording it ("Re-run failed jobs" commits it anew, at another moment), perhaps with a human's
 * commits on top — takes that commit as HydraFlow's (property test tests/property/pull-histories found the re-run
 * failing on its own push).
 */
async function pushOrAdopt(
  git: GitWorkspace,
  branch: string,
  sha: string,
  token: string | undefined,
): Promise<string | undefined> {
  const auth = token ? { token } : {};
  try {
    await git.push(branch, auth);
    return sha;
  } catch (error) {
    if (!isRefusedPush(error)) throw error;
    return git.pushedTwin(branch, auth);
  }
}

/**
 * The agent's change was not pushed: someone else pushed to the branch since the agent started (property test
 * tests/property/pull-histories). On HydraFlow's open pull request that is a human's commit, and it stands: the change
 * the agent made on the commit before it is dropped, and the review of the branch's new head decides what comes next,
 * as after any human push. Without such a pull request the branch is not HydraFlow's to take back: a human decides.
 */
async function branchMoved(
  ctx: PhaseContext,
  record: NonNullable<PhaseContext['session']['state']['implement']>,
  existing: PullRequest | undefined,
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const refused = `the push of the agent's change to \`${record.branch}\` was refused: someone else pushed to the branch since the agent started`;
  const open = existing?.state === 'open' ? existing : undefined;
  if (!open) {
    return escalate(ctx, {
      headline: 'Someone else pushed to HydraFlow’s branch; a human decides',
      reason: `${refused}, and HydraFlow has no open pull request for it. Nothing was pushed.`,
    });
  }
  session.update((s) => ({ ...s, implement: { ...record, pull: open.number, mode: 'build' } }));
  const stage = await session.moveTo('review', `pull request #${open.number}: someone pushed to it meanwhile`);
  if (stage !== 'review') return humanMovedIt(ctx, `The agent’s change was not pushed to #${open.number}`, stage);
  const next = await startNextPhase(ctx, 'review', 'The review of its new head');
  await session.publish({
    headline: `The agent’s change was not pushed to #${open.number}: someone pushed to its branch meanwhile, and that push stands`,
    next: `${next.note} [#${open.number}](${open.htmlUrl})`,
  });
  return { summary: `${refused}; the review of #${open.number}'s head decides`, stage: 'review', ...next.outcome };
}

/** A human moved the issue while this job worked: their choice stands. */
async function humanMovedIt(ctx: PhaseContext, what: string, stage: string | null): Promise<PhaseOutcome> {
  const { session } = ctx;
  await endPhase(session, {
    headline: `${what}, but a human moved the issue to ${stage ?? 'no stage'} meanwhile`,
    next: 'HydraFlow waits for the human’s next step.',
  });
  return { summary: `${what.toLowerCase()}; human override to ${stage} honoured`, stage };
}

/**
 * Begins the review of the commit this step pushes (review.ts, beginReview), from `staged`: the staged change against
 * the base branch, which is the commit's diff before the commit exists; undefined when it cannot (the review then asks
 * for itself, as it would have anyway).
 */
async function reviewAhead(
  ctx: PhaseContext,
  lookup: Promise<PullRequest | undefined>,
  staged: Promise<BranchFile[]>,
  commit: Promise<string>,
): Promise<EarlyCall | undefined> {
  const head = async (): Promise<ReviewHead> => {
    const [existing, files] = await Promise.all([lookup, staged]);
    const open = existing?.state === 'open' ? existing : undefined;
    return { pull: open?.number, title: open?.title ?? ctx.issue.title, headSha: commit, files };
  };
  try {
    return await beginReview(ctx, head());
  } catch {
    return undefined;
  }
}

/** Opens the pull request (or takes the open one), moves the issue to review and starts the review. */
async function openOrUpdate(
  ctx: PhaseContext,
  record: NonNullable<PhaseContext['session']['state']['implement']>,
  result: ImplementResult,
  headSha: string,
  changed: number,
  existing: PullRequest | undefined,
): Promise<PhaseOutcome> {
  const { session, issue } = ctx;
  const pull =
    existing && existing.state === 'open'
      ? existing
      : await ctx.pullsToOpen.createPull({
          title: neutralizeReferences(issue.title),
          body: pullBody(issue.number, result),
          head: record.branch,
          base: ctx.next.ref,
          draft: true,
        });
  session.update((s) => ({ ...s, implement: { ...record, pull: pull.number, headSha, mode: 'build' } }));
  const stage = await session.moveTo('review', `pull request #${pull.number} pushed (${record.mode})`);
  if (stage !== 'review') return humanMovedIt(ctx, `Pushed to #${pull.number}`, stage);
  // A round that took humans' inline comments answers their threads now that the fix is pushed (phases/feedback.ts).
  if (record.feedback?.comments.length) await answerThreads(ctx, pull.number, headSha, result.summary);
  const next = await startNextPhase(ctx, 'review', 'The review');
  await session.publish({
    headline: `Pull request #${pull.number} ${existing ? 'updated' : 'opened'} (draft): ${changed} file(s) changed`,
    next: `${next.note} [#${pull.number}](${pull.htmlUrl})`,
    details: neutralizeModelText(result.summary),
  });
  return { summary: `pushed ${headSha.slice(0, 7)} to #${pull.number}`, stage: 'review', ...next.outcome };
}

/**
 * What the agent job spent, as the issue's ledger records it. Given the key the job's model proxy signs with (input
 * meter-key), the proxy's signed count and nothing else: the result record went through the hands of the agent's
 * commands, and every call they made through the proxy is in that count (src/agents/proxy-meter.ts). A count that is
 * missing, does not verify or is for another issue or start commit: what the run's and the issue's budgets left the
 * agent (the most its proxy could have let through) is ledgered, and a human looks. Without the key (an older template), the result's own count.
 */
function agentSpend(
  ctx: PhaseContext,
  result: ImplementResult,
  startSha: string | undefined,
): { ledger: LedgerEntry[]; problem?: string; refused?: number } {
  const key = ctx.agentJob?.meterKey;
  if (!key) return { ledger: result.ledger };
  const signed = result.meter ? verifiedMeter(result.meter, key) : undefined;
  const report = signed ? meterReportSchema.safeParse(signed) : undefined;
  if (report?.success && report.data.issue === ctx.issue.number && report.data.startSha === startSha)
    return { ledger: report.data.ledger, refused: report.data.refused };
  const { session, config } = ctx;
  const most = budgetLeft({ ledger: session.state.ledger, runId: session.options.runId, budgets: config.budgets }).usd;
  const why = !result.meter
    ? 'the agent’s result holds no signed count of its model calls'
    : !report
      ? 'the count of its model calls in the agent’s result does not verify against the key its model proxy made'
      : 'the signed count of its model calls in the agent’s result is for another issue or start commit';
  return {
    ledger: [
      {
        at: session.options.now().toISOString(),
        runId: session.options.runId,
        phase: 'implement',
        role: 'implement',
        provider: config.provider,
        model: modelFor(config, 'implement'),
        inputTokens: 0,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
        costUsd: Math.round((most ?? 0) * 1e6) / 1e6,
      },
    ],
    problem: `${why}: the result was changed after the agent wrote it, or its model proxy stopped before the agent did. Nothing was pushed. HydraFlow ledgered what the run’s and the issue’s budgets had left the agent ($${(most ?? 0).toFixed(4)}), the most its proxy could have let through. See the agent job's log: ${ctx.agentJob?.runUrl ?? ''}`,
  };
}
