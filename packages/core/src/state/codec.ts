/**
 * The hidden state block. Exact wire format (one line, at the end of HydraFlow's progress comment):
 *
 *     <!-- hydraflow:state v=<version> sig=<64 lower-case hex | none> <json> -->
 *
 * - `<json>` is the state object serialized canonically (object keys sorted, no whitespace) and then made safe for an
 *   HTML comment and for Markdown: every `<`, `>`, `&`, every `-` that is followed by another `-`, and every character
 *   outside printable ASCII is written as a `\uXXXX` escape. The JSON therefore never contains `-->`, `--!>` or `--`,
 *   cannot end the comment early, and JSON.parse restores the exact values.
 * - `sig` is HMAC-SHA256, keyed with the `HYDRAFLOW_STATE_KEY` secret, over
 *   `hydraflow-state\nv=<version>\nissue=<issue number the comment is on>\n<canonical json, unescaped>`.
 *   Binding the issue number means a block copied from another issue fails verification. Without a key, `sig=none`
 *   is written and trust rests on the comment's author alone (see findStateComment).
 * - Version 0 blocks (pre-release) use the same header and are migrated on read (migrate.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { HydraflowError } from '../errors';
import { StateRejectedError, migrateState, stateVersionOf, type StateRejectReason } from './migrate';
import { STATE_LIMITS, issueStateSchema, type IssueState } from './schema';
import { compactLedger, truncate } from './ops';

export const STATE_MARKER = '<!-- hydraflow:state';
const BLOCK_END = '-->';

/** The encoded block never exceeds this, so the progress comment (≤ 65,536 chars) always has room for text. */
export const MAX_STATE_BLOCK_CHARS = 40_000;

export interface StateKeyOptions {
  /** The HYDRAFLOW_STATE_KEY secret. Empty or undefined = not configured. */
  key?: string | undefined;
}

export type DecodeResult =
  | { status: 'absent' }
  | { status: 'valid'; state: IssueState }
  | { status: 'rejected'; reason: StateRejectReason; detail: string };

// ---------------------------------------------------------------------------------------------------------------
// Canonical JSON

/** JSON with object keys sorted at every level and no whitespace; `undefined` properties are dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    if (s === undefined) throw new HydraflowError(`canonicalJson: cannot serialize ${typeof value}`);
    return s;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** Make JSON text safe inside an HTML comment (see the format above). Reversible by JSON.parse. */
export function escapeForComment(json: string): string {
  return json.replace(/[<>&]|-(?=-)|[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function signingInput(version: number, issue: number, canonical: string): string {
  return `hydraflow-state\nv=${version}\nissue=${issue}\n${canonical}`;
}

export function hmacHex(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

function keyOf(options: StateKeyOptions | undefined): string | undefined {
  const key = options?.key;
  return key === undefined || key === '' ? undefined : key;
}

// ---------------------------------------------------------------------------------------------------------------
// Encode

/** Apply every cap (lists, string lengths) so a valid state always encodes. */
export function normalizeState(state: IssueState): IssueState {
  const out: IssueState = {
    ...state,
    ledger: compactLedger(state.ledger, STATE_LIMITS.ledger),
    history: state.history
      .slice(-STATE_LIMITS.history)
      .map((h) => ({ ...h, reason: truncate(h.reason, STATE_LIMITS.reason) })),
  };
  if (state.handled) out.handled = state.handled.slice(-STATE_LIMITS.handled);
  if (state.dispatches) out.dispatches = state.dispatches.slice(-STATE_LIMITS.dispatches);
  if (state.lastError)
    out.lastError = { ...state.lastError, message: truncate(state.lastError.message, STATE_LIMITS.errorMessage) };
  return out;
}

/** Progressively smaller states for when the block would exceed MAX_STATE_BLOCK_CHARS. */
function shrinkSteps(state: IssueState): IssueState[] {
  return [
    { ...state, history: state.history.slice(-20), ...(state.handled ? { handled: state.handled.slice(-100) } : {}) },
    {
      ...state,
      history: state.history.slice(-5).map((h) => ({ ...h, reason: truncate(h.reason, 60) })),
      ledger: compactLedger(state.ledger, 10),
      ...(state.handled ? { handled: state.handled.slice(-30) } : {}),
      ...(state.dispatches ? { dispatches: state.dispatches.slice(-3) } : {}),
      ...(state.lastError
        ? { lastError: { ...state.lastError, message: truncate(state.lastError.message, 200) } }
        : {}),
    },
  ];
}

function encodeOnce(state: IssueState, key: string | undefined): string {
  const parsed = issueStateSchema.safeParse(state);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new HydraflowError(
      `refusing to encode invalid state: ${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`,
    );
  }
  const canonical = canonicalJson(parsed.data);
  const sig = key === undefined ? 'none' : hmacHex(key, signingInput(parsed.data.v, parsed.data.issue, canonical));
  return `${STATE_MARKER} v=${parsed.data.v} sig=${sig} ${escapeForComment(canonical)} ${BLOCK_END}`;
}

/**
 * Encode `state` as the one-line hidden block. Lists and strings are capped first; if the block would still exceed
 * MAX_STATE_BLOCK_CHARS, old history, handled ids and ledger detail are dropped (ledger totals are kept exact).
 * Throws HydraflowError when the state violates the schema (a HydraFlow bug, never user input).
 */
export function encodeStateBlock(state: IssueState, options: StateKeyOptions = {}): string {
  const key = keyOf(options);
  let current = normalizeState(state);
  let block = encodeOnce(current, key);
  for (const next of shrinkSteps(current)) {
    if (block.length <= MAX_STATE_BLOCK_CHARS) break;
    current = next;
    block = encodeOnce(current, key);
  }
  return block;
}

// ---------------------------------------------------------------------------------------------------------------
// Decode

function reject(reason: StateRejectReason, detail: string): DecodeResult {
  return { status: 'rejected', reason, detail };
}

export function hasStateBlock(body: string | null | undefined): boolean {
  return typeof body === 'string' && body.includes(STATE_MARKER);
}

/**
 * Find and verify the state block in a comment body. `issue` is the number of the issue the comment was read from.
 * Checks, in order: exactly one block, well-formed header and JSON, issue match, signature (required when a key is
 * configured), version (migrating older ones), schema.
 */
export function decodeStateBlock(
  body: string | null | undefined,
  options: StateKeyOptions & { issue: number },
): DecodeResult {
  if (typeof body !== 'string') return { status: 'absent' };
  const start = body.indexOf(STATE_MARKER);
  if (start < 0) return { status: 'absent' };
  if (body.indexOf(STATE_MARKER, start + STATE_MARKER.length) >= 0) {
    return reject('multiple-blocks', 'the comment contains more than one state block');
  }
  const end = body.indexOf(BLOCK_END, start + STATE_MARKER.length);
  if (end < 0) return reject('malformed', 'the state block is not terminated by -->');
  const inner = body.slice(start + STATE_MARKER.length, end);
  const header = /^ v=(\d{1,6}) sig=([0-9a-f]{64}|none) (\{[\x20-\x7e]*\}) $/.exec(inner);
  if (!header) return reject('malformed', 'the state block header is not `v=<n> sig=<hex|none> {json}`');
  const headerVersion = Number(header[1]);
  const sig = header[2]!;
  let raw: unknown;
  try {
    raw = JSON.parse(header[3]!);
  } catch (error) {
    return reject('malformed', `the state JSON does not parse: ${(error as Error).message.slice(0, 120)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return reject('malformed', 'the state JSON is not an object');
  const version = stateVersionOf(raw);
  if (version !== headerVersion) {
    return reject('malformed', `header says v=${headerVersion} but the JSON says ${String(version)}`);
  }
  const rawIssue = (raw as Record<string, unknown>).issue;
  if (rawIssue !== options.issue) {
    return reject(
      'wrong-issue',
      `the state is for issue ${JSON.stringify(rawIssue)?.slice(0, 20)}, not #${options.issue}`,
    );
  }

  const key = keyOf(options);
  if (key !== undefined) {
    if (sig === 'none') return reject('missing-signature', 'a state key is configured but the block is unsigned');
    const expected = Buffer.from(hmacHex(key, signingInput(version, options.issue, canonicalJson(raw))), 'hex');
    const actual = Buffer.from(sig, 'hex');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      return reject(
        'bad-signature',
        'the state signature does not verify (forged, edited, or signed with another key)',
      );
    }
  }

  try {
    const state = migrateState(raw);
    if (state.issue !== options.issue)
      return reject('wrong-issue', `the state is for issue #${state.issue}, not #${options.issue}`);
    return { status: 'valid', state };
  } catch (error) {
    if (error instanceof StateRejectedError) return reject(error.reason, error.message);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Finding the state comment

/** The fields of a GitHub issue comment this module reads. */
export interface CommentLike {
  id: number;
  body?: string | null;
  user?: { login: string; type?: string | null } | null;
}

export interface RejectedStateComment {
  commentId: number;
  author: string | null;
  reason: StateRejectReason;
  detail: string;
}

export interface StateCommentLookup<C extends CommentLike = CommentLike> {
  /**
   * The comment HydraFlow should read and update: the oldest bot comment with a valid state block, else the oldest
   * trusted bot comment that carries the progress marker or a (rejected) state block, so the adapter repairs that
   * one instead of posting another. Undefined when HydraFlow has no comment on the issue yet.
   */
  comment?: C;
  /** The verified state, only when `comment` holds a valid block. */
  state?: IssueState;
  /** Blocks that were ignored: forged by a user or another bot, unsigned/badly signed, edited, replayed, ... */
  rejected: RejectedStateComment[];
  /** Other valid bot state comments (newer than the canonical one): delete them. */
  duplicates: C[];
}

export const PROGRESS_MARKER = '<!-- hydraflow:progress -->';

/** Is this comment's author one of HydraFlow's identities? Logins compare case-insensitively. */
export function isTrustedAuthor(comment: CommentLike, botLogins: readonly string[]): boolean {
  const login = comment.user?.login;
  if (!login) return false;
  const lower = login.toLowerCase();
  if (!botLogins.some((b) => b.toLowerCase() === lower)) return false;
  // An App identity is always `name[bot]` with type Bot; a PAT identity is a configured user login.
  if (lower.endsWith('[bot]') && comment.user?.type != null && comment.user.type !== 'Bot') return false;
  return true;
}

/**
 * Look through ALL comments of an issue (the adapter pages through them) for HydraFlow's state. Only comments written
 * by one of `botLogins` are trusted; every other block is reported in `rejected` and never obeyed.
 */
export function findStateComment<C extends CommentLike>(
  comments: readonly C[],
  options: StateKeyOptions & { botLogins: readonly string[]; issue: number },
): StateCommentLookup<C> {
  const rejected: RejectedStateComment[] = [];
  const valid: { comment: C; state: IssueState }[] = [];
  const repairable: C[] = [];
  const sorted = [...comments].sort((a, b) => a.id - b.id);
  for (const c of sorted) {
    const body = c.body ?? '';
    const hasBlock = hasStateBlock(body);
    const trusted = isTrustedAuthor(c, options.botLogins);
    if (!trusted) {
      if (hasBlock) {
        rejected.push({
          commentId: c.id,
          author: c.user?.login ?? null,
          reason: 'untrusted-author',
          detail: `state block in a comment by ${c.user?.login ?? 'a deleted user'}, who is not one of HydraFlow's identities`,
        });
      }
      continue;
    }
    if (!hasBlock) {
      if (body.includes(PROGRESS_MARKER)) repairable.push(c);
      continue;
    }
    const decoded = decodeStateBlock(body, options);
    if (decoded.status === 'valid') valid.push({ comment: c, state: decoded.state });
    else if (decoded.status === 'rejected') {
      rejected.push({ commentId: c.id, author: c.user?.login ?? null, reason: decoded.reason, detail: decoded.detail });
      repairable.push(c);
    }
  }
  const [first, ...rest] = valid;
  if (first) return { comment: first.comment, state: first.state, rejected, duplicates: rest.map((v) => v.comment) };
  const fallback = repairable[0];
  return fallback ? { comment: fallback, rejected, duplicates: [] } : { rejected, duplicates: [] };
}
