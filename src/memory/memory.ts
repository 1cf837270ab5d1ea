/**
 * HydraFlow's memory for one run (docs/adr/0015-memory-store.md): recall reads the store once and ranks its entries
 * against an issue; retain reads, merges and writes with a compare-and-swap, reading again and merging again when
 * another run wrote first. Memory is never worth failing a phase for: whatever goes wrong (GitHub down, a lost race
 * three times, a file a human broke) is one warning line in the job summary, and the phase goes on.
 */
import {
  parseMemoryFile,
  recallMemories as rank,
  renderMemoryFile,
  renderRecalled,
  retainInDocument,
  type HydraflowConfig,
  type MemoryDraft,
  type MemoryEntry,
  type Recalled,
} from '@hydraflow/core';
import type { MemoryStore } from '@hydraflow/github';

/** Writes tried before a retain gives up (each after reading the store again). */
export const RETAIN_ATTEMPTS = 3;

export interface MemoryRecall {
  recalled: Recalled[];
  /** The prompt section ('' when nothing is recalled). */
  block: string;
}

export type RetainOutcome =
  { ok: true; added: number; confirmed: number; dropped: number; attempts: number } | { ok: false; reason: string };

export class Memory {
  /** Problems already reported in this run (a file read twice warns once). */
  private readonly warned = new Set<string>();

  constructor(
    private readonly store: MemoryStore,
    private readonly options: {
      config: Pick<HydraflowConfig, 'memory'>;
      now: () => Date;
      warn: (message: string) => void;
    },
  ) {}

  /** The memories relevant to `query` (an issue's title and body): one request. */
  async recall(query: string): Promise<MemoryRecall> {
    let entries: MemoryEntry[];
    try {
      const read = await this.store.read();
      if (read.unreadable) {
        this.warnOnce('memory.md on hydraflow/memory has no readable text (binary or too large): nothing recalled');
        return { recalled: [], block: '' };
      }
      const parsed = parseMemoryFile(read.text);
      this.report(parsed.problems);
      entries = parsed.entries;
    } catch (error) {
      this.warnOnce(`Memory not recalled: ${oneLine(error)}`);
      return { recalled: [], block: '' };
    }
    const recalled = rank(entries, query, {
      now: this.options.now(),
      maxAgeDays: this.options.config.memory.max_age_days,
    });
    return { recalled, block: renderRecalled(recalled) };
  }

  /**
   * Retains `drafts`: a read and a write (three more requests the first time, to create the branch); a lost race costs
   * one more read and write each, at most RETAIN_ATTEMPTS writes in all.
   */
  async retain(drafts: readonly MemoryDraft[], headline: string): Promise<RetainOutcome> {
    if (drafts.length === 0) return { ok: true, added: 0, confirmed: 0, dropped: 0, attempts: 0 };
    const { max_entries: maxEntries, max_age_days: maxAgeDays } = this.options.config.memory;
    try {
      for (let attempt = 1; attempt <= RETAIN_ATTEMPTS; attempt++) {
        const read = await this.store.read();
        if (read.unreadable)
          return this.fail('memory.md on hydraflow/memory has no readable text (binary or too large): left as it is');
        const parsed = parseMemoryFile(read.text);
        this.report(parsed.problems);
        const merged = retainInDocument(parsed.document, drafts, { maxEntries, maxAgeDays, now: this.options.now() });
        const written = await this.store.write(renderMemoryFile(merged.document), read.version, headline);
        if (written.ok)
          return {
            ok: true,
            added: merged.added,
            confirmed: merged.confirmed,
            dropped: merged.dropped.length,
            attempts: attempt,
          };
      }
      return this.fail(`another run wrote the memory ${RETAIN_ATTEMPTS} times while this one tried: not retained`);
    } catch (error) {
      return this.fail(`not retained: ${oneLine(error)}`);
    }
  }

  private fail(reason: string): RetainOutcome {
    this.warnOnce(`Memory ${reason}`);
    return { ok: false, reason };
  }

  private report(problems: readonly string[]): void {
    for (const p of problems) this.warnOnce(`Memory: ${p}`);
  }

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.options.warn(message);
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}
