import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../../testkit/src/models/index';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FIXTURE = join(import.meta.dirname, 'fixtures', 'call-in-fresh-process.ts');

// Each HydraFlow step is a fresh process, and undici (behind Node's lazily defined Headers and FormData, which both SDKs
// touch on every request) costs it ~50 ms of CPU before its first model call (docs/performance.md). On Node 20 the
// process must make its call without loading it; on Node 24, where any touch of those globals (reading or replacing
// them) loads undici, the call must still work. Either way, what does need FormData must still get Node's own.
const globalsAreAccessors = Number(process.versions.node.split('.')[0]) === 20;

describe.each(['anthropic', 'openai'] as const)('%s provider in a fresh process', (kind) => {
  it(`makes a structured call${globalsAreAccessors ? ' without loading undici' : ''}; FormData still works`, async () => {
    // the server refuses any other key: the SDK's headers, built with FetchHeaders, reached it intact
    server = await startModelServer({ script: { triage: { json: { verdict: 'ready' } } }, apiKeys: ['test-key'] });
    const baseUrl = kind === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl;
    const model = kind === 'anthropic' ? 'claude-sonnet-4-6' : 'gpt-5-mini';
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', FIXTURE, kind, baseUrl, model], {
      timeout: 30_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(report).toEqual({
      value: { verdict: 'ready' },
      undiciLoadedByTheCall: !globalsAreAccessors,
      formData: { isInstance: true, value: '1', plainObject: false },
      headers: '[object Headers]',
    });
    expect(server.calls).toHaveLength(1);
  });
});
