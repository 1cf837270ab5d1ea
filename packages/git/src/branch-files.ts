/**
 * The files of a pull request as GitHub lists them (`GET /pulls/{n}/files`), computed locally from `base...head`:
 * renames detected, additions and deletions per file, and the patch as GitHub gives it — the file's hunks without the
 * `diff --git`/`---`/`+++` header, no trailing newline, none for a binary file. The publish step starts the review from
 * this before the pull request exists; the review adopts that call only if GitHub's own list gives the same prompt.
 */
export interface BranchFile {
  path: string;
  status: 'added' | 'modified' | 'removed' | 'renamed';
  additions: number;
  deletions: number;
  patch?: string;
}

/** The three outputs of `git diff -M` over one range: `--name-status -z`, `--numstat -z` and the patch. */
export function parseBranchFiles(nameStatus: string, numstat: string, patchText: string): BranchFile[] {
  const names = nameStatus.split('\0');
  const entries: { code: string; path: string }[] = [];
  for (let i = 0; i < names.length;) {
    const code = names[i++];
    if (!code) break;
    if (code.startsWith('R') || code.startsWith('C')) i++; // the path it came from
    entries.push({ code: code[0]!, path: names[i++]! });
  }
  // numstat -z: "add\tdel\tpath\0", or for a rename "add\tdel\t\0from\0to\0"; "-" for a binary file
  const counts: { additions: number; deletions: number }[] = [];
  const stats = numstat.split('\0');
  for (let i = 0; i < stats.length;) {
    const record = stats[i++];
    if (!record) break;
    const [added, deleted, path] = record.split('\t');
    if (path === '') i += 2;
    counts.push({ additions: added === '-' ? 0 : Number(added), deletions: deleted === '-' ? 0 : Number(deleted) });
  }
  const sections = patchText.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));
  return entries.map((entry, i) => {
    const section = sections[i] ?? '';
    const hunks = section.search(/^@@ /m);
    return {
      path: entry.path,
      status:
        entry.code === 'A' ? 'added' : entry.code === 'D' ? 'removed' : entry.code === 'R' ? 'renamed' : 'modified',
      additions: counts[i]?.additions ?? 0,
      deletions: counts[i]?.deletions ?? 0,
      ...(hunks >= 0 ? { patch: section.slice(hunks).replace(/\n$/, '') } : {}),
    };
  });
}
