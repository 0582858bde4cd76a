// One sandbox per state folder (issue 36, item 7): a second `loopsign sandbox --state-dir SAME` is exit 2 naming the
// first's pid, before it writes anything there; the first is untouched (its manifest, dev wallet and API key the same
// bytes, its service still answering), and once the first stopped the folder can be used again.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';
import { startSandbox } from './helpers/sandbox.js';

describe('a second sandbox on the same state folder', () => {
  it('is exit 2 naming the running one (its pid); the first is untouched', async () => {
    const first = await startSandbox();
    try {
      const files = ['manifest.json', 'dev-wallet.json', 'dev-wallet.password', 'workspace-api-key', 'session-cookie'];
      const before = Object.fromEntries(files.map((f) => [f, readFileSync(path.join(first.stateDir, f), 'utf8')]));
      const home = makeHome();
      const second = await runCli(['--json', 'sandbox', '--state-dir', first.stateDir], home, { timeoutMs: 120_000 });
      expect(second.code, second.stdout + second.stderr).toBe(2);
      const error = second.json().error;
      expect(error.code).toBe('sandbox_already_running');
      expect(error.message).toContain(`pid ${first.info.pids.sandbox}`);
      expect(error.message).toContain(first.stateDir);
      for (const f of files) expect(readFileSync(path.join(first.stateDir, f), 'utf8'), f).toBe(before[f]);
      // Still answering, on its own chain.
      const res = await fetch(`${first.info.baseUrl}/api/agent/templates`);
      expect(res.status).toBe(200);
    } finally {
      await first.stop();
    }
  });
});
