import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoViolations, startGitHubEmulator, type GitHubEmulator } from '../src/github/index';
import { createLifecycle, formatTimeline, type Lifecycle, type LifecycleOptions } from '../src/lifecycle/index';
import { createSampleRepo, type SampleRepo } from '../src/sample-repo/index';
import { octokit } from './github-helpers';

let dir: string;
let sample: SampleRepo;
let gh: GitHubEmulator;
let lc: Lifecycle | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hydraflow-lifecycle-artifacts-'));
  sample = createSampleRepo(join(dir, 'sample'));
  gh = await startGitHubEmulator({ owner: 'acme', repo: 'widgets', git: { bareRepo: sample.bareRepo } });
  gh.addUser({ login: 'alice', permission: 'write' });
});

afterEach(async () => {
  lc?.close();
  lc = undefined;
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

async function lifecycle(files: Record<string, string>, options: Partial<LifecycleOptions> = {}) {
  const workflowsDir = join(dir, 'workflows');
  mkdirSync(workflowsDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(workflowsDir, name), text);
  lc = await createLifecycle({ gh, workflowsDir, repoDir: sample.bareRepo, ...options });
  return lc;
}

async function openIssue(sim: Lifecycle) {
  const issue = gh.world.issue({ title: 'Artifacts', author: 'alice' });
  sim.dispatch('issues', 'opened', { issue: issue.number });
  const jobs = await sim.runUntilQuiet();
  return { jobs, timeline: formatTimeline(jobs) };
}

const LIST_FILES = `find . -type f | sort | sed 's|^\\./||' > "$RUNNER_TEMP/files"
{ echo "files<<EOF"; cat "$RUNNER_TEMP/files"; echo EOF; } >> "$GITHUB_OUTPUT"`;

describe('lifecycle artifacts', () => {
  it('upload in one job, download by name and by id in the next; immutable, overwrite, hidden files, missing', async () => {
    const sim = await lifecycle({
      'artifacts.yml': `on:
  issues:
    types: [opened]
jobs:
  make:
    runs-on: ubuntu-latest
    outputs:
      id: \${{ steps.up.outputs.artifact-id }}
    steps:
      - run: |
          mkdir -p out/sub out/.hidden
          echo one > out/a.txt
          echo two > out/sub/b.txt
          echo key=secret > out/.env
          echo hidden > out/.hidden/c.txt
      - id: up
        uses: actions/upload-artifact@v4
        with:
          name: result
          path: out/
      - id: again
        continue-on-error: true
        uses: actions/upload-artifact@v4
        with:
          name: result
          path: out/a.txt
      - id: single
        uses: actions/upload-artifact@v4
        with:
          name: single
          path: out/a.txt
      - id: replaced
        uses: actions/upload-artifact@v4
        with:
          name: single
          path: |
            out/sub/*.txt
            out/a.txt
          overwrite: true
      - id: hidden
        uses: actions/upload-artifact@v4
        with:
          name: with-hidden
          path: out
          include-hidden-files: true
          retention-days: 1
      - id: nothing
        uses: actions/upload-artifact@v4
        with:
          name: nothing
          path: no-such-dir/
      - id: nothing-error
        continue-on-error: true
        uses: actions/upload-artifact@v4
        with:
          name: nothing
          path: no-such-dir/
          if-no-files-found: error
  use:
    needs: make
    runs-on: ubuntu-latest
    steps:
      - id: by-name
        uses: actions/download-artifact@v4
        with:
          name: result
          path: by-name
      - id: by-id
        uses: actions/download-artifact@v4
        with:
          artifact-ids: \${{ needs.make.outputs.id }}
          path: by-id-v4
      - uses: actions/download-artifact@v5
        with:
          artifact-ids: \${{ needs.make.outputs.id }}
          path: by-id-v5
      - uses: actions/download-artifact@v4
        with:
          pattern: 'with-*'
          path: ~/all
      - id: missing
        continue-on-error: true
        uses: actions/download-artifact@v4
        with:
          name: nope
      - id: missing-id
        continue-on-error: true
        uses: actions/download-artifact@v4
        with:
          artifact-ids: '1'
      - id: list
        run: |
          cp -r ~/all home-all
          ${LIST_FILES.replace(/\n/g, '\n          ')}
`,
    });
    const { jobs, timeline } = await openIssue(sim);
    expect(
      jobs.map((j) => [j.job, j.status]),
      timeline,
    ).toEqual([
      ['make', 'success'],
      ['use', 'success'],
    ]);
    const make = Object.fromEntries(jobs[0]!.steps.map((s) => [s.id, s]));
    const use = Object.fromEntries(jobs[1]!.steps.map((s) => [s.id, s]));
    const id = make.up!.outputs['artifact-id']!;
    expect(id).toMatch(/^\d+$/);
    expect(make.up!.outputs['artifact-url']).toBe(
      `https://github.com/acme/widgets/actions/runs/${jobs[0]!.runId}/artifacts/${id}`,
    );
    expect(make.up!.outputs['artifact-digest']).toMatch(/^[0-9a-f]{64}$/);
    expect(jobs[0]!.outputs).toEqual({ id });
    // immutable: the second upload of a name fails with GitHub's 409; overwrite replaces it under a new id
    expect(make.again!.outcome).toBe('failure');
    expect(make.again!.stdout).toContain(
      '::error::Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run',
    );
    expect(make.replaced!.outcome).toBe('success');
    expect(make.replaced!.outputs['artifact-id']).not.toBe(make.single!.outputs['artifact-id']);
    expect(make.nothing!.outcome).toBe('success');
    expect(make.nothing!.stdout).toContain('::warning::No files were found with the provided path: no-such-dir/');
    expect(make.nothing!.outputs).toEqual({});
    expect(make['nothing-error']!.outcome).toBe('failure');
    const stored = sim.artifacts.list(jobs[0]!.runId);
    expect(stored.map((a) => [a.name, a.files])).toEqual([
      ['result', ['a.txt', 'sub/b.txt']], // the directory's contents, relative to it; hidden ones skipped
      ['single', ['a.txt', 'sub/b.txt']], // two search paths: their least common ancestor (out/) is the root
      ['with-hidden', ['.env', '.hidden/c.txt', 'a.txt', 'sub/b.txt']],
    ]);
    expect(stored[0]!.size).toBe(8);
    expect(sim.artifacts.get(Number(make.single!.outputs['artifact-id']))).toBeUndefined();
    // download: by name straight into path; by id (v4) into path/<name>, (v5 and later) straight into path
    expect(use['by-name']!.outputs['download-path']).toMatch(/\/by-name$/);
    expect(use.list!.outputs.files!.split('\n')).toEqual([
      'by-id-v4/result/a.txt',
      'by-id-v4/result/sub/b.txt',
      'by-id-v5/a.txt',
      'by-id-v5/sub/b.txt',
      'by-name/a.txt',
      'by-name/sub/b.txt',
      'home-all/with-hidden/.env',
      'home-all/with-hidden/.hidden/c.txt',
      'home-all/with-hidden/a.txt',
      'home-all/with-hidden/sub/b.txt',
    ]);
    expect(use.missing!.outcome).toBe('failure');
    expect(use.missing!.stdout).toContain('::error::Unable to download artifact(s): Artifact not found for name: nope');
    expect(use['missing-id']!.stdout).toContain(
      '::error::Unable to download artifact(s): None of the provided artifact IDs were found',
    );
    // the REST API lists them for the run
    const api = octokit(gh.url, gh.addUser({ login: 'bob', permission: 'read' }).token);
    const listed = await api.rest.actions.listWorkflowRunArtifacts({
      owner: 'acme',
      repo: 'widgets',
      run_id: jobs[0]!.runId,
    });
    expect(listed.data.total_count).toBe(3);
    expect(listed.data.artifacts.map((a) => a.name).sort()).toEqual(['result', 'single', 'with-hidden']);
    const one = await api.rest.actions.getArtifact({ owner: 'acme', repo: 'widgets', artifact_id: Number(id) });
    expect(one.data).toMatchObject({
      id: Number(id),
      name: 'result',
      size_in_bytes: 8,
      expired: false,
      digest: `sha256:${make.up!.outputs['artifact-digest']}`,
      workflow_run: { id: jobs[0]!.runId },
    });
    await expect(
      api.rest.actions.getArtifact({ owner: 'acme', repo: 'widgets', artifact_id: 1 }),
    ).rejects.toMatchObject({ status: 404 });
    const named = await api.rest.actions.listArtifactsForRepo({ owner: 'acme', repo: 'widgets', name: 'single' });
    expect(named.data.artifacts.map((a) => a.id)).toEqual([Number(make.replaced!.outputs['artifact-id'])]);
    expectNoViolations(gh); // the responses match GitHub's OpenAPI description
  });

  it('artifacts outlive the run’s attempts: a re-run’s upload of the same name conflicts', async () => {
    const sim = await lifecycle({
      'rerun.yml': `on:
  issues:
    types: [opened]
jobs:
  make:
    runs-on: ubuntu-latest
    steps:
      - run: echo "attempt \${{ github.run_attempt }}" > note.txt
      - id: up
        uses: actions/upload-artifact@v4
        with:
          name: note
          path: note.txt
`,
    });
    const { jobs } = await openIssue(sim);
    expect(jobs[0]!.status).toBe('success');
    sim.rerun(jobs[0]!.runId);
    const again = await sim.runUntilQuiet();
    expect(again[0]!.status).toBe('failure');
    expect(again[0]!.steps[1]!.stdout).toContain('(409) Conflict');
    const [note] = sim.artifacts.list(jobs[0]!.runId);
    expect(readFileSync(join(note!.dir, 'note.txt'), 'utf8')).toBe('attempt 1\n');
  });

  it('a composite action runs for real: bash steps, inputs, action_path, if:, outputs, GITHUB_ENV, nested upload', async () => {
    const actionRoot = join(dir, 'action-root');
    mkdirSync(join(actionRoot, 'actions/pack'), { recursive: true });
    writeFileSync(
      join(actionRoot, 'actions/pack/action.yml'),
      `name: Pack
description: packs a word
inputs:
  what:
    description: the word
    default: hello
  artifact:
    description: artifact name
    default: packed-\${{ github.run_attempt }}
outputs:
  word:
    description: the word, decorated
    value: \${{ steps.w.outputs.word }}
  artifact-id:
    description: the upload's id
    value: \${{ steps.up.outputs.artifact-id }}
runs:
  using: composite
  steps:
    - id: w
      shell: bash
      run: |
        echo "word=\${{ inputs.what }}-$FROM_INPUT-$OUTER" >> "$GITHUB_OUTPUT"
        mkdir -p pack
        echo "\${{ inputs.what }}" > pack/word.txt
        echo "$GITHUB_ACTION_PATH|\${{ github.action_path }}" > pack/path.txt
        echo "LATER=set-by-composite" >> "$GITHUB_ENV"
        echo "## packed" >> "$GITHUB_STEP_SUMMARY"
      env:
        FROM_INPUT: \${{ inputs.artifact }}
    - if: inputs.what == 'never'
      shell: bash
      run: exit 1
    - id: up
      uses: actions/upload-artifact@v4
      with:
        name: \${{ inputs.artifact }}
        path: pack
`,
    );
    const sim = await lifecycle(
      {
        'composite.yml': `on:
  issues:
    types: [opened]
jobs:
  pack:
    runs-on: ubuntu-latest
    steps:
      - id: pack
        uses: acme/tools/actions/pack@v1
        with:
          what: hi
        env:
          OUTER: outer
      - id: after
        run: echo "later=$LATER" >> "$GITHUB_OUTPUT"
`,
      },
      { actionRoot },
    );
    const { jobs, timeline } = await openIssue(sim);
    expect(jobs[0]!.status, timeline).toBe('success');
    const [pack, after] = jobs[0]!.steps;
    expect(pack!.outputs.word).toBe('hi-packed-1-outer');
    expect(pack!.outputs['artifact-id']).toMatch(/^\d+$/);
    expect(pack!.summary).toBe('## packed\n');
    expect(after!.outputs.later).toBe('set-by-composite');
    const artifact = sim.artifacts.get(Number(pack!.outputs['artifact-id']))!;
    expect(artifact.name).toBe('packed-1');
    expect(artifact.files).toEqual(['path.txt', 'word.txt']);
    const actionPath = join(actionRoot, 'actions/pack');
    expect(readFileSync(join(artifact.dir, 'path.txt'), 'utf8')).toBe(`${actionPath}|${actionPath}\n`);
  });

  it('a composite’s own steps judge success() and failure() by the composite’s steps, not the job’s (as GitHub’s runner does)', async () => {
    const actionRoot = join(dir, 'status-root');
    mkdirSync(join(actionRoot, 'actions/status'), { recursive: true });
    writeFileSync(
      join(actionRoot, 'actions/status/action.yml'),
      `name: Status
description: says which of its steps ran
inputs:
  fail:
    description: whether its first step fails
    default: 'no'
outputs:
  ran:
    description: the steps that ran
    value: \${{ steps.a.outputs.ran }}\${{ steps.b.outputs.ran }}\${{ steps.c.outputs.ran }}
runs:
  using: composite
  steps:
    - id: a
      shell: bash
      run: echo "ran=a" >> "$GITHUB_OUTPUT"; [ "\${{ inputs.fail }}" != yes ]
    - id: b
      shell: bash
      run: echo "ran=b" >> "$GITHUB_OUTPUT"
    - id: c
      if: failure()
      shell: bash
      run: echo "ran=c" >> "$GITHUB_OUTPUT"
`,
    );
    const sim = await lifecycle(
      {
        'status.yml': `on:
  issues:
    types: [opened]
jobs:
  s:
    runs-on: ubuntu-latest
    steps:
      - run: exit 3
      - id: after-failure
        if: always()
        uses: acme/tools/actions/status@v1
      - id: failing
        if: always()
        uses: acme/tools/actions/status@v1
        with:
          fail: 'yes'
`,
      },
      { actionRoot },
    );
    const { jobs, timeline } = await openIssue(sim);
    expect(jobs[0]!.status, timeline).toBe('failure');
    const [, afterFailure, failing] = jobs[0]!.steps;
    // entered by always() after a failed step of the job: its own steps run under the default success()
    expect(afterFailure!.outputs.ran, timeline).toBe('ab');
    // its own first step failed: the next one is skipped, its failure() step runs
    expect(failing!.outputs.ran, timeline).toBe('ac');
  });

  it('an action the simulator does not know is a clear error', async () => {
    const sim = await lifecycle({
      'unknown.yml': `on:
  issues:
    types: [opened]
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: someone/else@v1
`,
    });
    gh.world.issue({ title: 'x', author: 'alice' });
    sim.dispatch('issues', 'opened', { issue: 1 });
    await expect(sim.runUntilQuiet()).rejects.toThrow(/uses: someone\/else@v1 is not simulated/);
  });
});
