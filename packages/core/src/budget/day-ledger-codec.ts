/**
 * The spend ledger's file: `spend.json` at the head of HydraFlow's branch `hydraflow/spend`, the day's DayLedger as
 * indented JSON (readable on GitHub) with one more key, `sig`: HMAC-SHA256 keyed with HYDRAFLOW_STATE_KEY (the state
 * codec's signing) over
 *
 *     hydraflow-spend\nrepository=<owner/name>\n<canonical JSON of the ledger without sig>
 *
 * or `none` without a key. The ledger names the commit it was written on (`parent`) and the reader checks that against
 * the head commit's real parent, so a genuine ledger copied into a later commit (an older day pasted back), or any
 * commit on top of HydraFlow's last one that HydraFlow did not make, does not verify whatever its signature.
 */
import { timingSafeEqual } from 'node:crypto';
import { canonicalJson, hmacHex, type StateKeyOptions } from '../state/codec';
import { dayLedgerSchema, type DayLedger } from './day-ledger';

export type DayLedgerRead = { status: 'valid'; ledger: DayLedger } | { status: 'rejected'; detail: string };

const signingInput = (repository: string, canonical: string) =>
  `hydraflow-spend\nrepository=${repository}\n${canonical}`;

export function encodeDayLedger(ledger: DayLedger, options: { key?: string | undefined }): string {
  const parsed = dayLedgerSchema.parse(ledger);
  const sig = options.key ? hmacHex(options.key, signingInput(parsed.repository, canonicalJson(parsed))) : 'none';
  return `${JSON.stringify({ ...parsed, sig }, null, 2)}\n`;
}

/**
 * Reads spend.json of the branch's head. `parent` is the head commit's first parent (null: a root commit): the
 * ledger must name it. With a key, the signature must verify; without one, trust rests on the branch alone.
 */
export function decodeDayLedger(
  text: string,
  options: StateKeyOptions & { repository: string; parent: string | null },
): DayLedgerRead {
  const reject = (detail: string): DayLedgerRead => ({ status: 'rejected', detail });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return reject('spend.json is not JSON');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return reject('spend.json is not a JSON object');
  const { sig, ...body } = raw as Record<string, unknown>;
  if (body.repository !== options.repository) return reject(`the ledger is not this repository's`);
  if (options.key) {
    if (typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig)) return reject('the ledger is not signed');
    const message = signingInput(options.repository, canonicalJson(body));
    // during a key rotation the ledger the old key signed still verifies; the next write signs with the new key
    const signedBy = (key: string | undefined) =>
      key !== undefined &&
      key !== '' &&
      timingSafeEqual(Buffer.from(hmacHex(key, message), 'hex'), Buffer.from(sig, 'hex'));
    if (!signedBy(options.key) && !signedBy(options.previousKey))
      return reject('the ledger signature does not verify (edited, forged, or signed with another key)');
  }
  const parsed = dayLedgerSchema.safeParse(body);
  if (!parsed.success) return reject('the ledger does not match its schema');
  if (parsed.data.parent !== options.parent) {
    return reject(
      `the ledger was written on ${parsed.data.parent?.slice(0, 12) ?? 'no commit'} but sits on ${options.parent?.slice(0, 12) ?? 'no commit'}: a commit HydraFlow did not make`,
    );
  }
  return { status: 'valid', ledger: parsed.data };
}
