/**
 * doctor through the built dist/, against the emulator's settings: a workflow_dispatch of phase doctor (no issue)
 * writes its findings to the job summary; /doctor on an issue replies with them. With GITHUB_TOKEN alone the admin-only
 * settings cannot be read and it says so; a push App with administration rights reads them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorld, REPO_ROOT, type World } from '@hydraflow/testkit';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const dispatchDoctor = (w: World, inputs: Record<string, string> = {}) =>
  w.run('workflow_dispatch', undefined, { inputs: { phase: 'doctor' } }, { inputs });

describe('doctor', () => {
  it('from the Actions tab: the job summary lists each problem with its fix; nothing is written to GitHub', async () => {
    world = await createWorld();
    world.gh.world.actionsSettings.can_approve_pull_request_reviews = false;
    world.gh.world.files.set('.github/workflows/hydraflow.yml', 'name: HydraFlow\n');
    const admin = world.gh.addApp({ login: 'hydraflow-admin', permission: 'admin' });
    const before = world.gh.requests.filter((r) => r.method !== 'GET').length;
    const run = await dispatchDoctor(world, { 'state-key': '', 'push-token': admin.token });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.summary).toContain('### HydraFlow doctor: 1 problem to fix');
    expect(run.summary).toContain('Fix: add the secret HYDRAFLOW_STATE_KEY');
    expect(run.summary).toMatch(/`main` is not protected/);
    expect(run.summary).toContain('✅ .github/workflows/hydraflow.yml is on `main`');
    // with the App's token the Actions settings were readable: PR creation is allowed with a push identity anyway
    expect(run.summary).toContain('HydraFlow can open pull requests');
    // the simulated runner's steps run as this process's user: as root here, which the doctor notes
    if (process.getuid?.() === 0) expect(run.summary).toContain('can become root (it is root)');
    expect(world.gh.requests.filter((r) => r.method !== 'GET').length).toBe(before);
  });

  it('with GITHUB_TOKEN only, it says which settings it could not read; a missing setting with no push identity is a problem', async () => {
    world = await createWorld();
    const run = await dispatchDoctor(world);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.summary).toContain('could not read the Actions settings with this token');
    expect(run.summary).toContain('could not read the protection of `main`');
    expect(run.summary).toContain('no push identity');
    expect(run.summary).toContain('❌ .github/workflows/hydraflow.yml is not on the default branch `main`');
  });

  it('a project with a lockfile and the template as copied: its setup is missing, and the fix names npm ci', async () => {
    world = await createWorld();
    const template = readFileSync(join(REPO_ROOT, 'workflows-templates/hydraflow.yml'), 'utf8');
    world.gh.world.files.set('.github/workflows/hydraflow.yml', template);
    world.gh.world.files.set('package.json', '{"name":"app","scripts":{"test":"node --test"}}\n');
    world.gh.world.files.set('package-lock.json', '{"lockfileVersion":3}\n');
    const bare = await dispatchDoctor(world);
    expect(bare.exitCode, bare.stdout).toBe(0);
    expect(bare.summary).toContain(
      "❌ the workflow's agent job installs nothing before the coding agent runs its tests, but the repository has `package-lock.json`",
    );
    expect(bare.summary).toContain('e.g. `- run: npm ci` after the toolchain');
    const marker = '      # YOUR SETUP GOES HERE';
    world.gh.world.files.set(
      '.github/workflows/hydraflow.yml',
      template.replace(marker, `      - uses: actions/setup-node@v5\n      - run: npm ci\n${marker}`),
    );
    const setUp = await dispatchDoctor(world);
    expect(setUp.summary).toContain('✅ the agent job runs 2 setup steps of yours before the coding agent');
    expect(setUp.summary).not.toContain('installs nothing');
    expect(world.gh.violations).toEqual([]); // the tree and the file were read as GitHub's OpenAPI description says
  });

  it('/doctor on an issue replies with the findings', async () => {
    world = await createWorld();
    const issue = world.gh.world.issue({ title: 'Setup', body: 'Is HydraFlow set up right?', author: 'alice' });
    world.gh.addUser({ login: 'alice', permission: 'write' });
    const comment = world.gh.world.comment(issue.number, { body: '/doctor', author: 'alice' });
    const run = await world.run('issue_comment', 'created', {
      issue: issue.number,
      comment: comment.id,
      sender: 'alice',
    });
    expect(run.exitCode, run.stdout).toBe(0);
    const reply = world.gh.world.commentsOn(issue.number).find((c) => c.body.includes('HydraFlow doctor'));
    expect(reply?.body).toContain('could not read the Actions settings');
  });
});
