/**
 * What the wired adversarial stages (assumptions.ts, plan-council.ts, spec-judge.ts at plan; shape-council.ts at shape)
 * share around the retry loop (packages/core/src/adversarial/drive.ts): the phase's transient
 * `hydraflow-adv-<phase>-running` label on while a stage runs, its concerns written to the stage's comment before the
 * state that names their hash, and the state published after every step, so a run killed mid-stage resumes at the
 * recorded step.
 */
import {
  adversarialOf,
  driveAdversarialStage,
  stagesOfPhase,
  startStage,
  withAdversarialEvents,
  type AdversarialPhase,
  type AdversarialStageSpec,
  type AdversarialState,
  type DriveResult,
  type IssueState,
  type StageIO,
} from '@hydraflow/core';
import type { PhaseContext } from '../phase-context';
import { readConcerns, writeConcerns } from './concerns-comment';
import { clearRunningLabel, setRunningLabel } from './running-label';

const DOING: Record<AdversarialPhase, string> = { discover: 'Discovery', shape: 'Shaping', plan: 'Planning' };

export interface StageWiring {
  spec: AdversarialStageSpec;
  /** What the progress comment says the stage hands on to when it ends. */
  then: string;
  /** The progress comment's details after a step. */
  lines: (state: AdversarialState) => string[];
  /** Another stage of the phase follows at once (the assumption surfacer before the council): the label stays on. */
  keepLabel?: boolean;
  /** A stage of a phase other than plan that ended is voted on anew (a human's forced re-run of the phase). */
  restart?: boolean;
}

/** Runs `stage` to its end with the agent and the voters given, from wherever the state left it. */
export async function driveStage(
  ctx: PhaseContext,
  stage: StageWiring,
  io: Pick<StageIO, 'runAgent' | 'vote'>,
): Promise<DriveResult> {
  const { session } = ctx;
  const { spec } = stage;
  const now = () => session.options.now().toISOString();
  const ended = adversarialOf(session.state).stages[spec.name]?.status;
  const restart =
    spec.phase === 'plan'
      ? endedBeforeThisPlanning(adversarialOf(session.state), spec, session.state.plan)
      : stage.restart === true && ended !== undefined && ended !== 'running';
  if (restart) {
    // a stage that ended for an earlier plan (re-planned after an edit, or a /retry), or a forced re-run: voted anew
    session.update((s) =>
      withAdversarialEvents(s, startStage(spec, now(), { runId: session.options.runId, restart: true })),
    );
  }
  await setRunningLabel(ctx, spec.phase);
  let result: DriveResult;
  try {
    result = await driveAdversarialStage(
      adversarialOf(session.state),
      spec,
      {
        now,
        ...io,
        load: () => Promise.resolve(readConcerns(ctx, adversarialOf(session.state).stages[spec.name]?.block)),
        persist: async ({ state, concerns }) => {
          const known = adversarialOf(session.state).stages[spec.name]?.block;
          // the concerns first: the state that names their hash must never point at a block not written yet
          const block = await writeConcerns(ctx, spec, known, concerns);
          const withBlock = {
            ...state,
            stages: { ...state.stages, [spec.name]: { ...state.stages[spec.name]!, block } },
          };
          session.update((s) => ({ ...s, adversarial: withBlock }));
          const rec = withBlock.stages[spec.name]!;
          const what = spec.name.replace('-', ' ');
          await session.publish({
            headline: `${DOING[spec.phase]}: the ${what} is ${rec.status === 'running' ? `at round ${rec.rounds.length + (rec.next === 'vote' ? 1 : 0)}` : `done (${rec.status})`}`,
            next: rec.status === 'running' ? `HydraFlow goes on with the ${what}.` : stage.then,
            details: stage.lines(withBlock).join('\n'),
          });
        },
      },
      { runId: session.options.runId },
    );
  } catch (error) {
    // The stage did not end: the label comes off if GitHub lets it (the phase's failure is what to report); else the
    // next run takes it off (clearLeftoverRunningLabels) before it resumes the stage at its recorded step.
    await clearRunningLabel(ctx, spec.phase).catch(() => undefined);
    throw error;
  }
  if (!stage.keepLabel) await clearRunningLabel(ctx, spec.phase);
  return result;
}

/**
 * True when the stage ended before the plan the state records was made (a later planning of the issue). A stage
 * that ended after it — or with no plan recorded — is this planning's, cut short by a crash: its outcome stands and
 * its forwarded concerns still wait for their consumer.
 */
function endedBeforeThisPlanning(
  state: AdversarialState,
  spec: AdversarialStageSpec,
  plan: IssueState['plan'],
): boolean {
  const rec = state.stages[spec.name];
  if (!rec || rec.status === 'running' || !plan) return false;
  return (rec.endedAt ?? rec.startedAt) <= plan.at;
}

/**
 * A stage's concerns are gone (their comment deleted or edited: ConcernsUnavailableError): the record of `phase`'s
 * stage that was running is dropped, with the escalation the caller writes, so the phase's next run (a human's
 * `/retry`) starts it over. Its counters and the concerns already forwarded stay.
 */
export function forgetRunningStages(ctx: PhaseContext, phase: AdversarialPhase): void {
  const names = new Set<string>(stagesOfPhase(phase).map((s) => s.name));
  ctx.session.update((s) => {
    const adv = adversarialOf(s);
    const stages = Object.fromEntries(
      Object.entries(adv.stages).filter(([name, rec]) => !(names.has(name) && rec?.status === 'running')),
    );
    return { ...s, adversarial: { ...adv, stages } };
  });
}
