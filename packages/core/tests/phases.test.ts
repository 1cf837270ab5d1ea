import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_COMMANDS,
  dispatchStage,
  ISSUE_PHASES,
  isBuiltPhase,
  isPhaseName,
  KNOWN_ROLES,
  loadConfig,
  MODEL_PHASES,
  PHASE_NAMES,
  PHASE_TABLE,
  PIPELINE_STAGES,
  phaseAtStage,
  route,
  type RouterContext,
} from '../src/index';

const require = createRequire(import.meta.url);
const examples: { name: string; examples: any[] }[] = require('@octokit/webhooks-examples');
const example = (name: string, action?: string): any =>
  structuredClone(
    examples.find((e) => e.name === name)!.examples.find((e) => action === undefined || e.action === action),
  );
const ctx: RouterContext = { botLogins: ['github-actions[bot]'], config: loadConfig({ env: {}, inputs: {} }) };

describe('the phase table (packages/core/src/pipeline/phases.ts)', () => {
  it('derives the model phases, the stage a dispatch expects and the phase of a stage', () => {
    expect([...MODEL_PHASES]).toEqual(['triage', 'discover', 'shape', 'groom', 'plan', 'review']);
    expect(ISSUE_PHASES.map(dispatchStage)).toEqual([
      'find',
      'discover',
      'shape',
      'groom',
      'epic',
      'plan',
      'ready',
      undefined, // publish checks its hand-off
      'review',
      undefined, // feedback and merge check the pull request
      undefined,
    ]);
    const worked = PIPELINE_STAGES.map((s) => [s.stage, phaseAtStage(s.stage)]);
    expect(Object.fromEntries(worked)).toEqual({
      find: 'triage',
      discover: 'discover',
      shape: 'shape',
      groom: 'groom',
      epic: 'epic',
      plan: 'plan',
      ready: 'implement',
      review: 'review',
      hitl: undefined,
      fixed: undefined,
    });
  });

  it('gives each stage at most one phase, and each phase a track of ADR-0031 and a known model role', () => {
    const stages = PHASE_NAMES.map((p) => PHASE_TABLE[p].stage).filter((s) => s !== null);
    expect(new Set(stages).size).toBe(stages.length);
    const roles = new Set<string>(KNOWN_ROLES);
    for (const p of PHASE_NAMES) {
      expect(['junction', 'product', 'engineering']).toContain(PHASE_TABLE[p].track);
      const model = PHASE_TABLE[p].model;
      if (model !== null) expect(roles, `${p}: model role ${model}`).toContain(model);
    }
  });

  it('knows every phase a built-in command starts, and tells phases from steps and from unknown names', () => {
    for (const c of BUILTIN_COMMANDS)
      if (c.phase !== null && c.phase !== 'retry' && c.phase !== 'doctor') expect(isPhaseName(c.phase)).toBe(true);
    expect(isBuiltPhase('plan')).toBe(true);
    expect(isBuiltPhase('shape')).toBe(true);
    expect(isBuiltPhase('agent')).toBe(false); // a step of the implement jobs
    expect(isPhaseName('constructor')).toBe(false);
  });

  it('lets a workflow_dispatch name exactly the issue phases of the table', () => {
    const dispatch = (phase: string) => {
      const p = example('workflow_dispatch');
      p.inputs = { issue: '3', phase, actor: 'octocat' };
      return route({ name: 'workflow_dispatch', payload: p }, ctx);
    };
    for (const phase of ISSUE_PHASES) expect(dispatch(phase)).toMatchObject({ kind: 'phase', phase });
    for (const phase of ['agent', 'model-proxy', 'constructor', 'deploy'])
      expect(dispatch(phase)).toMatchObject({ kind: 'skip', reason: expect.stringMatching(/is not one of triage/) });
  });

  it('lists for each phase the events the router sends to it', () => {
    const opened = example('issues', 'opened');
    opened.issue.labels = [];
    opened.sender = { login: 'Codertocat', type: 'User' };
    const labeled = structuredClone(opened);
    labeled.action = 'labeled';
    labeled.label = { name: 'hydraflow-find' };
    const cases: [string, any][] = [
      ['issues.opened', { name: 'issues', payload: opened }],
      ['issues.labeled `hydraflow-find`', { name: 'issues', payload: labeled }],
    ];
    for (const [event, e] of cases) {
      const decision = route(e, ctx);
      expect(decision.kind, event).toBe('phase');
      if (decision.kind === 'phase') expect(PHASE_TABLE[decision.phase].events).toContain(event);
    }
  });
});
