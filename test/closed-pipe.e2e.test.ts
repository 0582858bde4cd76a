// A closed stderr or stdout never stops a paying command (issue 36, item 7): `loopsign ask … 2>&1 | head -2` reads two
// lines of progress and closes the pipe; the ask goes on to its end (exit 0, the question paid and confirmed once),
// which a rerun proves by sending nothing.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

let sb: SandboxHandle;
let home: Home;

beforeAll(async () => {
  ({ sb, home } = await openSession({ autoAdvance: true, pollAfterMs: 200, rateLimits: { write: 10_000, read: 10_000 } }));
});
afterAll(async () => {
  await sb.stop();
});

describe('a paying command whose output pipe closes', () => {
  for (const [name, redirect] of [
    ['stdout and stderr (2>&1 | head -2)', '2>&1 | head -2'],
    ['stderr alone (2> >(head -1))', '2> >(head -1 >/dev/null) | cat'],
  ] as const) {
    it(`finishes the ask: ${name}`, async () => {
      const id = `closed-pipe-${process.pid}-${Date.now()}`;
      const file = home.file(
        `${id}.json`,
        JSON.stringify({
          chainId: 31337,
          clientRequestId: id,
          maxPaymentAmount: '1500000',
          bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
          roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
          question: { title: `Closed pipe ${id}`, contextUrl: 'https://example.com/context', categoryId: '1', tags: ['agent'] },
        }),
      );
      const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ask --file ${JSON.stringify(file)} --payment-mode wallet_calls ${redirect}; exit \${PIPESTATUS[0]}`;
      const r = spawnSync('bash', ['-c', cmd], { cwd: home.dir, env: childEnv(home, sb.env()), encoding: 'utf8', timeout: 540_000 });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const again = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, { env: sb.env() });
      expect(again.code, again.stderr).toBe(0);
      expect(again.json()).toMatchObject({ resumed: true, status: 'submitted', sentThisRun: 0 });
      expect(again.json().transactions).toBeGreaterThan(0);
    });
  }
});
