import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import {
  agentFailureVerdict,
  agentsToRerun,
  agentVerdictSchema,
  buildFallbackSummary,
  consolidatedQuestionSchema,
  decodeStateBlock,
  emptyState,
  encodeStateBlock,
  engineerVerdictSchema,
  finalGroomDecision,
  GROOM_AGENTS,
  groomFailsClosed,
  groomBodyHash,
  groomRecordSchema,
  groomSummarySchema,
  groomSummarySchemaFor,
  likelyAnswers,
  materialBodyEdit,
  mergeQuestions,
  normalizePhases,
  openQuestions,
  parseQuestionsSection,
  readGroomData,
  reconcileSubIssues,
  renderGroomData,
  renderQuestionLine,
  renderSubIssueBody,
  slugifyQuestionId,
  stabilizeQuestionIds,
  subIssueSpecSchema,
  subIssueTitle,
  upsertPhasesSection,
  upsertQuestionsSection,
  weighVerdicts,
  type AgentVerdict,
  type GroomRecord,
  type GroomSummary,
  type MergedQuestion,
  type SubIssueSpec,
} from '../src/index';

const AUTH_PENDING = '- [ ] **Auth method?** - Need to decide OAuth vs JWT _(pm, engineer)_ `id:auth-method`';
const AUTH_ANSWERED = '- [x] ~~Which auth method?~~ - Decided OAuth based on comment #5 `id:auth-method`';

function summary(over: Partial<GroomSummary> = {}): GroomSummary {
  return {
    summary: 'Mostly clear.',
    decision: 'needs_info',
    decision_rationale: 'The auth method is open.',
    consolidated_questions: [],
    answered_questions: [],
    blocker_reason: null,
    ...over,
  };
}

function question(id: string, title: string, over: Partial<GroomSummary['consolidated_questions'][number]> = {}) {
  return { id, title, description: `About ${title}`, sources: ['pm'], priority: 'important' as const, ...over };
}

function verdict(over: Partial<AgentVerdict> = {}): AgentVerdict {
  return { ready: true, confidence: 'medium', assessment: 'Fine.', questions: [], ...over };
}

function section(...lines: string[]): string {
  return ['## Questions', '<!-- hydraflow:questions -->', ...lines, '<!-- /hydraflow:questions -->'].join('\n');
}

describe('schemas', () => {
  it('accepts valid verdicts and rejects extra keys, long questions and too many questions', () => {
    expect(GROOM_AGENTS).toEqual(['pm', 'engineer', 'qa', 'research']);
    expect(agentVerdictSchema.safeParse(verdict({ questions: ['Which DB?'] })).success).toBe(true);
    expect(agentVerdictSchema.safeParse({ ...verdict(), extra: 1 }).success).toBe(false);
    expect(agentVerdictSchema.safeParse(verdict({ questions: ['x'.repeat(301)] })).success).toBe(false);
    expect(agentVerdictSchema.safeParse(verdict({ questions: Array(9).fill('q?') })).success).toBe(false);
    expect(agentVerdictSchema.safeParse({ ...verdict(), confidence: 'certain' }).success).toBe(false);
    expect(agentVerdictSchema.safeParse(verdict({ assessment: 'a'.repeat(801) })).success).toBe(false);
  });

  it('engineer verdicts carry optional phases, validated', () => {
    const phase: SubIssueSpec = { phase_number: 1, title: 'Auth module', description: 'Add it.' };
    expect(engineerVerdictSchema.safeParse(verdict()).success).toBe(true);
    expect(engineerVerdictSchema.safeParse({ ...verdict(), recommended_phases: [phase] }).success).toBe(true);
    expect(subIssueSpecSchema.safeParse({ ...phase, phase_number: 0 }).success).toBe(false);
    expect(subIssueSpecSchema.safeParse({ ...phase, phase_number: 21 }).success).toBe(false);
    expect(subIssueSpecSchema.safeParse({ ...phase, title: 'x'.repeat(81) }).success).toBe(false);
    expect(subIssueSpecSchema.safeParse({ ...phase, affected_areas: [{ path: 'a.ts', change: 'move' }] }).success).toBe(
      false,
    );
    expect(engineerVerdictSchema.safeParse({ ...verdict(), recommended_phases: Array(9).fill(phase) }).success).toBe(
      false,
    );
  });

  it('converts to JSON Schema for the submit tools', () => {
    const tool = z.toJSONSchema(engineerVerdictSchema, { io: 'input' }) as { required: string[] };
    expect(tool.required).not.toContain('recommended_phases');
    expect(() => z.toJSONSchema(groomSummarySchema, { io: 'input' })).not.toThrow();
  });

  it('question ids are slugs and titles at most 60 characters', () => {
    expect(consolidatedQuestionSchema.safeParse(question('auth-method', 'Auth?')).success).toBe(true);
    expect(consolidatedQuestionSchema.safeParse(question('Auth Method', 'Auth?')).success).toBe(false);
    expect(consolidatedQuestionSchema.safeParse(question('a'.repeat(61), 'Auth?')).success).toBe(false);
    expect(consolidatedQuestionSchema.safeParse(question('auth', 'x'.repeat(60))).success).toBe(true);
    expect(consolidatedQuestionSchema.safeParse(question('auth', 'x'.repeat(61))).success).toBe(false);
    expect(consolidatedQuestionSchema.safeParse(question('auth', 'Auth?', { priority: 'low' as never })).success).toBe(
      false,
    );
  });

  it('blocker_reason is required iff blocked', () => {
    expect(groomSummarySchema.safeParse(summary()).success).toBe(true);
    expect(
      groomSummarySchema.safeParse(summary({ decision: 'blocked', blocker_reason: 'Vendor API down' })).success,
    ).toBe(true);
    expect(groomSummarySchema.safeParse(summary({ decision: 'blocked' })).success).toBe(false);
    expect(groomSummarySchema.safeParse(summary({ decision: 'ready', blocker_reason: 'x' })).success).toBe(false);
  });

  it('rejects an id used twice, pending or answered', () => {
    const s = summary({
      consolidated_questions: [question('auth', 'Auth?')],
      answered_questions: [{ id: 'auth', title: 'Auth?', answer_summary: 'OAuth' }],
    });
    expect(groomSummarySchema.safeParse(s).success).toBe(false);
  });

  it('groomSummarySchemaFor accepts only the run’s agents as sources', () => {
    const s = summary({ consolidated_questions: [question('auth', 'Auth?', { sources: ['pm', 'security'] })] });
    expect(groomSummarySchemaFor(['pm', 'security']).safeParse(s).success).toBe(true);
    const r = groomSummarySchemaFor(['pm', 'engineer']).safeParse(s);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['consolidated_questions', 0, 'sources', 1]);
    // The base rules still hold.
    expect(groomSummarySchemaFor(['pm']).safeParse(summary({ decision: 'blocked' })).success).toBe(false);
  });
});

describe('question lines', () => {
  it('renders the seed’s exact pending and answered formats', () => {
    expect(
      renderQuestionLine({
        id: 'auth-method',
        title: 'Auth method?',
        checked: false,
        description: 'Need to decide OAuth vs JWT',
        sources: ['pm', 'engineer'],
      }),
    ).toBe(AUTH_PENDING);
    expect(
      renderQuestionLine({
        id: 'auth-method',
        title: 'Which auth method?',
        checked: true,
        answered: true,
        answer: 'Decided OAuth based on comment #5',
      }),
    ).toBe(AUTH_ANSWERED);
    expect(renderQuestionLine({ id: 'x', title: 'T', checked: true, description: 'D', sources: ['qa'] })).toBe(
      '- [x] **T** - D _(qa)_ `id:x`',
    );
  });

  it('parses both formats, a ticked pending line and human lines', () => {
    const body = section(
      AUTH_PENDING,
      AUTH_ANSWERED.replace('auth-method', 'old'),
      '- [x] **DB?** - Which DB _(qa)_ `id:db`',
      '- [ ] Do we need a flag?',
      'Some prose',
    );
    const { lines, present } = parseQuestionsSection(body);
    expect(present).toBe(true);
    expect(lines).toEqual([
      {
        checked: false,
        id: 'auth-method',
        title: 'Auth method?',
        text: 'Need to decide OAuth vs JWT',
        sources: ['pm', 'engineer'],
        answered: false,
        raw: AUTH_PENDING,
      },
      {
        checked: true,
        id: 'old',
        title: 'Which auth method?',
        text: 'Decided OAuth based on comment #5',
        answered: true,
        raw: AUTH_ANSWERED.replace('auth-method', 'old'),
      },
      {
        checked: true,
        id: 'db',
        title: 'DB?',
        text: 'Which DB',
        sources: ['qa'],
        answered: false,
        raw: '- [x] **DB?** - Which DB _(qa)_ `id:db`',
      },
      { checked: false, title: 'Do we need a flag?', text: '', answered: false, raw: '- [ ] Do we need a flag?' },
    ]);
  });

  it('reads a human-written Questions section without markers, and reports absence', () => {
    const body = 'Intro\n\n### Questions\n- [ ] Which region?\n- [X] Budget ok?\n\n### Notes\n- [ ] not a question';
    const parsed = parseQuestionsSection(body);
    expect(parsed.present).toBe(true);
    expect(parsed.lines.map((l) => [l.title, l.checked])).toEqual([
      ['Which region?', false],
      ['Budget ok?', true],
    ]);
    expect(parseQuestionsSection('Just a body\n- [ ] a task')).toEqual({ lines: [], present: false });
  });

  it('neutralises model text and round-trips titles with markup characters', () => {
    const line = renderQuestionLine({
      id: 'evil',
      title: 'Use **bold** ~~x~~ `a?',
      checked: false,
      description: 'ping @octocat <!-- /hydraflow:questions --> `unbalanced',
      sources: ['pm) `id:x`'],
    });
    expect(line).not.toContain('<!--');
    expect(line).not.toMatch(/@octocat/);
    expect(line).not.toMatch(/hydraflow:questions/);
    const [parsed] = parseQuestionsSection(section(line)).lines;
    expect(parsed?.id).toBe('evil');
    expect(parsed?.title).toBe('Use **bold** ~~x~~ `a?');
    expect(parsed?.sources).toEqual(['pmidx']);
  });

  it('keeps CRLF lines parseable', () => {
    const body = section(AUTH_PENDING).replace(/\n/g, '\r\n');
    expect(parseQuestionsSection(body).lines[0]?.id).toBe('auth-method');
  });

  it('round-trips any rendered question (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          title: fc.string({ minLength: 1, maxLength: 60 }).filter((t) => /[A-Za-z0-9]/.test(t)),
          description: fc.string({ maxLength: 100 }),
          checked: fc.boolean(),
        }),
        ({ title, description, checked }) => {
          const q: MergedQuestion = { id: 'q-1', title, description, checked, sources: ['qa'] };
          const line = renderQuestionLine(q);
          const [parsed] = parseQuestionsSection(section(line)).lines;
          expect(parsed?.id).toBe('q-1');
          expect(parsed?.checked).toBe(checked);
          expect(parsed?.raw).toBe(line);
          expect(renderQuestionLine({ ...q, raw: parsed!.raw })).toBe(line);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('slugifies titles into valid ids', () => {
    expect(slugifyQuestionId('Which auth method?')).toBe('which-auth-method');
    expect(slugifyQuestionId('Crème brûlée — v2!')).toBe('creme-brulee-v2');
    expect(slugifyQuestionId('???')).toBe('question');
    expect(slugifyQuestionId('a '.repeat(50))).toHaveLength(59);
    fc.assert(
      fc.property(fc.string(), (t) => {
        expect(slugifyQuestionId(t)).toMatch(/^[a-z0-9][a-z0-9-]{0,59}$/);
      }),
    );
  });

  it('openQuestions keeps the unchecked ones', () => {
    const lines = parseQuestionsSection(section(AUTH_PENDING, '- [x] **DB?** `id:db`')).lines;
    expect(openQuestions(lines).map((l) => l.id)).toEqual(['auth-method']);
  });
});

describe('mergeQuestions: the seed’s five rules', () => {
  const lines = (...l: string[]) => parseQuestionsSection(section(...l)).lines;

  it('rule 1: new pending questions are added unchecked, after the existing ones', () => {
    const merged = mergeQuestions(
      lines(AUTH_PENDING),
      summary({ consolidated_questions: [question('db', 'Which DB?')] }),
    );
    expect(merged.map((q) => [q.id, q.checked])).toEqual([
      ['auth-method', false],
      ['db', false],
    ]);
    expect(renderQuestionLine(merged[1]!)).toBe('- [ ] **Which DB?** - About Which DB? _(pm)_ `id:db`');
  });

  it('rule 1: a question still asked is refreshed in place', () => {
    const merged = mergeQuestions(
      lines(AUTH_PENDING, '- [ ] **Later** `id:later`'),
      summary({
        consolidated_questions: [
          question('auth-method', 'Auth method?', { description: 'OAuth or JWT now', priority: 'critical' }),
        ],
      }),
    );
    expect(merged[0]).toMatchObject({
      id: 'auth-method',
      checked: false,
      description: 'OAuth or JWT now',
      priority: 'critical',
    });
    expect(merged[0]?.raw).toBeUndefined();
    expect(merged[1]?.id).toBe('later');
  });

  it('rule 2: answered questions become checked and struck through with their answer', () => {
    const merged = mergeQuestions(
      lines(AUTH_PENDING),
      summary({
        answered_questions: [
          { id: 'auth-method', title: 'Which auth method?', answer_summary: 'Decided OAuth based on comment #5' },
        ],
      }),
    );
    expect(merged.map(renderQuestionLine)).toEqual([AUTH_ANSWERED]);
  });

  it('rule 3: lines without an id are dropped once the summary has output, kept without one', () => {
    const existing = lines('- [ ] Triage asked this?', AUTH_PENDING);
    expect(mergeQuestions(existing, summary()).map((q) => q.id)).toEqual(['auth-method']);
    expect(mergeQuestions(existing, null).map(renderQuestionLine)).toEqual(['- [ ] Triage asked this?', AUTH_PENDING]);
  });

  it('rule 4: grooming questions absent from the new output are preserved as they stand', () => {
    const ticked = '- [x] **DB?** - Which DB _(qa)_ `id:db`';
    const merged = mergeQuestions(lines(AUTH_PENDING, ticked, AUTH_ANSWERED.replace('auth-method', 'old')), summary());
    expect(merged.map(renderQuestionLine)).toEqual([AUTH_PENDING, ticked, AUTH_ANSWERED.replace('auth-method', 'old')]);
  });

  it('rule 5: a box a human checked is never unchecked', () => {
    const ticked = AUTH_PENDING.replace('[ ]', '[x]');
    const merged = mergeQuestions(
      lines(ticked),
      summary({ consolidated_questions: [question('auth-method', 'Auth method?', { description: 'Still unsure' })] }),
    );
    expect(merged).toHaveLength(1);
    expect(merged[0]?.checked).toBe(true);
    expect(renderQuestionLine(merged[0]!)).toBe('- [x] **Auth method?** - Still unsure _(pm)_ `id:auth-method`');
    // Answered before, asked again: stays answered.
    const again = mergeQuestions(
      lines(AUTH_ANSWERED),
      summary({ consolidated_questions: [question('auth-method', 'Auth?')] }),
    );
    expect(again.map(renderQuestionLine)).toEqual([AUTH_ANSWERED]);
    expect(openQuestions(again)).toEqual([]);
  });

  it('never unchecks anything and keeps ids unique (property)', () => {
    const ids = ['a', 'b', 'c', 'd'];
    const arb = fc.record({
      existing: fc.array(fc.record({ id: fc.constantFrom(...ids), checked: fc.boolean() }), { maxLength: 6 }),
      pending: fc.uniqueArray(fc.constantFrom(...ids), { maxLength: 4 }),
      answered: fc.uniqueArray(fc.constantFrom(...ids), { maxLength: 4 }),
    });
    fc.assert(
      fc.property(arb, ({ existing, pending, answered }) => {
        const ex = lines(...existing.map((e) => `- [${e.checked ? 'x' : ' '}] **Q ${e.id}** \`id:${e.id}\``));
        const ans = answered.filter((id) => !pending.includes(id));
        const merged = mergeQuestions(
          ex,
          summary({
            consolidated_questions: pending.map((id) => question(id, `Q ${id}`)),
            answered_questions: ans.map((id) => ({ id, title: `Q ${id}`, answer_summary: 'yes' })),
          }),
        );
        const out = merged.map((q) => q.id);
        expect(new Set(out).size).toBe(out.length);
        for (const id of ids) {
          if (ex.find((x) => x.id === id)?.checked) expect(merged.find((q) => q.id === id)?.checked).toBe(true);
        }
        for (const id of [...pending, ...ans]) expect(out).toContain(id);
        for (const id of ans) expect(merged.find((q) => q.id === id)?.checked).toBe(true);
      }),
    );
  });

  it('stabilizeQuestionIds reuses the id of an existing question with the same title', () => {
    const existing = lines(AUTH_PENDING, '- [ ] **Which DB?** `id:db`');
    const stable = stabilizeQuestionIds(
      summary({
        consolidated_questions: [question('auth-choice', 'auth  METHOD'), question('new-one', 'Brand new?')],
        answered_questions: [{ id: 'database', title: 'Which DB', answer_summary: 'Postgres' }],
      }),
      existing,
    );
    expect(stable.consolidated_questions.map((q) => q.id)).toEqual(['auth-method', 'new-one']);
    expect(stable.answered_questions[0]?.id).toBe('db');
  });

  it('stabilizeQuestionIds keeps ids that exist and never creates a duplicate', () => {
    const existing = lines(AUTH_PENDING);
    const stable = stabilizeQuestionIds(
      summary({
        consolidated_questions: [question('auth-method', 'Something else'), question('auth-2', 'Auth method?')],
      }),
      existing,
    );
    expect(stable.consolidated_questions.map((q) => q.id)).toEqual(['auth-method', 'auth-2']);
    expect(groomSummarySchema.safeParse(stable).success).toBe(true);
  });
});

describe('upsertQuestionsSection', () => {
  const merged: MergedQuestion[] = [
    {
      id: 'auth-method',
      title: 'Auth method?',
      checked: false,
      description: 'Need to decide OAuth vs JWT',
      sources: ['pm', 'engineer'],
    },
  ];

  it('appends the section when there is none, and leaves the body alone with nothing to add', () => {
    expect(upsertQuestionsSection('Body text\n', merged)).toBe(`Body text\n\n${section(AUTH_PENDING)}`);
    expect(upsertQuestionsSection('Body text\n', [])).toBe('Body text\n');
  });

  it('replaces the managed block in place, human text around it untouched, idempotently', () => {
    const body = `Intro **keep**\n\n${section('- [ ] **Old** `id:old`')}\n\n## After\nHuman notes @someone`;
    const once = upsertQuestionsSection(body, merged);
    expect(once).toBe(`Intro **keep**\n\n${section(AUTH_PENDING)}\n\n## After\nHuman notes @someone`);
    expect(upsertQuestionsSection(once, merged)).toBe(once);
    expect(upsertQuestionsSection(once, [])).toBe(
      'Intro **keep**\n\n## Questions\n<!-- hydraflow:questions -->\n<!-- /hydraflow:questions -->\n\n## After\nHuman notes @someone',
    );
  });

  it('takes over a human-written Questions section, keeping its prose', () => {
    const body = 'Intro\n\n## Questions\n- [ ] Triage question?\nPlease answer soon.\n\n## Context\nMore';
    const once = upsertQuestionsSection(body, merged);
    expect(once).toBe(`Intro\n\n${section(AUTH_PENDING)}\nPlease answer soon.\n\n## Context\nMore`);
    expect(upsertQuestionsSection(once, merged)).toBe(once);
    expect(parseQuestionsSection(once).lines.map((l) => l.id)).toEqual(['auth-method']);
  });

  it('a full re-run cycle keeps the section stable', () => {
    const s = summary({ consolidated_questions: [question('auth-method', 'Auth method?')] });
    const first = upsertQuestionsSection('Body', mergeQuestions([], s));
    const second = upsertQuestionsSection(first, mergeQuestions(parseQuestionsSection(first).lines, s));
    expect(second).toBe(first);
  });
});

describe('fallbacks', () => {
  it('a failed agent gets the seed’s diagnostic question', () => {
    expect(agentFailureVerdict('qa')).toMatchObject({
      ready: false,
      confidence: 'low',
      questions: ['Agent qa failed to complete analysis'],
    });
    expect(agentVerdictSchema.safeParse(agentFailureVerdict('qa')).success).toBe(true);
  });

  it('the fallback summary lists every agent question with ids fallback-0.., needs_info', () => {
    const long = `Should the export include ${'very '.repeat(15)}old records?`;
    const s = buildFallbackSummary({
      pm: verdict({ ready: false, questions: ['Who is the user?', long] }),
      engineer: verdict(),
      qa: agentFailureVerdict('qa'),
      research: verdict({ questions: ['who is  the user?'] }),
    });
    expect(s.decision).toBe('needs_info');
    expect(s.blocker_reason).toBeNull();
    expect(s.answered_questions).toEqual([]);
    expect(s.consolidated_questions.map((q) => [q.id, q.sources, q.priority])).toEqual([
      ['fallback-0', ['pm', 'research'], 'important'],
      ['fallback-1', ['pm'], 'important'],
      ['fallback-2', ['qa'], 'important'],
    ]);
    expect(s.consolidated_questions[1]?.title.length).toBeLessThanOrEqual(60);
    expect(s.consolidated_questions[1]?.description).toBe(long);
    expect(s.consolidated_questions[2]?.title).toBe('Agent qa failed to complete analysis');
    expect(groomSummarySchemaFor(['pm', 'engineer', 'qa', 'research']).safeParse(s).success).toBe(true);
  });
});

describe('groomFailsClosed', () => {
  const ok = (name: string) => ({ name, failed: false });
  const down = (name: string, failure = 'anthropic model x unavailable after 4 attempts; last error: status 500') => ({
    name,
    failed: true,
    failure,
    provider: true,
  });

  it('one failed agent among others keeps the seed’s diagnostic question', () => {
    expect(groomFailsClosed([ok('pm'), down('qa'), ok('engineer')])).toBeUndefined();
    expect(groomFailsClosed([ok('pm'), ok('qa')], { name: 'summary', failed: false })).toBeUndefined();
  });

  it('every agent failing stops grooming, one line per distinct message', () => {
    const stop = groomFailsClosed([down('pm'), down('qa'), down('engineer', 'rejected the credentials (HTTP 401)')]);
    expect(stop?.headline).toMatch(/model provider failed every grooming agent/);
    expect(stop?.reason).toBe(
      'pm, qa: anthropic model x unavailable after 4 attempts; last error: status 500\nengineer: rejected the credentials (HTTP 401)',
    );
    const junk = groomFailsClosed([
      { name: 'pm', failed: true, failure: 'it answered without calling submit_verdict' },
    ]);
    expect(junk?.headline).toBe('Grooming stopped: every grooming agent failed');
  });

  it('a reused verdict is a verdict: the failures of a partial re-run do not stop grooming by themselves', () => {
    expect(groomFailsClosed([down('qa'), ok('pm')])).toBeUndefined();
  });

  it('a summary the provider failed stops grooming; one that answered badly falls back', () => {
    expect(groomFailsClosed([ok('pm')], down('summary'))?.headline).toMatch(/failed the summary agent/);
    expect(groomFailsClosed([ok('pm')], { name: 'summary', failed: true, failure: 'junk' })).toBeUndefined();
  });
});

describe('finalGroomDecision and weighVerdicts', () => {
  const ready = summary({ decision: 'ready' });

  it('passes the summary’s decision through', () => {
    expect(finalGroomDecision(ready, [], { pm: verdict() })).toEqual({ decision: 'ready' });
    expect(finalGroomDecision(summary({ decision: 'blocked', blocker_reason: 'x' }), [], {})).toEqual({
      decision: 'blocked',
    });
    expect(finalGroomDecision(summary(), [], {})).toEqual({ decision: 'needs_info' });
  });

  it('ready with an open critical question needs info', () => {
    const merged = mergeQuestions(
      [],
      summary({ consolidated_questions: [question('auth', 'Auth?', { priority: 'critical' })] }),
    );
    expect(finalGroomDecision(ready, merged, {})).toEqual({
      decision: 'needs_info',
      reason: 'a critical question is still open (auth)',
    });
    expect(
      finalGroomDecision(
        ready,
        merged.map((q) => ({ ...q, checked: true })),
        {},
      ),
    ).toEqual({ decision: 'ready' });
  });

  it('a high-confidence not-ready verdict with open questions blocks ready; a low-confidence one does not', () => {
    const merged = mergeQuestions(
      [],
      summary({ consolidated_questions: [question('scale', 'Scale?', { sources: ['engineer'] })] }),
    );
    const confident = { engineer: verdict({ ready: false, confidence: 'high', questions: ['Scale?'] }) };
    expect(finalGroomDecision(ready, merged, confident)).toEqual({
      decision: 'needs_info',
      reason: 'engineer is confident the issue is not ready and its questions are open',
    });
    expect(finalGroomDecision(ready, merged, { engineer: verdict({ ready: false, confidence: 'low' }) })).toEqual({
      decision: 'ready',
    });
    expect(finalGroomDecision(ready, [], confident)).toEqual({ decision: 'ready' });
  });

  it('weighVerdicts states each verdict’s weight and the rule', () => {
    const text = weighVerdicts({
      pm: verdict({ ready: false, confidence: 'high' }),
      qa: verdict({ ready: true, confidence: 'low' }),
    });
    expect(text).toContain('- pm: not ready, high confidence (weight 3)');
    expect(text).toContain('- qa: ready, low confidence (weight 1)');
    expect(text).toContain('Ready weighs 1 of 4; not ready weighs 3 of 4.');
    expect(text).toMatch(/High-confidence "not ready" verdicts weigh more than low-confidence "ready" ones/);
  });
});

describe('sub-issues', () => {
  const spec: SubIssueSpec = {
    phase_number: 2,
    title: 'Auth module',
    description: 'Add the module. cc @octocat <!-- hydraflow:state -->',
    affected_areas: [
      { path: 'src/auth.ts', change: 'add', note: 'New auth module' },
      { path: 'src/old`name.ts', change: 'delete' },
    ],
    todos: [
      { text: 'Create auth module', manual: false },
      { text: 'Verify login flow', manual: true },
    ],
    depends_on: [1, 3],
  };

  it('titles and bodies follow the seed, with links and the hidden marker', () => {
    expect(subIssueTitle(spec)).toBe('[Phase 2]: Auth module');
    const body = renderSubIssueBody(spec, { parent: 7, issueOfPhase: (p) => (p === 1 ? 41 : undefined) });
    expect(body.split('\n')).toEqual([
      '## Description',
      expect.stringContaining('Add the module.'),
      '',
      '## Affected Areas',
      '- `src/auth.ts` - (add) New auth module',
      "- `src/old'name.ts` - (delete)",
      '',
      '## Todo',
      '- [ ] Create auth module',
      '- [ ] [Manual] Verify login flow',
      '',
      '## Depends on',
      '- #41',
      '- Phase 3',
      '',
      'Part of #7.',
      '',
      '<!-- hydraflow:sub-issue parent=7 phase=2 -->',
    ]);
    expect(body).not.toMatch(/@octocat/);
    expect(body.match(/<!--/g)).toHaveLength(1);
  });

  it('omits empty sections', () => {
    const body = renderSubIssueBody(
      { phase_number: 1, title: 'T', description: 'D' },
      { parent: 3, issueOfPhase: () => undefined },
    );
    expect(body).toBe('## Description\nD\n\nPart of #3.\n\n<!-- hydraflow:sub-issue parent=3 phase=1 -->');
  });

  it('normalizePhases sorts, drops duplicates and bad dependencies, and says so', () => {
    const p = (n: number, deps?: number[]): SubIssueSpec => ({
      phase_number: n,
      title: `P${n}`,
      description: '',
      ...(deps ? { depends_on: deps } : {}),
    });
    const input = [p(3, [1, 2, 2, 3, 9]), p(1, [2]), p(2, [1]), { ...p(2), title: 'dup' }];
    const { phases, notes } = normalizePhases(input);
    expect(phases.map((x) => [x.phase_number, x.title, x.depends_on])).toEqual([
      [1, 'P1', []],
      [2, 'P2', [1]],
      [3, 'P3', [1, 2]],
    ]);
    expect(notes).toEqual([
      'A second phase 2 was dropped.',
      'Phase 1: the dependency on later phase 2 was dropped (a phase depends only on earlier ones).',
      'Phase 3: the dependency on itself was dropped (a phase depends only on earlier ones).',
      'Phase 3: the dependency on unknown phase 9 was dropped (a phase depends only on earlier ones).',
    ]);
    expect(input[0]?.depends_on).toEqual([1, 2, 2, 3, 9]);
  });

  it('reconcileSubIssues never recreates a phase and caps creations', () => {
    const specs = [1, 2, 3, 4].map((n) => ({ phase_number: n, title: `P${n}`, description: '' }));
    const existing = [
      { number: 50, title: 'Renamed by a human', body: 'x\n<!-- hydraflow:sub-issue parent=7 phase=2 -->' },
      { number: 51, title: '[Phase 1]: P1', body: '' },
      { number: 52, title: 'Unrelated', body: null },
    ];
    const plan = reconcileSubIssues(specs, existing, 1);
    expect(plan.existing).toEqual([
      { phase: 1, number: 51 },
      { phase: 2, number: 50 },
    ]);
    expect(plan.create).toEqual([specs[2]]);
    expect(plan.create[0]).toBe(specs[2]);
    expect(plan.overCap).toEqual([specs[3]]);
    expect(reconcileSubIssues(specs, [], 0).create).toEqual([]);
  });

  it('upsertPhasesSection writes a task list in phase order, in place, idempotently', () => {
    const entries = [
      { phase: 2, number: 13, title: 'b', state: 'open' as const },
      { phase: 1, number: 12, title: 'a', state: 'closed' as const },
    ];
    const once = upsertPhasesSection('Body', entries);
    expect(once).toBe('Body\n\n## Phases\n<!-- hydraflow:phases -->\n- [x] #12\n- [ ] #13\n<!-- /hydraflow:phases -->');
    expect(upsertPhasesSection(once, entries)).toBe(once);
    const withTail = `${once}\n\nHuman tail`;
    expect(
      upsertPhasesSection(
        withTail,
        entries.map((e) => ({ ...e, state: 'closed' as const })),
      ),
    ).toBe(
      'Body\n\n## Phases\n<!-- hydraflow:phases -->\n- [x] #12\n- [x] #13\n<!-- /hydraflow:phases -->\n\nHuman tail',
    );
    expect(upsertPhasesSection('Body', [])).toBe('Body');
  });
});

describe('likelyAnswers', () => {
  const open = [
    { id: 'auth-method', title: 'Auth method?', text: 'Need to decide OAuth vs JWT for the login flow' },
    { id: 'retention', title: 'How long are exports kept?', text: 'Retention period for generated export files' },
  ];

  it('names an id, quotes a title or shares enough words', () => {
    expect(likelyAnswers('About id:retention — 30 days is enough.', open)).toEqual(['retention']);
    expect(likelyAnswers('For auth-method we go with OAuth, decided.', open)).toEqual(['auth-method']);
    expect(likelyAnswers('> How long are exports kept?\n\nThirty days, then delete.', open)).toEqual(['retention']);
    expect(likelyAnswers('Let us use JWT tokens in the login flow from now on.', open)).toEqual(['auth-method']);
    expect(likelyAnswers('Exports should be kept for a week; older export files get removed.', open)).toEqual([
      'retention',
    ]);
  });

  it('with one question open, any substantive non-question comment counts', () => {
    expect(likelyAnswers('We talked about it on the call: go ahead with plan B.', open.slice(0, 1))).toEqual([
      'auth-method',
    ]);
  });

  it('ignores commands, reactions, short comments, questions and unrelated text', () => {
    for (const c of [
      '',
      '/groom',
      '+1',
      'thanks!',
      'Thank you so much!',
      'lgtm 👍',
      '👍🎉',
      'ok, will do',
      'Looks good to me!',
    ]) {
      expect(likelyAnswers(c, open.slice(0, 1)), c).toEqual([]);
    }
    expect(likelyAnswers('What do you mean by id:auth-method? Which one?', open)).toEqual([]);
    expect(likelyAnswers('I will be on holiday next week, back on Monday.', open)).toEqual([]);
    expect(likelyAnswers('> Auth method?\n\nhm', open)).toEqual([]);
    expect(likelyAnswers('Anything about the method here', open)).toEqual([]);
  });
});

describe('materialBodyEdit', () => {
  const base = `The exporter should write CSV files for every account in the admin panel nightly.\n\n${section(AUTH_PENDING)}`;

  it('a newly ticked question is material', () => {
    const edit = materialBodyEdit(base, base.replace('- [ ] **Auth', '- [x] **Auth'));
    expect(edit).toEqual({ material: true, reason: 'question ticked: auth-method', newlyChecked: ['auth-method'] });
  });

  it('changes to HydraFlow’s sections, whitespace, case, punctuation or a typo are not', () => {
    const cases = [
      base.replace(AUTH_PENDING, '- [ ] **Other** - text _(qa)_ `id:other`'),
      base.replace(' every ', '   every\n'),
      base.replace('CSV', 'csv').replace('nightly.', 'nightly!'),
      base.replace('exporter', 'exportr'),
      `${base}\n\n## Phases\n<!-- hydraflow:phases -->\n- [ ] #3\n<!-- /hydraflow:phases -->`,
      base.replace('- [ ] **Auth', '- [x] **Auth').replace('- [x] **Auth', '- [ ] **Auth'),
    ];
    for (const after of cases) {
      const edit = materialBodyEdit(base, after);
      expect(edit.material, after).toBe(false);
      expect(edit.newlyChecked).toEqual([]);
    }
  });

  it('a change of 3 words, or 10% of a short text, is material', () => {
    expect(materialBodyEdit(base, base.replace('CSV files', 'JSON lines documents')).material).toBe(true);
    expect(materialBodyEdit(base, base.replace('nightly', 'hourly, but only on weekdays,')).material).toBe(true);
    expect(materialBodyEdit('Add a dark mode toggle', 'Add a light mode toggle').material).toBe(true);
    expect(materialBodyEdit(base, `Totally different text.\n\n${'word '.repeat(500)}`)).toMatchObject({
      material: true,
      reason: 'the text changed substantially',
    });
  });
});

describe('record and incremental re-run', () => {
  const at = '2026-01-02T03:04:05.000Z';
  const record: GroomRecord = {
    runs: 1,
    decision: 'needs_info',
    decidedAt: at,
    bodyHash: 'a'.repeat(64),
    inputHash: 'b'.repeat(64),
    dataHash: 'c'.repeat(64),
    agents: {
      pm: { ready: true, confidence: 'high', failed: false, at },
      engineer: { ready: false, confidence: 'high', failed: false, at },
      qa: { ready: false, confidence: 'low', failed: true, at },
      research: { ready: true, confidence: 'medium', failed: false, at },
    },
    openQuestionIds: ['auth-method'],
    subIssues: [{ phase: 1, number: 12 }],
  };

  it('the record holds no free text and fits the signed state', () => {
    expect(groomRecordSchema.safeParse(record).success).toBe(true);
    expect(groomRecordSchema.safeParse({ ...record, openQuestionIds: ['Not a slug!'] }).success).toBe(false);
    expect(groomRecordSchema.safeParse({ ...record, dataHash: '' }).success).toBe(false);
    const state = { ...emptyState(5, 1), groom: record };
    const decoded = decodeStateBlock(encodeStateBlock(state, { key: 'k' }), { key: 'k', issue: 5 });
    expect(decoded).toEqual({ status: 'valid', state });
  });

  it('groomBodyHash ignores HydraFlow’s sections and whitespace', () => {
    const body = 'Do the thing.\nNow.';
    const withSections = upsertPhasesSection(
      upsertQuestionsSection(`Do the  thing.\n\nNow.`, [{ id: 'x', title: 'X?', checked: false }]),
      [{ phase: 1, number: 2, state: 'open' }],
    );
    expect(groomBodyHash(withSections)).toBe(groomBodyHash(body));
    expect(groomBodyHash(body)).toMatch(/^[0-9a-f]{64}$/);
    expect(groomBodyHash('Do the other thing.')).not.toBe(groomBodyHash(body));
  });

  it('everyone runs without a record or when the body changed', () => {
    const names = ['pm', 'engineer'];
    const opts = { bodyChanged: false, answeredIds: [], openQuestions: [] };
    expect(agentsToRerun(undefined, names, opts)).toEqual({ run: names, reuse: [] });
    expect(agentsToRerun(record, names, { ...opts, bodyChanged: true })).toEqual({ run: names, reuse: [] });
  });

  it('new, failed and not-ready agents run again; ready ones are reused unless a question they asked is open', () => {
    const names = ['pm', 'engineer', 'qa', 'research', 'security'];
    expect(agentsToRerun(record, names, { bodyChanged: false, answeredIds: [], openQuestions: [] })).toEqual({
      run: ['engineer', 'qa', 'security'],
      reuse: ['pm', 'research'],
    });
    const open = [{ id: 'auth-method', sources: ['research'] }, { title: 'no id' } as { id?: string }];
    expect(agentsToRerun(record, names, { bodyChanged: false, answeredIds: [], openQuestions: open }).run).toEqual([
      'engineer',
      'qa',
      'research',
      'security',
    ]);
    expect(
      agentsToRerun(record, names, { bodyChanged: false, answeredIds: ['auth-method'], openQuestions: open }).reuse,
    ).toEqual(['pm', 'research']);
  });
});

describe('groom data block', () => {
  const verdicts: Record<string, AgentVerdict> = {
    pm: verdict({ questions: ['Who pays? --> <!-- @octocat'] }),
    engineer: verdict({
      ready: false,
      confidence: 'high',
      recommended_phases: [{ phase_number: 1, title: 'Ünïcode ✓', description: 'x' }],
    }),
  };

  it('round-trips through a comment, escaped so it cannot end the comment early', () => {
    const { block, hash } = renderGroomData(verdicts);
    expect(block).toMatch(/^<!-- hydraflow:groom-data sha256=[0-9a-f]{64} \{[\x20-\x7e]*\} -->$/);
    expect(block.slice(4, -3)).not.toContain('--');
    const body = `Progress text\n\n${block}\n\n<!-- hydraflow:state v=1 sig=none {} -->`;
    expect(readGroomData(body, hash)).toEqual(verdicts);
  });

  it('refuses a tampered block, another hash, a missing block or invalid verdicts', () => {
    const { block, hash } = renderGroomData(verdicts);
    expect(readGroomData(block.replace('Who pays', 'Who owns'), hash)).toBeUndefined();
    expect(readGroomData(block, 'f'.repeat(64))).toBeUndefined();
    expect(readGroomData('no block', hash)).toBeUndefined();
    expect(readGroomData(undefined, hash)).toBeUndefined();
    const bad = renderGroomData({ pm: { ...verdict(), confidence: 'sure' } as unknown as AgentVerdict });
    expect(readGroomData(bad.block, bad.hash)).toBeUndefined();
  });
});
