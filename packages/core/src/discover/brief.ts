/**
 * The discovery brief (docs/adr/0012-product-track.md): what the read-only research agent of the discover phase hands
 * in through its submit tool, validated here, rendered as ONE comment updated in place, and kept in signed state by
 * its hash only (the state never holds model text: docs/adr/0009-hidden-signed-state.md).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../state/codec';
import { neutralizeModelText, readDataBlock, renderDataBlock } from '../plan/render';

export const BRIEF_MARKER = '<!-- hydraflow:brief -->';

const line = (max: number) => z.string().min(1).max(max);

export const discoverBriefSchema = z.strictObject({
  summary: line(1_500).describe('The product problem behind the issue, in a few sentences.'),
  existing_solutions: z
    .array(
      z.strictObject({
        name: line(120).describe('A competitor, an existing product or an existing part of this repository.'),
        what: line(600).describe('What it does about the problem.'),
        gap: line(600).describe('What it leaves open, or why it does not fit here.'),
      }),
    )
    .max(8)
    .describe('Competitors or existing solutions analysed.'),
  user_needs: z.array(line(400)).max(10).describe('What the users actually need, each one concrete.'),
  opportunities: z.array(line(400)).max(10).describe('Gaps and approaches worth exploring.'),
  open_questions: z
    .array(line(300))
    .max(10)
    .describe('What a human must decide; every question the issue left open is one of them.'),
  sources: z
    .array(
      z.strictObject({
        title: line(200),
        where: line(300).describe('A URL, or a path or issue of this repository.'),
      }),
    )
    .max(15)
    .describe('Where each finding comes from.'),
});

export type DiscoverBrief = z.infer<typeof discoverBriefSchema>;

/** The hash kept in signed state: which brief the comment shows (canonical JSON, sha256). */
export function briefHash(brief: DiscoverBrief): string {
  return createHash('sha256').update(canonicalJson(brief)).digest('hex');
}

const BRIEF_DATA = 'brief-data';

/**
 * The brief of the comment `body` if its hidden data block is intact and is the brief of hash `hash` (from the signed
 * state): how shape reads the brief back (an edited or forged block is refused, never used). The block's hash is
 * `briefHash` (both hash the brief's canonical JSON).
 */
export function readBriefData(body: string | null | undefined, hash: string): DiscoverBrief | undefined {
  const found = readDataBlock(body, BRIEF_DATA);
  if (!found || found.hash !== hash) return undefined;
  const parsed = discoverBriefSchema.safeParse(found.value);
  return parsed.success && briefHash(parsed.data) === hash ? parsed.data : undefined;
}

const bullet = (text: string) => `- ${neutralizeModelText(text).replace(/\s+/g, ' ').trim()}`;

/** The brief comment; model text neutralised (nothing GitHub acts on, no HydraFlow marker). */
export function renderBriefComment(brief: DiscoverBrief, meta: { attempts: number; gaps: readonly string[] }): string {
  const section = (title: string, items: readonly string[]) => [
    `### ${title}`,
    '',
    ...(items.length ? items.map(bullet) : ['_(none)_']),
    '',
  ];
  return [
    BRIEF_MARKER,
    '## Discovery brief',
    '',
    neutralizeModelText(brief.summary),
    '',
    ...section(
      'Existing solutions',
      brief.existing_solutions.map((s) => `**${s.name}**: ${s.what} Gap: ${s.gap}`),
    ),
    ...section('User needs', brief.user_needs),
    ...section('Opportunities', brief.opportunities),
    ...section('Open questions', brief.open_questions),
    ...section(
      'Sources',
      brief.sources.map((s) => `${s.title} (${s.where})`),
    ),
    `<sub>Written by HydraFlow's research agent (read-only)${meta.attempts > 1 ? `, redone once: ${meta.gaps.length} gap(s) in the first brief` : ''}. Shape starts from it.</sub>`,
    renderDataBlock(BRIEF_DATA, brief).block,
  ].join('\n');
}
