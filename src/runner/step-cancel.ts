/**
 * A cancelled step, as GitHub's runner ends it: SIGINT to the step's entry process, SIGTERM 7.5 s later, then the
 * process tree is killed, and the job's `if: always()` steps still run. A step that handles the first signal can say
 * what it did before it dies — for the agent step, the model proxy's signed count of what the job spent, in a result
 * its composite uploads with `always()` (actions/agent/action.yml, whose `exec` makes node that entry process).
 */
export class StepCancelledError extends Error {
  constructor(signal: NodeJS.Signals) {
    super(
      `the agent job was cancelled (${signal}: someone cancelled the run, or the job ran past its timeout-minutes)`,
    );
    this.name = 'StepCancelledError';
  }
}

/**
 * The step's first SIGINT or SIGTERM, which no longer end the process at once: `cancelled` rejects and `signal` aborts
 * with a StepCancelledError; `dispose` gives the signals back their default.
 */
export function whenStepCancelled(): { cancelled: Promise<never>; signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const cancelled = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error)),
  );
  cancelled.catch(() => undefined); // raced against the work; unobserved once the work is done
  const onSignal = (signal: NodeJS.Signals) => controller.abort(new StepCancelledError(signal));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  return {
    cancelled,
    signal: controller.signal,
    dispose: () => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
    },
  };
}
