/**
 * The adversarial record's own versions (record.ts, ADVERSARIAL_RECORD_VERSION). state/schema.ts runs every record it
 * reads through migrateAdversarialRecord, so a record written by an older build is lifted the way state/migrate.ts
 * lifts the whole state. There is one version today; the steps table is where the next one goes.
 *
 * This file imports only record.ts: state/schema.ts imports it.
 */
import {
  ADVERSARIAL_RECORD_VERSION,
  adversarialStateSchema,
  emptyAdversarialState,
  type AdversarialState,
} from './record';

type RecordMigration = (raw: Record<string, unknown>) => Record<string, unknown>;
/** RECORD_MIGRATIONS[n] lifts record version n to n + 1 (none yet: version 1 is the first). */
const RECORD_MIGRATIONS: Readonly<Record<number, RecordMigration>> = {};

/**
 * The adversarial record of a raw value found in a state: absent → empty; an older record version → lifted; a newer
 * or broken one → undefined, and state/schema.ts then refuses the whole state, as state/migrate.ts refuses a state
 * version newer than it knows (never obeyed on a best-effort basis).
 */
export function migrateAdversarialRecord(raw: unknown): AdversarialState | undefined {
  if (raw === undefined || raw === null) return emptyAdversarialState();
  if (typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  let current = raw as Record<string, unknown>;
  const v = current.v;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > ADVERSARIAL_RECORD_VERSION) return undefined;
  for (let n = v; n < ADVERSARIAL_RECORD_VERSION; n++) {
    const step = RECORD_MIGRATIONS[n];
    if (!step) return undefined;
    current = step(current);
  }
  const parsed = adversarialStateSchema.safeParse(current);
  return parsed.success ? parsed.data : undefined;
}
