/** The jobs of a workflow file as the doctor reads them: each job's steps, with what each uses and is given. */
import { parse } from 'yaml';

export interface WorkflowStep {
  /** The step's `uses` ('' for a `run` step). */
  uses: string;
  /** The names of its `with` inputs. */
  inputs: string[];
}

/** Every job's steps, in order; undefined when the text is not a workflow (it does not parse, or has no jobs). */
export function workflowJobs(text: string): WorkflowStep[][] | undefined {
  let workflow: unknown;
  try {
    workflow = parse(text);
  } catch {
    return undefined;
  }
  const jobs = (workflow as { jobs?: unknown } | null)?.jobs;
  if (!jobs || typeof jobs !== 'object') return undefined;
  return Object.values(jobs as Record<string, unknown>).map((job) => {
    const steps = (job as { steps?: unknown } | null)?.steps;
    return (Array.isArray(steps) ? steps : []).map((s) => {
      const step = (s ?? {}) as { uses?: unknown; with?: unknown };
      const given = step.with && typeof step.with === 'object' ? Object.keys(step.with) : [];
      return { uses: String(step.uses ?? ''), inputs: given };
    });
  });
}

/** Whether a step's `uses` is HydraFlow's composite action `name` (`owner/repo/actions/<name>@ref`, or a local path). */
export const usesAction = (uses: string, name: string) => new RegExp(`(?:^|/)actions/${name}(?:@|$)`).test(uses);
