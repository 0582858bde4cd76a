// The sandbox's stop, in-process: the manifest (which tells loopsign a sandbox answers at its address) goes first,
// before the keeper's pass in flight is waited for. A stop by a signal has a deadline (src/shutdown.ts), and a pass
// stuck on a node that answers nothing must not leave a manifest behind after the process is gone.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox/index.js';

let sb: RunningSandbox | undefined;
afterAll(() => {
  try {
    if (sb) process.kill(sb.pids.anvil, 'SIGKILL');
  } catch {
    // already gone
  }
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('removes the manifest at once, while a keeper pass still waits on a frozen anvil, then stops anvil', async () => {
  sb = await startSandbox({ stateDir: path.join(mkdtempSync(path.join(tmpdir(), 'loopsign-stop-')), 'sandbox'), raters: false });
  const anvil = sb.pids.anvil;
  expect(existsSync(sb.manifestPath)).toBe(true);
  process.kill(anvil, 'SIGSTOP');
  // A pass is asked for; its first read of the chain waits on anvil, which answers nothing while stopped.
  const tick = fetch(`${sb.manifest.baseUrl}/__sandbox/keeper/tick`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));
  const stopping = sb.stop();
  // Before this change the manifest stayed until that pass gave up: three reads of 10 s each.
  for (let i = 0; i < 80 && existsSync(sb.manifestPath); i++) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(sb.manifestPath)).toBe(false);
  process.kill(anvil, 'SIGCONT');
  await stopping;
  await tick;
  expect(alive(anvil)).toBe(false);
}, 60_000);
