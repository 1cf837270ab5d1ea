import type { IssueComment } from '@hydraflow/github';
import type { IssueSession, Progress } from '../session/issue-session';

/**
 * How a phase ends when it hands nothing on: its claim is dropped from the state, the progress comment is written with
 * that state, and only then the 👀 lock goes (docs/adr/0010-the-lock-is-a-reaction.md): a run that starts once the lock
 * is free reads the state this one wrote last; a label move left unfinished (`moveTo(…, { removeLater: true })`) is
 * finished last. A phase that hands the issue on (`startNextPhase`, `session.handOff`)
 * ends otherwise: the lock stays for the phase it names.
 */
export async function endPhase(session: IssueSession, progress: Progress): Promise<IssueComment> {
  session.releaseClaim();
  const comment = await session.publish(progress);
  await session.unlock();
  await session.finishMove();
  return comment;
}
