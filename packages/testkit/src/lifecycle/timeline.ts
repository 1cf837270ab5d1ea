/** A readable account of what the simulator ran, for the demo and for failing tests. */
import type { JobRecord } from './index';

const MARK: Record<JobRecord['status'], string> = { success: '✓', failure: '✗', skipped: '-', cancelled: '⊘' };

function seconds(ms: number) {
  return `${(ms / 1000).toFixed(1)}s`;
}

export function formatTimeline(
  jobs: readonly JobRecord[],
  options: { steps?: boolean; outputs?: boolean } = {},
): string {
  const steps = options.steps ?? true;
  const outputs = options.outputs ?? true;
  const lines: string[] = [];
  let n = 0;
  for (const j of jobs) {
    n++;
    const trigger = `${j.event}${j.action ? `.${j.action}` : ''} by ${j.actor}${j.viaToken !== 'user' ? ` (${j.viaToken})` : ''}`;
    const head = `${String(n).padStart(3)}. ${MARK[j.status]} ${j.workflow} / ${j.job}  ←  ${trigger}  [run ${j.runId}${j.group ? `, group ${j.group}` : ''}]`;
    const tail =
      j.status === 'success' || j.status === 'failure' ? `  ${j.status} in ${seconds(j.durationMs)}` : `  ${j.status}`;
    lines.push(head + tail + (j.reason ? ` (${j.reason})` : ''));
    if (!steps) continue;
    for (const s of j.steps) {
      const out =
        outputs && Object.keys(s.outputs).length
          ? `  → ${Object.entries(s.outputs)
              .map(([k, v]) => `${k}=${v.length > 40 ? `${v.slice(0, 40)}…` : v}`)
              .join(' ')}`
          : '';
      lines.push(
        `       ${s.outcome === 'success' ? '✓' : s.outcome === 'failure' ? '✗' : s.outcome === 'cancelled' ? '⊘' : '-'} ${s.name}${out}`,
      );
      if (s.outcome === 'failure') {
        const tailLines = `${s.stdout}\n${s.stderr ?? ''}`.trim().split('\n').slice(-6);
        for (const l of tailLines) lines.push(`           | ${l}`);
      }
    }
  }
  return lines.join('\n');
}
