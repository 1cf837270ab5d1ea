/**
 * What the planner (and grooming's agents) read of the repository besides the issue: README, CONTRIBUTING, the file
 * tree and the files whose paths match words of the issue. Cheap and deterministic: no model tool loop.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { issueKeywords, normalizeRepoPath, rankRelevantFiles, sanitizeUntrusted } from '@hydraflow/core';

const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  'dist',
  'build',
  'out',
  'coverage',
  'vendor',
  '.next',
  'target',
  '__pycache__',
  '.venv',
  '.cache',
]);
const LIMITS = {
  visit: 5_000,
  tree: 300,
  readme: 6_000,
  contributing: 4_000,
  file: 4_000,
  files: 24_000,
  fileBytes: 200_000,
};

export interface RepositoryContext {
  /** The context as the planner and reviewer read it (sanitised). */
  text: string;
  /** Does a file exist in the checkout? undefined when there is no checkout (the path check is then skipped). */
  exists: ((path: string) => boolean) | undefined;
}

/** Every file of the checkout, sorted, skipping generated and vendored directories (at most LIMITS.visit). */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const queue: string[] = [''];
  while (queue.length > 0 && out.length < LIMITS.visit) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) queue.push(path);
      } else if (entry.isFile()) {
        out.push(path);
        if (out.length >= LIMITS.visit) break;
      }
    }
  }
  return out.sort();
}

function readCapped(root: string, path: string, max: number): string | undefined {
  try {
    const full = join(root, path);
    if (statSync(full).size > LIMITS.fileBytes) return undefined;
    const text = readFileSync(full, 'utf8');
    if (text.includes('\u0000')) return undefined; // binary
    // GitHub renders markdown files and shows every other file verbatim, as the model should read them.
    return sanitizeUntrusted(text, max, { markdown: /\.(md|markdown)$/i.test(path) });
  } catch {
    return undefined;
  }
}

function firstExisting(root: string, tree: readonly string[], names: readonly string[]): string | undefined {
  const lower = new Map(tree.map((p) => [p.toLowerCase(), p]));
  for (const name of names) {
    const path = lower.get(name.toLowerCase());
    if (path) return path;
  }
  return undefined;
}

/** README, CONTRIBUTING, the file tree (capped) and the files whose paths match words of the issue. */
export function readRepositoryContext(
  workspace: string | undefined,
  issue: { title: string; body: string },
): RepositoryContext {
  if (!workspace || !existsSync(workspace)) {
    return { text: 'No repository checkout is available: plan from the issue alone.', exists: undefined };
  }
  const tree = listFiles(workspace);
  const sections: string[] = [];
  const readme = firstExisting(workspace, tree, ['README.md', 'README', 'README.rst', 'README.txt']);
  const contributing = firstExisting(workspace, tree, [
    'CONTRIBUTING.md',
    '.github/CONTRIBUTING.md',
    'docs/CONTRIBUTING.md',
  ]);
  const readmeText = readme && readCapped(workspace, readme, LIMITS.readme);
  if (readmeText) sections.push(`## ${readme}\n\n${readmeText}`);
  const contributingText = contributing && readCapped(workspace, contributing, LIMITS.contributing);
  if (contributingText) sections.push(`## ${contributing}\n\n${contributingText}`);
  const shown = tree.slice(0, LIMITS.tree);
  sections.push(
    `## File tree (${shown.length} of ${tree.length}${tree.length >= LIMITS.visit ? '+' : ''} files)\n\n${shown.join('\n')}${tree.length > shown.length ? '\n…' : ''}`,
  );
  const relevant = rankRelevantFiles(
    tree.filter((p) => p !== readme && p !== contributing),
    issueKeywords(`${issue.title}\n${issue.body}`),
  );
  let budget = LIMITS.files;
  for (const path of relevant) {
    if (budget <= 0) break;
    const text = readCapped(workspace, path, Math.min(LIMITS.file, budget));
    if (!text) continue;
    budget -= text.length;
    sections.push(`## ${path}\n\n\`\`\`\n${text.replace(/```/g, '`\u200b``')}\n\`\`\``);
  }
  const exists = (path: string) => {
    const p = normalizeRepoPath(path);
    if (p === undefined) return false;
    try {
      return statSync(join(workspace, p)).isFile();
    } catch {
      return false;
    }
  };
  return { text: `# Repository context (read-only, untrusted)\n\n${sections.join('\n\n')}`, exists };
}
