/** What a property run prints: the runs of a failing history (and its requests, on demand), and how long it took. */
import { BRIEF_MARKER, decodeStateBlock, isAdversarialRunningLabel, PROGRESS_MARKER } from '@hydraflow/core';
import { BOT_LOGIN, TEST_STATE_KEY } from '@hydraflow/testkit';
import { steers } from './people';
import type { Ctx } from './world';

/** The runs of a history, and with HYDRAFLOW_PROPERTY_TRACE=1 every request, for a failure's message. */
export function explain(ctx: Ctx): string {
  const runs = ctx.log.map(
    (r) =>
      `  ${r.label}: ${r.crashed ? `CRASHED after ${r.results.map((j) => j.job).join(', ') || 'nothing'}` : r.results.map((j) => `${j.job} ${j.decision} → ${j.message}`).join(' | ')}`,
  );
  let text = `\nruns:\n${runs.join('\n')}`;
  if (process.env.HYDRAFLOW_PROPERTY_TRACE === '1') {
    const trace = ctx.gh.requests.map(
      (r) =>
        `  ${r.actor} ${r.method} ${r.path} → ${r.status}${r.body ? ` ${JSON.stringify(r.body).slice(0, 80)}` : ''}`,
    );
    text += `\nrequests:\n${trace.join('\n')}`;
  }
  return text;
}

export function report(
  what: string,
  runs: number,
  totalMs: number,
  timings: number[],
  validate: boolean,
  coverage: Coverage,
): void {
  const sorted = [...timings].sort((a, b) => a - b);
  console.log(
    `${what}: ${runs} histories in ${(totalMs / 1000).toFixed(1)} s (validate=${validate}); ` +
      `per history median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms; ` +
      `histories with ${coverage.toString()}`,
  );
}

/** How many histories reached what (to see that the generator covers what the invariants are about). */
export class Coverage {
  private readonly counts = new Map<string, number>();
  private histories = 0;

  add(ctx: Ctx): void {
    this.histories++;
    const { world } = ctx.gh;
    const seen = new Set<string>();
    for (const model of ctx.issues) {
      if (!model) continue;
      if (!steers(model.author)) seen.add('an outsider’s issue');
      if (!steers(model.author) && model.goAt !== undefined) seen.add('an outsider’s issue given a go');
      if (model.commands.some((c) => !steers(c.level))) seen.add('a command by someone who may not steer');
    }
    if (ctx.events.some((e) => e.name === 'issue_comment' && e.payload.action !== 'created'))
      seen.add('a changed progress comment');
    if (ctx.agentStarts.length > 0) seen.add('the coding agent');
    const discovers = ctx.log.filter((r) => r.label.startsWith('workflow_dispatch.discover'));
    if (discovers.length > 0) seen.add('a discover run');
    if (discovers.some((r) => r.crashed)) seen.add('a discover run crashed');
    if (discovers.length > 1) seen.add('discover run twice');
    if (ctx.events.some((e) => e.name === 'schedule')) seen.add('a sweep');
    // a dead run's transient adversarial label (world.ts `leftover`), and HydraFlow taking one off
    const transient = world.events.filter((e) => typeof e.label === 'string' && isAdversarialRunningLabel(e.label));
    if (transient.some((e) => e.action === 'labeled')) seen.add('a transient label left');
    if (transient.some((e) => e.action === 'unlabeled')) seen.add('a transient label taken off');
    for (const model of ctx.issues) {
      if (!model) continue;
      const progress = world
        .commentsOn(model.number)
        .find((c) => c.user === BOT_LOGIN && c.body.includes(PROGRESS_MARKER));
      const decoded = progress && decodeStateBlock(progress.body, { key: TEST_STATE_KEY, issue: model.number });
      const shape = decoded?.status === 'valid' ? decoded.state.shape : undefined;
      if (!shape) continue;
      seen.add('shape directions');
      if (shape.turns > 0) seen.add('a shape turn');
      if (shape.selected) seen.add('a direction chosen');
      if (shape.replies.some((r) => r.outcome === 'refused')) seen.add('a refused reply');
      if (shape.timedOutAt) seen.add('a shape timeout');
    }
    if (ctx.issues.some((m) => m && world.commentsOn(m.number).some((c) => c.body.startsWith(BRIEF_MARKER))))
      seen.add('a brief');
    const pulls = [...world.pulls.values()];
    if (pulls.length > 0) seen.add('a pull request');
    if (ctx.heads.length > 1) seen.add('a superseded head');
    const approvals = [...world.reviews.values()].filter((r) => r.user !== BOT_LOGIN && r.state === 'APPROVED');
    if (approvals.some((r) => r.commit_id !== world.pulls.get(r.pull_number)?.head.sha))
      seen.add('an approval of another head');
    const shipIts = pulls.flatMap((p) => world.commentsOn(p.number).filter((c) => /^\/ship-it/.test(c.body)));
    if (shipIts.some((c) => ctx.headAtComment.get(c.id) !== world.pulls.get(c.issue_number)?.head.sha))
      seen.add('a /ship-it on another head');
    if (pulls.some((p) => p.merged)) seen.add('a merge');
    for (const s of seen) this.counts.set(s, (this.counts.get(s) ?? 0) + 1);
  }

  toString(): string {
    return [...this.counts].map(([what, n]) => `${what} ${n}`).join(', ') + ` (of ${this.histories})`;
  }
}
