/**
 * Cheap, deterministic repository context for the planner (no model tool loop): the words of the issue pick the files
 * worth showing, and HydraFlow checks the plan's file list against the repository. Pure: the caller reads the disk.
 */
import type { Plan } from './schema';

const STOPWORDS = new Set(
  (
    'the and for that this with from have has are was were will would should could when what which while where there ' +
    'their them then than they into onto about after before under over also just only some more most other such very ' +
    'make made need needs want wants like does done doing being been each every both either neither should must ' +
    'issue issues please thanks thank using used use uses work works working file files code add adds added fix fixes ' +
    'fixed change changes changed update updates updated support supports new old bug bugs feature get gets set sets ' +
    'not but can cannot its our your you any all one two way ways see seen show shows within without between'
  ).split(' '),
);

/** Distinct lower-case words of at least 4 letters that are not stop words, in order of first appearance (max 40). */
export function issueKeywords(text: string, max = 40): string[] {
  const words = text
    .normalize('NFKC')
    // camelCase and snake_case identifiers count as their parts too ("listUsers" → list, users).
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const out: string[] = [];
  for (const w of words) {
    const word = w.replace(/^\d+|\d+$/g, '');
    if (word.length < 4 || STOPWORDS.has(word) || out.includes(word)) continue;
    out.push(word);
    if (out.length >= max) break;
  }
  return out;
}

/** Paths that are never worth showing a planner (generated, vendored, binary). */
export function isContextCandidate(path: string): boolean {
  if (/(^|\/)(node_modules|dist|build|out|coverage|vendor|\.git|\.next|target|__pycache__)(\/|$)/.test(path))
    return false;
  if (/(^|\/)(package-lock\.json|pnpm-lock\.yaml|yarn\.lock|Cargo\.lock|poetry\.lock|go\.sum)$/.test(path))
    return false;
  return !/\.(png|jpe?g|gif|webp|ico|svg|pdf|zip|gz|tgz|jar|woff2?|ttf|eot|mp4|mp3|wasm|bin|exe|dll|so|dylib|min\.js|map)$/i.test(
    path,
  );
}

/**
 * The files whose path mentions the most issue keywords (in the file name counts double), best first; ties by shorter
 * path, then alphabetically. Deterministic for the same tree and keywords.
 */
export function rankRelevantFiles(tree: readonly string[], keywords: readonly string[], max = 6): string[] {
  if (keywords.length === 0) return [];
  const scored: { path: string; score: number }[] = [];
  for (const path of tree) {
    if (!isContextCandidate(path)) continue;
    const lower = path.toLowerCase();
    const base = lower.slice(lower.lastIndexOf('/') + 1);
    let score = 0;
    for (const k of keywords) {
      if (base.includes(k)) score += 2;
      else if (lower.includes(k)) score += 1;
    }
    if (score > 0) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  return scored.slice(0, max).map((s) => s.path);
}

/** A repository-relative path without `..`, absolute roots or backslashes; undefined when it is not one. */
export function normalizeRepoPath(path: string): string | undefined {
  const p = path.trim().replace(/^\.\//, '');
  if (p === '' || p.startsWith('/') || p.includes('\\') || /^[A-Za-z]:/.test(p)) return undefined;
  if (p.split('/').some((part) => part === '..' || part === '' || part === '.')) return undefined;
  return p;
}

/**
 * Problems HydraFlow can see without a model: a path outside the repository, a file to modify or delete that does not
 * exist, a file to create that already exists, the same file twice. Written by HydraFlow (paths quoted), never model
 * prose, so they can be shown and fed back to the planner.
 */
export function checkPlanPaths(plan: Pick<Plan, 'files_to_touch'>, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const file of plan.files_to_touch) {
    const shown = JSON.stringify(file.path.slice(0, 200));
    const path = normalizeRepoPath(file.path);
    if (path === undefined) {
      problems.push(`${shown} is not a path inside the repository`);
      continue;
    }
    if (seen.has(path)) problems.push(`${shown} is listed more than once`);
    seen.add(path);
    const present = exists(path);
    if (file.action !== 'create' && !present)
      problems.push(`${shown} is to be ${file.action === 'modify' ? 'modified' : 'deleted'} but does not exist`);
    if (file.action === 'create' && present) problems.push(`${shown} is to be created but already exists`);
  }
  return problems;
}
