import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@hydraflow/testkit';

// The README's first quick-start command: `pnpm demo` must run to the end on a fresh clone and tell the whole story.
describe('pnpm demo', () => {
  it('triages the three samples, takes one issue from opened to a squash-merged pull request, grooms one, and takes a vague issue down the product track, and shows the plan council converging and a known gap shipped into memory', async () => {
    // Not a TTY, so the demo prints no colour codes.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      cwd: REPO_ROOT,
      maxBuffer: 10 * 1024 * 1024,
    });
    expect(stdout).toMatch(/model answers are recorded/i);
    expect(stdout).toMatch(/labels: hydraflow-plan · dispatched: plan/);
    expect(stdout).toMatch(/labels: hydraflow-discover · dispatched: discover/);
    expect(stdout).toMatch(/labels: hydraflow-hitl/);
    expect(stdout).toMatch(/pull request #\d+ “.+”: merged \(squash\)/);
    expect(stdout).toMatch(/issue #1: closed, labels: hydraflow-fixed/);
    expect(stdout).toMatch(/\+export function average\(numbers\)/);
    // Grooming: the question in the seed's format, then answered and struck through; the work split into phases.
    expect(stdout).toContain('- [ ] **What does mode() return on ties?**');
    expect(stdout).toContain('- [x] ~~What does mode() return on ties?~~');
    expect(stdout).toMatch(/sub-issue #\d+ “\[Phase 1\]: Add mode\(numbers\)” · labels: groomed, hydraflow-plan/);
    // The product track: a vague issue researched, shaped, chosen by comment, planned into sub-issues, phase 1 merged;
    // the next vague issue's recorded shape request recalls alice's preference.
    expect(stdout).toContain('4. The product track');
    expect(stdout).toMatch(/discover → stage shape/);
    expect(stdout).toContain(
      '- Add average() and median() next to sum(), reusing it, with the empty-list rule of sum().',
    );
    expect(stdout).toContain('### B · Quick & Focused');
    expect(stdout).toContain('Direction chosen: B · Quick & Focused');
    expect(stdout).toContain('signals read from alice’s reply (no model): scope_narrow');
    expect(stdout).toMatch(/sub-issue #2 “\[Phase 1\]: Add average\(numbers\)” · closed · labels: hydraflow-fixed/);
    expect(stdout).toMatch(/pull request #\d+: merged \(squash\) · sub-issue #2: closed/);
    expect(stdout).toMatch(/- On #1, alice said \(scope_narrow\): "B, just the MVP/);
    expect(stdout).not.toContain('The journey stops here');
    // The adversarial layer: the council converges once; then it oscillates, and the gap ships into memory.
    expect(stdout).toContain('5. The adversarial layer');
    expect(stdout).toMatch(/complexity gate: load_bearing \(complex\)/);
    expect(stdout).toMatch(/round 1: 3 voters · blocking: risk-skeptic\n.*round 2: 1 voter · blocking: none/);
    expect(stdout).toContain('→ stage converged');
    expect(stdout).toMatch(/round 2: 1 voter · blocking: risk-skeptic/);
    expect(stdout).toContain('→ OscillationDetected → AdversarialStageCompleted');
    expect(stdout).toMatch(/alice approves → pull request #\d+: merged \(squash\) · ShippedWithKnownGap/);
    expect(stdout).toMatch(
      /\| Shipped with a known gap in #\d+ \(high, Risk-Skeptic at plan-council\): average\(\[\]\) divides by zero/,
    );
  }, 120_000);
});
