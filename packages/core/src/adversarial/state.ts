/**
 * The seam between the issue's signed state (state/schema.ts) and the adversarial record (record.ts).
 *
 * Migration: the record arrived within state version 2 as an optional field, so every block written before it — v2,
 * and v0/v1 lifted by state/migrate.ts — still verifies and loads, and reads here as the empty record ("the layer has
 * not run"). The state's version was not bumped: a new optional field needs no lifting, and a bump would make every
 * block this build writes unreadable to the build before it (docs/adr/0018-adversarial-layer.md). A future change of
 * the record's own shape bumps ADVERSARIAL_RECORD_VERSION and adds a step to migrate.ts.
 */
import type { IssueState } from '../state/schema';
import type { AdversarialEvent } from './events';
import { emptyAdversarialState, type AdversarialState } from './record';
import { reduceAdversarialEvents } from './reduce';

/** The issue's adversarial record; the empty one for a state written before the layer existed. */
export function adversarialOf(state: Pick<IssueState, 'adversarial'>): AdversarialState {
  return state.adversarial ?? emptyAdversarialState();
}

/** The issue state with `events` applied to its adversarial record (the caller writes it, signed, once). */
export function withAdversarialEvents(state: IssueState, events: readonly AdversarialEvent[]): IssueState {
  if (events.length === 0) return state;
  return { ...state, adversarial: reduceAdversarialEvents(events, adversarialOf(state)) };
}
