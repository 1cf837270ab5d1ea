/**
 * `pnpm demo`: HydraFlow's main job on an embedded default. Starts the test world (a GitHub emulator and a model
 * server replaying RECORDED answers), opens three sample issues, and runs the built action on each real webhook
 * payload exactly as GitHub Actions would, following workflow_dispatch chains. Prints a timeline.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeStateBlock, formatUsd, ledgerTotals } from '@hydraflow/core';
import { BOT_LOGIN, createWorld, DIST_ENTRY, REPO_ROOT, type ScriptEntry, type World } from '@hydraflow/testkit';
import { existsSync } from 'node:fs';

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

function progressOf(world: World, issue: number) {
  const comment = world.gh.world
    .commentsOn(issue)
    .find((c) => c.user === BOT_LOGIN && c.body.includes('hydraflow:progress'));
  if (!comment) return undefined;
  const headline = /^\*\*(.+)\*\*$/m.exec(comment.body)?.[1];
  const decoded = decodeStateBlock(comment.body, { key: world.stateKey, issue });
  return { comment, headline, state: decoded.status === 'valid' ? decoded.state : undefined };
}

async function main(): Promise<void> {
  if (!existsSync(DIST_ENTRY)) throw new Error('dist/index.js is missing: run `pnpm build` first');
  const world = await createWorld({
    script: {
      triage: (req) =>
        recordings[SAMPLES.find((s) => req.messages[0]?.content.includes(s.title))?.title ?? ''] ?? {
          text: 'no recording',
        },
    },
  });
  console.log(bold('HydraFlow demo') + ' — the built action (dist/) on real webhook payloads, against');
  console.log(`  a GitHub emulator at ${world.gh.url} and a model server at ${world.models.url}.`);
  console.log(
    `  Model answers are ${bold('recorded')} (demo/recorded-model.json) and replayed with their latency; nothing leaves this machine.\n`,
  );
  world.gh.addUser({ login: 'dana', permission: 'write' });

  try {
    for (const sample of SAMPLES) {
      const issue = world.gh.world.issue({ title: sample.title, body: sample.body, author: 'dana' });
      console.log(bold(`\n#${issue.number} ${issue.title}`));
      line(`issues.opened by dana → HydraFlow runs (as GitHub Actions would)`);
      const requestsBefore = world.gh.requests.length;
      const run = await world.run('issues', 'opened', { issue: issue.number });
      line(
        `  decision: ${run.outputs.decision} · exit ${run.exitCode} · ${Math.round(run.durationMs)} ms · ${world.gh.requests.length - requestsBefore} GitHub requests`,
      );
      const after = progressOf(world, issue.number);
      line(`  labels: ${world.gh.world.issues.get(issue.number)!.labels.join(', ') || '(none)'}`);
      line(`  progress comment: “${after?.headline ?? '—'}”`);
      const totals = ledgerTotals(after?.state?.ledger ?? []);
      line(`  cost so far: ${formatUsd(totals.usd)} (${totals.tokens} tokens)`);

      // Follow workflow_dispatch chains the way GitHub would start the dispatched workflow.
      let seen = world.gh.world.dispatches.length - (run.exitCode === 0 ? 1 : 0);
      while (seen < world.gh.world.dispatches.length) {
        const dispatch = world.gh.world.dispatches[seen]!;
        if (dispatch.inputs.issue !== String(issue.number)) break;
        line(
          `workflow_dispatch → ${dispatch.workflow_id} (phase ${dispatch.inputs.phase}, actor ${dispatch.inputs.actor})`,
        );
        const next = await world.runDispatch(seen);
        seen += 1;
        line(`  decision: ${next.outputs.decision} · exit ${next.exitCode}`);
        line(`  progress comment: “${progressOf(world, issue.number)?.headline ?? '—'}”`);
      }
    }

    const example = progressOf(world, 1);
    console.log(bold('\nThe progress comment on #1, as a human sees it on GitHub:\n'));
    console.log(
      example?.comment.body.replace(/<!-- hydraflow:state[^]*?-->/, '<!-- hydraflow:state … signed hidden state … -->'),
    );
    const total = ledgerTotals([1, 2, 3].flatMap((n) => progressOf(world, n)?.state?.ledger ?? []));
    console.log(bold('\nSummary'));
    console.log(
      `  ${world.gh.requests.length} GitHub requests, ${world.models.calls.length} model calls, ${formatUsd(total.usd)} at list prices.`,
    );
    console.log(
      `  Later phases (plan, discover, ...) are not in this version: the dispatched runs say so on the issue.`,
    );
  } finally {
    await world.close();
  }
}

await main();
