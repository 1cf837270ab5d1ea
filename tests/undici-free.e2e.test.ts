import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorld, MODEL_API_KEY, type World } from '@hydraflow/testkit';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const clearVerdict = {
  clarity_score: 9,
  complexity_score: 3,
  needs_discovery: false,
  enrichment: 'Touches the pagination helper of the users endpoint.',
  reasons: ['Precise expected behaviour.'],
};

/** NODE_OPTIONS that make the step's process write the modules it loaded to `file` as it exits. */
function moduleProbe(file: string): string {
  const code = `import{writeFileSync}from'node:fs';process.on('exit',()=>writeFileSync(${JSON.stringify(file)},JSON.stringify(process.moduleLoadList)))`;
  return `--import=data:text/javascript,${encodeURIComponent(code)}`;
}

// Each HydraFlow step is a fresh process, and both model SDKs use Headers and FormData on every request; the first touch
// of Node's own loads undici, ~30–50 ms of CPU before the step's first model call (docs/performance.md), although every
// request goes through HydraFlow's own fetch. The bundle hands the SDKs HydraFlow's Headers and a FormData that loads
// Node's only when one is made (scripts/build.ts, packages/http/src/headers.ts). Holds on Node 20 and Node 24 alike.
describe.each(['anthropic', 'openai'] as const)('a triage step through dist/ (%s)', (provider) => {
  it('calls the model, with its key in the SDK’s headers, and loads no undici', async () => {
    // the server refuses any other key: the SDK's headers, built with HydraFlow's Headers, reached it intact
    world = await createWorld({
      provider,
      script: { triage: { json: clearVerdict } },
      models: { apiKeys: [MODEL_API_KEY] },
    });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const issue = world.gh.world.issue({ title: 'Paginate GET /users', body: 'Return 50 per page.', author: 'alice' });
    const file = join(mkdtempSync(join(tmpdir(), 'hydraflow-modules-')), 'modules.json');
    const run = await world.run(
      'issues',
      'opened',
      { issue: issue.number },
      { inputs: { phase: 'triage' }, env: { NODE_OPTIONS: moduleProbe(file) } },
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.stage).toBe('plan');
    expect(world.models.calls.filter((c) => c.status === 200)).toHaveLength(1);
    const modules = JSON.parse(readFileSync(file, 'utf8')) as string[];
    expect(modules.some((m) => m.includes('node:http') || m.includes('_http_client'))).toBe(true); // the probe saw the step
    expect(modules.filter((m) => m.includes('undici'))).toEqual([]);
  });
});
