/**
 * The agents' verdicts as data, in a hidden block of the progress comment, so an incremental re-run can reuse them:
 *
 *     <!-- hydraflow:groom-data sha256=<hex> <json, escaped like the state block> -->
 *
 * The hash goes into the signed state (GroomRecord.dataHash): an edited block is refused, never reused.
 */
import { z } from 'zod';
import { readDataBlock, renderDataBlock } from '../plan/render';
import { engineerVerdictSchema, groomAgentNameSchema, type AgentVerdict } from './schema';

const DATA_KIND = 'groom-data';
const verdictsSchema = z.record(groomAgentNameSchema, engineerVerdictSchema);

export function renderGroomData(verdicts: Readonly<Record<string, AgentVerdict>>): { block: string; hash: string } {
  return renderDataBlock(DATA_KIND, verdicts);
}

/** The verdicts of the data block in `body` if it is intact and its hash is `hash` (from the signed state). */
export function readGroomData(body: string | null | undefined, hash: string): Record<string, AgentVerdict> | undefined {
  const found = readDataBlock(body, DATA_KIND);
  if (!found || found.hash !== hash) return undefined;
  const parsed = verdictsSchema.safeParse(found.value);
  if (!parsed.success || renderDataBlock(DATA_KIND, parsed.data).hash !== hash) return undefined;
  return parsed.data;
}
