import { clearError } from '@hydraflow/core';
import type { PhaseContext, PhaseOutcome } from './phase-context';
import { startNextPhase } from './next-phase';
import { outsiderAuthor } from './outsider';
import { endPhase } from './end-phase';

const EDITED = 'the issue was edited after its plan was accepted';

/**
 * The issue's title or body changed after its plan was accepted (ADR 0004): no more work is done on a text nobody
 * planned. The issue goes back to `hydraflow-plan`, with a note, and is planned again: by this run when the author may
 * steer HydraFlow, else — an outsider's issue, which a maintainer's go sent on for the text it had then — once someone
 * with `commands.min_permission` comments `/retry` (outsider.ts; whoever asked for the phase that found the edit, their
 * go was not for the new text). Call with the lock held.
 */
export async function planEditedIssue(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { session } = ctx;
  const outsider = outsiderAuthor({ ...ctx, forced: false });
  outsider.catch(() => undefined); // awaited below
  const stage = await session.moveTo('plan', EDITED);
  if (stage !== 'plan') {
    await endPhase(session, {
      headline: `The issue was edited after its plan was accepted, and a human moved it to ${stage ?? 'no stage'}; that choice stands`,
      next: 'HydraFlow waits for the human’s next step.',
    });
    return { summary: `${EDITED}; human override to ${stage} honoured`, stage };
  }
  // What failed before is moot: the issue waits for planning, which is what /retry starts now (handlers/command.ts).
  session.update(clearError);
  const waitsFor = await outsider;
  if (waitsFor) {
    await endPhase(session, {
      headline:
        'The issue was edited after its plan was accepted: it waits for a maintainer before it is planned again',
      next: `\`${waitsFor}\` does not have ${ctx.config.commands.min_permission} access to this repository, so HydraFlow does not work on the new text by itself (\`outsider_issues: wait\`). Someone with ${ctx.config.commands.min_permission} access reads it and comments \`/retry\` to plan it anew.`,
    });
    return { summary: `${EDITED}; it waits for a maintainer (${waitsFor} is outside the repository)`, stage };
  }
  const next = await startNextPhase(ctx, 'plan', 'Planning the new text');
  await session.publish({
    headline: 'The issue was edited after its plan was accepted: it is planned again',
    next: next.note,
  });
  return { summary: `${EDITED}; planned again`, stage, ...next.outcome };
}
