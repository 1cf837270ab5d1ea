/**
 * HydraFlow's one comment per issue: a short human-readable progress section followed by the hidden state block, so a
 * phase reads and writes a single comment. Layout:
 *
 *     <!-- hydraflow:progress -->
 *     ### HydraFlow · <stage>
 *     **<headline>**
 *     | Stage | Track | Next | Cost so far |    (a small table; the track: pipeline/track.ts)
 *     > [!CAUTION] why HydraFlow stopped trusting its state, if it did (ADR 0007; a [!NOTE] once restarted)
 *     > [!WARNING] the real error, when the last step failed
 *     <details> details </details>               (optional, e.g. the triage enrichment)
 *     <details> History (n) </details>
 *     <!-- hydraflow:state v=2 kid=... sig=... {...} -->  (always last)
 *
 * The body stays under GitHub's 65,536-character limit: history is trimmed first, then details, then the error text.
 */
import { labelFor, stageInfo, type PipelineStage } from '../pipeline/labels';
import { issueTrack, trackCell } from '../pipeline/track';
import { encodeStateBlock, PROGRESS_MARKER, STATE_MARKER, type StateKeyOptions } from './codec';
import type { HistoryEntry, Incident, IncidentReason, IssueState, LedgerEntry } from './schema';
import { unpricedNote } from '../cost/cost';
import { neutralizeLinks, neutralizeReferences, type LinkOptions } from '../text/neutralize';

export { PROGRESS_MARKER };

export const MAX_COMMENT_CHARS = 65_536;
/** Keep a margin below GitHub's limit (it counts characters slightly differently for some Unicode). */
const BUDGET = MAX_COMMENT_CHARS - 1_536;

export interface ProgressInput {
  state: IssueState;
  /** The stage to show (usually the label just set); null = not in the pipeline. */
  stage: PipelineStage | null;
  /** One line: what just happened. */
  headline: string;
  /** One line: what happens next (who has to do what). */
  next: string;
  /** Cost so far in USD; defaults to the ledger total. */
  costUsd?: number;
  /** The real error of the last step, shown verbatim (neutralized). */
  error?: string | { phase?: string; message: string };
  /** Longer markdown shown collapsed (e.g. the triage enrichment and reasons). */
  details?: string;
  /**
   * A hidden data block made by HydraFlow's own code (escaped JSON whose hash is in the signed state, e.g. grooming's
   * agent verdicts), placed before the state block as is. The first thing dropped when the comment would be too long.
   */
  dataBlock?: string;
  /**
   * URL prefixes of HydraFlow's own links (the repository's, e.g. `https://github.com/acme/widgets/`): links there stay
   * links; any other link in the comment is neutralized.
   */
  trustedLinkPrefixes?: readonly string[];
  /** No state key: the state block is not signed; the comment says so (and what it means: no merge on it). */
  unsigned?: boolean;
}

/** What a run without HYDRAFLOW_STATE_KEY says, in the progress comment and the job summary. */
export const UNSIGNED_STATE_NOTE =
  'No HYDRAFLOW_STATE_KEY: HydraFlow’s state on this issue is not signed, so anyone who can edit its comments could rewrite it. HydraFlow works on, but never merges on state it cannot verify; add the secret (README, “Install”).';

/**
 * Make text safe to show in the visible part: it cannot open an HTML comment (so it can neither hide text nor fake a
 * state/progress marker), @mention anyone, carry a closing keyword, or link to a host outside `trustedPrefixes`
 * (text/neutralize.ts says how). HydraFlow's own links, to the repository's issues and pull requests, pass with the
 * repository's URL as a trusted prefix; a model's or a user's text never gets one.
 */
export function neutralizeText(text: string, options: LinkOptions = {}): string {
  const structural = text
    .replace(/<!--/g, '&lt;!--')
    .replace(/-->/g, '--&gt;')
    .replace(/hydraflow:(state|progress)/gi, 'hydraflow\u200b:$1');
  return neutralizeLinks(neutralizeReferences(structural), options);
}

function oneLine(text: string, max = 300, links: LinkOptions = {}): string {
  const flat = neutralizeText(text, links).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** 12345 → "12,345". Not toLocaleString: loading ICU data for it costs 25–40 ms of the action's run. */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatUsd(x: number): string {
  if (x > 0 && x < 0.01) return `$${x.toFixed(4)}`;
  return `$${x.toFixed(2)}`;
}

function tokenSummary(ledger: readonly LedgerEntry[]): { text: string; usd: number } {
  let input = 0;
  let cached = 0;
  let write = 0;
  let output = 0;
  let usd = 0;
  for (const e of ledger) {
    input += e.inputTokens;
    cached += e.cachedInputTokens;
    write += e.cacheWriteTokens;
    output += e.outputTokens;
    usd += e.costUsd;
  }
  const unpriced = unpricedNote(ledger);
  const total = input + cached + write + output;
  const parts = [`${formatCount(input)} in`];
  if (cached) parts.push(`${formatCount(cached)} cached`);
  if (write) parts.push(`${formatCount(write)} cache write`);
  parts.push(`${formatCount(output)} out`);
  return {
    text: `${formatCount(total)} tokens (${parts.join(', ')})${unpriced ? ` — ${unpriced}` : ''}`,
    usd,
  };
}

function stageCell(stage: PipelineStage | null): string {
  if (stage === null) return 'not in the pipeline';
  return `\`${labelFor(stage)}\` — ${stageInfo(stage).description.replace(/^HydraFlow: /, '')}`;
}

const INCIDENT_CAUSES: Readonly<Record<IncidentReason, string>> = {
  edited: 'someone other than HydraFlow edited its progress comment, so its state there is no longer HydraFlow’s word',
  rollback: 'an older state of HydraFlow’s was put back into its progress comment',
  deleted: 'HydraFlow’s progress comment was deleted',
  'bad-signature':
    'the state in HydraFlow’s progress comment does not verify (edited, forged, or signed with another key)',
  'missing-signature': 'the state in HydraFlow’s progress comment is not signed, and HYDRAFLOW_STATE_KEY is set',
  'unknown-key':
    'the state in HydraFlow’s progress comment is signed with a key HydraFlow does not hold (after a rotation of HYDRAFLOW_STATE_KEY, the old key goes in HYDRAFLOW_STATE_KEY_PREVIOUS)',
  'wrong-issue': 'the state in HydraFlow’s progress comment belongs to another issue',
  'wrong-repository': 'the state in HydraFlow’s progress comment belongs to another repository',
  malformed: 'the state in HydraFlow’s progress comment cannot be read',
  schema: 'the state in HydraFlow’s progress comment cannot be read',
  'unknown-version': 'the state in HydraFlow’s progress comment has a version this HydraFlow does not know',
  'multiple-blocks': 'HydraFlow’s progress comment holds more than one state block',
};

/** What HydraFlow says, in its progress comment, about the last time it found its state changed (ADR 0007). */
function incidentNote(incident: Incident, usd: number): string[] {
  const when = incident.at.slice(0, 16).replace('T', ' ');
  const what = !incident.by
    ? 'HydraFlow cannot trust its state on this issue'
    : incident.reason === 'deleted'
      ? `HydraFlow’s progress comment was deleted by \`${incident.by}\``
      : `HydraFlow’s state on this issue was changed by \`${incident.by}\``;
  const cause =
    incident.reason === 'rollback' && incident.found !== undefined && incident.spendFrom !== undefined
      ? `an older state of HydraFlow’s (#${incident.found}, where HydraFlow had written #${incident.spendFrom}) was put back into its progress comment`
      : INCIDENT_CAUSES[incident.reason];
  const spend =
    incident.spendFrom !== undefined
      ? `Spend counted: at least ${formatUsd(usd)}, from HydraFlow’s newest genuine state it could find (#${incident.spendFrom}); spend after it that HydraFlow could not verify is not counted.`
      : `Spend counted: at least ${formatUsd(usd)}: HydraFlow could not verify any spend on this issue before ${when} UTC, so this issue’s budget counts only what it spent since.`;
  if (incident.restartedBy) {
    return [
      '> [!NOTE]',
      `> ${what} (found ${when} UTC: ${cause}); \`${incident.restartedBy}\` started the issue over. ${spend}`,
    ];
  }
  return [
    '> [!CAUTION]',
    `> **${what}** (found ${when} UTC): ${cause}. HydraFlow acts only on state it wrote itself, so it stopped here.`,
    `> ${spend}`,
    '> Someone who may steer HydraFlow (commands.min_permission) checks what happened, then comments `/triage` (or `/retry`) to start the issue over, keeping that spend.',
  ];
}

function historyLine(h: HistoryEntry, links: LinkOptions): string {
  const from = h.from === undefined ? '' : `${h.from ?? '—'} → `;
  const who = h.by === 'human' ? `by ${h.actor ? `\`${h.actor}\`` : 'a human'}` : 'by HydraFlow';
  return `- ${h.at.slice(0, 16).replace('T', ' ')} ${from}**${h.to ?? '—'}** ${who}: ${oneLine(h.reason, 200, links)}`;
}

function render(
  input: ProgressInput,
  historyCount: number,
  details: string | undefined,
  errorMax: number,
  block: string,
): string {
  const { state, stage } = input;
  const links: LinkOptions = { trustedPrefixes: input.trustedLinkPrefixes ?? [] };
  const tokens = tokenSummary(state.ledger);
  const usd = input.costUsd ?? tokens.usd;
  const lines: string[] = [
    PROGRESS_MARKER,
    `### HydraFlow · ${stage ?? 'idle'}`,
    '',
    `**${oneLine(input.headline, 300, links)}**`,
    '',
    '| | |',
    '|---|---|',
    `| Stage | ${stageCell(stage)} |`,
    `| Track | ${trackCell(issueTrack(state, stage))} |`,
    `| Next | ${oneLine(input.next, 300, links).replace(/\|/g, '\\|')} |`,
    `| Cost so far | ${state.incident ? 'at least ' : ''}${formatUsd(usd)} · ${tokens.text} |`,
  ];
  if (input.unsigned) lines.push('', '> [!CAUTION]', `> ${UNSIGNED_STATE_NOTE}`);
  if (state.incident) lines.push('', ...incidentNote(state.incident, usd));
  if (input.error !== undefined) {
    const err = typeof input.error === 'string' ? { message: input.error } : input.error;
    const msg = neutralizeText(err.message, links);
    const clipped = msg.length > errorMax ? `${msg.slice(0, errorMax)}… (truncated)` : msg;
    lines.push(
      '',
      `> [!WARNING]`,
      `> **${err.phase ? `${oneLine(err.phase, 40)} failed` : 'Failed'}:**`,
      ...'```\n'
        .concat(clipped.replace(/```/g, '`\u200b``'), '\n```')
        .split('\n')
        .map((l) => `> ${l}`),
    );
  }
  if (details !== undefined && details.trim() !== '') {
    lines.push('', '<details><summary>Details</summary>', '', neutralizeText(details, links), '', '</details>');
  }
  const history = state.history.slice(state.history.length - historyCount);
  if (history.length > 0) {
    lines.push(
      '',
      `<details><summary>History (${history.length})</summary>`,
      '',
      ...history.map((h) => historyLine(h, links)),
      '',
      '</details>',
    );
  }
  if (input.dataBlock) lines.push('', input.dataBlock);
  lines.push('', block);
  return lines.join('\n');
}

/**
 * The full body of HydraFlow's progress comment, state block last. Always under MAX_COMMENT_CHARS: history lines are
 * dropped first, then the details, then the error text is cut.
 */
export function renderProgressComment(input: ProgressInput, options: StateKeyOptions = {}): string {
  const block = encodeStateBlock(input.state, options);
  let historyCount = input.state.history.length;
  let details = input.details;
  let errorMax = 20_000;
  let current = input;
  for (;;) {
    const body = render(current, historyCount, details, errorMax, block);
    if (body.length <= BUDGET) return body;
    if (current.dataBlock) current = { ...current, dataBlock: undefined };
    else if (historyCount > 0) historyCount = Math.floor(historyCount / 2);
    else if (details !== undefined && details.length > 200)
      details = `${details.slice(0, Math.floor(details.length / 2))}\n\n… (truncated)`;
    else if (details !== undefined) details = undefined;
    else if (errorMax > 200) errorMax = Math.floor(errorMax / 2);
    else return body.slice(0, BUDGET - block.length - 2) + '\n\n' + block; // unreachable in practice
  }
}

/**
 * The Details section of an earlier progress comment, so a later phase that has nothing to add keeps what an earlier
 * one said (e.g. the triage verdict) instead of erasing it. Idempotent with neutralizeText.
 */
export function previousDetails(body: string | null | undefined): string | undefined {
  const match = /\n<details><summary>Details<\/summary>\n\n([\s\S]*?)\n\n<\/details>/.exec(body ?? '');
  return match?.[1];
}

/** Is this the HydraFlow progress comment (by marker; trust is decided by findStateComment)? */
export function isProgressComment(body: string | null | undefined): boolean {
  return typeof body === 'string' && (body.includes(PROGRESS_MARKER) || body.includes(STATE_MARKER));
}
