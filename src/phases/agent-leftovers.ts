import { UserError } from '@hydraflow/core';
import { stopModelProxy } from '../agents/model-proxy';
import { parseProxy } from '../inputs';
import { getInput, type RunnerIO } from '../runner/io';
import { readRunnerContext } from '../runner/context';
import { artifactName, meterReportSchema, resultDir, resultFile, writeHandoff } from './implement-handoff';

/** Why the agent handed on nothing, by the agent job's status before the agent step (input job-status). */
function whyNothing(jobStatus: string): string {
  if (jobStatus === 'cancelled') return 'The run was cancelled before the coding agent started.';
  if (jobStatus === 'failure')
    return 'A step of the agent job failed before the coding agent started (most often a setup step).';
  return 'The agent step ended before the coding agent handed on its work.';
}

/**
 * actions/agent's last step, for an agent job whose agent step handed on nothing: the agent never started (a setup
 * step failed, the run was cancelled first) or its step died. The model proxy may have made calls all the same — at
 * least the agent's first turn, which it begins as it starts (ADR 0021) — and the provider bills them: the proxy is
 * stopped, and its signed count goes to the publish job in a failed result marked as carrying the spend only, so that
 * the calls reach the issue's ledger and the human is told which step failed
 * (docs/adr/0024-a-cancelled-agent-job-hands-on-what-it-spent.md). It runs nothing of the repository's and reads none
 * of its files. A proxy that hands on no count (gone, or started without limits by an older routing job) leaves
 * nothing to hand on.
 */
export async function handOnLeftovers(env: NodeJS.ProcessEnv, io: RunnerIO): Promise<void> {
  const proxy = parseProxy(getInput('model-proxy', env));
  if (!proxy) throw new UserError('input model-proxy: expected the output proxy of actions/model-proxy, got nothing');
  const left = await stopModelProxy(proxy);
  const report = left.meter ? reportOf(left.meter.report) : undefined;
  if (!left.meter || !report) {
    io.warning('HydraFlow: the model proxy handed on no count of its calls; nothing to hand on to the publish job');
    return;
  }
  const { tempDir, runId, runAttempt } = readRunnerContext(env);
  const out = resultDir(tempDir);
  writeHandoff(resultFile(out), {
    v: 2,
    issue: report.issue,
    startSha: report.startSha,
    status: 'failed',
    spendOnly: true,
    summary: whyNothing(getInput('job-status', env)),
    refusals: [],
    // the publish job ledgers the proxy's signed count, which holds the first turn if it was sent
    ledger: [],
    turns: 0,
    testExitCode: null,
    testOutput: '',
    meter: left.meter,
  });
  const calls = report.ledger.length;
  io.info(
    `HydraFlow: the coding agent handed on nothing; its model proxy had made ${calls} call${calls === 1 ? '' : 's'}`,
  );
  io.setOutput('artifact-name', artifactName('result', report.issue, runId, runAttempt, [resultFile(out)]));
  io.setOutput('artifact-path', out);
}

/**
 * The proxy's count as the publish job reads it (meterReportSchema), from its text: the result names the same issue
 * and start commit, as the publish job requires (which also verifies its signature). Undefined for anything else.
 */
function reportOf(text: string) {
  try {
    const parsed = meterReportSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
