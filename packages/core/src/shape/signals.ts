/**
 * The learning signals of a human's reply in shape (ADR-0031; docs/adr/0016-shape.md), read deterministically: whole
 * words or phrases, any case, outside quoted lines and code. No model judges them; they are recorded in the signed
 * state with the reply (`replies[].signals`) and become preference memories (memory.ts).
 */
import { SHAPE_SIGNALS, type ShapeSignal } from './record';

/** The words of each signal. Word boundaries on both sides: "only" is not in "commonly", "no" is not in "know". */
export const SIGNAL_WORDS: Readonly<Record<ShapeSignal, readonly string[]>> = {
  scope_narrow: ['just', 'only', 'mvp', 'minimal', 'minimum', 'smaller', 'simpler', 'narrow', 'keep it small'],
  scope_expand: [
    'also',
    'what about',
    'include',
    'includes',
    'including',
    'as well',
    'in addition',
    'expand',
    'broader',
  ],
  positive: ['like', 'love', 'great', 'good', 'perfect', 'nice', 'yes', 'agree'],
  negative: ['no', 'skip', 'drop', 'dislike', 'hate', "don't want", 'remove', 'not needed'],
};

const pattern = (phrase: string) =>
  new RegExp(`(?<![\\w'’])${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+')}(?![\\w'’])`, 'i');
const PATTERNS = Object.fromEntries(SHAPE_SIGNALS.map((s) => [s, SIGNAL_WORDS[s].map(pattern)])) as unknown as Record<
  ShapeSignal,
  RegExp[]
>;

/** The human's own words: quoted lines and code are someone else's. */
function ownWords(text: string): string {
  return text
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    .replace(/`[^`\n]*`/g, ' ')
    .split(/\r?\n/)
    .filter((line) => !/^\s*>/.test(line))
    .join('\n');
}

/** The signals of `text`, in SHAPE_SIGNALS order, each once. */
export function extractSignals(text: string): ShapeSignal[] {
  const words = ownWords(text);
  return SHAPE_SIGNALS.filter((s) => PATTERNS[s].some((p) => p.test(words)));
}
