// Loaded with `node --import` into a HydraFlow step's process by the test world (simulated-clock.ts): installs the
// simulated clock where the action looks for one (src/runner/clock.ts), so the step's waits on GitHub's rate limits
// advance the test's clock instead of passing, and its "now" is the emulated GitHub's. Plain JavaScript: the step runs
// the built dist/ under plain node.
import { request } from 'node:http';
import process from 'node:process';

const url = process.env.SIMULATED_CLOCK_URL;
let offset = Number(process.env.SIMULATED_CLOCK_OFFSET_MS ?? '0');

if (url) {
  globalThis[Symbol.for('hydraflow.clock')] = {
    now: () => Date.now() + offset,
    sleep: (ms) =>
      new Promise((resolve, reject) => {
        const req = request(`${url}/advance?ms=${Math.max(0, Math.round(ms))}`, { method: 'POST' }, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => {
            offset = Number(body); // the test's clock, which this sleep just moved
            resolve();
          });
        });
        req.on('error', reject);
        req.end();
      }),
  };
}
