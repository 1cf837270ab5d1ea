/**
 * `pnpm demo`, in five parts, all on this machine with model answers RECORDED (replayed by a scripted model server):
 *
 * 1. Triage: three sample issues (clear, vague, spam) through the built action (dist/) on real webhook payloads, as the
 *    triage step alone (actions/triage), which dispatches the next phase; the template's routing step goes on from a
 *    clear triage into planning in the same run instead (part 2).
 * 2. The main event: one issue's whole lifecycle on a sample repository — the workflow template a user copies, run by
 *    the lifecycle simulator (GitHub's event routing and runner), a git-backed GitHub emulator with a real bare remote:
 *    triage, plan, implement (a coding-agent session edits real code and runs the sample's real tests), review, a human
 *    (alice) approves, HydraFlow squash-merges. The recorded answers are those of tests/lifecycle/scenario.ts.
 * 3. Grooming: `/groom` on an issue with an open question — four agents and a summary, the Questions section in the
 *    issue body, an answer in a comment, the re-run that marks it answered and splits the work into phase sub-issues.
 *    The recorded answers are those of tests/lifecycle/grooming.ts.
 * 4. The product track: a vague issue through the template again — triage says vague, discover posts the research
 *    brief, shape proposes directions, a human picks one by comment, plan splits it into sub-issues, phase 1 merges;
 *    a second vague issue's shape prompt recalls the first one's preference. The recorded answers are those of
 *    tests/lifecycle/product.ts. It goes as far as this HydraFlow version goes, and says where it stops.
 * 5. The adversarial layer (`adversarial.enabled: true`): the complexity gate calls the issue load-bearing, the plan
 *    council's Risk-Skeptic blocks, the planner revises and the concern resolves; then the same concern again after the
 *    revision (oscillation): it is forwarded, carried by the plan reviewer and code review, and at the merge it becomes
 *    a knowledge entry in memory. The recorded answers are those of bench/lib/adversarial.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BRIEF_MARKER,
  decodeStateBlock,
  DIRECTIONS_MARKER,
  FINAL_MARKER,
  formatUsd,
  labelFor,
  ledgerTotals,
} from '@hydraflow/core';
import {
  BOT_LOGIN,
  createWorld,
  DIST_ENTRY,
  REPO_ROOT,
  type JobRecord,
  type ScriptEntry,
  type World,
} from '@hydraflow/testkit';
import {
  finalLedger,
  hydraflowRequests,
  isHydraflowStep,
  progressComment,
  runClearLifecycle,
} from '../bench/lib/lifecycle';
import { groomModeQuestions, MODE_ISSUE, MODE_PHASES, TIES_ANSWER } from '../tests/lifecycle/grooming';
import { PICK_B, productJourneyScript, STATS_INTENT, STRINGS_INTENT } from '../tests/lifecycle/product';
import { lifecycleWorld } from '../tests/lifecycle/scenario';
import { adversarialWorld, EMPTY_LIST, stateOf } from '../bench/lib/adversarial';

const recordings = JSON.parse(readFileSync(join(REPO_ROOT, 'demo/recorded-model.json'), 'utf8')) as Record<
  string,
  ScriptEntry
>;

const SAMPLES = [
  {
    title: 'Paginate GET /api/users (returns 40k rows today)',
    body: 'GET /api/users returns every user in one response (40k rows, 12 s). Return 50 per page by default (max 100) with `page`/`per_page` and a Link header. Add tests for first/middle/last page.',
  },
  { title: 'Make onboarding better', body: 'New users get lost. We should improve onboarding.' },
  { title: 'asdf ?? urgent!!! buy cheap followers', body: 'click here www.example.invalid' },
];

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const started = Date.now();
const clock = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;
const line = (text: string) => console.log(`${dim(clock())}  ${text}`);

function progressOf(world: Pick<World, 'gh' | 'stateKey'>, issue: number) {
  const comment = world.gh.world
    .commentsOn(issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!comment) return undefined;
  const headline = /^\*\*(.+)\*\*$/m.exec(comment.body)?.[1];
  const decoded = decodeStateBlock(comment.body, { key: world.stateKey, issue });
  return { comment, headline, state: decoded.status === 'valid' ? decoded.state : undefined };
}

async function triagePart(): Promise<void> {
  const world = await createWorld({
    script: {
      triage: (req) =>
        recordings[SAMPLES.find((s) => req.messages[0]?.content.includes(s.title))?.title ?? ''] ?? {
          text: 'no recording',
        },
    },
  });
  console.log(bold('1. Triage') + ' — the built action (dist/) on real webhook payloads, as the triage step alone');
  console.log(
    `   (actions/triage), against a GitHub emulator at ${world.gh.url} and a model server at ${world.models.url}.`,
  );
  console.log(
    `   Model answers are ${bold('recorded')} (demo/recorded-model.json) and replayed with their latency; nothing leaves this machine.`,
  );
  world.gh.addUser({ login: 'dana', permission: 'write' });
  try {
    for (const sample of SAMPLES) {
      const issue = world.gh.world.issue({ title: sample.title, body: sample.body, author: 'dana' });
      console.log(bold(`\n#${issue.number} ${issue.title}`));
      const requestsBefore = world.gh.requests.length;
      const dispatchesBefore = world.gh.world.dispatches.length;
      const run = await world.run('issues', 'opened', { issue: issue.number }, { inputs: { phase: 'triage' } });
      line(
        `issues.opened by dana → decision: ${run.outputs.decision} · exit ${run.exitCode} · ${Math.round(run.durationMs)} ms · ${world.gh.requests.length - requestsBefore} GitHub requests`,
      );
      const after = progressOf(world, issue.number);
      const next = world.gh.world.dispatches.slice(dispatchesBefore).map((d) => d.inputs.phase);
      line(
        `  labels: ${world.gh.world.issues.get(issue.number)!.labels.join(', ') || '(none)'}${next.length ? ` · dispatched: ${next.join(', ')}` : ''}`,
      );
      const totals = ledgerTotals(after?.state?.ledger ?? []);
      line(`  “${after?.headline ?? '—'}” · ${formatUsd(totals.usd)} (${totals.tokens} tokens)`);
    }
    const total = ledgerTotals([1, 2, 3].flatMap((n) => progressOf(world, n)?.state?.ledger ?? []));
    console.log(
      dim(
        `\n   ${world.gh.requests.length} GitHub requests, ${world.models.calls.length} model calls, ${formatUsd(total.usd)} at list prices. In the workflow template, a clear issue goes on into planning in the same run: part 2.`,
      ),
    );
  } finally {
    await world.close();
  }
}

/** One line per job: its trigger, then what each HydraFlow step decided (a condensed formatTimeline). */
function jobLine(n: number, job: JobRecord, calls: { at: number }[]): string {
  const trigger =
    job.event === 'workflow_dispatch'
      ? `workflow_dispatch (${job.viaToken === 'user' ? job.actor : 'GITHUB_TOKEN'})`
      : `${job.event}${job.action ? `.${job.action}` : ''} by ${job.actor}`;
  const parts: string[] = [];
  // the model proxy only serves the agent step beside it: it decides nothing
  for (const step of job.steps.filter(
    (s) => isHydraflowStep(s) && s.outcome !== 'skipped' && !s.name.includes('actions/model-proxy'),
  )) {
    const model = calls.filter((c) => c.at >= step.startedAt! && c.at <= step.endedAt!).length;
    const what = step.name.includes('actions/agent')
      ? `agent session (edits the code, runs the sample's tests)`
      : `${step.outputs.phases?.split(',').join(' → ') ?? step.outputs.decision ?? '?'}${step.outputs.stage ? ` → stage ${step.outputs.stage}` : ''}`;
    parts.push(`${what}${model ? ` [${model} model call${model > 1 ? 's' : ''}]` : ''}`);
  }
  const mark = job.status === 'success' ? '✓' : job.status === 'failure' ? '✗' : '-';
  return `${String(n).padStart(2)}. ${mark} ${trigger.padEnd(40)} ${parts.join(' · ') || job.status}  ${dim(`${(job.durationMs / 1000).toFixed(1)}s`)}`;
}

async function lifecyclePart(): Promise<void> {
  console.log(bold('\n\n2. A whole lifecycle') + ' — issue opened → merged, on a sample repository (acme/widgets).');
  console.log(
    '   Your workflow template (workflows-templates/hydraflow.yml), run by the lifecycle simulator the way GitHub',
  );
  console.log(
    "   Actions routes events and runs jobs; a GitHub emulator backed by a real bare git remote; the sample's real",
  );
  console.log(
    `   tests. Model answers are ${bold('recorded')} (those of tests/lifecycle/scenario.ts), replayed without latency.\n`,
  );
  const t0 = Date.now();
  const run = await runClearLifecycle();
  const { world } = run;
  try {
    const issue = world.gh.world.issues.get(run.issue)!;
    const calls = world.models.calls;
    console.log(bold(`#${run.issue} ${issue.title}`) + dim(' (opened by alice)'));
    let n = 0;
    for (const job of run.before) if (job.status !== 'skipped') console.log(jobLine(++n, job, calls));
    console.log(`    ${bold('alice approves')} pull request #${run.pull}: “Ship it.”`);
    for (const job of run.after) if (job.status !== 'skipped') console.log(jobLine(++n, job, calls));

    const pull = world.gh.world.pulls.get(run.pull)!;
    const pullIssue = world.gh.world.issues.get(run.pull)!;
    console.log(bold('\nEnd state'));
    console.log(`  pull request #${run.pull} “${pullIssue.title}”: ${pull.merged ? 'merged (squash)' : 'NOT merged'}`);
    console.log(`  issue #${run.issue}: ${issue.state}, labels: ${issue.labels.join(', ') || '(none)'}`);
    const branches = execFileSync('git', ['branch', '--list'], { cwd: world.sample.bareRepo }).toString().trim();
    console.log(`  branches on the remote: ${branches.replace(/[*\s]+/g, ' ').trim()}`);
    console.log('  what landed on main (git show --stat main, in the bare remote):');
    const show = execFileSync('git', ['show', '--stat', '--format=%h %s%n%n%b', 'main'], {
      cwd: world.sample.bareRepo,
    }).toString();
    for (const l of show
      .trimEnd()
      .replace(/\n{3,}/g, '\n\n')
      .split('\n'))
      console.log(`    ${l}`);
    const diff = execFileSync('git', ['show', '--format=', 'main', '--', 'src/numbers.js'], {
      cwd: world.sample.bareRepo,
    }).toString();
    console.log('  src/numbers.js, as the agent changed it:');
    for (const l of diff.split('\n').filter((l) => /^[+-][^+-]/.test(l))) console.log(`    ${l}`);

    const ledger = finalLedger(run);
    const totals = ledgerTotals(ledger);
    const usd = (x: number) => `$${x.toFixed(4)}`;
    const byPhase = new Map<string, number>();
    for (const e of ledger) byPhase.set(e.phase, (byPhase.get(e.phase) ?? 0) + e.costUsd);
    console.log(
      `  cost (the signed ledger in the progress comment): ${usd(totals.usd)}, ${totals.tokens} tokens in ${totals.calls} model calls — ${[
        ...byPhase,
      ]
        .map(([p, x]) => `${p} ${usd(x)}`)
        .join(', ')}`,
    );
    const headline = /^\*\*(.+)\*\*$/m.exec(progressComment(run)?.body ?? '')?.[1];
    console.log(`  progress comment: “${headline ?? '—'}”`);
    const roles = new Map<string, number>();
    for (const c of calls) roles.set(c.role ?? '?', (roles.get(c.role ?? '?') ?? 0) + 1);
    const ours = hydraflowRequests(run).length;
    console.log(
      `  ${ours} GitHub requests by HydraFlow (+ ${world.gh.requests.length - ours} by alice), ${calls.length} model calls (${[
        ...roles,
      ]
        .map(([r, k]) => `${r} ${k}`)
        .join(', ')}) — recorded answers, so the cost is what these answers would cost at list prices.`,
    );
    console.log(dim(`  ${((Date.now() - t0) / 1000).toFixed(1)} s for the whole lifecycle, world setup included.`));
  } finally {
    await world.close();
  }
}

async function groomingPart(): Promise<void> {
  console.log(
    bold('\n\n3. Grooming') + ' — `/groom`: PM, engineer, QA and research agents in parallel, then a summary',
  );
  console.log(
    `   that decides. The built action (dist/) again; model answers ${bold('recorded')} (tests/lifecycle/grooming.ts).\n`,
  );
  const world = await createWorld({ script: groomModeQuestions({ phasesWhenReady: MODE_PHASES }) });
  world.gh.addUser({ login: 'alice', permission: 'write' });
  try {
    const issue = world.gh.world.issue({ ...MODE_ISSUE, author: 'alice' });
    console.log(bold(`#${issue.number} ${issue.title}`));
    const say = async (body: string) => {
      const c = world.gh.world.comment(issue.number, { author: 'alice', body });
      const callsBefore = world.models.calls.length;
      const run = await world.run('issue_comment', 'created', { issue: issue.number, comment: c.id, sender: 'alice' });
      const roles = world.models.calls.slice(callsBefore).map((m) => m.role?.replace(/^groom_/, '') ?? '?');
      line(
        `alice: “${body}” → ${run.outputs.decision ?? '?'} · ${roles.length} model calls (${[...new Set(roles)].join(', ')})`,
      );
      const now = world.gh.world.issues.get(issue.number)!;
      line(`  labels: ${now.labels.join(', ')} · “${progressOf(world, issue.number)?.headline ?? '—'}”`);
      const questions = /## Questions\n<!-- hydraflow:questions -->\n([\s\S]*?)\n<!-- \/hydraflow:questions -->/.exec(
        now.body ?? '',
      );
      for (const q of questions?.[1]?.split('\n') ?? []) console.log(`           ${q}`);
    };
    await say('/groom');
    await say(TIES_ANSWER);
    for (const sub of world.gh.world.subIssuesOf(issue.number))
      line(`  sub-issue #${sub.number} “${sub.title}” · labels: ${sub.labels.join(', ')}`);
    const totals = ledgerTotals(progressOf(world, issue.number)?.state?.ledger ?? []);
    console.log(
      dim(
        `\n   Two grooming runs: ${totals.calls} model calls, ${formatUsd(totals.usd)} at list prices (the second re-ran only the agents whose questions were open).`,
      ),
    );
  } finally {
    await world.close();
  }
}

/** Where part 4 stops when this version lacks a piece of the product track: said, not hidden. */
function stopsHere(what: string): void {
  console.log(`\n   ${bold('The journey stops here in this version:')} ${what}`);
}

async function productPart(): Promise<void> {
  console.log(
    bold('\n\n4. The product track') + ' — a vague issue: research, directions, a human’s choice, sub-issues, phase 1.',
  );
  console.log(
    `   The workflow template and the lifecycle simulator again; model answers ${bold('recorded')} (tests/lifecycle/product.ts).\n`,
  );
  const t0 = Date.now();
  const world = await lifecycleWorld(productJourneyScript());
  const gh = world.gh.world;
  let n = 0;
  const jobs = (list: JobRecord[]) => {
    for (const job of list) if (job.status !== 'skipped') console.log(jobLine(++n, job, world.models.calls));
  };
  const status = (issue: number) =>
    line(
      `  #${issue} labels: ${gh.issues.get(issue)!.labels.join(', ') || '(none)'} · “${progressOf(world, issue)?.headline ?? '—'}”`,
    );
  const ours = (issue: number, marker: string) =>
    gh.commentsOn(issue).find((c) => c.user === BOT_LOGIN && c.body.startsWith(marker));
  try {
    const issue = gh.issue({ ...STATS_INTENT, author: 'alice' });
    console.log(bold(`#${issue.number} ${issue.title}`) + dim(' (opened by alice)'));
    console.log(dim(`    “${issue.body}”`));
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    jobs(await world.lc.runUntilQuiet());
    const brief = ours(issue.number, BRIEF_MARKER);
    if (brief) {
      console.log('  the discovery brief (one comment; its hash in the signed state), in part:');
      for (const l of brief.body
        .split('\n')
        .filter((l) => /^### |^- /.test(l))
        .slice(0, 9))
        console.log(`    ${l.length > 110 ? `${l.slice(0, 107)}...` : l}`);
    }
    const directions = ours(issue.number, DIRECTIONS_MARKER);
    status(issue.number);
    if (!directions) return stopsHere(`shape is not built yet, so the issue waits at ${labelFor('shape')}.`);
    console.log('  the directions comment:');
    for (const l of directions.body.split('\n').filter((l) => /^### |^\*\*Size/.test(l))) console.log(`    ${l}`);

    console.log(`    ${bold('alice replies')}: “${PICK_B}”`);
    await world.asAlice('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { body: PICK_B });
    jobs(await world.lc.runUntilQuiet());
    const final = ours(issue.number, FINAL_MARKER);
    const shape = progressOf(world, issue.number)?.state?.shape;
    if (final)
      console.log(
        `  ${
          final.body
            .split('\n')
            .find((l) => l.startsWith('## '))
            ?.replace(/^## /, '') ?? ''
        }`,
      );
    if (shape?.replies.length)
      console.log(
        `  signals read from alice’s reply (no model): ${shape.replies.at(-1)!.signals.join(', ') || '(none)'}`,
      );
    status(issue.number);
    if (!shape?.selected) return stopsHere('the reply chose nothing.');
    const subs = gh.subIssuesOf(issue.number);
    for (const sub of subs)
      line(`  sub-issue #${sub.number} “${sub.title}” · labels: ${sub.labels.join(', ') || '(none)'}`);
    if (subs.length === 0) return stopsHere('plan does not split a product-track issue into sub-issues yet.');
    const first = subs[0]!.number;
    const pull = [...gh.pulls.values()].find((p) => p.head.ref === `hydraflow/issue-${first}`);
    if (!pull) return stopsHere(`sub-issue #${first} has no pull request.`);
    console.log(`    ${bold('alice approves')} pull request #${pull.number} (phase 1): “Ship it.”`);
    await world.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, {
      event: 'APPROVE',
      body: 'Ship it.',
    });
    jobs(await world.lc.runUntilQuiet());
    line(
      `  pull request #${pull.number}: ${gh.pulls.get(pull.number)!.merged ? 'merged (squash)' : 'NOT merged'} · sub-issue #${first}: ${gh.issues.get(first)!.state}`,
    );
    for (const sub of gh.subIssuesOf(issue.number))
      line(`  sub-issue #${sub.number} “${sub.title}” · ${sub.state} · labels: ${sub.labels.join(', ') || '(none)'}`);

    const second = gh.issue({ ...STRINGS_INTENT, author: 'alice' });
    console.log(bold(`\n#${second.number} ${second.title}`) + dim(' (opened by alice, later)'));
    world.lc.dispatch('issues', 'opened', { issue: second.number, sender: 'alice' });
    jobs(await world.lc.runUntilQuiet());
    status(second.number);
    const asked = world.models.calls.find((c) => c.role === 'shape' && c.request?.issue === second.number);
    const prompt = asked?.request?.messages[0]?.content ?? '';
    const memories = /^# Preference memories[^\n]*\n(?:.+\n?)*/m.exec(prompt)?.[0]?.trimEnd();
    if (!memories) return stopsHere('no shape request was recorded for the second issue.');
    console.log('  its shape request, as the model server recorded it — the memories part:');
    for (const l of memories.split('\n')) console.log(`    ${l.length > 150 ? `${l.slice(0, 147)}...` : l}`);
    if (!memories.includes(`#${issue.number}`))
      stopsHere('nothing is recalled into shape yet (the memory store is not wired in).');
    console.log(dim(`  ${((Date.now() - t0) / 1000).toFixed(1)} s for the product track, world setup included.`));
  } finally {
    await world.close();
  }
}

/** Part 5: the adversarial layer's plan council, converging and oscillating, and a known gap carried to memory. */
async function adversarialPart(): Promise<void> {
  console.log(
    bold('\n\n5. The adversarial layer') + ' — `adversarial.enabled: true`: a complexity gate, then the plan council',
  );
  console.log(
    `   (Builder, Tester, Risk-Skeptic in parallel) argues with the plan before any code. The template again; answers ${bold('recorded')}`,
  );
  console.log('   (bench/lib/adversarial.ts): once the council converges, once it oscillates and the gap ships.\n');
  const options = { enabled: true, complexity: 5, latencyMs: 0, caching: true } as const;
  for (const voters of ['typical', 'oscillate'] as const) {
    const { world, issue, jobs } = await adversarialWorld({ ...options, voters });
    try {
      const state = () => stateOf(world.gh.world.commentsOn(issue), issue)!.adversarial!;
      const adv = state();
      const gate = adv.gate!;
      console.log(
        bold(`#${issue} ${world.gh.world.issues.get(issue)!.title}`) +
          dim(` (${voters === 'typical' ? 'converges' : 'oscillates'})`),
      );
      line(`complexity gate: ${gate.decision} (${gate.reasons.join(', ')})`);
      const council = adv.stages['plan-council']!;
      for (const r of council.rounds)
        line(
          `  round ${r.round}: ${r.voters.length} voter${r.voters.length === 1 ? '' : 's'} · blocking: ${r.blockers.join(', ') || 'none'}`,
        );
      line(`  Risk-Skeptic: “${EMPTY_LIST}”`);
      const revised = world.models.calls.filter((c) => c.role === 'plan').length - 1;
      line(
        `  the planner revised ${revised} time${revised === 1 ? '' : 's'} with the concern attached → stage ${council.status}`,
      );
      line(`  event log: ${adv.log.map((e) => e.type).join(' → ')}`);
      if (voters === 'typical') {
        line(
          `  labels: ${world.gh.world.issues.get(issue)!.labels.join(', ')} · pending concerns: ${adv.pending.length}`,
        );
        continue;
      }
      line(`  forwarded: the plan reviewer carried it on; code review carried it (the change does not decide it)`);
      const pull = [...world.gh.world.pulls.values()][0]!;
      await world.asAlice('POST', `/repos/acme/widgets/pulls/${pull.number}/reviews`, {
        event: 'APPROVE',
        body: 'Ship it.',
      });
      await world.lc.runUntilQuiet();
      const merged = world.gh.world.pulls.get(pull.number)!.merged;
      line(
        `  ${bold('alice approves')} → pull request #${pull.number}: ${merged ? 'merged (squash)' : 'NOT merged'} · ${state().log.at(-1)?.type}`,
      );
      const memory = execFileSync('git', ['show', 'hydraflow/memory:memory.md'], {
        cwd: world.sample.bareRepo,
      }).toString();
      console.log('  memory.md on hydraflow/memory, the known gap as knowledge (low confidence):');
      for (const l of memory.split('\n').filter((l) => l.includes('average([])'))) console.log(`    ${l}`);
      console.log(
        dim(`\n   ${jobs.length} jobs to the pull request; a trivial issue would have made no extra model call.`),
      );
    } finally {
      await world.close();
    }
  }
}

async function main(): Promise<void> {
  if (!existsSync(DIST_ENTRY)) throw new Error('dist/index.js is missing: run `pnpm build` first');
  console.log(bold('HydraFlow demo') + ' — everything runs on this machine; model answers are recorded, not live.\n');
  await triagePart();
  await lifecyclePart();
  await groomingPart();
  await productPart();
  await adversarialPart();
}

await main();
