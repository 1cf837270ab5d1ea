import { readFileSync } from 'node:fs';
import { provideSdkGlobals } from '@hydraflow/http/headers';
import { quickSkip } from './prefilter';
import { CONFINED_ARG, enterConfinement, rootDropPlan, runAgentWithoutRoot } from './runner/drop-root';
import { createRunnerIO } from './runner/io';

// The agent, started confined by the agent step (runner/drop-root.ts): its environment comes through the gate.
const confined = process.argv[2] === CONFINED_ARG;
if (confined) await enterConfinement();

// Events that need no work exit here, before the heavy modules (config, SDKs) are loaded: they are most events.
const eventName = process.env.GITHUB_EVENT_NAME ?? '';
let payload: Parameters<typeof quickSkip>[1] = {};
try {
  payload = JSON.parse(readFileSync(process.env.GITHUB_EVENT_PATH ?? '', 'utf8')) as typeof payload;
} catch {
  // run() reports a missing or unreadable event with a proper message.
}
const skip = quickSkip(eventName, payload, Boolean(process.env.INPUT_PHASE?.trim()));
const io = createRunnerIO();
// The agent job's model proxy, started by actions/model-proxy as a detached process of this bundle.
const proxy = process.argv[2] && !confined ? await import('./agents/model-proxy') : undefined;
if (proxy && process.argv[2] === proxy.SERVE_ARG) {
  await proxy.serveModelProxy();
} else if (process.env.INPUT_PHASE === 'model-proxy') {
  // actions/model-proxy: on the agent job's critical path, so it loads nothing but the proxy's launcher
  const { startProxyStep } = await import('./agents/model-proxy');
  for (const key of ['INPUT_ANTHROPIC-API-KEY', 'INPUT_OPENAI-API-KEY'])
    if (process.env[key]) io.mask(process.env[key]);
  const handle = await startProxyStep(process.env, process.argv[1]!);
  if (typeof handle === 'string') {
    io.error(handle);
    process.exitCode = 1;
  } else {
    io.mask(handle.token);
    io.setOutput('proxy', JSON.stringify({ url: handle.url, token: handle.token }));
    // set before any repository code runs: the publish job checks the proxy's count of the spend with it
    io.setOutput('meter-key', handle.meterKey);
  }
} else if (process.env.INPUT_PHASE === 'agent-leftovers') {
  // actions/agent's last step when the agent step handed on nothing: the model proxy's count goes to the publish job
  await (await import('./phases/agent-leftovers')).handOnLeftovers(process.env, io).catch((error: Error) => {
    io.error(`HydraFlow: ${error.message}`);
    process.exitCode = 1;
  });
} else if (process.env.INPUT_PHASE?.trim() === 'agent' && !confined && agentDropsRoot()) {
  process.exitCode = await runAgentWithoutRoot(process.env, process.argv[1]!, io);
} else if (skip) {
  io.setOutput('decision', 'skip');
  io.info(`HydraFlow: nothing to do (${skip})`);
} else {
  // the publish job's git round trip begins first, while the rest loads and the state is read (phases/publish-fetch.ts)
  if (process.env.INPUT_PHASE?.trim() === 'publish')
    (await import('./phases/publish-fetch')).beginPublishFetch(
      process.env,
      payload as { repository?: { default_branch?: string } },
    );
  // a job with no checkout reads its configuration through the API: that round trip too begins before the rest loads
  else if (!process.env['INPUT_RUN-CONFIG']?.trim()) {
    const [{ beginRemoteConfig, remoteConfigSource }, { nodeFetch }] = await Promise.all([
      import('./runner/remote-config'),
      import('@hydraflow/http'),
    ]);
    beginRemoteConfig(process.env.GITHUB_WORKSPACE || process.cwd(), remoteConfigSource(process.env, nodeFetch));
  }
  provideSdkGlobals(); // before any model SDK loads (packages/http/src/headers.ts)
  const { run } = await import('./run');
  const result = await run(process.env, { io });
  if (result.failed) process.exitCode = 1;
}

/** Whether this agent step starts the agent without root (it says why not in the log when it cannot). */
function agentDropsRoot(): boolean {
  const plan = rootDropPlan(process.env);
  if (!plan.drop && plan.note) io.warning(`HydraFlow: ${plan.note}`);
  return plan.drop;
}
