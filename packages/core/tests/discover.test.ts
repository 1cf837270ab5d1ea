import { describe, expect, it } from 'vitest';
import {
  BRIEF_MARKER,
  briefGaps,
  briefHash,
  discoverBriefSchema,
  openQuestionsOf,
  readBriefData,
  renderBriefComment,
  type DiscoverBrief,
} from '../src/index';

const brief: DiscoverBrief = {
  summary: 'New users install the CLI and do not know which command to run first, so many give up early.',
  existing_solutions: [{ name: 'README', what: 'Lists three commands to run.', gap: 'Nobody reads it in a terminal.' }],
  user_needs: ['See the next useful command right after installing.'],
  opportunities: ['Print a getting-started hint on the first run.'],
  open_questions: ['Should we add an interactive tour, or is a hint enough?'],
  sources: [{ title: 'README quick start', where: 'README.md' }],
};

describe('the discovery brief', () => {
  it('finds the questions an issue leaves open, outside code blocks', () => {
    expect(
      openQuestionsOf('Users get lost. Should we add a tour?\n\n```\nwhy?\n```\n- Which platforms first?'),
    ).toEqual(['Should we add a tour?', 'Which platforms first?']);
  });

  it('is complete when every section says something and carries the issue’s questions', () => {
    expect(briefGaps(brief, 'Make onboarding better\nShould we add an interactive tour?')).toEqual([]);
    expect(briefGaps({ ...brief, opportunities: [], sources: [{ title: 'x', where: 'y' }] }, 'Onboarding')).toEqual([
      'opportunities is empty',
      'sources has an item that says nothing (12 characters at least)',
    ]);
    expect(briefGaps({ ...brief, open_questions: ['Colours of the prompt?'] }, 'Should we add a tour?')).toEqual([
      'the issue\'s question "Should we add a tour?" is not an open question',
    ]);
  });

  it('renders one comment with its marker, and model text that GitHub does not act on', () => {
    const body = renderBriefComment(
      { ...brief, user_needs: ['@alice wants <!-- hydraflow:state --> links'] },
      {
        attempts: 2,
        gaps: ['opportunities is empty'],
      },
    );
    expect(body.startsWith(BRIEF_MARKER)).toBe(true);
    // the visible text; the hidden data block (an HTML comment GitHub renders nothing of) keeps the brief as written
    const visible = body.replace(/<!-- hydraflow:brief-data [^\n]*-->/, '');
    expect(visible).not.toContain('@alice');
    expect(visible).not.toContain('<!-- hydraflow:state');
    expect(body.match(/<!-- hydraflow:state/g) ?? []).toEqual([]);
    expect(body).toContain('redone once');
  });

  it('carries the brief in a hidden data block that shape reads back through the hash in the signed state', () => {
    const body = renderBriefComment(brief, { attempts: 1, gaps: [] });
    expect(readBriefData(body, briefHash(brief))).toEqual(brief);
    expect(readBriefData(body, briefHash({ ...brief, summary: 'other' }))).toBeUndefined();
    expect(readBriefData(body.replaceAll('interactive tour', 'interactive tout'), briefHash(brief))).toBeUndefined();
  });

  it('is hashed canonically and validated strictly', () => {
    const reordered = Object.fromEntries(Object.entries(brief).reverse()) as DiscoverBrief;
    expect(briefHash(reordered)).toBe(briefHash(brief));
    expect(discoverBriefSchema.safeParse({ ...brief, extra: 1 }).success).toBe(false);
  });
});
