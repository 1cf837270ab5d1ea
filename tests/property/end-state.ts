/**
 * The oracle: what must hold of the world once a history's dust has settled, whatever humans, re-runs, redeliveries,
 * concurrency and crashes did (ADR-0002's label state machine, one progress comment, valid signed state, no leaked
 * lock; who may steer; what a human approved).
 */
import { expect } from 'vitest';
import {
  answerMarker,
  BRIEF_MARKER,
  decodeStateBlock,
  DIRECTIONS_MARKER,
  FINAL_MARKER,
  GROOMED_LABEL,
  isAdversarialRunningLabel,
  PROGRESS_MARKER,
  stageOf,
} from '@hydraflow/core';
import { BOT_LOGIN, TEST_STATE_KEY } from '@hydraflow/testkit';
import { levelOf, PEOPLE, steers } from './people';
import { isPipeline, spendOf, WRITES, type Ctx } from './world';

export function checkEndState(ctx: Ctx, validate: boolean): void {
  const { world } = ctx.gh;
  // No run died of an unexpected error (escalations for junk verdicts are not failures).
  for (const r of ctx.log) {
    const failed = r.crashed ? undefined : r.results.find((j) => j.failed);
    if (failed) throw new Error(`${r.label} failed (${failed.job} job): ${failed.message}`);
  }
  for (const model of ctx.issues) {
    if (!model) continue;
    const n = model.number;
    const issue = world.issues.get(n)!;
    const labels = issue.labels;
    const pipeline = labels.filter(isPipeline);
    const where = `issue #${n} (${issue.state}, labels [${labels.join(', ')}])`;

    // 1. ADR-0002: one pipeline label on an open issue HydraFlow touched, zero when the human took it out; a closed
    //    issue carries none but hydraflow-fixed.
    if (issue.state === 'closed') {
      const kept = pipeline.filter((l) => l !== 'hydraflow-fixed');
      if (model.closeRaced)
        expect(kept.length, `${where}: closed issue (raced) with several pipeline labels`).toBeLessThanOrEqual(1);
      else expect(kept, `${where}: closed issue keeps a pipeline label`).toEqual([]);
      // a dead run's transient adversarial label goes with the close (handlers/close.ts)
      if (!model.closeRaced && !model.eventLost)
        expect(labels.filter(isAdversarialRunningLabel), `${where}: closed issue keeps a transient label`).toEqual([]);
    } else if (touchedByHydraflow(ctx, n) && !model.eventLost) {
      const allowed =
        model.raced || model.refusedByLock
          ? [0, 1, 2]
          : model.intent === 'in'
            ? [1]
            : model.intent === 'out' && !model.staleAfterOut
              ? [0]
              : [0, 1];
      expect(allowed, `${where}: ${pipeline.length} pipeline labels, human intent "${model.intent}"`).toContain(
        pipeline.length,
      );
    }

    // 2. HydraFlow never removes (or adds) a label that is not a pipeline label (or its own `groomed`).
    const ours = (l: string) => isPipeline(l) || l === GROOMED_LABEL.name || isAdversarialRunningLabel(l);
    expect(labels.filter((l) => !ours(l)).sort(), `${where}: human labels changed`).toEqual(
      [...model.humanLabels].sort(),
    );
    const removedByBot = ctx.gh.requests.filter(
      (r) =>
        r.actor === BOT_LOGIN &&
        r.method === 'DELETE' &&
        r.path.startsWith(`/repos/${world.owner}/${world.repo}/issues/${n}/labels/`),
    );
    for (const r of removedByBot) {
      const name = decodeURIComponent(r.path.split('/labels/')[1]!);
      expect(ours(name), `${where}: HydraFlow removed the human label ${name}`).toBe(true);
    }

    // 3. One progress comment per issue, at most one reply per command comment, and none to a command of someone who
    //    may not steer (commands cost strangers nothing) but /help, which anyone who can read may ask.
    const botComments = world.commentsOn(n).filter((c) => c.user === BOT_LOGIN);
    const progress = botComments.filter((c) => c.body.includes(PROGRESS_MARKER));
    // (A close does not take the lock, and a racing take-over lets two runs in: both may post the comment before
    // either sees the other's — see closeRaced / raced.)
    expect(progress.length, `${where}: progress comments`).toBeLessThanOrEqual(model.closeRaced || model.raced ? 2 : 1);
    for (const command of model.commands) {
      const replies = world
        .commentsOn(command.on)
        .filter((c) => c.user === BOT_LOGIN && c.body.includes(`<!-- hydraflow:reply:${command.id} -->`));
      const most = steers(command.level) || command.name === 'help' ? 1 : 0;
      expect(
        replies.length,
        `${where}: replies to /${command.name} (comment ${command.id} by ${PEOPLE[command.level].login})`,
      ).toBeLessThanOrEqual(most);
    }

    // 4. The state block verifies with the key, and on an open issue its stage is the label's. (HydraFlow does not act
    //    on closed issues, so a label change it never applied before the close stays unrecorded: not checked.)
    //    With two progress comments (a race, see 3), HydraFlow reads the one with the newest genuine block; a writer may
    //    have changed the other, which changes nothing.
    let state: ReturnType<typeof decodeState> | undefined;
    const read = [...progress].sort((a, b) => seqOf(b.body, n) - seqOf(a.body, n))[0];
    if (read) {
      state = decodeState(read.body, n);
      const labelStage = pipeline.length === 1 ? stageOf(pipeline[0]!) : null;
      if (pipeline.length <= 1 && issue.state === 'open' && !model.eventLost && !model.raced && !model.refusedByLock)
        expect(state.stage ?? null, `${where}: state stage vs label`).toBe(labelStage ?? null);
    }

    // 4b. A stage label someone who may steer set is their move (ADR-0002): HydraFlow takes it off only once it has
    //     honoured it (a transition to or from that stage; after hydraflow-find, a triage), or a later human move, an
    //     escalation or the close superseded it — never with a move of its own that ignores it (tests/queued-label.e2e.test.ts). The state keeps the last
    //     20 transitions: a longer history is not checked.
    //     The history is every transition HydraFlow ever wrote in its progress comments: a writer may have put an
    //     older genuine block back (tamper `older`), and the state HydraFlow rebuilds from it holds for a human without
    //     the transitions the replaced block had (seed -863455051).
    const written = ownHistories(progress, n);
    if (state && state.history.length < 20) {
      const events = world.events.filter((e) => e.name === 'issues' && e.issue === n);
      // labels an issue form applied when the issue was opened are where it starts, not a move (triage decides)
      const openedAt = events.find((e) => e.action === 'opened')?.at ?? -Infinity;
      for (const [i, set] of events.entries()) {
        const level = levelOf(set.actor);
        if (set.action !== 'labeled' || !set.label || !isPipeline(set.label) || !level || !steers(level)) continue;
        if (set.at <= openedAt) continue;
        const later = events.slice(i + 1);
        const next = later.find((e) => e.label === set.label || e.action === 'closed');
        if (next?.action !== 'unlabeled' || next.actor !== BOT_LOGIN) continue;
        const stage = stageOf(set.label);
        const answered = written.some(
          (h) =>
            Date.parse(h.at) >= set.at &&
            // hydraflow-find asks for a triage: any transition after it is triage's answer
            (stage === 'find' || h.to === stage || h.from === stage || h.by === 'human' || h.to === 'hitl'),
        );
        expect(answered, `${where}: ${set.actor}'s ${set.label} taken off by HydraFlow, never honoured`).toBe(true);
      }
    }

    // 5. No leaked lock: the bot's 👀 stays only while the issue waits for a phase it handed the lock to.
    const eyes = world.reactions.filter(
      (r) => r.subject.type === 'issue' && r.subject.number === n && r.user === BOT_LOGIN && r.content === 'eyes',
    );
    expect(eyes.length, `${where}: 👀 reactions by the bot`).toBeLessThanOrEqual(1);
    if (eyes.length === 1) {
      const claim = state?.claim;
      if (!model.closeRaced && !model.eventLost)
        expect(issue.state, `${where}: 👀 lock left on a closed issue`).toBe('open');
      expect(
        claim?.runId.startsWith('handoff:'),
        `${where}: 👀 lock left without a hand-off claim (claim ${JSON.stringify(claim)})`,
      ).toBe(true);
      expect(
        world.dispatches.some((d) => d.inputs.issue === String(n) && d.inputs.phase === claim!.phase),
        `${where}: hand-off to ${claim!.phase} without a dispatch`,
      ).toBe(true);
    }

    // 6. ADR 0007: a writer who changed HydraFlow's progress comment (an older block put back, a broken one, the
    //    comment deleted) never lowered the spend HydraFlow counts: GitHub sent its newest block with the change. (Not
    //    beside a close: see IssueModel.closeRaced.)
    if (state && !model.closeRaced)
      expect(spendOf(state), `${where}: spend after a changed progress comment`).toBeGreaterThanOrEqual(
        model.spentBeforeTamper - 1e-9,
      );

    // 9. The product track posts nothing twice (issue #18): one discovery brief per issue, updated in place by a re-run
    //    or a redelivery, and the one the signed state names.
    const briefs = botComments.filter((c) => c.body.startsWith(BRIEF_MARKER));
    expect(briefs.length, `${where}: discovery briefs`).toBeLessThanOrEqual(1);
    if (state?.discover && issue.state === 'open' && !model.closeRaced)
      expect(
        briefs.map((c) => c.id),
        `${where}: the brief the state names (${state.discover.commentId})`,
      ).toEqual([state.discover.commentId]);

    //    Shape likewise: one directions comment (revised in place by a turn), at most one finalization, at most one
    //    answer to each human reply, whatever re-runs and redeliveries.
    expect(
      botComments.filter((c) => c.body.startsWith(DIRECTIONS_MARKER)).length,
      `${where}: directions comments`,
    ).toBeLessThanOrEqual(1);
    expect(
      botComments.filter((c) => c.body.startsWith(FINAL_MARKER)).length,
      `${where}: finalization comments`,
    ).toBeLessThanOrEqual(1);
    for (const human of world.commentsOn(n).filter((c) => c.user !== BOT_LOGIN)) {
      const answers = botComments.filter((c) => c.body.startsWith(answerMarker(human.id)));
      expect(answers.length, `${where}: answers to ${human.user}'s reply ${human.id}`).toBeLessThanOrEqual(1);
    }

    // 7. The outsider rule (issue #17): an issue whose author may not steer is triaged, and nothing after triage
    //    spends on it — no plan, no coding agent — before someone who may steer gave it a go.
    const goAt = model.goAt ?? Infinity;
    const early = (at: number) => at < goAt;
    const who = `${where}, opened by ${PEOPLE[model.author].login} (${model.author})`;
    const plans = ctx.models.calls.filter((c) => c.issue === n && c.role === 'plan' && early(c.at));
    expect(plans.length, `${who}: planned before anyone who may steer said go`).toBe(0);
    const implementations = world.dispatches.filter(
      (d) => d.inputs.issue === String(n) && d.inputs.phase === 'implement' && early(d.at),
    );
    expect(implementations.length, `${who}: implement dispatched before anyone who may steer said go`).toBe(0);
    const agents = ctx.agentStarts.filter((s) => s.issue === n && early(s.at));
    expect(agents.length, `${who}: coding agent started before anyone who may steer said go`).toBe(0);
  }

  // 10. Some runs never cost a model call (issue #18): the hourly sweep calls none but the triage of issues left at
  //     hydraflow-find (ADR 0014; shape's timeout, discover and shape's hand-offs cost nothing), and a comment by
  //     someone who may not steer on an issue they did not open — a command, an answer, a choice of direction —
  //     costs none (strangers cannot make the repository pay). Each run calls the model with a key of its own
  //     (world.ts), so its calls are its own whatever ran beside it.
  for (const r of ctx.log) {
    if (r.modelCalls === 0) continue;
    const roles = r.modelRoles.join(', ');
    if (r.event.name === 'schedule' && r.modelRoles.some((role) => role !== 'triage'))
      throw new Error(`${r.label}: the sweep called the model for more than triage (${roles})`);
    const comment =
      r.event.name === 'issue_comment' ? (r.event.payload.comment as { user?: { login?: string } }) : undefined;
    const level = comment?.user?.login ? levelOf(comment.user.login) : undefined;
    const author = ctx.model(r.event.issue)?.author;
    if (r.event.payload.action === 'created' && level !== undefined && !steers(level) && level !== author)
      throw new Error(`${r.label}: a comment by ${comment!.user!.login} (${level}) cost model calls (${roles})`);
  }

  // 8. Under merge.policy human, HydraFlow merges only a head that its own review approved and that a person with
  //    write access gave their go on: an approving review of that very commit, or /ship-it written while it was the
  //    head (so after it was pushed). A go on an earlier head — a refine round's push, a human's push — does not count.
  for (const pull of world.pulls.values()) {
    if (!pull.merged || pull.merged_by !== BOT_LOGIN) continue;
    const head = pull.head.sha;
    const where = `pull request #${pull.number} merged at ${head.slice(0, 7)} (heads seen: ${ctx.heads.map((h) => h.slice(0, 7)).join(' → ')})`;
    const reviews = [...world.reviews.values()].filter((r) => r.pull_number === pull.number);
    // HydraFlow's own review of that head approved it (on its own pull request GitHub takes the approval as a comment;
    // the round in the signed state names the review it submitted and what it decided)
    const issue = Number(/^hydraflow\/issue-(\d+)$/.exec(pull.head.ref)?.[1]);
    // (every version HydraFlow wrote counts: a writer may have changed its comment since the merge, ADR 0007, and the
    // state held for a human then keeps no review rounds)
    const rounds = ownBlocks(ctx, issue).flatMap((s) => s.review?.rounds ?? []);
    const approvedRound = rounds.find((r) => r.sha === head && r.event === 'APPROVE');
    expect(
      approvedRound !== undefined &&
        reviews.some((r) => r.id === approvedRound.reviewId && r.user === BOT_LOGIN && r.commit_id === head),
      `${where}: HydraFlow's review did not approve the head it merged`,
    ).toBe(true);
    const approvedBy = reviews
      .filter((r) => r.state === 'APPROVED' && r.commit_id === head && permitted(r.user))
      .map((r) => r.user);
    const shippedBy = world
      .commentsOn(pull.number)
      .filter((c) => permitted(c.user) && /^\s*\/ship-it\b/i.test(c.body) && ctx.headAtComment.get(c.id) === head)
      .map((c) => c.user);
    const goes = [
      ...reviews.map((r) => `${r.user} ${r.state} on ${r.commit_id.slice(0, 7)}`),
      ...world
        .commentsOn(pull.number)
        .filter((c) => /^\s*\/ship-it\b/i.test(c.body))
        .map((c) => `${c.user} /ship-it at ${ctx.headAtComment.get(c.id)?.slice(0, 7)}`),
    ];
    expect(
      approvedBy.length + shippedBy.length,
      `${where}: merged without a go on that head by someone with write access (${goes.join('; ')})`,
    ).toBeGreaterThan(0);
  }
  if (validate) expect(ctx.gh.violations, 'OpenAPI violations').toEqual([]);
}

const permitted = (login: string) => {
  const level = levelOf(login);
  return level !== undefined && steers(level);
};

/** Every genuine block HydraFlow wrote in its progress comments on `issue`, deleted ones included, oldest first. */
function ownBlocks(ctx: Ctx, issue: number) {
  const comments = [...ctx.deletedComments, ...ctx.gh.world.commentsOn(issue)].filter(
    (c) => c.issue_number === issue && c.user === BOT_LOGIN,
  );
  return comments.flatMap((c) =>
    c.revisions
      .filter((r) => r.by === BOT_LOGIN && r.body.includes(PROGRESS_MARKER))
      .map((r) => decodeStateBlock(r.body, { key: TEST_STATE_KEY, issue }))
      .flatMap((d) => (d.status === 'valid' ? [d.state] : [])),
  );
}

/** The sequence number of a genuine block (-1 for none). */
function seqOf(body: string, issue: number): number {
  const decoded = decodeStateBlock(body, { key: TEST_STATE_KEY, issue });
  return decoded.status === 'valid' ? decoded.state.seq : -1;
}

/** Every transition in the states HydraFlow itself wrote in the progress comments, whatever a writer did since. */
function ownHistories(progress: readonly { revisions: readonly { by: string; body: string }[] }[], issue: number) {
  return progress.flatMap((c) =>
    c.revisions.flatMap((r) => {
      if (r.by !== BOT_LOGIN) return [];
      const decoded = decodeStateBlock(r.body, { key: TEST_STATE_KEY, issue });
      return decoded.status === 'valid' ? decoded.state.history : [];
    }),
  );
}

function decodeState(body: string, issue: number) {
  const decoded = decodeStateBlock(body, { key: TEST_STATE_KEY, issue });
  if (decoded.status !== 'valid')
    throw new Error(`issue #${issue}: state block ${decoded.status}: ${JSON.stringify(decoded)}`);
  return decoded.state;
}

/** HydraFlow wrote something about the issue: a label, a comment, a reaction. */
function touchedByHydraflow(ctx: Ctx, n: number): boolean {
  const prefix = `/repos/${ctx.gh.world.owner}/${ctx.gh.world.repo}/issues/${n}/`;
  return ctx.gh.requests.some((r) => r.actor === BOT_LOGIN && WRITES.has(r.method) && r.path.startsWith(prefix));
}
