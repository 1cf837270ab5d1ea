/**
 * Workflow files read the way GitHub reads them: `@actions/workflow-parser` validates each file against the workflow
 * schema (parseWorkflow) and converts it into the typed model (convertWorkflowTemplate). The token tree is kept for
 * what the model drops (a step's `with:`, a job's `permissions:` and `timeout-minutes:`).
 *
 * The parser imports its JSON schema without import attributes: under vitest it must be inlined
 * (`server.deps.inline`), as the root vitest config does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { WorkflowTemplate } from '@actions/workflow-parser';
import type { Job } from '@actions/workflow-parser/model/workflow-template';
import type { MappingToken, TemplateToken } from '@actions/workflow-parser/templates/tokens/index';

type WorkflowParser = typeof import('@actions/workflow-parser');
let parserModule: WorkflowParser | undefined;

export async function workflowParser(): Promise<WorkflowParser> {
  parserModule ??= await import('@actions/workflow-parser');
  return parserModule;
}

export interface LoadedStep {
  id: string;
  name: string;
  /** `if:` expression (the converter adds `success() &&` when none is given) */
  if: string;
  uses?: string;
  run?: TemplateToken;
  with: Record<string, TemplateToken>;
  env: Record<string, TemplateToken>;
  continueOnError: boolean;
}

export interface LoadedJob {
  id: string;
  name: string;
  if: string;
  needs: string[];
  env: Record<string, TemplateToken>;
  concurrency?: TemplateToken;
  /** `outputs:` as written (name → token), evaluated when the job ends with its `steps` context */
  outputs: Record<string, TemplateToken>;
  /**
   * `permissions:` of the job as written: `read-all` / `write-all` / `{}` or scope → `read`|`write`|`none`. Kept, not
   * enforced (the emulator's GITHUB_TOKEN can do what the bot can).
   */
  permissions?: string | Record<string, string>;
  /** `timeout-minutes:` when it is a literal number (GitHub's default is 360) */
  timeoutMinutes?: number;
  steps: LoadedStep[];
}

export interface LoadedWorkflow {
  /** file name, e.g. "hydraflow.yml" */
  file: string;
  /** `.github/workflows/<file>` */
  path: string;
  name: string;
  template: WorkflowTemplate;
  root: MappingToken;
  env: Record<string, TemplateToken>;
  concurrency?: TemplateToken;
  jobs: LoadedJob[];
}

function mappingEntries(p: WorkflowParser, token: TemplateToken | undefined): Record<string, TemplateToken> {
  const out: Record<string, TemplateToken> = {};
  if (token && p.isMapping(token)) for (const pair of token) out[pair.key.toString()] = pair.value;
  return out;
}

function child(p: WorkflowParser, token: TemplateToken | undefined, key: string): TemplateToken | undefined {
  return token && p.isMapping(token) ? token.find(key) : undefined;
}

export async function parseWorkflowFile(content: string, file: string): Promise<LoadedWorkflow> {
  const p = await workflowParser();
  const result = p.parseWorkflow({ name: file, content }, new p.NoOperationTraceWriter());
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (!result.value || !p.isMapping(result.value) || errors.length) {
    throw new Error(`${file}: the workflow does not parse:\n  ${errors.join('\n  ') || 'no document'}`);
  }
  const template = await p.convertWorkflowTemplate(result.context, result.value);
  if (template.errors?.length) {
    throw new Error(`${file}: the workflow does not convert:\n  ${template.errors.map((e) => e.Message).join('\n  ')}`);
  }
  const root = result.value;
  const rawJobs = mappingEntries(p, child(p, root, 'jobs'));
  const jobs: LoadedJob[] = [];
  for (const job of template.jobs) {
    if (job.type !== 'job') throw new Error(`${file}: job ${job.id.value}: reusable workflows are not simulated`);
    const j = job as Job;
    const rawJob = rawJobs[j.id.value];
    const rawSteps = child(p, rawJob, 'steps');
    const rawPermissions = child(p, rawJob, 'permissions');
    const permissions = rawPermissions
      ? p.isMapping(rawPermissions)
        ? Object.fromEntries(Object.entries(mappingEntries(p, rawPermissions)).map(([k, v]) => [k, v.toString()]))
        : rawPermissions.toString()
      : undefined;
    const rawTimeout = child(p, rawJob, 'timeout-minutes');
    const timeoutMinutes = rawTimeout && p.isLiteral(rawTimeout) ? Number(rawTimeout.toString()) : undefined;
    const rawStepList = rawSteps && p.isSequence(rawSteps) ? [...rawSteps] : [];
    jobs.push({
      id: j.id.value,
      name: j.name ? j.name.toString() : j.id.value,
      if: j.if.expression,
      needs: (j.needs ?? []).map((n) => n.value),
      env: mappingEntries(p, j.env),
      ...(j.concurrency ? { concurrency: j.concurrency } : {}),
      outputs: mappingEntries(p, j.outputs ?? child(p, rawJob, 'outputs')),
      ...(permissions !== undefined ? { permissions } : {}),
      ...(timeoutMinutes !== undefined && Number.isFinite(timeoutMinutes) ? { timeoutMinutes } : {}),
      steps: j.steps.map((s, i) => {
        if (!('uses' in s) && !('run' in s)) throw new Error(`${file}: job ${j.id.value}: step ${i} is not simulated`);
        const raw = rawStepList[i];
        const uses = 'uses' in s ? s.uses.value : undefined;
        return {
          id: s.id,
          name: s.name ? s.name.toString() : uses ? uses : `Run ${'run' in s ? s.run.toString().split('\n')[0] : ''}`,
          if: s.if.expression,
          ...(uses !== undefined ? { uses } : {}),
          ...('run' in s ? { run: s.run } : {}),
          with: mappingEntries(p, child(p, raw, 'with')),
          env: mappingEntries(p, s.env),
          continueOnError: s['continue-on-error'] === true,
        };
      }),
    });
  }
  const nameToken = child(p, root, 'name');
  return {
    file,
    path: `.github/workflows/${file}`,
    name: nameToken ? nameToken.toString() : `.github/workflows/${file}`,
    template,
    root,
    env: mappingEntries(p, template.env),
    ...(template.concurrency ? { concurrency: template.concurrency } : {}),
    jobs,
  };
}

/** Every `*.yml` / `*.yaml` in a `.github/workflows` directory, sorted by file name. */
export async function loadWorkflows(dir: string): Promise<LoadedWorkflow[]> {
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const out: LoadedWorkflow[] = [];
  for (const f of files) out.push(await parseWorkflowFile(readFileSync(join(dir, f), 'utf8'), basename(f)));
  return out;
}

/**
 * The value of a token in the given contexts: a literal as written, an expression evaluated (interpolated strings
 * arrive from the parser as one `format()` expression).
 */
export async function tokenHelpers() {
  const p = await workflowParser();
  return {
    isExpression: (t: TemplateToken) => p.isBasicExpression(t),
    isMapping: (t: TemplateToken) => p.isMapping(t),
    isLiteral: (t: TemplateToken) => p.isLiteral(t),
    expression: (t: TemplateToken) => (p.isBasicExpression(t) ? t.expression : undefined),
    mapping: (t: TemplateToken | undefined) => mappingEntries(p, t),
  };
}
