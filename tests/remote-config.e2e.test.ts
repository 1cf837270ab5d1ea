/**
 * The configuration of a job with no checkout (docs/adr/0020-no-checkout-in-the-routing-job.md), read from the
 * GitHub emulator over HTTP: one GraphQL request for both default names at the default branch's last commit.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFetch } from '@hydraflow/http';
import {
  commitToBranch,
  createSampleRepo,
  initBareRepo,
  SAMPLE_CONFIG,
  startGitHubEmulator,
  type GitHubEmulator,
} from '@hydraflow/testkit';
import { remoteConfigFile, remoteConfigSource } from '../src/runner/remote-config';

let gh: GitHubEmulator | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

async function read(bareRepo: string, env: Record<string, string> = {}) {
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo } });
  const source = remoteConfigSource(
    { GITHUB_REPOSITORY: 'acme/widgets', GITHUB_API_URL: gh.url, 'INPUT_GITHUB-TOKEN': gh.botToken, ...env },
    nodeFetch,
  )!;
  return remoteConfigFile(mkdtempSync(join(tmpdir(), 'hydraflow-workspace-')), source);
}

const sampleRepo = (files?: Record<string, string | null>) => {
  const sample = createSampleRepo(mkdtempSync(join(tmpdir(), 'hydraflow-remote-config-')));
  if (files) commitToBranch(sample.bareRepo, 'main', files, 'config');
  return sample.bareRepo;
};

describe('the configuration through the API', () => {
  it('is the default branch’s .github/hydraflow.yml, read in one request', async () => {
    expect(await read(sampleRepo())).toEqual({ path: '.github/hydraflow.yml', text: SAMPLE_CONFIG });
    expect(gh!.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /graphql 200']);
  });

  it('is .github/hydraflow.yaml when only that exists, in the same one request; nothing when neither does', async () => {
    const yaml = 'clarity_threshold: 8\n';
    expect(await read(sampleRepo({ '.github/hydraflow.yml': null, '.github/hydraflow.yaml': yaml }))).toEqual({
      path: '.github/hydraflow.yaml',
      text: yaml,
    });
    expect(gh!.requests).toHaveLength(1);
    await gh!.close();
    expect(await read(sampleRepo({ '.github/hydraflow.yml': null }))).toBeUndefined();
    expect(gh!.requests).toHaveLength(1);
  });

  it('is the path named by input config-path, and only that one', async () => {
    const text = 'clarity_threshold: 9\n';
    const file = await read(sampleRepo({ 'ci/hydraflow.yml': text }), { 'INPUT_CONFIG-PATH': 'ci/hydraflow.yml' });
    expect(file).toEqual({ path: 'ci/hydraflow.yml', text });
  });

  it('is nothing in a repository with no commit yet', async () => {
    const bare = join(mkdtempSync(join(tmpdir(), 'hydraflow-empty-')), 'remote.git');
    initBareRepo(bare);
    expect(await read(bare)).toBeUndefined();
  });

  it('asks again after a 5xx, and says so in one line when GitHub keeps failing or refuses the token', async () => {
    const bare = sampleRepo();
    gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: bare } });
    const source = remoteConfigSource(
      { GITHUB_REPOSITORY: 'acme/widgets', GITHUB_API_URL: gh.url, 'INPUT_GITHUB-TOKEN': gh.botToken },
      nodeFetch,
    )!;
    const workspace = () => mkdtempSync(join(tmpdir(), 'hydraflow-workspace-'));
    gh.faults.failNext(2, 502, { pathIncludes: '/graphql' });
    expect((await remoteConfigFile(workspace(), source))?.text).toBe(SAMPLE_CONFIG);
    gh.faults.failNext(3, 503, { pathIncludes: '/graphql' });
    await expect(remoteConfigFile(workspace(), source)).rejects.toThrow(
      /^reading \.github\/hydraflow\.yml or \.github\/hydraflow\.yaml on the default branch failed 3 times \(GitHub answered 503\); re-run the job$/,
    );
    await expect(remoteConfigFile(workspace(), { ...source, token: 'ghs_not-a-token' })).rejects.toThrow(
      /^reading \.github\/hydraflow\.yml or \.github\/hydraflow\.yaml on the default branch: .+; the routing job needs permission contents: read$/,
    );
  }, 30_000);
});
