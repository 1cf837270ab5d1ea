// Checks for the workflow template users copy (workflows-templates/hydraflow.yml) and the composite phase actions,
// built on @actions/workflow-parser the way the GitHub Actions VS Code extension uses it: parseWorkflow (schema
// validation into a token tree) then convertWorkflowTemplate (the typed model). Every check returns a list of
// problems (empty = fine) so tests can feed deliberately bad workflows and assert exactly what is caught.
import type { WorkflowTemplate } from '@actions/workflow-parser';
import type { ActionTemplate, Step } from '@actions/workflow-parser/actions/index';
import type { MappingToken, TemplateToken } from '@actions/workflow-parser/templates/tokens/index';

const {
  convertWorkflowTemplate,
  isBasicExpression,
  isLiteral,
  isMapping,
  isSequence,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
} = await import('@actions/workflow-parser');
const { convertActionTemplate, parseAction } = await import('@actions/workflow-parser/actions/index');
const { ErrorPolicy } = await import('@actions/workflow-parser/model/convert');

export interface ParsedWorkflow {
  /** Schema/validation errors from the parser and the converter. */
  errors: string[];
  /** The validated token tree (keeps what the model drops: `permissions`, step `with:`). */
  root: MappingToken | undefined;
  /** The typed model (events, jobs, steps, concurrency). */
  template: WorkflowTemplate | undefined;
}

export interface ParsedAction {
  errors: string[];
  root: MappingToken | undefined;
  template: ActionTemplate | undefined;
}

export async function parseWorkflowText(content: string, name = 'hydraflow.yml'): Promise<ParsedWorkflow> {
  const result = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (!result.value)
    return { errors: errors.length ? errors : ['workflow did not parse'], root: undefined, template: undefined };
  const template = await convertWorkflowTemplate(result.context, result.value, undefined, {
    errorPolicy: ErrorPolicy.TryConversion,
  });
  for (const e of template.errors ?? []) if (!errors.includes(e.Message)) errors.push(e.Message);
  return { errors, root: isMapping(result.value) ? result.value : undefined, template };
}

export function parseActionText(content: string, name = 'action.yml'): ParsedAction {
  const result = parseAction({ name, content }, new NoOperationTraceWriter());
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (!result.value)
    return { errors: errors.length ? errors : ['action did not parse'], root: undefined, template: undefined };
  const template = convertActionTemplate(result.context, result.value, { errorPolicy: ErrorPolicy.TryConversion });
  return { errors, root: isMapping(result.value) ? result.value : undefined, template };
}

// ---------------------------------------------------------------------------------------------------------------
// Token helpers

/** How a token reads in the source (an interpolated string shows as written, not as its format() rewrite). */
function display(token: TemplateToken): string {
  if (isBasicExpression(token)) return token.source ?? token.toDisplayString();
  return isLiteral(token) ? token.toDisplayString() : String(token);
}

export function child(token: TemplateToken | undefined, key: string): TemplateToken | undefined {
  return token && isMapping(token) ? token.find(key) : undefined;
}

function entries(token: TemplateToken | undefined): [string, TemplateToken][] {
  if (!token || !isMapping(token)) return [];
  return [...token].map((pair) => [pair.key.toString(), pair.value]);
}

function items(token: TemplateToken | undefined): TemplateToken[] {
  return token && isSequence(token) ? [...token] : [];
}

/** The expressions a token holds: one per `${{ }}` (a formatted string keeps its originals), none for a literal. */
export function expressionsOf(token: TemplateToken | undefined): string[] {
  if (!token || !isBasicExpression(token)) return [];
  return (token.originalExpressions?.length ? token.originalExpressions : [token]).map((e) => e.expression);
}

/** Every expression anywhere under a token, with a dotted path, for whole-tree scans. */
function walkExpressions(token: TemplateToken | undefined, path: string, out: { path: string; expr: string }[] = []) {
  if (!token) return out;
  if (isMapping(token)) for (const [k, v] of entries(token)) walkExpressions(v, path ? `${path}.${k}` : k, out);
  else if (isSequence(token)) items(token).forEach((v, i) => walkExpressions(v, `${path}[${i}]`, out));
  else for (const expr of expressionsOf(token)) out.push({ path, expr });
  return out;
}

/**
 * An expression's context references in a canonical dotted form: `github['event']` → `github.event`, string
 * literals dropped (so `format('github.event')` references nothing), lower-cased (expressions are case-insensitive).
 */
function normalizeExpression(expr: string): string {
  return expr
    .replace(/\[\s*'([A-Za-z_][\w-]*)'\s*\]/g, '.$1')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\s*\.\s*/g, '.')
    .toLowerCase();
}

/**
 * References that carry attacker-controlled text and must never be inlined into a shell script (field notes:
 * script injection): `github.event.*`, `github.head_ref`, `inputs.*`, and the whole `github`/`inputs` context
 * (e.g. `toJSON(github)`).
 */
export function taintedReferences(expr: string): string[] {
  const text = normalizeExpression(expr);
  const found: string[] = [];
  const re =
    /(?<![\w.])(github\.(?:event|head_ref)(?![\w-])(?:\.[\w-]+|\.\*)*|inputs(?:\.[\w-]+)?(?![\w-])|github(?![\w.-]))/g;
  for (const m of text.matchAll(re)) found.push(m[0]);
  return found;
}

function references(expr: string, name: string): boolean {
  const escaped = name.toLowerCase().replace(/\./g, '\\.');
  return new RegExp(`(?<![\\w.])${escaped}(?![\\w-])`).test(normalizeExpression(expr));
}

// ---------------------------------------------------------------------------------------------------------------
// Checks

export function checkParses(parsed: ParsedWorkflow | ParsedAction): string[] {
  const problems = parsed.errors.map((e) => `parse error: ${e}`);
  if (!parsed.template) problems.push('no template after conversion');
  return problems;
}

export function checkTriggers(template: WorkflowTemplate | undefined): string[] {
  const problems: string[] = [];
  const events = template?.events ?? {};
  const needTypes = (event: keyof typeof events & string, types: string[]) => {
    const config = events[event] as { types?: string[] } | undefined;
    if (!config) return problems.push(`missing trigger: ${event}`);
    // No `types:` means every activity type (edited, deleted, ...): HydraFlow wants a known, narrow list.
    if (!config.types) return problems.push(`${event}: no types filter`);
    for (const t of types) if (!config.types.includes(t)) problems.push(`${event}: types lack ${t}`);
    return undefined;
  };
  needTypes('issues', ['opened', 'edited', 'labeled', 'unlabeled', 'closed']);
  // edited, deleted: someone else changed HydraFlow's state comment (ADR 0007)
  needTypes('issue_comment', ['created', 'edited', 'deleted']);
  // The engineering track: a human's push to HydraFlow's branch, a human's approval, CI finishing.
  needTypes('pull_request', ['synchronize']);
  needTypes('pull_request_review', ['submitted']);
  needTypes('workflow_run', ['completed']);
  const run = events.workflow_run as { workflows?: string[] } | undefined;
  if (run && !run.workflows?.length)
    problems.push('workflow_run: no workflows list (name the CI workflows HydraFlow waits for)');
  const dispatch = events.workflow_dispatch;
  if (!dispatch) {
    problems.push('missing trigger: workflow_dispatch');
  } else {
    // issue is optional: the doctor phase needs none (HydraFlow's own dispatches always give one)
    for (const [name, required] of [
      ['issue', false],
      ['phase', true],
      ['actor', false],
    ] as const) {
      const input = dispatch.inputs?.[name];
      if (!input) {
        problems.push(`workflow_dispatch: missing input ${name}`);
        continue;
      }
      if (input.type !== 'string') problems.push(`workflow_dispatch: input ${name} is ${input.type}, not string`);
      if (required && input.required !== true) problems.push(`workflow_dispatch: input ${name} is not required`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Jobs and their roles. The template runs implement across three jobs ("safe outputs" across machines): the routing
// job (the root HydraFlow step: GitHub token, state key), the agent job (actions/agent: the model key only) and the
// publish job (actions/publish, or the root action with `phase: publish`: GitHub token again).

const isHydraFlowStep = (uses: string) => /^(hydraflow\/hydraflow(@|$)|\.\/?$)/i.test(uses);
const isCheckoutStep = (uses: string) => /^actions\/checkout@/i.test(uses);
const isAgentStep = (uses: string) => /^(hydraflow\/hydraflow\/actions\/agent@|\.\/actions\/agent\/?$)/i.test(uses);
const isModelProxyStep = (uses: string) =>
  /^(hydraflow\/hydraflow\/actions\/model-proxy@|\.\/actions\/model-proxy\/?$)/i.test(uses);
const isPublishActionStep = (uses: string) =>
  /^(hydraflow\/hydraflow\/actions\/publish@|\.\/actions\/publish\/?$)/i.test(uses);

/** A literal scalar's text (undefined for an expression, a mapping or nothing). */
function literal(token: TemplateToken | undefined): string | undefined {
  return token && isLiteral(token) ? token.toString() : undefined;
}

/** An `if:` as text: GitHub reads a bare condition as an expression, so a literal counts as one. */
function conditionText(token: TemplateToken | undefined): string {
  if (!token) return '';
  return literal(token) ?? expressionsOf(token).join(' && ');
}

interface JobStep {
  index: number;
  step: TemplateToken;
  uses: string;
}

interface Job {
  id: string;
  job: TemplateToken;
  steps: JobStep[];
  /** The job ids in `needs:`, lower-cased (job ids are case-insensitive in expressions). */
  needs: string[];
}

function jobsOf(root: MappingToken | undefined): Job[] {
  return entries(child(root, 'jobs')).map(([id, job]) => {
    const needsToken = child(job, 'needs');
    const needs = (needsToken && isSequence(needsToken) ? items(needsToken) : needsToken ? [needsToken] : [])
      .map((n) => literal(n)?.toLowerCase())
      .filter((n): n is string => n !== undefined);
    const steps = items(child(job, 'steps')).map((step, index) => {
      const uses = child(step, 'uses');
      return { index, step, uses: uses && isString(uses) ? uses.value : '' };
    });
    return { id, job, steps, needs };
  });
}

const isPublishPhaseStep = (s: JobStep) =>
  isHydraFlowStep(s.uses) && literal(child(child(s.step, 'with'), 'phase')) === 'publish';
const isPublishStep = (s: JobStep) => isPublishActionStep(s.uses) || isPublishPhaseStep(s);
const isRoutingStep = (s: JobStep) => isHydraFlowStep(s.uses) && !isPublishPhaseStep(s);

const isAgentJob = (job: Job) => job.steps.some((s) => isAgentStep(s.uses));
const isRoutingJob = (job: Job) => job.steps.some(isRoutingStep);
const isPublishJob = (job: Job) => job.steps.some(isPublishStep);

/** Which jobs route, run the agent and publish (a job in two lists is a finding of checkAgentIsolation). */
export function jobRoles(root: MappingToken | undefined): { routing: string[]; agent: string[]; publish: string[] } {
  const jobs = jobsOf(root);
  return {
    routing: jobs.filter(isRoutingJob).map((j) => j.id),
    agent: jobs.filter(isAgentJob).map((j) => j.id),
    publish: jobs.filter(isPublishJob).map((j) => j.id),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Permissions

/**
 * The exact least-privilege set of the engineering track: push HydraFlow's branch and merge (contents), labels and
 * comments (issues), open/review pull requests (pull-requests), dispatch the next phase (actions), read CI results
 * (checks, statuses). The routing job and the publish job get exactly this; no job gets more.
 */
export const EXPECTED_PERMISSIONS: Readonly<Record<string, 'read' | 'write'>> = {
  contents: 'write',
  issues: 'write',
  'pull-requests': 'write',
  actions: 'write',
  checks: 'read',
  statuses: 'read',
};

/** What the agent job may hold at most: read its repository (the checkout), nothing else, no write. */
export const AGENT_PERMISSIONS: Readonly<Record<string, 'read'>> = { contents: 'read' };

const LEVEL = { none: 0, read: 1, write: 2 } as Record<string, number>;

function permissionMap(token: TemplateToken, where: string, problems: string[]): Record<string, string> | undefined {
  if (isString(token)) {
    problems.push(`${where}: permissions: ${token.value} (must list scopes)`);
    return undefined;
  }
  if (!isMapping(token)) {
    problems.push(`${where}: permissions is not a mapping`);
    return undefined;
  }
  const map: Record<string, string> = {};
  for (const [scope, value] of entries(token)) map[scope] = literal(value) ?? '<expression>';
  return map;
}

/** Scopes a job asks for beyond a ceiling (an unknown level, e.g. an expression, is always beyond). */
function beyond(map: Record<string, string>, ceiling: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(map).filter(([scope, level]) => {
    const asked = LEVEL[level];
    return asked === undefined || asked > (LEVEL[ceiling[scope] ?? 'none'] ?? 0);
  });
}

/**
 * Least privilege, per job: the workflow grants nothing (`permissions: {}`, or no top-level key) and every job
 * declares its own — the routing and publish jobs exactly EXPECTED_PERMISSIONS, the agent job at most
 * `contents: read`, any other job no more than EXPECTED_PERMISSIONS. A job without `permissions` would get the
 * workflow's grant or the repository default, which may be write-all.
 */
export function checkPermissions(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  const top = child(root, 'permissions');
  if (top && isString(top)) {
    problems.push(`workflow: permissions: ${top.value} (must be {}: each job declares its own permissions)`);
  } else if (top) {
    const granted = permissionMap(top, 'workflow', problems);
    for (const [scope, level] of Object.entries(granted ?? {}))
      if (level !== 'none')
        problems.push(`workflow: grants ${scope}: ${level} (must be {}: each job declares its own permissions)`);
  }
  for (const job of jobsOf(root)) {
    const where = `job ${job.id}`;
    const token = child(job.job, 'permissions');
    if (!token) {
      problems.push(
        `${where}: no permissions (it would get the workflow's, or the repository default: maybe write-all)`,
      );
      continue;
    }
    const map = permissionMap(token, where, problems);
    if (!map) continue;
    if (isAgentJob(job)) {
      for (const [scope, level] of beyond(map, AGENT_PERMISSIONS))
        problems.push(`${where} (runs the coding agent): ${scope}: ${level}, at most contents: read`);
    } else if (isRoutingJob(job) || isPublishJob(job)) {
      for (const [scope, level] of Object.entries(EXPECTED_PERMISSIONS))
        if (map[scope] !== level) problems.push(`${where}: ${scope} is ${map[scope] ?? 'absent'}, expected ${level}`);
      for (const [scope, level] of Object.entries(map))
        if (!(scope in EXPECTED_PERMISSIONS) && level !== 'none')
          problems.push(`${where}: unexpected permission ${scope}: ${level}`);
    } else {
      for (const [scope, level] of beyond(map, EXPECTED_PERMISSIONS))
        problems.push(
          `${where}: ${scope}: ${level} exceeds the engineering track (${EXPECTED_PERMISSIONS[scope] ?? 'none'})`,
        );
    }
  }
  return problems;
}

export function checkConcurrency(template: WorkflowTemplate | undefined): string[] {
  const problems: string[] = [];
  const concurrency = template?.concurrency;
  if (!concurrency) return ['no top-level concurrency'];
  const group = isMapping(concurrency) ? child(concurrency, 'group') : concurrency;
  const groupExprs = expressionsOf(group);
  if (!group) problems.push('concurrency has no group');
  else if (!groupExprs.some((e) => references(e, 'github.event.issue.number') || references(e, 'inputs.issue')))
    problems.push(`concurrency group does not contain the issue number: ${display(group)}`);
  const cancel = child(concurrency, 'cancel-in-progress');
  // Absent means false, but the template should say so explicitly.
  if (!cancel) problems.push('concurrency: cancel-in-progress not set (must be false)');
  else if (!isLiteral(cancel) || cancel.toString() !== 'false')
    problems.push(`concurrency: cancel-in-progress is ${display(cancel)}, must be false`);
  // GitHub's default keeps one pending run per group: any event (a label, an edit) would cancel a pending dispatch.
  const queue = child(concurrency, 'queue');
  if (!queue || !isLiteral(queue) || queue.toString() !== 'max')
    problems.push(`concurrency: queue is ${queue ? display(queue) : 'not set'}, must be max (keep every pending run)`);
  for (const job of template?.jobs ?? []) {
    const jobCancel = child(job.concurrency, 'cancel-in-progress');
    if (jobCancel && !(isLiteral(jobCancel) && jobCancel.toString() === 'false'))
      problems.push(`job ${job.id.value}: concurrency cancel-in-progress is ${display(jobCancel)}, must be false`);
  }
  return problems;
}

/** No attacker-controlled expression inlined into a `run:` script (expressions in with/env/if are fine). */
export function checkRunScripts(steps: readonly Step[], where: string): string[] {
  const problems: string[] = [];
  steps.forEach((step, i) => {
    if ('parallel' in step) {
      problems.push(...checkRunScripts(step.parallel, `${where}.steps[${i}]`));
      return;
    }
    if (!('run' in step)) return;
    for (const expr of expressionsOf(step.run))
      for (const ref of taintedReferences(expr))
        problems.push(`${where}.steps[${i}]: run inlines \${{ ${expr} }} (${ref}): pass it through env:`);
  });
  return problems;
}

export function checkWorkflowRunScripts(template: WorkflowTemplate | undefined): string[] {
  return (template?.jobs ?? []).flatMap((job) =>
    job.type === 'job' ? checkRunScripts(job.steps, `jobs.${job.id.value}`) : [],
  );
}

export function checkActionRunScripts(action: ActionTemplate | undefined, where: string): string[] {
  const runs = action?.runs;
  return runs && runs.using === 'composite' ? checkRunScripts(runs.steps, where) : [];
}

/**
 * Secrets reach HydraFlow only through the step's `with:` inputs (never env:, never a run: script, never
 * workflow/job env); every checkout drops its credentials (`persist-credentials: false`) so agents never hold a token.
 */
export function checkSecretsAndCheckout(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  let hydraflowSteps = 0;
  let checkouts = 0;
  for (const [jobId, job] of entries(child(root, 'jobs'))) {
    items(child(job, 'steps')).forEach((step, i) => {
      const uses = child(step, 'uses');
      const usesText = uses && isString(uses) ? uses.value : '';
      if (usesText && isHydraFlowStep(usesText)) {
        hydraflowSteps++;
        const secretsInWith = walkExpressions(child(step, 'with'), 'with').filter((e) => references(e.expr, 'secrets'));
        if (secretsInWith.length === 0)
          problems.push(`jobs.${jobId}.steps[${i}]: HydraFlow step gets no secret via with:`);
      }
      if (usesText && isCheckoutStep(usesText)) {
        checkouts++;
        const persist = child(child(step, 'with'), 'persist-credentials');
        if (!persist || !isLiteral(persist) || persist.toString() !== 'false')
          problems.push(`jobs.${jobId}.steps[${i}]: ${usesText} without persist-credentials: false`);
      }
    });
  }
  if (hydraflowSteps === 0) problems.push('no HydraFlow step (uses: hydraflow/hydraflow@...)');
  if (checkouts === 0) problems.push('no actions/checkout step');
  // Secrets anywhere but an action step's with: (env at any level, run scripts, if:, ...) is a leak path.
  for (const { path, expr } of walkExpressions(root, '')) {
    if (!references(expr, 'secrets')) continue;
    if (/^jobs\.[^.]+\.steps\[\d+\]\.with\./.test(path)) continue;
    problems.push(`${path}: secret outside a step's with: (\${{ ${expr} }})`);
  }
  return problems;
}

/** What a GitHub token, HydraFlow's state key or its push token looks like in an expression. */
const GITHUB_CREDENTIAL =
  /(?<![\w.])(secrets\.(github_token|hydraflow_state_key|hydraflow_push_token)|github\.token)(?![\w-])/;
/** Inputs that carry a GitHub token or the state key (root action, actions/publish). */
const CREDENTIAL_INPUTS = ['github-token', 'push-token', 'state-key'];
/** The only secrets the agent job holds: the model keys, as inputs of its model-proxy step (or its agent step). */
const MODEL_KEY_INPUTS = ['anthropic-api-key', 'openai-api-key'];

const ALWAYS = /(?<![\w.])(always\(\s*\)|!\s*cancelled\(\s*\))/i;

/**
 * The "safe outputs" layout across jobs. The agent job (the job with an `actions/agent` step):
 * - holds no GitHub token, state key or push token anywhere (its steps' with:/env:, job env:, workflow env:), and no
 *   secret but the model keys, given to its model-proxy step (actions/model-proxy, first in the job, before any code
 *   of the repository runs) or, without one, to its agent step (its setup steps run code of the repository);
 * - is neither the routing job nor the publish job (no root HydraFlow step, no publish step in it);
 * - needs the routing job, and runs its agent step only when that job asked (`needs.<routing>.outputs.agent` in the
 *   job's or the step's `if:`);
 * - checks the repository out at the routing job's `start-sha` output (the commit recorded in signed state).
 * Its `permissions` (at most `contents: read`) are checkPermissions'. A publish job exists, is another job, needs the
 * agent job (for its result) and the routing job (for its outputs), and runs `always()` (it reports an agent job that
 * failed) but only when the routing job asked. It may hold a model key: it goes on with the review of what it pushed,
 * runs no repository code, and already holds the GitHub token, which is worth more.
 * Note: every job can reach its own GITHUB_TOKEN through `github.token` (actions/checkout's default `token`), which is
 * why the agent job's permissions matter as much as what it is given.
 */
export function checkAgentIsolation(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  const jobs = jobsOf(root);
  const routingIds = jobs.filter(isRoutingJob).map((j) => j.id.toLowerCase());
  const agentJobs = jobs.filter(isAgentJob);
  const publishJobs = jobs.filter(isPublishJob);
  const workflowEnv = walkExpressions(child(root, 'env'), 'env');
  if (agentJobs.length === 0) problems.push('no agent step (uses: hydraflow/hydraflow/actions/agent@...)');
  for (const agent of agentJobs) {
    const where = `jobs.${agent.id}`;
    const agentSteps = agent.steps.filter((s) => isAgentStep(s.uses));
    for (const s of agent.steps) {
      if (isHydraFlowStep(s.uses))
        problems.push(
          `${where}.steps[${s.index}]: the agent job also runs ${s.uses} (routing and publish need jobs of their own)`,
        );
      else if (isPublishStep(s))
        problems.push(`${where}.steps[${s.index}]: the agent job also runs ${s.uses} (publish needs a job of its own)`);
    }
    // Credentials, anywhere the job's steps can read them. The model keys go to the model proxy (which holds them
    // in a process of its own before any repository code runs) or, without one, to the agent step.
    const proxySteps = agent.steps.filter((s) => isModelProxyStep(s.uses));
    const keyHolders = proxySteps.length > 0 ? proxySteps : agentSteps;
    const modelKeyPaths = new Set(
      keyHolders.flatMap((s) => MODEL_KEY_INPUTS.map((k) => `${where}.steps[${s.index}].with.${k}`)),
    );
    const firstOther = agent.steps.find((s) => !isModelProxyStep(s.uses))?.index ?? Infinity;
    for (const s of proxySteps)
      if (s.index > firstOther)
        problems.push(
          `${where}.steps[${s.index}]: the model proxy runs after steps[${firstOther}] (it must come first, before any code of the repository)`,
        );
    const holder = proxySteps.length > 0 ? 'the model-proxy step' : 'the agent step';
    for (const s of agent.steps.filter((s) => isAgentStep(s.uses) || isModelProxyStep(s.uses)))
      for (const key of CREDENTIAL_INPUTS)
        if (child(child(s.step, 'with'), key))
          problems.push(
            `${where}.steps[${s.index}]: the ${isAgentStep(s.uses) ? 'agent' : 'model-proxy'} step gets ${key}`,
          );
    for (const e of [...workflowEnv, ...walkExpressions(agent.job, where)]) {
      if (GITHUB_CREDENTIAL.test(normalizeExpression(e.expr)))
        problems.push(
          `${e.path}: the agent job gets a GitHub token, the state key or the push token (\${{ ${e.expr} }})`,
        );
      else if (references(e.expr, 'secrets') && !modelKeyPaths.has(e.path))
        problems.push(
          `${e.path}: the agent job gets a secret other than the model keys of ${holder} (\${{ ${e.expr} }})`,
        );
    }
    // Runs only when the routing job asked, in the routing job's start commit.
    const routing = agent.needs.find((n) => routingIds.includes(n));
    if (!routing) {
      problems.push(
        `${where}: needs no routing job (${routingIds.join(', ') || 'none'}), so it cannot run only when routing asked`,
      );
      continue;
    }
    const jobIf = conditionText(child(agent.job, 'if'));
    for (const s of agentSteps)
      if (![jobIf, conditionText(child(s.step, 'if'))].some((c) => references(c, `needs.${routing}.outputs.agent`)))
        problems.push(
          `${where}.steps[${s.index}]: the agent step runs without needs.${routing}.outputs.agent in the if: of its job or its own`,
        );
    const checkouts = agent.steps.filter(
      (s) => isCheckoutStep(s.uses) && !literal(child(child(s.step, 'with'), 'repository')),
    );
    if (!checkouts.some((c) => c.index < (agentSteps[0]?.index ?? 0)))
      problems.push(`${where}: no checkout before the agent step (it works in the routing job's start-sha)`);
    for (const c of checkouts) {
      const ref = child(child(c.step, 'with'), 'ref');
      if (!expressionsOf(ref).some((e) => references(e, `needs.${routing}.outputs.start-sha`)))
        problems.push(
          `${where}.steps[${c.index}]: checks out ${ref ? display(ref) : "the event's ref"}, not needs.${routing}.outputs.start-sha`,
        );
    }
  }
  if (agentJobs.length > 0 && publishJobs.length === 0)
    problems.push('no publish job (uses: hydraflow/hydraflow/actions/publish@..., or HydraFlow with phase: publish)');
  for (const agent of agentJobs)
    if (
      publishJobs.length > 0 &&
      !publishJobs.some((p) => p.id !== agent.id && p.needs.includes(agent.id.toLowerCase()))
    )
      problems.push(`jobs.${agent.id}: no publish job needs it (its result is published by a job of its own)`);
  for (const publish of publishJobs) {
    if (isAgentJob(publish)) continue; // reported above
    const where = `jobs.${publish.id}`;
    const cond = conditionText(child(publish.job, 'if'));
    if (!ALWAYS.test(cond))
      problems.push(`${where}: the publish job must run always() (it reports an agent job that failed)`);
    const routing = publish.needs.find((n) => routingIds.includes(n));
    if (!routing && !isRoutingJob(publish))
      problems.push(
        `${where}: needs no routing job (${routingIds.join(', ') || 'none'}), so it cannot read its outputs`,
      );
    else if (routing && ALWAYS.test(cond) && !references(cond, `needs.${routing}.outputs.agent`))
      problems.push(
        `${where}: runs always() without needs.${routing}.outputs.agent in its if: (it would run on every event)`,
      );
  }
  return problems;
}

/**
 * The hand-off between jobs and steps: a job output refers to a step of that job, a `steps.<id>` reference to a step
 * of the same job, and `needs.<job>.outputs.<name>` to a job in `needs:` that declares that output (GitHub gives an
 * empty string for anything else, silently).
 */
export function checkHandOff(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  const jobs = jobsOf(root);
  const outputs = new Map(
    jobs.map((j) => [j.id.toLowerCase(), new Set(entries(child(j.job, 'outputs')).map(([k]) => k.toLowerCase()))]),
  );
  for (const job of jobs) {
    const stepIds = new Set(
      job.steps.map((s) => literal(child(s.step, 'id'))?.toLowerCase()).filter((id): id is string => !!id),
    );
    // A bare `if:` is an expression too, though the parser keeps it as a string.
    const conditions = [
      { path: `jobs.${job.id}.if`, token: child(job.job, 'if') },
      ...job.steps.map((s) => ({ path: `jobs.${job.id}.steps[${s.index}].if`, token: child(s.step, 'if') })),
    ].flatMap(({ path, token }) => (literal(token) ? [{ path, expr: literal(token)! }] : []));
    for (const { path, expr } of [...conditions, ...walkExpressions(job.job, `jobs.${job.id}`)]) {
      const text = normalizeExpression(expr);
      for (const [, id] of text.matchAll(/(?<![\w.])steps\.([\w-]+)/g))
        if (!stepIds.has(id!)) problems.push(`${path}: refers to steps.${id}, which jobs.${job.id} does not have`);
      for (const [, need, name] of text.matchAll(/(?<![\w.])needs\.([\w-]+)\.outputs\.([\w-]+)/g)) {
        if (!job.needs.includes(need!))
          problems.push(`${path}: refers to needs.${need}, which jobs.${job.id} does not need`);
        else if (!outputs.get(need!)?.has(name!))
          problems.push(`${path}: needs.${need}.outputs.${name} is not an output of jobs.${need}`);
      }
    }
  }
  return problems;
}

function stepInputs(root: MappingToken | undefined, match: (s: JobStep) => boolean): string[] {
  return jobsOf(root).flatMap((job) =>
    job.steps.filter(match).flatMap((s) => entries(child(s.step, 'with')).map(([k]) => k)),
  );
}

/** The `with:` keys given to the agent steps (to compare with actions/agent/action.yml's inputs). */
export const agentStepInputs = (root: MappingToken | undefined) => stepInputs(root, (s) => isAgentStep(s.uses));

/** The `with:` keys given to actions/model-proxy steps (to compare with actions/model-proxy/action.yml's inputs). */
export const modelProxyStepInputs = (root: MappingToken | undefined) =>
  stepInputs(root, (s) => isModelProxyStep(s.uses));

/** The `with:` keys given to actions/publish steps (to compare with actions/publish/action.yml's inputs). */
export const publishStepInputs = (root: MappingToken | undefined) =>
  stepInputs(root, (s) => isPublishActionStep(s.uses));

/** The `with:` keys given to HydraFlow steps (to compare with the root action's declared inputs). */
export const hydraflowStepInputs = (root: MappingToken | undefined) => stepInputs(root, (s) => isHydraFlowStep(s.uses));

/** All workflow checks together, for the template and for negative cases. */
export async function checkWorkflow(content: string): Promise<string[]> {
  const parsed = await parseWorkflowText(content);
  return [
    ...checkParses(parsed),
    ...checkTriggers(parsed.template),
    ...checkPermissions(parsed.root),
    ...checkConcurrency(parsed.template),
    ...checkWorkflowRunScripts(parsed.template),
    ...checkSecretsAndCheckout(parsed.root),
    ...checkAgentIsolation(parsed.root),
    ...checkHandOff(parsed.root),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Action metadata (action.yml, actions/*/action.yml), read with the `yaml` package as plain data.

export interface ActionMetadata {
  name?: unknown;
  description?: unknown;
  inputs?: Record<string, { description?: unknown; required?: unknown; default?: unknown } | null>;
  outputs?: Record<string, { description?: unknown; value?: unknown } | null>;
  runs?: { using?: unknown; main?: unknown; steps?: unknown };
}

/** The env var the runner (and src/runner/io.ts) reads an input from: spaces to underscores, upper-cased, hyphens kept. */
export const inputEnvName = (input: string) => `INPUT_${input.replace(/ /g, '_').toUpperCase()}`;

export function checkInputDescriptions(action: ActionMetadata, where: string): string[] {
  return Object.entries(action.inputs ?? {})
    .filter(([, def]) => typeof def?.description !== 'string' || def.description.trim() === '')
    .map(([name]) => `${where}: input ${name} has no description`);
}

export function checkRootAction(action: ActionMetadata): string[] {
  const problems: string[] = [];
  if (action.runs?.using !== 'node24')
    problems.push(`action.yml: runs.using is ${String(action.runs?.using)}, expected node24`);
  if (action.runs?.main !== 'dist/index.js')
    problems.push(`action.yml: runs.main is ${String(action.runs?.main)}, expected dist/index.js`);
  problems.push(...checkInputDescriptions(action, 'action.yml'));
  return problems;
}

/**
 * `exec`: node is the step's entry process, which GitHub's runner signals when the job is cancelled (as it is for the
 * root action, `using: node24`); under bash it would never hear of it (docs/adr/0024-a-cancelled-agent-job-hands-on-what-it-spent.md).
 */
export const PHASE_RUN = 'exec node "$GITHUB_ACTION_PATH/../../dist/index.js"';

/** A phase action is a one-step composite that runs the shared bundle with INPUT_PHASE fixed and every input forwarded. */
export function checkPhaseAction(action: ActionMetadata, phase: string): string[] {
  const where = `actions/${phase}/action.yml`;
  const problems: string[] = [];
  if (action.runs?.using !== 'composite')
    problems.push(`${where}: runs.using is ${String(action.runs?.using)}, expected composite`);
  const steps = Array.isArray(action.runs?.steps) ? (action.runs.steps as Record<string, unknown>[]) : [];
  if (steps.length !== 1) {
    problems.push(`${where}: ${steps.length} steps, expected exactly one`);
    if (steps.length === 0) return problems;
  }
  const step = steps[0]!;
  if (typeof step.run !== 'string' || step.run.trim() !== PHASE_RUN)
    problems.push(`${where}: step runs ${JSON.stringify(step.run)}, expected ${PHASE_RUN}`);
  if (typeof step.shell !== 'string') problems.push(`${where}: composite run step has no shell`);
  const env = (step.env && typeof step.env === 'object' ? step.env : {}) as Record<string, unknown>;
  if (env.INPUT_PHASE !== phase)
    problems.push(`${where}: INPUT_PHASE is ${JSON.stringify(env.INPUT_PHASE)}, expected ${phase}`);
  if (action.inputs && 'phase' in action.inputs) problems.push(`${where}: declares a phase input (the phase is fixed)`);
  for (const input of Object.keys(action.inputs ?? {})) {
    const name = inputEnvName(input);
    const expected = `\${{ inputs.${input} }}`;
    if (!(name in env)) problems.push(`${where}: input ${input} is not forwarded as ${name}`);
    else if (env[name] !== expected)
      problems.push(`${where}: ${name} is ${JSON.stringify(env[name])}, expected ${expected}`);
  }
  const declared = new Set(Object.keys(action.inputs ?? {}).map(inputEnvName));
  for (const name of Object.keys(env))
    if (name.startsWith('INPUT_') && name !== 'INPUT_PHASE' && !declared.has(name))
      problems.push(`${where}: env ${name} matches no declared input`);
  problems.push(...checkInputDescriptions(action, where));
  return problems;
}

/** The phase actions of the implement jobs: composites of several steps around the shared bundle (ADR 0001). */
export const HANDOFF_PHASES: readonly string[] = ['model-proxy', 'agent', 'publish'];

/**
 * The INPUT_PHASE a hand-off action's bundle steps may fix besides its own phase: actions/agent's last step, which
 * hands on the model proxy's count when the agent did not start (src/main.ts, src/phases/agent-leftovers.ts).
 */
const EXTRA_STEP_PHASES: Readonly<Record<string, readonly string[]>> = { agent: ['agent-leftovers'] };

/**
 * actions/model-proxy, actions/agent and actions/publish: composites that download an artifact, run the shared bundle
 * and (agent) upload the result. Every `run:` step is the bundle with INPUT_PHASE fixed to the phase and only declared inputs forwarded
 * (as `${{ inputs.<name> }}`); every declared input is used (forwarded to the bundle, or given to a `uses:` step);
 * outputs refer to steps that exist; and the agent action takes no github-token, push-token or state-key input and
 * passes no GitHub token or secret to any step.
 */
export function checkHandOffAction(action: ActionMetadata, phase: string): string[] {
  const where = `actions/${phase}/action.yml`;
  const problems: string[] = [];
  if (action.runs?.using !== 'composite')
    problems.push(`${where}: runs.using is ${String(action.runs?.using)}, expected composite`);
  const steps = Array.isArray(action.runs?.steps) ? (action.runs.steps as Record<string, unknown>[]) : [];
  const inputs = Object.keys(action.inputs ?? {});
  const declared = new Map(inputs.map((input) => [inputEnvName(input), input]));
  const asRecord = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
  const nodeSteps: Record<string, unknown>[] = [];
  steps.forEach((step, i) => {
    const at = `${where}: steps[${i}]`;
    if ('run' in step) {
      if (typeof step.shell !== 'string') problems.push(`${at}: run step has no shell`);
      if (typeof step.run !== 'string' || step.run.trim() !== PHASE_RUN) {
        problems.push(`${at}: runs ${JSON.stringify(step.run)}, expected ${PHASE_RUN} (the only command it may run)`);
        return;
      }
      nodeSteps.push(step);
      const env = asRecord(step.env);
      const phases = [phase, ...(EXTRA_STEP_PHASES[phase] ?? [])];
      if (!phases.includes(String(env.INPUT_PHASE)))
        problems.push(`${at}: INPUT_PHASE is ${JSON.stringify(env.INPUT_PHASE)}, expected ${phases.join(' or ')}`);
      for (const [name, value] of Object.entries(env)) {
        if (!name.startsWith('INPUT_') || name === 'INPUT_PHASE') continue;
        const input = declared.get(name);
        if (!input) problems.push(`${at}: env ${name} matches no declared input`);
        else if (value !== `\${{ inputs.${input} }}`)
          problems.push(`${at}: ${name} is ${JSON.stringify(value)}, expected \${{ inputs.${input} }}`);
      }
    } else if (typeof step.uses !== 'string') {
      problems.push(`${at}: neither run: nor uses:`);
    }
  });
  if (nodeSteps.length === 0) problems.push(`${where}: no step runs ${PHASE_RUN}`);
  const usesWith = steps.filter((s) => typeof s.uses === 'string').flatMap((s) => Object.values(asRecord(s.with)));
  for (const input of inputs) {
    const expected = `\${{ inputs.${input} }}`;
    const forwarded = nodeSteps.some((s) => asRecord(s.env)[inputEnvName(input)] === expected);
    const given = usesWith.some((v) => typeof v === 'string' && references(v, `inputs.${input}`));
    if (!forwarded && !given)
      problems.push(
        `${where}: input ${input} is never used (not forwarded as ${inputEnvName(input)}, not given to a uses: step)`,
      );
  }
  if (inputs.includes('phase')) problems.push(`${where}: declares a phase input (the phase is fixed)`);
  if (phase === 'agent') {
    for (const key of CREDENTIAL_INPUTS)
      if (inputs.includes(key)) problems.push(`${where}: declares ${key} (the agent job holds no GitHub token)`);
    steps.forEach((step, i) => {
      for (const part of ['with', 'env'] as const)
        for (const [key, value] of Object.entries(asRecord(step[part]))) {
          const text = typeof value === 'string' ? value : '';
          if (
            CREDENTIAL_INPUTS.some((c) => key.toLowerCase() === c || key.toUpperCase() === inputEnvName(c)) ||
            /^token$/i.test(key) ||
            GITHUB_CREDENTIAL.test(normalizeExpression(text)) ||
            references(text, 'secrets')
          )
            problems.push(`${where}: steps[${i}].${part}.${key} forwards a GitHub token or secret (${text || key})`);
        }
    });
  }
  const stepIds = new Set(steps.map((s) => s.id).filter((id): id is string => typeof id === 'string'));
  for (const [name, output] of Object.entries(asRecord(action.outputs))) {
    const value = asRecord(output).value;
    for (const [, id] of String(value ?? '').matchAll(/\bsteps\.([\w-]+)/g))
      if (!stepIds.has(id!)) problems.push(`${where}: output ${name} refers to steps.${id}, which it does not have`);
  }
  problems.push(...checkInputDescriptions(action, where));
  return problems;
}

/** checkHandOffAction for the actions that download a hand-off, checkPhaseAction (one step) for the other phases. */
export const checkAnyPhaseAction = (action: ActionMetadata, phase: string) =>
  HANDOFF_PHASES.includes(phase) ? checkHandOffAction(action, phase) : checkPhaseAction(action, phase);
