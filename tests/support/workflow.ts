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
  return new RegExp(`(?<![\\w.])${name.replace(/\./g, '\\.')}(?![\\w-])`).test(normalizeExpression(expr));
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
  needTypes('issue_comment', ['created']);
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
    for (const [name, required] of [
      ['issue', true],
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

/**
 * The exact least-privilege set of the engineering track: push HydraFlow's branch and merge (contents), labels and
 * comments (issues), open/review pull requests (pull-requests), dispatch the next phase (actions), read CI results
 * (checks, statuses).
 */
export const EXPECTED_PERMISSIONS: Readonly<Record<string, 'read' | 'write'>> = {
  contents: 'write',
  issues: 'write',
  'pull-requests': 'write',
  actions: 'write',
  checks: 'read',
  statuses: 'read',
};

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
  for (const [scope, value] of entries(token)) map[scope] = isLiteral(value) ? value.toString() : '<expression>';
  return map;
}

export function checkPermissions(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  const top = child(root, 'permissions');
  let granted: Record<string, string> | undefined;
  if (!top) {
    problems.push('no top-level permissions (the repository default may be write-all)');
  } else {
    granted = permissionMap(top, 'workflow', problems);
    if (granted) {
      for (const [scope, level] of Object.entries(EXPECTED_PERMISSIONS))
        if (granted[scope] !== level)
          problems.push(`workflow: ${scope} is ${granted[scope] ?? 'absent'}, expected ${level}`);
      for (const scope of Object.keys(granted))
        if (!(scope in EXPECTED_PERMISSIONS))
          problems.push(`workflow: unexpected permission ${scope}: ${granted[scope]}`);
    }
  }
  for (const [jobId, job] of entries(child(root, 'jobs'))) {
    const jobPermissions = child(job, 'permissions');
    if (!jobPermissions) continue;
    const map = permissionMap(jobPermissions, `job ${jobId}`, problems);
    if (!map) continue;
    for (const [scope, level] of Object.entries(map)) {
      const ceiling = LEVEL[granted?.[scope] ?? 'none'] ?? 0;
      const asked = LEVEL[level];
      if (asked === undefined || asked > ceiling)
        problems.push(`job ${jobId}: widens ${scope} to ${level} (workflow grants ${granted?.[scope] ?? 'none'})`);
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

const isHydraFlowStep = (uses: string) => /^(hydraflow\/hydraflow(@|$)|\.\/?$)/i.test(uses);
const isCheckoutStep = (uses: string) => /^actions\/checkout@/i.test(uses);

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

const isAgentStep = (uses: string) => /^(hydraflow\/hydraflow\/actions\/agent@|\.\/actions\/agent\/?$)/i.test(uses);
/** What a GitHub token or HydraFlow's state key looks like in an expression. */
const GITHUB_CREDENTIAL =
  /(?<![\w.])(secrets\.(github_token|hydraflow_state_key|hydraflow_push_token)|github\.token)(?![\w-])/;
/**
 * The "safe outputs" layout: the step that runs the coding agent gets no GitHub token and no state key (not as an
 * input, not in env:), runs only when the routing step asked for it, and a publish step (HydraFlow with
 * `phase: publish`) follows it and runs `always()`. The publish step may hold a model key: it goes on with the review
 * of what it pushed, runs no repository code (git with hooks off, without secrets in its environment), and already
 * holds the GitHub token, which is worth more.
 */
export function checkAgentIsolation(root: MappingToken | undefined): string[] {
  const problems: string[] = [];
  for (const [jobId, job] of entries(child(root, 'jobs'))) {
    let agentAt = -1;
    let publishAt = -1;
    items(child(job, 'steps')).forEach((step, i) => {
      const where = `jobs.${jobId}.steps[${i}]`;
      const uses = child(step, 'uses');
      const usesText = uses && isString(uses) ? uses.value : '';
      const exprs = [...walkExpressions(child(step, 'with'), 'with'), ...walkExpressions(child(step, 'env'), 'env')];
      if (isAgentStep(usesText)) {
        agentAt = i;
        for (const key of ['github-token', 'push-token', 'state-key'])
          if (child(child(step, 'with'), key)) problems.push(`${where}: the agent step gets ${key}`);
        for (const e of exprs)
          if (GITHUB_CREDENTIAL.test(normalizeExpression(e.expr)))
            problems.push(
              `${where}: the agent step gets a GitHub token or the state key (${e.path}: \${{ ${e.expr} }})`,
            );
        if (!child(step, 'if')) problems.push(`${where}: the agent step runs unconditionally`);
      }
      const phase = child(child(step, 'with'), 'phase');
      if (isHydraFlowStep(usesText) && phase && isLiteral(phase) && phase.toString() === 'publish') {
        publishAt = i;
        const cond = child(step, 'if');
        const condText = cond ? (isLiteral(cond) ? cond.toString() : expressionsOf(cond).join(' ')) : '';
        if (!/always\(\)/.test(condText))
          problems.push(`${where}: the publish step must run always() (it reports an agent step that failed)`);
      }
    });
    if (agentAt >= 0 && publishAt < agentAt) problems.push(`jobs.${jobId}: no publish step after the agent step`);
  }
  if (
    !entries(child(root, 'jobs')).some(([, job]) =>
      items(child(job, 'steps')).some((s) => {
        const uses = child(s, 'uses');
        return uses !== undefined && isString(uses) && isAgentStep(uses.value);
      }),
    )
  )
    problems.push('no agent step (uses: hydraflow/hydraflow/actions/agent@...)');
  return problems;
}

/** The `with:` keys given to the agent steps (to compare with actions/agent/action.yml's inputs). */
export function agentStepInputs(root: MappingToken | undefined): string[] {
  const keys: string[] = [];
  for (const [, job] of entries(child(root, 'jobs')))
    for (const step of items(child(job, 'steps'))) {
      const uses = child(step, 'uses');
      if (uses && isString(uses) && isAgentStep(uses.value)) keys.push(...entries(child(step, 'with')).map(([k]) => k));
    }
  return keys;
}

/** The `with:` keys given to HydraFlow steps (to compare with the root action's declared inputs). */
export function hydraflowStepInputs(root: MappingToken | undefined): string[] {
  const keys: string[] = [];
  for (const [, job] of entries(child(root, 'jobs')))
    for (const step of items(child(job, 'steps'))) {
      const uses = child(step, 'uses');
      if (uses && isString(uses) && isHydraFlowStep(uses.value))
        keys.push(...entries(child(step, 'with')).map(([k]) => k));
    }
  return keys;
}

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
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Action metadata (action.yml, actions/*/action.yml), read with the `yaml` package as plain data.

export interface ActionMetadata {
  name?: unknown;
  description?: unknown;
  inputs?: Record<string, { description?: unknown; required?: unknown; default?: unknown } | null>;
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

export const PHASE_RUN = 'node "$GITHUB_ACTION_PATH/../../dist/index.js"';

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
