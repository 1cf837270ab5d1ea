/**
 * The hidden state block. Exact wire format (one line, at the end of HydraFlow's progress comment):
 *
 *     <!-- hydraflow:state v=<version> kid=<12 hex> sig=<64 hex> <json> -->      (signed)
 *     <!-- hydraflow:state v=<version> sig=none <json> -->                      (no key configured)
 *
 * - `<json>` is the state object serialized canonically (object keys sorted, no whitespace) and then made safe for an
 *   HTML comment and for Markdown: every `<`, `>`, `&`, every `-` that is followed by another `-`, and every character
 *   outside printable ASCII is written as a `\uXXXX` escape. The JSON therefore never contains `-->`, `--!>` or `--`,
 *   cannot end the comment early, and JSON.parse restores the exact values.
 * - `sig` is HMAC-SHA256, keyed with the `HYDRAFLOW_STATE_KEY` secret, over
 *   `hydraflow-state\nv=<version>\nkid=<kid>\nrepo=<repository id>\nissue=<issue>\nseq=<seq>\n<canonical json, unescaped>`.
 *   It binds the repository (by id, so a rename or transfer keeps the state; a block copied from another repository
 *   sharing the key is refused), the issue (a block copied from another issue is refused) and the sequence number
 *   (which grows with every write: trust.ts refuses an older genuine block as a rollback). `kid` names the key
 *   (stateKeyId): a block signed with the previous key (`HYDRAFLOW_STATE_KEY_PREVIOUS`, during a rotation) still
 *   verifies, and the next write signs with the current one. Without a key, `sig=none` is written and trust rests on
 *   the comment's author and last editor alone (trust.ts).
 * - Older blocks are read and migrated (migrate.ts): v1 (the first release: `v=1 sig=<hex>`, signed over
 *   `hydraflow-state\nv=1\nissue=<issue>\n<json>`) verifies with either key; v0 (pre-release) carries no signature.
 */
import { hasLogin } from '../config/logins';
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
  /** The HYDRAFLOW_STATE_KEY secret: signs every block and verifies. Empty or undefined = not configured. */
  key?: string | undefined;
  /** HYDRAFLOW_STATE_KEY_PREVIOUS, during a key rotation: verifies blocks signed before it, never signs. */
  previousKey?: string | undefined;
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

/** What the signature covers: the version, the key's id, the repository, the issue and the sequence (see above). */
function signingInput(state: { v: number; repo: number; issue: number; seq: number }, kid: string, json: string) {
  return `hydraflow-state\nv=${state.v}\nkid=${kid}\nrepo=${state.repo}\nissue=${state.issue}\nseq=${state.seq}\n${json}`;
}

/** The first release's (v1): no key id, repository or sequence. */
function signingInputV1(issue: number, json: string): string {
  return `hydraflow-state\nv=1\nissue=${issue}\n${json}`;
}

export function hmacHex(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

/**
 * A key's public name in the block header, so a rotation knows which key verifies a block. Derived from the key (an
 * HMAC of a fixed text, 48 bits: it says nothing of the key), so there is nothing more to configure.
 */
export function stateKeyId(key: string): string {
  return hmacHex(key, 'hydraflow-state-key-id').slice(0, 12);
}

function configured(key: string | undefined): string | undefined {
  return key === undefined || key === '' ? undefined : key;
}

function keyOf(options: StateKeyOptions | undefined): string | undefined {
  return configured(options?.key);
}

/** The keys that verify, current first. */
function verifyingKeys(options: StateKeyOptions): string[] {
  return [configured(options.key), configured(options.previousKey)].filter((k): k is string => k !== undefined);
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
      // the adversarial log is history: its counters and stage records stay (adversarial/record.ts)
      ...(state.adversarial ? { adversarial: { ...state.adversarial, log: state.adversarial.log.slice(-3) } } : {}),
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
  const json = escapeForComment(canonical);
  if (key === undefined) return `${STATE_MARKER} v=${parsed.data.v} sig=none ${json} ${BLOCK_END}`;
  const kid = stateKeyId(key);
  const sig = hmacHex(key, signingInput(parsed.data, kid, canonical));
  return `${STATE_MARKER} v=${parsed.data.v} kid=${kid} sig=${sig} ${json} ${BLOCK_END}`;
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

/** Where a block was read: the issue's number, and the repository's id when the reader knows it (HydraFlow always). */
export interface BlockPlace {
  issue: number;
  repo?: number;
}

/**
 * Find and verify the state block in a comment body. Checks, in order: exactly one block, well-formed header and JSON,
 * issue and repository match, signature (required when a key is configured: by the key its `kid` names, current or
 * previous), version (migrating older ones), schema.
 */
export function decodeStateBlock(body: string | null | undefined, options: StateKeyOptions & BlockPlace): DecodeResult {
  if (typeof body !== 'string') return { status: 'absent' };
  const start = body.indexOf(STATE_MARKER);
  if (start < 0) return { status: 'absent' };
  if (body.indexOf(STATE_MARKER, start + STATE_MARKER.length) >= 0) {
    return reject('multiple-blocks', 'the comment contains more than one state block');
  }
  const end = body.indexOf(BLOCK_END, start + STATE_MARKER.length);
  if (end < 0) return reject('malformed', 'the state block is not terminated by -->');
  const inner = body.slice(start + STATE_MARKER.length, end);
  const header = /^ v=(\d{1,6})(?: kid=([0-9a-f]{12}))? sig=([0-9a-f]{64}|none) (\{[\x20-\x7e]*\}) $/.exec(inner);
  if (!header) return reject('malformed', 'the state block header is not `v=<n> [kid=<id>] sig=<hex|none> {json}`');
  const headerVersion = Number(header[1]);
  const kid = header[2];
  const sig = header[3]!;
  let raw: unknown;
  try {
    raw = JSON.parse(header[4]!);
  } catch (error) {
    return reject('malformed', `the state JSON does not parse: ${(error as Error).message.slice(0, 120)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return reject('malformed', 'the state JSON is not an object');
  const version = stateVersionOf(raw);
  if (version !== headerVersion) {
    return reject('malformed', `header says v=${headerVersion} but the JSON says ${String(version)}`);
  }
  const fields = raw as Record<string, unknown>;
  if (fields.issue !== options.issue) {
    return reject(
      'wrong-issue',
      `the state is for issue ${JSON.stringify(fields.issue)?.slice(0, 20)}, not #${options.issue}`,
    );
  }
  if (version >= 2 && options.repo !== undefined && fields.repo !== options.repo) {
    return reject(
      'wrong-repository',
      `the state is for the repository with id ${JSON.stringify(fields.repo)?.slice(0, 20)}, not this one (${options.repo})`,
    );
  }
  const signature = verifySignature(raw, { version, kid, sig, issue: options.issue }, options);
  if (signature) return signature;

  try {
    const state = migrateState(raw, options.repo !== undefined ? { repo: options.repo } : {});
    if (state.issue !== options.issue)
      return reject('wrong-issue', `the state is for issue #${state.issue}, not #${options.issue}`);
    return { status: 'valid', state };
  } catch (error) {
    if (error instanceof StateRejectedError) return reject(error.reason, error.message);
    throw error;
  }
}

/** The signature check of decodeStateBlock: undefined when it verifies (or no key is configured), else the rejection. */
function verifySignature(
  raw: object,
  block: { version: number; kid: string | undefined; sig: string; issue: number },
  options: StateKeyOptions,
): DecodeResult | undefined {
  const keys = verifyingKeys(options);
  if (keys.length === 0) return undefined;
  if (block.sig === 'none') return reject('missing-signature', 'a state key is configured but the block is unsigned');
  const canonical = canonicalJson(raw);
  let candidates: { key: string; message: string }[];
  if (block.version >= 2) {
    const key = keys.find((k) => stateKeyId(k) === block.kid);
    if (!key) {
      return reject(
        'unknown-key',
        `the state is signed with a key HydraFlow does not hold (key id ${block.kid ?? 'none'}); after a rotation, the old key goes in HYDRAFLOW_STATE_KEY_PREVIOUS`,
      );
    }
    candidates = [{ key, message: signingInput(raw as Parameters<typeof signingInput>[0], block.kid!, canonical) }];
  } else {
    candidates = keys.map((key) => ({ key, message: signingInputV1(block.issue, canonical) }));
  }
  const actual = Buffer.from(block.sig, 'hex');
  for (const { key, message } of candidates) {
    const expected = Buffer.from(hmacHex(key, message), 'hex');
    if (actual.length === expected.length && timingSafeEqual(actual, expected)) return undefined;
  }
  return reject('bad-signature', 'the state signature does not verify (forged, edited, or signed with another key)');
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
   * The comment HydraFlow should read and update: among HydraFlow's comments with a valid state block, the one with the
   * highest sequence number (the oldest of equals); else the oldest of HydraFlow's comments that carries the progress
   * marker or a (refused) state block, so the adapter repairs that one instead of posting another. Undefined when
   * HydraFlow has no comment on the issue yet.
   */
  comment?: C;
  /** The verified state, only when `comment` holds a valid block. */
  state?: IssueState;
  /** Why the block in `comment` (HydraFlow's own comment) was refused: trust.ts makes that an incident. */
  refused?: { reason: StateRejectReason; detail: string };
  /** Blocks that were ignored in comments HydraFlow does not read: forged by a user or another bot, ... */
  rejected: RejectedStateComment[];
  /** Other valid bot state comments: delete them. */
  duplicates: C[];
}

export const PROGRESS_MARKER = '<!-- hydraflow:progress -->';

/** Is this comment's author one of HydraFlow's identities? Logins compare case-insensitively. */
export function isTrustedAuthor(comment: CommentLike, botLogins: readonly string[]): boolean {
  const login = comment.user?.login;
  if (!login) return false;
  if (!hasLogin(botLogins, login)) return false;
  // An App identity is always `name[bot]` with type Bot; a PAT identity is a configured user login.
  if (login.toLowerCase().endsWith('[bot]') && comment.user?.type != null && comment.user.type !== 'Bot') return false;
  return true;
}

/**
 * Look through ALL comments of an issue (the adapter pages through them) for HydraFlow's state. Only comments written
 * by one of `botLogins` are read; every block elsewhere is reported in `rejected` and never obeyed.
 */
export function findStateComment<C extends CommentLike>(
  comments: readonly C[],
  options: StateKeyOptions & BlockPlace & { botLogins: readonly string[] },
): StateCommentLookup<C> {
  const rejected: RejectedStateComment[] = [];
  const valid: { comment: C; state: IssueState }[] = [];
  const repairable: { comment: C; refused?: { reason: StateRejectReason; detail: string } }[] = [];
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
      if (body.includes(PROGRESS_MARKER)) repairable.push({ comment: c });
      continue;
    }
    const decoded = decodeStateBlock(body, options);
    if (decoded.status === 'valid') valid.push({ comment: c, state: decoded.state });
    else if (decoded.status === 'rejected')
      repairable.push({ comment: c, refused: { reason: decoded.reason, detail: decoded.detail } });
  }
  const newest = valid.reduce<(typeof valid)[number] | undefined>(
    (best, v) => (best === undefined || v.state.seq > best.state.seq ? v : best),
    undefined,
  );
  if (newest) {
    // HydraFlow's other comments with a block it cannot read: reported, never obeyed (the newest valid one is read)
    for (const r of repairable)
      if (r.refused) rejected.push({ commentId: r.comment.id, author: r.comment.user?.login ?? null, ...r.refused });
    const duplicates = valid.filter((v) => v !== newest).map((v) => v.comment);
    return { comment: newest.comment, state: newest.state, rejected, duplicates };
  }
  const fallback = repairable.find((r) => r.refused) ?? repairable[0];
  if (!fallback) return { rejected, duplicates: [] };
  return {
    comment: fallback.comment,
    ...(fallback.refused ? { refused: fallback.refused } : {}),
    rejected,
    duplicates: [],
  };
}
