/** The signed state HydraFlow keeps in an issue's progress comment, as a test reads it back from the emulator. */
import { decodeStateBlock, PROGRESS_MARKER, type IssueState } from '@hydraflow/core';
import { BOT_LOGIN, type World } from '@hydraflow/testkit';

/** The issue's state, verified with the world's state key; throws when there is none or it does not verify. */
export function stateOf(w: World, issue: number): IssueState {
  const progress = w.gh.world.commentsOn(issue).find((c) => c.user === BOT_LOGIN && c.body.includes(PROGRESS_MARKER));
  if (!progress) throw new Error(`issue #${issue} has no progress comment`);
  const decoded = decodeStateBlock(progress.body, { key: w.stateKey, issue });
  if (decoded.status !== 'valid') throw new Error(`state not valid: ${JSON.stringify(decoded)}`);
  return decoded.state;
}
