/**
 * Recorded grooming sessions on the sample repository (packages/testkit/src/sample-repo), shared by the grooming tests,
 * the lifecycle scenarios, `pnpm bench` and `pnpm demo`. Agents are scripted the way a model answers through
 * HydraFlow's tools: explorers read code or search issues first, then every agent calls submit_verdict and the summary
 * calls submit_summary. Answers that depend on the issue's discussion are functions of the request, so a re-run after
 * a human answered sees a different (recorded) answer, as it would from a real model.
 */
import type { ParsedRequest, Script, ScriptEntry } from '@hydraflow/testkit';

/** A complex issue (triage sends it to grooming), small enough for the sample project. */
export const STATS_ISSUE = {
  title: 'Statistics helpers: average, median and a describe() summary',
  body: [
    'Reports need basic statistics of a list of numbers. Add to src/numbers.js:',
    '',
    '- `average(numbers)`: the arithmetic mean, 0 for an empty list;',
    '- `median(numbers)`: the middle value (the mean of the two middle values for an even count), 0 for an empty list;',
    '- `describe(numbers)`: `{ count, min, max, average, median }`.',
    '',
    'Export them from src/index.js, test each one, and document them in the README.',
  ].join('\n'),
};

/** A small issue with a real open question (what mode() returns on ties). */
export const MODE_ISSUE = {
  title: 'Add mode(numbers) to the number helpers',
  body: 'We need `mode(numbers)` next to `sum` in src/numbers.js: the most frequent value of a list. Export it from src/index.js and add tests.',
};

export const triageComplex: ScriptEntry = {
  json: {
    clarity_score: 8,
    complexity_score: 8,
    needs_discovery: false,
    enrichment: 'Three new helpers in src/numbers.js, exports, tests and README.',
    reasons: ['Clear behaviour for each helper.', 'Several functions, tests and docs: worth grooming first.'],
  },
};

export const triageModeComplex: ScriptEntry = {
  json: {
    clarity_score: 7,
    complexity_score: 7,
    needs_discovery: false,
    enrichment: 'A new helper in src/numbers.js.',
    reasons: ['The tie behaviour is not specified.'],
  },
};

type Verdict = {
  ready: boolean;
  confidence: 'low' | 'medium' | 'high';
  assessment: string;
  questions: string[];
  recommended_phases?: unknown[];
};

const submit = (verdict: Verdict): ScriptEntry => ({
  toolCalls: [{ name: 'submit_verdict', input: { recommended_phases: [], ...verdict } }],
});

/**
 * An explorer: looks at the code (or the issues) one tool call per turn, then gives its verdict. The turn is read
 * from the conversation, so parallel agents and re-runs each get the right answer.
 */
function explorer(looks: ScriptEntry[], verdict: (request: ParsedRequest) => Verdict, latencyMs = 0) {
  return (request: ParsedRequest): ScriptEntry => {
    const turn = request.toolResults.length;
    return { ...(turn < looks.length ? looks[turn]! : submit(verdict(request))), ...(latencyMs ? { latencyMs } : {}) };
  };
}

const readNumbers: ScriptEntry = { toolCalls: [{ name: 'read_file', input: { path: 'src/numbers.js' } }] };
const readTests: ScriptEntry = { toolCalls: [{ name: 'read_file', input: { path: 'test/numbers.test.js' } }] };
const searchIssues = (query: string): ScriptEntry => ({ toolCalls: [{ name: 'search_issues', input: { query } }] });

export const STATS_PHASES = [
  {
    phase_number: 1,
    title: 'Add average(numbers)',
    description: 'The arithmetic mean of a list of numbers, 0 for an empty list, exported and tested.',
    affected_areas: [
      { path: 'src/numbers.js', change: 'modify', note: 'average() next to sum()' },
      { path: 'src/index.js', change: 'modify', note: 'export it' },
      { path: 'test/numbers.test.js', change: 'modify' },
    ],
    todos: [
      { text: 'Implement average with sum', manual: false },
      { text: 'Test the empty list', manual: false },
    ],
  },
  {
    phase_number: 2,
    title: 'Add median(numbers) and describe(numbers)',
    description: 'median (even counts average the two middle values) and describe() built on average and median.',
    affected_areas: [
      { path: 'src/numbers.js', change: 'modify' },
      { path: 'README.md', change: 'modify', note: 'document the helpers' },
    ],
    todos: [
      { text: 'Implement median and describe', manual: false },
      { text: 'Check the README examples render', manual: true },
    ],
    depends_on: [1],
  },
];

export interface ReadyOptions {
  /** The engineer's recommended phases (none: one pull request). */
  phases?: unknown[];
  /** Scripted latency of every agent and summary answer, in ms (bench). */
  latencyMs?: number;
}

/** Every agent ready; the summary decides ready. */
export function groomReady(options: ReadyOptions = {}): Script {
  const latency = options.latencyMs ? { latencyMs: options.latencyMs } : {};
  const ready = (assessment: string): Verdict => ({ ready: true, confidence: 'high', assessment, questions: [] });
  return {
    groom_pm: { ...submit(ready('Clear problem, success criteria in the issue, no product dependency.')), ...latency },
    groom_qa: { ...submit(ready('Each helper has testable behaviour, the empty list included.')), ...latency },
    groom_engineer: explorer(
      [readNumbers, readTests],
      () => ({
        ...ready(
          'src/numbers.js holds clamp() and sum() as plain exported functions; average, median and describe fit next to them, reusing sum(). test/numbers.test.js uses node:test with assert/strict, so each helper gets a test there. No architecture decision is needed; the only subtle case is the empty list, which the issue specifies (0).',
        ),
        recommended_phases: options.phases ?? [],
      }),
      options.latencyMs,
    ),
    groom_research: explorer(
      [searchIssues('statistics average')],
      () => ready('No related issue or pull request; no third-party dependency.'),
      options.latencyMs,
    ),
    groom_summary: {
      toolCalls: [
        {
          name: 'submit_summary',
          input: {
            summary:
              'The issue asks for three helpers in src/numbers.js — average, median and describe — with the empty list specified (0) for each, exports from src/index.js, tests and README documentation. The engineer found plain exported functions next to sum() and node:test tests to extend; research found no related issue, pull request or dependency; QA can test every case named, including even-length lists for median; the product intent and success criteria are explicit.',
            decision: 'ready',
            decision_rationale:
              'All four agents are ready with high confidence and raised no question; nothing in the comments is open. The work fits the existing module and test layout, so planning can start now.',
            consolidated_questions: [],
            answered_questions: [],
            blocker_reason: null,
          },
        },
      ],
      ...latency,
    },
  };
}

export const TIES_ANSWER = 'On ties, return the smallest of the most frequent values.';

const tiesQuestion = {
  id: 'tie-behaviour',
  title: 'What does mode() return on ties?',
  description: 'Two values can be equally frequent: return the first, the smallest, or all of them?',
  sources: ['engineer', 'qa'],
  priority: 'critical',
} as const;

const emptyQuestion = {
  id: 'empty-list',
  title: 'What does mode([]) return?',
  description: 'sum([]) is 0; should mode([]) return undefined, 0 or throw?',
  sources: ['qa'],
  priority: 'important',
} as const;

const answered = (request: ParsedRequest) => request.system.includes(TIES_ANSWER);

/**
 * The question lifecycle: first run needs_info (ties, empty list); after alice answers ties in a comment and checks
 * the empty-list box herself, the summary marks ties answered and decides ready.
 */
export const MODE_PHASES = [
  {
    phase_number: 1,
    title: 'Add mode(numbers)',
    description:
      'The most frequent value, the smallest of them on ties, undefined for an empty list; exported and tested.',
    affected_areas: [{ path: 'src/numbers.js', change: 'modify' }],
    todos: [{ text: 'Count with a Map; pick the smallest on ties', manual: false }],
  },
  {
    phase_number: 2,
    title: 'Document mode() in the README',
    description: 'An example of mode(), ties included.',
    affected_areas: [{ path: 'README.md', change: 'modify' }],
    todos: [{ text: 'Proof-read the rendered README', manual: true }],
    depends_on: [1],
  },
];

export function groomModeQuestions(options: { phasesWhenReady?: unknown[] } = {}): Script {
  const ready = (assessment: string): Verdict => ({ ready: true, confidence: 'high', assessment, questions: [] });
  return {
    groom_pm: submit(ready('Clear need; mode() is a small addition.')),
    groom_research: explorer([searchIssues('mode numbers')], () => ready('Nothing related in the issues.')),
    groom_qa: (request) =>
      submit(
        answered(request)
          ? ready('Tie behaviour is now specified; testable.')
          : {
              ready: false,
              confidence: 'high',
              assessment: 'The tie case and the empty list are unspecified.',
              questions: [
                'What does mode() return when two values are equally frequent?',
                'What does mode([]) return?',
              ],
            },
      ),
    groom_engineer: explorer([readNumbers], (request) =>
      answered(request)
        ? {
            ...ready('Count with a Map, pick the smallest of the most frequent.'),
            recommended_phases: options.phasesWhenReady ?? [],
          }
        : {
            ready: false,
            confidence: 'medium',
            assessment: 'Straightforward except for ties.',
            questions: ['Which value should mode() return on ties?'],
          },
    ),
    groom_summary: (request) => ({
      toolCalls: [
        {
          name: 'submit_summary',
          input: answered(request)
            ? {
                summary: 'The tie behaviour was answered in the comments; the empty-list question was checked off.',
                decision: 'ready',
                decision_rationale: 'Every agent is ready; no question is open.',
                consolidated_questions: [],
                answered_questions: [
                  {
                    id: tiesQuestion.id,
                    title: tiesQuestion.title,
                    answer_summary: 'The smallest of the most frequent values (alice, in a comment)',
                  },
                ],
                blocker_reason: null,
              }
            : {
                summary: 'mode() is clear except for ties and the empty list.',
                decision: 'needs_info',
                decision_rationale: 'QA (high confidence) cannot write the tests without the tie behaviour.',
                consolidated_questions: [tiesQuestion, emptyQuestion],
                answered_questions: [],
                blocker_reason: null,
              },
        },
      ],
    }),
  };
}

/** Phase 2 of STATS_PHASES on the sample project, after phase 1 (average) merged. */
export const MEDIAN_DESCRIBE = `/** The middle value of a list of numbers (the mean of the two middle ones for an even count; 0 for an empty list). */
export function median(numbers) {
  if (numbers.length === 0) return 0;
  const sorted = [...numbers].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** count, min, max, average and median of a list of numbers. */
export function describe(numbers) {
  return {
    count: numbers.length,
    min: numbers.length ? Math.min(...numbers) : 0,
    max: numbers.length ? Math.max(...numbers) : 0,
    average: average(numbers),
    median: median(numbers),
  };
}
`;

export const medianPlan: ScriptEntry = {
  json: {
    summary: 'Add median(numbers) and describe(numbers) to src/numbers.js, export and test them.',
    goal: 'median is the middle value (mean of the two middle ones for even counts); describe summarises a list.',
    approach: 'Implement both after average in src/numbers.js; export from src/index.js; test in test/stats.test.js.',
    files_to_touch: [
      { path: 'src/numbers.js', action: 'modify', change: 'Add median() and describe().' },
      { path: 'src/index.js', action: 'modify', change: 'Export them.' },
      { path: 'test/stats.test.js', action: 'create', change: 'Tests.' },
    ],
    test_plan: ['median([3, 1, 2]) is 2', 'median([1, 2, 3, 4]) is 2.5', 'describe([]) has count 0'],
    risks: [{ risk: 'Sorting mutates the input', mitigation: 'Sort a copy' }],
    acceptance_criteria: ['median and describe are exported', 'the tests pass'],
  },
};

/** The implement agent's recorded session for phase 2: one edit after average, the export, a test file, the tests. */
export function implementMedian(averageSource: string): ScriptEntry[] {
  return [
    {
      toolCalls: [
        {
          name: 'edit_file',
          input: {
            path: 'src/numbers.js',
            old_string: averageSource,
            new_string: `${averageSource}\n${MEDIAN_DESCRIBE}`,
          },
        },
        {
          name: 'edit_file',
          input: {
            path: 'src/index.js',
            old_string: "export { clamp, sum, average } from './numbers.js';",
            new_string: "export { clamp, sum, average, median, describe } from './numbers.js';",
          },
        },
        {
          name: 'write_file',
          input: {
            path: 'test/stats.test.js',
            content:
              "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { median, describe } from '../src/index.js';\n\ntest('median', () => {\n  assert.equal(median([3, 1, 2]), 2);\n  assert.equal(median([1, 2, 3, 4]), 2.5);\n  assert.equal(median([]), 0);\n});\n\ntest('describe', () => {\n  assert.deepEqual(describe([1, 2, 3]), { count: 3, min: 1, max: 3, average: 2, median: 2 });\n});\n",
          },
        },
      ],
    },
    { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
    { text: 'Added median(numbers) and describe(numbers), exported and tested.' },
  ];
}

export const MODE_SOURCE = `/** The most frequent value of a list (the smallest of them on ties; undefined for an empty list). */
export function mode(numbers) {
  const counts = new Map();
  for (const n of numbers) counts.set(n, (counts.get(n) ?? 0) + 1);
  let best;
  for (const [n, c] of counts) if (best === undefined || c > counts.get(best) || (c === counts.get(best) && n < best)) best = n;
  return best;
}
`;

export const modePlan: ScriptEntry = {
  json: {
    summary: 'Add mode(numbers) to src/numbers.js (smallest value on ties), export and test it.',
    goal: 'mode returns the most frequent value, the smallest on ties, undefined for an empty list.',
    approach: 'Count with a Map in src/numbers.js; export from src/index.js; test in test/mode.test.js.',
    files_to_touch: [
      { path: 'src/numbers.js', action: 'modify', change: 'Add mode().' },
      { path: 'src/index.js', action: 'modify', change: 'Export mode.' },
      { path: 'test/mode.test.js', action: 'create', change: 'Tests.' },
    ],
    test_plan: ['mode([1, 2, 2]) is 2', 'mode([3, 1]) is 1 (tie)', 'mode([]) is undefined'],
    risks: [{ risk: 'Tie order', mitigation: 'Compare values explicitly' }],
    acceptance_criteria: ['mode is exported', 'the tests pass'],
  },
};

/** The implement agent's recorded session for MODE_ISSUE, as answered in grooming. */
export const implementMode: ScriptEntry[] = [
  {
    toolCalls: [
      {
        name: 'edit_file',
        input: {
          path: 'src/numbers.js',
          old_string: '/** The total of a list of numbers (0 for an empty list). */',
          new_string: `${MODE_SOURCE}\n/** The total of a list of numbers (0 for an empty list). */`,
        },
      },
      {
        name: 'edit_file',
        input: {
          path: 'src/index.js',
          old_string: "export { clamp, sum } from './numbers.js';",
          new_string: "export { clamp, sum, mode } from './numbers.js';",
        },
      },
      {
        name: 'write_file',
        input: {
          path: 'test/mode.test.js',
          content:
            "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mode } from '../src/index.js';\n\ntest('mode, smallest on ties', () => {\n  assert.equal(mode([1, 2, 2]), 2);\n  assert.equal(mode([3, 1]), 1);\n  assert.equal(mode([]), undefined);\n});\n",
        },
      },
    ],
  },
  { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
  { text: 'Added mode(numbers) (smallest on ties), exported and tested.' },
];
