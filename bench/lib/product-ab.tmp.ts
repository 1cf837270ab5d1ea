import { productTrackScript, VAGUE_ISSUE } from './product-track';
import { lifecycleWorld } from '../../tests/lifecycle/scenario';
const roots = process.argv.slice(2);
const out: Record<string, number[]> = {};
for (let i = 0; i < 6; i++)
  for (const root of roots) {
    const world = await lifecycleWorld(productTrackScript(1500), {}, { actionRoot: root });
    const issue = world.gh.world.issue({ ...VAGUE_ISSUE, author: 'alice' });
    const t0 = performance.now();
    world.lc.dispatch('issues', 'opened', { issue: issue.number, sender: 'alice' });
    await world.lc.runUntilQuiet();
    const ms = performance.now() - t0;
    const calls = world.models.calls.filter((c) => c.status === 200).length;
    await world.close();
    if (i > 0) (out[root] ??= []).push(ms / (calls * 1500));
    console.log(root, Math.round(ms), calls);
  }
for (const [r, v] of Object.entries(out)) console.log(r, v.sort()[Math.floor(v.length / 2)]?.toFixed(3), v.map((x) => x.toFixed(3)).join(' '));
