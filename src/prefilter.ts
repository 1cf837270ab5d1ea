/**
 * A cheap look at the event before anything heavy loads (config, zod, SDKs): most events a repository sends need no
 * work — ordinary comments above all — and should cost a few milliseconds, not a full start. Conservative: it only
 * says "skip" when no config could make the event matter; everything else goes to the real router.
 */
const ISSUE_ACTIONS = new Set(['opened', 'labeled', 'unlabeled', 'closed', 'edited', 'reopened']);
/** The start of HydraFlow's state block (core's STATE_MARKER, which this file does not load). */
const STATE_MARKER = '<!-- hydraflow:state';
/** GitHub Actions' own identity: HydraFlow's writes with GITHUB_TOKEN; never a trigger (no self-loops). */
const ACTIONS_BOT = 'github-actions[bot]';
/** The stages where a plain comment is read: grooming's answers, shape's replies. */
const CONVERSING = new Set(['hydraflow-groom', 'hydraflow-shape']);

export function quickSkip(
  eventName: string,
  payload: {
    action?: string;
    comment?: { body?: string | null };
    changes?: { body?: { from?: string | null } };
    sender?: { login?: string };
    issue?: { labels?: ReadonlyArray<{ name?: string } | string> };
  },
  explicitPhase: boolean,
): string | undefined {
  if (explicitPhase || eventName === 'workflow_dispatch') return undefined;
  if (payload.sender?.login === ACTIONS_BOT) return "the event was caused by HydraFlow's own write";
  if (eventName === 'issue_comment') {
    // an edit or deletion matters only when it touched HydraFlow's state (the router's state-check)
    if (payload.action !== 'created')
      return [payload.comment?.body, payload.changes?.body?.from].some((b) => b?.includes(STATE_MARKER))
        ? undefined
        : `issue_comment.${payload.action} is not handled`;
    const firstLine = (payload.comment?.body ?? '').trimStart().split('\n', 1)[0] ?? '';
    // A plain comment matters only on an issue waiting in grooming (it may answer a question) or in shape (a choice
    // of direction, or a turn of the conversation).
    const waiting = (payload.issue?.labels ?? []).some((l) =>
      CONVERSING.has((typeof l === 'string' ? l : l?.name)?.toLowerCase() ?? ''),
    );
    if (!firstLine.startsWith('/') && !waiting) return 'the comment is not a slash command';
    return undefined;
  }
  if (eventName === 'issues' && !ISSUE_ACTIONS.has(payload.action ?? ''))
    return `issues.${payload.action} is not handled`;
  return undefined;
}
