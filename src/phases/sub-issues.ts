/**
 * Phase sub-issues on GitHub (docs/grooming.md, "Phases and sub-issues"), shared by grooming (groom/index.ts) and the
 * plan of a product-track issue (product-plan.ts): the ones already linked (a re-run, or a run that died after
 * creating some) are reused, the rest created in phase order, one GraphQL request each
 * (createIssue(parentIssueId:)), so a phase's "Depends on" can link the issues of the phases before it. At most `cap`
 * are created per run. The first phase with no dependency also gets `hydraflow-plan` and is the one to start; the
 * others wait (one phase at a time, the epic phase starts the next: epic.ts).
 */
import {
  labelFor,
  reconcileSubIssues,
  renderSubIssueBody,
  stageInfo,
  subIssueTitle,
  type SubIssueSpec,
} from '@hydraflow/core';
import { UncertainWriteError, type GroomContext, type LabelSpec, type NewSubIssue } from '@hydraflow/github';
import type { PhaseContext } from './phase-context';

export interface CreatedPhases {
  all: { phase: number; number: number; title: string }[];
  /** The first phase's sub-issue when this run created it (to dispatch); undefined when it existed already. */
  started: number | undefined;
}

/**
 * `labels`: what every sub-issue carries besides the first one's `hydraflow-plan` (grooming: `groomed`; a product-track
 * plan: none). `found`: the parent's GroomContext, read with those labels' ids and `hydraflow-plan`'s.
 */
export async function createPhaseSubIssues(
  ctx: PhaseContext,
  found: GroomContext,
  phases: SubIssueSpec[],
  options: { cap: number; labels: readonly LabelSpec[] },
): Promise<CreatedPhases> {
  const parent = ctx.issue.number;
  const plan = reconcileSubIssues(phases, found.subIssues, options.cap);
  const numbers = new Map(plan.existing.map((e) => [e.phase, e.number]));
  const first = phases.find((p) => !(p.depends_on ?? []).length) ?? phases[0]!;
  const firstExisted = numbers.has(first.phase_number);
  if (plan.create.length > 0) {
    const labelIds = await ensureLabelIds(ctx, found, options.labels);
    for (const spec of plan.create) {
      const issue = {
        title: subIssueTitle(spec),
        body: renderSubIssueBody(spec, { parent, issueOfPhase: (p) => numbers.get(p) }),
        labelIds: [
          ...options.labels.map((l) => labelIds[l.name]!),
          ...(spec === first ? [labelIds[labelFor('plan')]!] : []),
        ],
      };
      numbers.set(spec.phase_number, await createOnce(ctx, found, spec, issue));
    }
  }
  const all = phases
    .filter((p) => numbers.has(p.phase_number))
    .map((p) => ({ phase: p.phase_number, number: numbers.get(p.phase_number)!, title: subIssueTitle(p) }));
  return { all, started: firstExisted ? undefined : numbers.get(first.phase_number) };
}

/** Creates one sub-issue; when GitHub's answer is lost, reads the sub-issues back first so it is never made twice. */
async function createOnce(
  ctx: PhaseContext,
  found: GroomContext,
  spec: SubIssueSpec,
  issue: NewSubIssue,
): Promise<number> {
  try {
    return (await ctx.grooming.createSubIssue(found.issueNodeId, found.repositoryId, issue)).number;
  } catch (error) {
    if (!(error instanceof UncertainWriteError)) throw error;
    const again = await ctx.grooming.groomContext(ctx.issue.number, { search: '', relatedLimit: 0, labels: [] });
    const made = reconcileSubIssues([spec], again.subIssues, 1).existing[0];
    if (made) return made.number;
    return (await ctx.grooming.createSubIssue(found.issueNodeId, found.repositoryId, issue)).number;
  }
}

/** Node ids of the labels sub-issues get; the ones a new repository lacks are created (one request, once). */
async function ensureLabelIds(
  ctx: PhaseContext,
  found: GroomContext,
  labels: readonly LabelSpec[],
): Promise<Record<string, string>> {
  const plan = stageInfo('plan');
  const wanted = [...labels, { name: plan.label, color: plan.color, description: plan.description }];
  const missing = wanted.filter((l) => !found.labelIds[l.name]);
  if (missing.length === 0) return found.labelIds;
  return { ...found.labelIds, ...(await ctx.grooming.createLabels(found.repositoryId, missing)) };
}
