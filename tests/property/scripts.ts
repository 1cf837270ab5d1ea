/**
 * The model's answers in a history, drawn from generators seeded by the history (so a failure replays): triage's
 * verdicts, the plan and its review, grooming, discovery's brief, the coding agent's session and the reviewer's
 * verdicts.
 */
import type { Script, ScriptEntry } from '@hydraflow/testkit';
import { planCreatingFiles } from '../support/plans';
import { groomReady } from '../lifecycle/grooming';
import { planAccepted } from '../lifecycle/scenario';
import { completeBrief, direction, shapedDirections } from '../support/briefs';

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CLEAR = {
  clarity_score: 9,
  complexity_score: 2,
  needs_discovery: false,
  enrichment: 'Touches the users endpoint.',
  reasons: ['Scored by the property test.'],
};

const VAGUE = {
  clarity_score: 3,
  complexity_score: 5,
  needs_discovery: true,
  enrichment: 'Product intent; needs research.',
  reasons: ['Scored by the property test.'],
};

/** A random but valid verdict (clear → plan, vague → discover), sometimes junk (twice in a row → HITL). */
function triageScript(seed: number): () => ScriptEntry {
  const random = mulberry32(seed);
  return () => {
    if (random() < 0.3) return { fault: 'junk' };
    const clear = random() < 0.5;
    return {
      json: {
        clarity_score: clear ? 8 + Math.floor(random() * 3) : Math.floor(random() * 7),
        complexity_score: Math.floor(random() * 11),
        needs_discovery: !clear && random() < 0.5,
        enrichment: clear ? 'Touches the users endpoint.' : 'Product intent; needs research.',
        reasons: ['Scored by the property test.'],
      },
    };
  };
}

/**
 * The plan phase's answers, for the triage runs that go on into planning in the same run (a clear verdict on the
 * routing step): mostly a plan the reviewer accepts, sometimes junk from either (the plan escalates to a human).
 */
function planScripts(seed: number, junk: number): { plan: () => ScriptEntry; plan_review: () => ScriptEntry } {
  const random = mulberry32(seed ^ 0x5eed);
  return {
    plan: () => (random() < junk ? { fault: 'junk' } : planCreatingFiles),
    plan_review: () => (random() < junk ? { fault: 'junk' } : planAccepted),
  };
}

/**
 * The coding agent: writes the file the plan names, with content of its own each session (so every push is a new
 * head), then says it is done.
 */
function implementScript(): (request: { toolResults: { name: string | undefined }[] }) => ScriptEntry {
  let sessions = 0;
  return (request) =>
    request.toolResults.some((r) => r.name === 'write_file')
      ? { text: 'Wrote src/change.js.' }
      : {
          toolCalls: [
            { name: 'write_file', input: { path: 'src/change.js', content: `export const change = ${++sessions};\n` } },
          ],
        };
}

const REVIEW_CLEAN = { json: { summary: 'Small and matches the plan.', findings: [] } };
const REVIEW_CRITICAL = {
  json: {
    summary: 'One problem.',
    findings: [
      {
        severity: 'critical',
        path: 'src/change.js',
        line: 1,
        title: 'The change is not what the plan says',
        recommendation: 'Follow the plan.',
        needs_human_decision: false,
      },
    ],
  },
};

/** The reviewer: mostly approves, sometimes asks for changes (a refine round: a new head), rarely junk. */
function reviewScript(seed: number): () => ScriptEntry {
  const random = mulberry32(seed ^ 0x7e71e3);
  return () => {
    const r = random();
    return r < 0.65 ? REVIEW_CLEAN : r < 0.92 ? REVIEW_CRITICAL : { fault: 'junk' };
  };
}

/**
 * The research agent: mostly the complete brief at once; sometimes a brief with gaps (redone once with the gaps named:
 * then complete, or still short, which goes to a human); sometimes junk (no brief: a human). Discovery's own cases are
 * tests/discover.e2e.test.ts.
 */
function discoverScript(seed: number): (request: { messages: { content: string }[] }) => ScriptEntry {
  const random = mulberry32(seed ^ 0xd15c0);
  const submit = (brief: unknown): ScriptEntry => ({ toolCalls: [{ name: 'submit_brief', input: brief }] });
  const gappy = { ...completeBrief, opportunities: [] };
  return (request) => {
    const redo = request.messages.some((m) => m.content.includes('It falls short'));
    const r = random();
    if (redo) return submit(r < 0.6 ? completeBrief : gappy);
    return r < 0.75 ? submit(completeBrief) : r < 0.9 ? submit(gappy) : { fault: 'junk' };
  };
}

/** The names a history's replies choose by (people.ts' replies: "B", "Direction B", "go with Quick & Focused"). */
const FIRST = shapedDirections;
const REVISED = [
  direction('A', 'First-Run Hint', 'S'),
  direction('B', 'Quick & Focused', 'M'),
  direction('C', 'Not Now', 'XS', true),
];

/**
 * The shape agent: three directions on the first turn; an answer and revised directions (B keeps its name) on a turn
 * that answers a human's reply (its prompt carries the conversation). Shape's own cases are tests/shape.e2e.test.ts.
 */
function shapeScript(): (request: { messages: { content: string }[] }) => ScriptEntry {
  return (request) =>
    request.messages[0]?.content.includes('# Conversation so far')
      ? { json: { reply: 'A tour costs a lot; here is a cheaper mix.', directions: REVISED } }
      : { json: { reply: '', directions: FIRST } };
}

/** Every role a history's runs may call. `clear`: every issue is clear and every plan accepted (pull request worlds). */
export function historyScript(seed: number, options: { clear?: boolean; vague?: boolean } = {}): Script {
  return {
    triage: options.clear ? { json: CLEAR } : options.vague ? { json: VAGUE } : triageScript(seed),
    ...planScripts(seed, options.clear ? 0 : 0.2),
    implement: implementScript(),
    review: reviewScript(seed),
    // /groom: every agent finds the issue ready (grooming's own histories are tests/lifecycle/grooming)
    ...groomReady(),
    shape: shapeScript(),
    discover: options.clear ? { toolCalls: [{ name: 'submit_brief', input: completeBrief }] } : discoverScript(seed),
  };
}
