import { BranchFile } from './branch-file';
import type { RestClient } from './client';
import type { Repo } from './rest-issues';

/** The memory store's branch and file (docs/adr/0015-memory-store.md; packages/core/src/memory/file.ts reads it). */
export const MEMORY_BRANCH = 'hydraflow/memory';
export const MEMORY_PATH = 'memory.md';

/** The store's file as read: its text and the version a write must name to replace it. */
export interface MemoryRead {
  /** memory.md; null when there is none yet (no branch, or a human deleted the file: a reset). */
  text: string | null;
  /** The branch's head commit; null when the branch does not exist. */
  version: string | null;
  /** The file is there but GitHub gave no text (binary, or too large): never written over. */
  unreadable: boolean;
}

export type MemoryWrite = { ok: true; version: string } | { ok: false };

/** Where HydraFlow keeps its memories: one read, one compare-and-swap write. */
export interface MemoryStore {
  read(): Promise<MemoryRead>;
  /** Replaces the file, if the store is still at `expectedVersion` (null: creates it); not ok when it moved. */
  write(text: string, expectedVersion: string | null, headline: string): Promise<MemoryWrite>;
}

/** The memory store on GitHub: memory.md on the branch hydraflow/memory (branch-file.ts). */
export class MemoryBranch implements MemoryStore {
  private readonly file: BranchFile;

  constructor(octokit: RestClient, repo: Repo) {
    this.file = new BranchFile(octokit, repo, { branch: MEMORY_BRANCH, path: MEMORY_PATH, what: 'the memory store' });
  }

  async read(): Promise<MemoryRead> {
    const snapshot = await this.file.read();
    return { text: snapshot.text, version: snapshot.head, unreadable: snapshot.unreadable };
  }

  async write(text: string, expectedVersion: string | null, headline: string): Promise<MemoryWrite> {
    const result = await this.file.write(expectedVersion, text, headline);
    return result.ok ? { ok: true, version: result.head } : { ok: false };
  }
}
