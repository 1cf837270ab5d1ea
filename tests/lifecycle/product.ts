/**
 * The product track as a user meets it (issue #18, docs/adr/0012-product-track.md), in the lifecycle world: a vague
 * issue is triaged as vague, researched (the discovery brief), shaped into three directions, a human picks B and says
 * "just the MVP", the choice is finalized, planned into sub-issues, and phase 1 is implemented, reviewed and merged.
 * A second vague issue's shape prompt then carries the recalled preference. These are the RECORDED model answers of
 * that journey, shared by tests/lifecycle/product.e2e.test.ts and part 4 of `pnpm demo` (scripts/demo.ts).
 */
import type { DiscoverBrief, ShapeDirection } from '@hydraflow/core';
import type { ParsedRequest, Script, ScriptEntry } from '@hydraflow/testkit';
import { AVERAGE_GOOD, averagePlan, implementAverage, planAccepted, reviewClean } from './scenario';

/** The first vague issue: a product intent, no behaviour asked for, one question left open. */
export const STATS_INTENT = {
  title: 'Make the number helpers more useful',
  body: 'People keep asking for statistics on their data and end up writing them by hand around sum(). We should do something about it. Do we need a whole stats module?',
};

/** The second vague issue, opened after the first was shaped: its shape prompt recalls the first one's preference. */
export const STRINGS_INTENT = {
  title: 'Make the string helpers friendlier',
  body: 'slugify and capitalize feel too limited; people wrap them in their own code. Make them better.',
};

/**
 * The human's reply to the directions: picks B by its letter (a clause that is nothing but the letter) and narrows
 * the scope (`scope_narrow`: "just", "MVP").
 */
export const PICK_B = 'B, just the MVP for now please.';

const vague = (enrichment: string): ScriptEntry => ({
  json: {
    clarity_score: 3,
    complexity_score: 5,
    needs_discovery: true,
    enrichment,
    reasons: ['A product intent: no concrete behaviour is asked for.', 'Which helpers, and how many, is open.'],
  },
});

export const triageStatsVague = vague('Product intent around src/numbers.js (sum, clamp): which statistics is open.');
export const triageStringsVague = vague('Product intent around src/strings.js (slugify, capitalize).');

export const statsBrief: DiscoverBrief = {
  summary:
    'Users compute statistics over lists of numbers by hand around sum(): means and medians are rewritten in every project, with the empty list handled differently each time.',
  existing_solutions: [
    {
      name: 'sum() in src/numbers.js',
      what: 'The total of a list, 0 for an empty list; the only aggregate the helpers offer.',
      gap: 'No mean, median or spread: users derive them by hand, and the empty list is where they differ.',
    },
    {
      name: 'simple-statistics (npm)',
      what: 'A full statistics library: dozens of functions, from mean to regression.',
      gap: 'A dependency far larger than the few helpers people ask for; this package has none today.',
    },
  ],
  user_needs: [
    'The arithmetic mean of a list, 0 for an empty list like sum().',
    'The median of a list, for data with outliers.',
    'Knowing from the README which helpers exist and what they return for an empty list.',
  ],
  opportunities: [
    'Add average() and median() next to sum(), reusing it, with the empty-list rule of sum().',
    'A separate stats module (variance, percentiles) if the demand grows.',
  ],
  open_questions: [
    'Do we need a whole stats module, or are a few helpers next to sum() enough?',
    'Should median() of an even-length list average the two middle values?',
  ],
  sources: [
    { title: 'The number helpers', where: 'src/numbers.js' },
    { title: 'The helper list in the README', where: 'README.md' },
  ],
};

export const stringsBrief: DiscoverBrief = {
  summary:
    'Users wrap slugify() and capitalize() in their own code because both stop short: no custom separator, no title case.',
  existing_solutions: [
    {
      name: 'slugify() and capitalize() in src/strings.js',
      what: 'A dash-joined lower-case slug; the first letter of one word upper-cased.',
      gap: 'No separator option, nothing for several words.',
    },
  ],
  user_needs: ['A slug with a separator of their choice.', 'Title case for a whole sentence.'],
  opportunities: ['An options argument for slugify(); a titleCase() helper built on capitalize().'],
  open_questions: ['Which separators must slugify() accept besides the dash?'],
  sources: [{ title: 'The string helpers', where: 'src/strings.js' }],
};

/** The shape agent's three directions for the first issue: A the whole module, B the MVP, C defer. */
export const STATS_DIRECTIONS: ShapeDirection[] = [
  {
    letter: 'A',
    name: 'Full Stats Module',
    scope:
      'A new src/stats.js with average, median, mode, variance, standard deviation and percentiles, exported and documented.',
    tradeoffs: 'Answers every request at once; the largest change, and most of it nobody has asked for yet.',
    size: 'L',
    defer: false,
  },
  {
    letter: 'B',
    name: 'Quick & Focused',
    scope:
      'average() and median() next to sum() in src/numbers.js, with the empty-list rule of sum(), exported, tested and listed in the README. Nothing else.',
    tradeoffs: 'Ships the two helpers people ask for in a few small steps; spread and percentiles wait for demand.',
    size: 'S',
    defer: false,
  },
  {
    letter: 'C',
    name: 'Defer',
    scope: 'Add nothing; point users to simple-statistics in the README.',
    tradeoffs: 'No code to maintain; users keep a dependency or their own helpers.',
    size: 'XS',
    defer: true,
  },
];

/** The second issue's directions (it is never decided in the journey: only its shape prompt matters). */
export const STRINGS_DIRECTIONS: ShapeDirection[] = [
  {
    letter: 'A',
    name: 'Options for slugify',
    scope: 'slugify(text, { separator }) with the dash as default; tests and README.',
    tradeoffs: 'Small and backwards compatible; title case stays missing.',
    size: 'S',
    defer: false,
  },
  {
    letter: 'B',
    name: 'String toolkit',
    scope: 'slugify options, titleCase(), camelCase() and kebabCase(), tested and documented.',
    tradeoffs: 'Covers the requests and more; four new functions to maintain.',
    size: 'M',
    defer: false,
  },
  {
    letter: 'C',
    name: 'Defer',
    scope: 'Add nothing for now.',
    tradeoffs: 'Nothing to maintain; users keep their wrappers.',
    size: 'XS',
    defer: true,
  },
];

/**
 * The product plan's sub-issues for direction B (ADR-0031: 3–8 concrete ones). Phase 1 is the clear lifecycle's
 * average() (tests/lifecycle/scenario.ts), so its recorded plan and coding session are reused as they are.
 */
export const STATS_SUB_ISSUES = [
  {
    phase_number: 1,
    title: 'Add average(numbers)',
    description: 'The arithmetic mean of a list of numbers, 0 for an empty list like sum(), exported and tested.',
    affected_areas: [
      { path: 'src/numbers.js', change: 'modify', note: 'average() next to sum()' },
      { path: 'src/index.js', change: 'modify', note: 'export it' },
      { path: 'test/average.test.js', change: 'add' },
    ],
    todos: [
      { text: 'Implement average with sum', manual: false },
      { text: 'Test the empty list', manual: false },
    ],
  },
  {
    phase_number: 2,
    title: 'Add median(numbers)',
    description: 'The middle value (the mean of the two middle ones for an even count), 0 for an empty list.',
    affected_areas: [
      { path: 'src/numbers.js', change: 'modify' },
      { path: 'src/index.js', change: 'modify' },
    ],
    todos: [{ text: 'Test odd, even and empty lists', manual: false }],
    depends_on: [1],
  },
  {
    phase_number: 3,
    title: 'List average and median in the README',
    description: 'The README lists both helpers with their empty-list rule, next to sum().',
    affected_areas: [{ path: 'README.md', change: 'modify' }],
    todos: [{ text: 'Check the README renders', manual: true }],
    depends_on: [1, 2],
  },
];

export const MEDIAN_SOURCE = `/** The middle value of a list of numbers (the mean of the two middle ones for an even count; 0 for an empty list). */
export function median(numbers) {
  if (numbers.length === 0) return 0;
  const sorted = [...numbers].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
`;

/** Phase 2's plan: median() after average(), once phase 1 merged. */
export const medianPlan: ScriptEntry = {
  json: {
    summary: 'Add median(numbers) to src/numbers.js after average, export and test it.',
    goal: 'median(numbers) returns the middle value (the mean of the two middle ones for an even count), 0 for [].',
    approach: 'Sort a copy in src/numbers.js; export from src/index.js; test in test/median.test.js.',
    files_to_touch: [
      { path: 'src/numbers.js', action: 'modify', change: 'Add median().' },
      { path: 'src/index.js', action: 'modify', change: 'Export median.' },
      { path: 'test/median.test.js', action: 'create', change: 'Tests for median.' },
    ],
    test_plan: ['median([3, 1, 2]) is 2', 'median([4, 1, 3, 2]) is 2.5', 'median([]) is 0'],
    risks: [{ risk: 'Sorting the caller’s array in place', mitigation: 'Sort a copy' }],
    acceptance_criteria: ['median is exported', 'the tests pass'],
  },
};

/** Phase 2's recorded coding session: median() after the merged average(), the export, a test file, the tests. */
export const implementMedian: ScriptEntry[] = [
  {
    toolCalls: [
      {
        name: 'edit_file',
        input: { path: 'src/numbers.js', old_string: AVERAGE_GOOD, new_string: `${AVERAGE_GOOD}\n${MEDIAN_SOURCE}` },
      },
      {
        name: 'edit_file',
        input: {
          path: 'src/index.js',
          old_string: "export { clamp, sum, average } from './numbers.js';",
          new_string: "export { clamp, sum, average, median } from './numbers.js';",
        },
      },
      {
        name: 'write_file',
        input: {
          path: 'test/median.test.js',
          content:
            "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { median } from '../src/index.js';\n\ntest('median is the middle value, 0 for an empty list', () => {\n  assert.equal(median([3, 1, 2]), 2);\n  assert.equal(median([4, 1, 3, 2]), 2.5);\n  assert.equal(median([]), 0);\n});\n",
        },
      },
    ],
  },
  { toolCalls: [{ name: 'run_command', input: { name: 'test' } }] },
  { text: 'Added median(numbers) after average, exported and tested.' },
];

/** The discover agent: searches the issues once, then submits the brief. */
function researcher(brief: DiscoverBrief, query: string) {
  return (request: ParsedRequest): ScriptEntry =>
    request.toolResults.length === 0
      ? { toolCalls: [{ name: 'search_issues', input: { query } }] }
      : { toolCalls: [{ name: 'submit_brief', input: brief }] };
}

/**
 * Which of the two vague issues a request is about, whatever its number: by its title in the system prompt or the
 * first message (not in tool results: a search from the second issue finds the first).
 */
const isStrings = (request: ParsedRequest) =>
  `${request.system}\n${request.messages[0]?.content ?? ''}`.includes(STRINGS_INTENT.title);

/**
 * Every recorded answer of the journey. The shape, plan (product-track decomposition) and memory answers are the
 * contract's data (STATS_DIRECTIONS, STATS_SUB_ISSUES); how each is delivered follows the landed phase.
 */
export function productJourneyScript(): Script {
  return {
    triage: (request) => (isStrings(request) ? triageStringsVague : triageStatsVague),
    discover: (request) =>
      isStrings(request)
        ? researcher(stringsBrief, 'string helpers')(request)
        : researcher(statsBrief, 'statistics')(request),
    shape: (request) => ({
      json: { reply: '', directions: isStrings(request) ? STRINGS_DIRECTIONS : STATS_DIRECTIONS },
    }),
    // The product plan (its output schema asks for sub_issues) splits direction B; the sub-issue's plan and session
    // are the clear lifecycle's: phase 1 is average().
    plan: (request) =>
      JSON.stringify(request.schema ?? {}).includes('sub_issues')
        ? {
            json: {
              summary: 'Direction B in three phases: average, median, the README.',
              sub_issues: STATS_SUB_ISSUES,
            },
          }
        : averagePlan,
    plan_review: planAccepted,
    implement: implementAverage(AVERAGE_GOOD),
    // Phase 2 (sub-issue #3 in the journey: the parent is #1, its phases #2–#4) starts on its own once phase 1 merged.
    'plan#3': medianPlan,
    'implement#3': implementMedian,
    // Spec-match: a product-track pull request's review also answers whether it matches the chosen direction.
    review: (request) =>
      JSON.stringify(request.schema ?? {}).includes('spec_mismatches')
        ? { json: { ...reviewClean.json, spec_mismatches: [] } }
        : reviewClean,
  };
}
