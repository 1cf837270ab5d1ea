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
  const stage = await session.moveTo('hitl', `${phase} escalated: ${args.reason}`.slice(0, 200));
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
