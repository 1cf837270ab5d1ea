/**
 * The brief's completeness check, deterministic (docs/adr/0012-product-track.md): every section present and
 * non-trivial, and every question the issue left open carried as an open question. A brief with gaps is redone once
 * with the gaps named; still short, it goes to a human.
 */
import { issueKeywords } from '../plan/context';
import type { DiscoverBrief } from './brief';

/** An item shorter than this says nothing (a word, "TBD"). */
const TRIVIAL = 12;

/** The questions an issue's text leaves open: its sentences that end with a question mark. */
export function openQuestionsOf(text: string): string[] {
  const sentences = text
    .replace(/```[\s\S]*?```/g, ' ')
    .split(/(?<=[?.!])\s+|\n+/)
    .map((s) => s.replace(/^[\s>*\-#\d.)[\]x]+/i, '').trim());
  return [...new Set(sentences.filter((s) => s.endsWith('?') && issueKeywords(s).length > 0))].slice(0, 10);
}

/** Does one of the brief's questions carry `question`? At least half its significant words (two at most needed). */
function carried(question: string, asked: readonly string[]): boolean {
  const words = issueKeywords(question);
  const need = Math.min(2, Math.ceil(words.length / 2));
  return asked.some((a) => {
    const theirs = new Set(issueKeywords(a));
    return words.filter((w) => theirs.has(w)).length >= need;
  });
}

/** What the brief lacks, one line each; empty when complete. `issueText` is the issue's title and body. */
export function briefGaps(brief: DiscoverBrief, issueText: string): string[] {
  const gaps: string[] = [];
  if (brief.summary.trim().length < 40) gaps.push('the summary says too little (40 characters at least)');
  const sections: [string, readonly string[]][] = [
    ['existing_solutions', brief.existing_solutions.map((s) => `${s.what} ${s.gap}`)],
    ['user_needs', brief.user_needs],
    ['opportunities', brief.opportunities],
    ['open_questions', brief.open_questions],
    ['sources', brief.sources.map((s) => `${s.title} ${s.where}`)],
  ];
  for (const [name, items] of sections) {
    if (items.length === 0) gaps.push(`${name} is empty`);
    else if (items.some((i) => i.trim().length < TRIVIAL))
      gaps.push(`${name} has an item that says nothing (${TRIVIAL} characters at least)`);
  }
  for (const q of openQuestionsOf(issueText))
    if (!carried(q, brief.open_questions))
      gaps.push(`the issue's question "${q.slice(0, 120)}" is not an open question`);
  return gaps;
}
