/**
 * The `test` command's runs for one agent session, and which run stands for the tree as it is now.
 *
 * Testing ahead: after a turn whose tools changed the tree, the test command starts in the background while the model
 * decides its next step (nearly always "run the tests"). When the next thing the agent does is `run_command test`, it
 * gets that run's outcome, often already there, instead of waiting for a new run; a write, an edit or any other
 * command first kills the run ahead (its process group) and waits for it to be gone, so the tree never changes under a
 * running test. Reads go on beside it: they change nothing, so the run still tests the tree the agent sees. A run
 * ahead that the agent never asks for is what the final test of the finished tree reuses.
 */
import type { ToolOutcome } from '../tool-loop';

interface TestRun {
  outcome: Promise<ToolOutcome>;
  controller: AbortController;
  /** started ahead and not handed to the agent yet */
  ahead: boolean;
  done: boolean;
}

/** Runs the configured test line with this timeout; aborting the signal kills it. */
export type RunTest = (timeoutMs: number, signal: AbortSignal) => Promise<ToolOutcome>;

/** Kills a run still going and waits until it is gone. */
async function stop(run: TestRun | undefined): Promise<void> {
  if (run && !run.done) {
    run.controller.abort();
    await run.outcome;
  }
}

const hasExitCode = (outcome: ToolOutcome) => !outcome.isError && /^Exit code \d+ /.test(outcome.content);

export class TestRuns {
  /** The run of the current tree, finished or running; none once something may have changed the tree. */
  private current: TestRun | undefined;
  /** Something changed the tree since the last run started. */
  private changed = false;
  /** Counts what may have changed the tree: tools that write, other commands, and test runs (they may write files). */
  version = 0;

  constructor(
    private readonly runTest: RunTest,
    private readonly options: { ahead: boolean },
  ) {}

  /** Before anything that may change the tree: a run ahead is killed (and awaited); no run stands for the tree. */
  async changing(): Promise<void> {
    const run = this.current;
    this.current = undefined;
    this.changed = true;
    this.version++;
    await stop(run);
  }

  /** The agent's `run_command test`: the run started ahead for this tree (handed over once), else a new run. */
  test(timeoutMs: number): Promise<ToolOutcome> {
    const run = this.current;
    if (run?.ahead) {
      run.ahead = false;
      return run.outcome;
    }
    return this.start(timeoutMs, false).outcome;
  }

  /** Between turns, while the model thinks: start the tests when the tree changed since the last run. */
  startAhead(timeoutMs: number): void {
    if (!this.options.ahead || !this.changed || timeoutMs <= 0) return;
    this.start(timeoutMs, true);
  }

  /**
   * The tests of the final tree: the last run when nothing could have changed the tree since and it ran to an exit
   * code (the agent's own run, or one started ahead), else a new run.
   */
  async final(timeoutMs: number): Promise<ToolOutcome> {
    const run = this.current;
    if (run) {
      const outcome = await run.outcome;
      if (hasExitCode(outcome)) return outcome;
    }
    return this.start(timeoutMs, false).outcome;
  }

  /** Resolves once no test run is going (whatever its outcome). */
  async settled(): Promise<void> {
    await this.current?.outcome;
  }

  /** Kill a run still going (the session is over). */
  async dispose(): Promise<void> {
    await stop(this.current);
  }

  private start(timeoutMs: number, ahead: boolean): TestRun {
    const controller = new AbortController();
    this.changed = false;
    this.version++;
    const run: TestRun = {
      controller,
      ahead,
      done: false,
      outcome: this.runTest(timeoutMs, controller.signal).finally(() => {
        run.done = true;
      }),
    };
    this.current = run;
    return run;
  }
}
