/**
 * The annotations a step's workflow commands make, as the runner reads them from its output: `::error::`,
 * `::warning::` and `::notice::`, with their `title=` property, escapes undone
 * (https://docs.github.com/actions/reference/workflow-commands-for-github-actions).
 */
import type { EmulatedAnnotation } from '../github/world';

const LEVEL = { error: 'failure', warning: 'warning', notice: 'notice' } as const;

const unescapeData = (s: string) => s.replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/%25/g, '%');
const unescapeProperty = (s: string) => unescapeData(s).replace(/%3A/gi, ':').replace(/%2C/gi, ',');

export function workflowCommandAnnotations(stdout: string): EmulatedAnnotation[] {
  const out: EmulatedAnnotation[] = [];
  for (const m of stdout.matchAll(/^::(error|warning|notice)(?: ([^:\n]*))?::(.*)$/gm)) {
    const title = (m[2] ?? '')
      .split(',')
      .map((p) => /^\s*title=(.*)$/.exec(p)?.[1])
      .find((t) => t !== undefined);
    out.push({
      level: LEVEL[m[1] as keyof typeof LEVEL],
      title: title === undefined ? null : unescapeProperty(title),
      message: unescapeData(m[3]!.replace(/\r$/, '')),
    });
  }
  return out;
}
