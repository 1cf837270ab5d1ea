import type { PhaseContext, PhaseOutcome } from './phase-context';
import { endPhase } from './end-phase';

/**
 * Any phase's way out to a human: the issue moves to hydraflow-hitl, the progress comment shows the real reason, the
 * lock is released. `failed` also turns the run red (credit, budget: problems a human must fix outside the issue).
 * `next`: what the human does, when it is not the usual fix-and-retry.
 */
export async function escalate(
  ctx: PhaseContext,
  args: { headline: string; reason: string; failed?: boolean; next?: string },
): Promise<PhaseOutcome> {
  const { session } = ctx;
  const phase = session.options.phase;
  // Add-first, the old label off once the state is published (endPhase): a run cut short in between leaves both labels,
  // never hydraflow-hitl with a state that still says the stage the run escalated from (property test: the hourly
  // sweep's shape timeout, cut there, left the issue at hitl with its state at shape, where no sweep looks again).
  const stage = await session.moveTo('hitl', `${phase} escalated: ${args.reason}`.slice(0, 200), { removeLater: true });
  session.update((s) => ({
    ...s,
    lastError: { phase, message: args.reason.slice(0, 1000), at: session.options.now().toISOString() },
  }));
  await endPhase(session, {
    headline: args.headline,
    next:
      args.next ?? 'A human decides: fix the cause, then comment /retry (or move the label to the stage to resume at).',
    error: args.reason,
  });
  return { summary: `escalated to a human: ${args.reason}`, stage, failed: args.failed ?? false };
}
