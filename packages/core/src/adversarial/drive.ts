/**
 * Runs one adversarial stage to its end with the I/O passed in (loop.ts says what to do; this file only sequences it),
 * so that wiring a stage into a phase is a matter of supplying `StageIO`. Pure apart from awaiting the I/O it is given.
 *
 * After every step the new state is handed to `persist` (one signed write) with the stage's concerns so far, which the
 * caller keeps in the stage's data block (data.ts) — written before the state that names its hash. A crash anywhere
 * loses at most the step in flight: the next run reads the state, asks `load` for the concerns, and continues.
 */
import { HydraflowError } from '../errors';
import { fingerprint, type Concern } from './concern';
import type { AdversarialEvent } from './events';
import {
  agentRan,
  nextAdversarialStep,
  ownPreviousConcerns,
  roundVoted,
  startStage,
  type AdversarialStep,
} from './loop';
import { distinctStageConcerns } from './data';
import type { AdversarialState, StageOutcome } from './record';
import { reduceAdversarialEvents } from './reduce';
import type { AdversarialStageSpec, VoterName } from './stages';

export interface StageIO {
  /** ISO time for the events. */
  now(): string;
  /** The surfaced agent's run: its first (`retry` 0, no concerns) or a revision with the blocking concerns attached. */
  runAgent(args: { retry: number; concerns: Concern[] }): Promise<void>;
  /**
   * One voter's answer as concerns (parse.ts: a junk answer is already its synthetic concern). The voters of a round
   * are asked at once; each sees only the subject and its own concerns of the round before.
   */
  vote(args: { voter: VoterName; round: number; previous: Concern[] }): Promise<Concern[]>;
  /** The stage's concerns recorded so far (read back from its data block), for a run that resumes. */
  load(): Promise<Concern[]>;
  /** Write the state (and the concerns' data block) after a step. */
  persist(args: { state: AdversarialState; events: AdversarialEvent[]; concerns: Concern[] }): Promise<void>;
}

/** The concerns the state names are gone (their comment was edited or deleted): the stage cannot continue. */
export class ConcernsUnavailableError extends HydraflowError {
  override name = 'ConcernsUnavailableError';
}

export interface DriveResult {
  state: AdversarialState;
  /** `skip`: the gate said trivial; no stage ran and no model call was made. */
  outcome: StageOutcome | 'skip';
}

/** Run `spec` from wherever `state` left it until it ends. Throws if the gate has not decided (gate.ts first). */
export async function driveAdversarialStage(
  initial: AdversarialState,
  spec: AdversarialStageSpec,
  io: StageIO,
  options: { runId?: string } = {},
): Promise<DriveResult> {
  let state = initial;
  let concerns: Concern[] | undefined;
  const known = async (): Promise<Concern[]> => (concerns ??= distinctStageConcerns(await io.load()));
  const commit = async (events: AdversarialEvent[]) => {
    const before = state;
    state = reduceAdversarialEvents(events, state);
    // every step moves the record on; one that did not would loop forever
    if (state === before) throw new HydraflowError(`adversarial stage ${spec.name}: a step changed nothing`);
    await io.persist({ state, events, concerns: await known() });
  };
  for (;;) {
    const step: AdversarialStep = nextAdversarialStep(state, spec);
    switch (step.kind) {
      case 'gate':
        throw new HydraflowError(`adversarial stage ${spec.name}: the complexity gate has not decided yet`);
      case 'skip':
        return { state, outcome: 'skip' };
      case 'done':
        return { state, outcome: step.outcome };
      case 'start':
        concerns = [];
        await commit(startStage(spec, io.now(), options));
        break;
      case 'agent': {
        const all = await known();
        const attached = pick(all, step.blocking, spec);
        await io.runAgent({ retry: step.retry, concerns: attached });
        await commit(agentRan(state, spec, io.now()));
        break;
      }
      case 'vote': {
        const all = await known();
        const before = state.stages[spec.name]?.rounds.at(-1)?.blocking ?? [];
        if (before.length > 0) pick(all, before, spec); // fail before spending calls if the text is gone
        const answers = await Promise.all(
          step.voters.map((voter) =>
            io.vote({ voter, round: step.round, previous: ownPreviousConcerns(all, voter, before) }),
          ),
        );
        const round = answers.flat().map((c) => ({ ...c, stage: spec.name }));
        concerns = distinctStageConcerns(all, round);
        await commit(roundVoted(state, spec, round, io.now(), step.voters.length));
        break;
      }
    }
  }
}

function pick(all: readonly Concern[], fingerprints: readonly string[], spec: AdversarialStageSpec): Concern[] {
  const byKey = new Map(all.map((c) => [fingerprint(c), c]));
  const out: Concern[] = [];
  for (const f of fingerprints) {
    const c = byKey.get(f);
    if (!c) {
      throw new ConcernsUnavailableError(
        `adversarial stage ${spec.name}: concern ${f} is not in the stage's concerns comment (edited or deleted); /retry starts the stage over`,
      );
    }
    out.push(c);
  }
  return out;
}

/**
 * ADR-0064's AdversarialRetryLoop under its name: the pure steps (loop.ts) and the driver. One object, so the wiring
 * reads as the seed does.
 */
export const AdversarialRetryLoop = {
  next: nextAdversarialStep,
  start: startStage,
  agentRan,
  roundVoted,
  drive: driveAdversarialStage,
} as const;
