/**
 * The discover phase's recorded answers for worlds that follow a vague triage into discovery: the research agent
 * submits a complete brief at once (it asks nothing of an issue whose text asks no question).
 */
import type { DiscoverBrief, ShapeDirection } from '@hydraflow/core';

/** Triage's verdict on a vague product intent: it routes the issue to discovery. */
export const vague = {
  clarity_score: 3,
  complexity_score: 5,
  needs_discovery: true,
  enrichment: 'A product intent: needs research.',
  reasons: ['No concrete behaviour is asked for.'],
};

export const completeBrief: DiscoverBrief = {
  summary: 'New users install the CLI and do not know which command to run first, so many give up early.',
  existing_solutions: [
    {
      name: 'The README quick start',
      what: 'Lists three commands to run after installing.',
      gap: 'Nobody reads it from the terminal; it is out of date.',
    },
  ],
  user_needs: ['See the next useful command right after installing.'],
  opportunities: ['Print a short getting-started hint on the first run of the CLI.'],
  open_questions: ['Should we add an interactive tour, or is a first-run hint enough?'],
  sources: [{ title: 'README quick start section', where: 'README.md' }],
};

/** A direction the scripted shape agent proposes (the tests, the property worlds and the bench share these). */
export const direction = (
  letter: ShapeDirection['letter'],
  name: string,
  size: ShapeDirection['size'],
  defer = false,
): ShapeDirection => ({
  letter,
  name,
  scope: `${name}: the first-run experience of the CLI, nothing else.`,
  tradeoffs: `${name}: quick to ship against how much it helps.`,
  size,
  defer,
});

/** The shape agent's directions after that brief (tests/shape.e2e.test.ts has the conversation). */
export const shapedDirections: ShapeDirection[] = [
  direction('A', 'First-Run Hint', 'S'),
  direction('B', 'Quick & Focused', 'M'),
  direction('C', 'Guided Tour', 'L'),
];

/**
 * Script entries for the product track that follows a vague triage: discovery in one turn (the brief), then shape's
 * directions (the issue then waits at hydraflow-shape for a human).
 */
export const discoverScript = {
  discover: { toolCalls: [{ name: 'submit_brief', input: completeBrief }] },
  shape: { json: { reply: '', directions: shapedDirections } },
};
