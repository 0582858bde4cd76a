// The sandbox chain: an anvil process we spawn directly (so we hold its PID), bound to 127.0.0.1 on a free port.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ChainError } from '../errors.js';
import { findAnvil } from './anvil-binary.js';
import { onShutdown } from '../shutdown.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// What a child process may inherit: enough to run (PATH, locale, temp dir, home), nothing else. loopsign's own
// environment can hold the keystore password, a raw key or API keys (LOOPSIGN_PASSWORD, LOOPSIGN_PRIVATE_KEY,
// LOOPSIGN_API_KEY, or any variable named by --password-env), and a child has no use for them.
const CHILD_ENV = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'SYSTEMROOT', 'SystemRoot'];

export function childEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CHILD_ENV) if (env[name] !== undefined) out[name] = env[name]!;
  return out;
}

export interface AnvilProcess {
  rpcUrl: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function rpcReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    return res.ok;
  } catch {
    return false;
  }
}

export async function startAnvil(options: { port?: number; accounts?: number } = {}): Promise<AnvilProcess> {
  const binary = findAnvil();
  const port = options.port ?? (await freePort());
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    '31337',
    '--accounts',
    String(options.accounts ?? 12),
    // One slot an epoch: anvil's finalized block is then two behind its head (32 slots: 64), so a slot loopsign waits
    // on to be final (issue 35) becomes final after two more blocks, as on a live chain after its finality delay.
    '--slots-in-an-epoch',
    '1',
    '--silent',
  ];
  const child: ChildProcess = spawn(binary.path, args, { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv() });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let exited = false;
  // Told to stop while anvil runs (even while it starts): anvil goes too, by its PID; nothing is left running.
  const release = onShutdown(() => stopChild());
  child.on('exit', () => {
    exited = true;
    release();
  });
  function stopChild(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (exited) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 1500).unref();
    });
  }
  const rpcUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && !exited; i++) {
    if (await rpcReady(rpcUrl)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  if (exited || !(await rpcReady(rpcUrl))) {
    child.kill('SIGKILL');
    throw new ChainError(
      'anvil_failed',
      `anvil (${binary.path}) did not start on port ${port}: ${stderr.trim().split('\n').pop() ?? 'no output'}`,
    );
  }
  return {
    rpcUrl,
    port,
    pid: child.pid!,
    stop: stopChild,
  };
}
