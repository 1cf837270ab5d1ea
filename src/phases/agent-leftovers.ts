import { UserError } from '@hydraflow/core';
import { stopModelProxy } from '../agents/model-proxy';
import type { MeterReport } from '../agents/proxy-meter';
import { parseProxy } from '../inputs';
import { getInput, type RunnerIO } from '../runner/io';
import { readRunnerContext } from '../runner/context';
import { artifactName, resultDir, resultFile, writeHandoff } from './implement-handoff';

/** Why the agent did not start, by the agent job's status (input job-status). */
function whyNotStarted(jobStatus: string): string {
  return jobStatus === 'cancelled'
    ? 'The coding agent did not start: the run was cancelled before it.'
    : 'The coding agent did not start: a step of the agent job before it failed (most often a setup step).';
}

/**
 * actions/agent's last word for an agent job whose agent never started: a setup step failed, or the run was cancelled
 * first. The model proxy may have sent the agent's first turn already (it begins it as it starts, ADR 0021), which the
 * provider bills: the proxy is stopped, and its signed count goes to the publish job in a failed result that says the
 * agent did not start, so that the call reaches the issue's ledger and the human is told which step failed
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
    started: false,
    summary: whyNotStarted(getInput('job-status', env)),
    refusals: [],
    // the publish job ledgers the proxy's signed count, which holds the first turn if it was sent
    ledger: [],
    turns: 0,
    testExitCode: null,
    testOutput: '',
    meter: left.meter,
  });
  const calls = report.ledger.length;
  io.info(`HydraFlow: the agent did not start; the model proxy had made ${calls} call${calls === 1 ? '' : 's'}`);
  io.setOutput('artifact-name', artifactName('result', report.issue, runId, runAttempt, [resultFile(out)]));
  io.setOutput('artifact-path', out);
}

/**
 * The issue and start commit the proxy's count is for, from its text (the publish job verifies its signature); the
 * result names the same, as the publish job requires.
 */
function reportOf(text: string): Pick<MeterReport, 'issue' | 'startSha' | 'ledger'> | undefined {
  try {
    const r = JSON.parse(text) as Partial<MeterReport>;
    if (typeof r.issue !== 'number' || typeof r.startSha !== 'string' || !Array.isArray(r.ledger)) return undefined;
    return { issue: r.issue, startSha: r.startSha, ledger: r.ledger };
  } catch {
    return undefined;
  }
}
