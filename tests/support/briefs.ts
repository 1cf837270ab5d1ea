/**
 * The discover phase's recorded answers for worlds that follow a vague triage into discovery: the research agent
 * submits a complete brief at once (it asks nothing of an issue whose text asks no question).
 */
import type { DiscoverBrief } from '@hydraflow/core';

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

/** Script entries for the discovery that follows a vague triage: one turn, the brief. */
export const discoverScript = { discover: { toolCalls: [{ name: 'submit_brief', input: completeBrief }] } };
