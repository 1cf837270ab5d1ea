/**
 * Shape's comments (docs/adr/0016-shape.md). Model text is neutralised like the discovery brief's (nothing GitHub acts
 * on, no HydraFlow marker); what HydraFlow reads back is the hidden data block (direction.ts), through the hash in the
 * signed state — never the visible text, and never a comment someone else wrote ("DECOMPOSITION REQUIRED" in a human's
 * comment means nothing).
 */
import { neutralizeModelText } from '../plan/render';
import { renderShapeData, type ShapeDirection } from './direction';

export const DIRECTIONS_MARKER = '<!-- hydraflow:shape-directions -->';
export const FINAL_MARKER = '<!-- hydraflow:shape-final -->';
/** HydraFlow's answer to the human reply `replyId` (a turn, or the request to pick): one per reply, found by it. */
export const answerMarker = (replyId: number) => `<!-- hydraflow:shape-answer:${replyId} -->`;
/** The visible decomposition line of the finalization comment (plan reads the signed state, not this line). */
export const DECOMPOSITION_LINE = 'Decomposition required: plan splits this into 3–8 sub-issues.';

const flat = (text: string, max: number) => {
  const one = neutralizeModelText(text).replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

function directionSection(d: ShapeDirection): string[] {
  return [
    `### ${d.letter} · ${flat(d.name, 80)}${d.defer ? ' (defer / do nothing now)' : ''}`,
    '',
    `**Scope:** ${flat(d.scope, 1_500)}`,
    '',
    `**Trade-offs:** ${flat(d.tradeoffs, 1_000)}`,
    '',
    `**Size:** ${d.size}`,
    '',
  ];
}

/** THE directions comment (updated in place on every turn) and the hash of its data block for the signed state. */
export function renderDirectionsComment(
  directions: readonly ShapeDirection[],
  meta: { turns: number; maxTurns: number },
): { body: string; hash: string } {
  const data = renderShapeData(directions);
  const body = [
    DIRECTIONS_MARKER,
    '## Product directions',
    '',
    `Reply with the letter or the name of the direction to take — \`${directions[1]?.letter ?? 'B'}\`, \`Direction ${directions[1]?.letter ?? 'B'}\` or \`go with <name>\` — or comment \`/ship-it\` to take **${directions[0]!.letter}**, the recommended one. Any other reply is answered, and the directions may be revised.`,
    '',
    ...directions.flatMap(directionSection),
    `<sub>Written by HydraFlow's shape agent from the issue and the discovery brief${meta.turns > 0 ? `; revised through ${meta.turns} of at most ${meta.maxTurns} turn(s)` : ''}.</sub>`,
    data.block,
  ].join('\n');
  return { body, hash: data.hash };
}

/** HydraFlow's answer to one human reply (a conversation turn). */
export function renderTurnComment(replyId: number, reply: string, revised: boolean): string {
  const text = neutralizeModelText(reply).trim().slice(0, 3_000) || 'The directions are updated.';
  return [
    answerMarker(replyId),
    text,
    '',
    `<sub>${revised ? 'The directions comment above is revised. ' : ''}Reply with a letter or a name to choose, or \`/ship-it\`.</sub>`,
  ].join('\n');
}

/** The answer when the turns are used up, or a /ship-it names no direction: a human picks, no model call. */
export function renderAskPickComment(replyId: number, why: string, letters: readonly string[]): string {
  return [
    answerMarker(replyId),
    `${why} Please pick one of the directions above: reply with its letter (${letters.join(', ')}) or its name, or comment \`/ship-it <letter>\`.`,
  ].join('\n');
}

/** The finalization comment: the chosen direction, the decomposition line, and the chosen direction's data block. */
export function renderFinalComment(
  chosen: ShapeDirection,
  meta: { by: string; via: 'comment' | 'ship-it' },
): { body: string; hash: string } {
  const data = renderShapeData([chosen]);
  const how = meta.via === 'ship-it' ? '`/ship-it`' : 'a reply';
  const body = [
    FINAL_MARKER,
    `## Direction chosen: ${chosen.letter} · ${flat(chosen.name, 80)}`,
    '',
    `Chosen by \`${meta.by}\` with ${how}.`,
    '',
    ...directionSection(chosen).slice(2),
    chosen.defer ? 'This direction defers the work: nothing is planned.' : `**${DECOMPOSITION_LINE}**`,
    data.block,
  ].join('\n');
  return { body, hash: data.hash };
}
