// Starts `loopsign --json sandbox` as a subprocess (as a user would), reads its one JSON document, and stops it
// with SIGTERM. Also: a tiny client for the sandbox's test controls.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN } from './cli.js';

export interface SandboxInfo {
  baseUrl: string;
  rpcUrl: string;
  chainId: number;
  manifest: string;
  devWallet: { address: `0x${string}`; keystore: string; passwordFile: string };
  contracts: Record<string, `0x${string}`>;
  tokens: { USDC: { address: `0x${string}` }; LREP: { address: `0x${string}` } };
  batchDelegate: `0x${string}`;
  drand: { chainHash: string; url: string; genesis: number; period: number };
  pids: { anvil: number; sandbox: number };
  startupMs: number;
}

export interface SandboxHandle {
  info: SandboxInfo;
  stateDir: string;
  /** The sandbox's process, when this handle started it (a shared one belongs to the pool: test/setup/sandbox-pool.ts). */
  child?: ChildProcess;
  /** Stops a sandbox this handle started (its exit code); gives a shared one back to the pool, reset (null). */
  stop(): Promise<number | null>;
  control(pathname: string, body?: unknown, method?: string): Promise<any>;
  /** Environment that points loopsign at this sandbox with its dev wallet. */
  env(): Record<string, string>;
}

// A sandbox outlives a test run whose process is killed (a developer's Ctrl-C, a CI timeout): the pool's teardown,
// which stops it, never runs, and it keeps anvil running. Under util-linux's setpriv it gets SIGTERM when the process
// that started it dies, and stops as on any SIGTERM (anvil with it). setpriv execs the sandbox, so its PID is the one
// spawn returns.
const PDEATHSIG = spawnSync('setpriv', ['--pdeathsig', 'TERM', 'true'], { stdio: 'ignore' }).status === 0;

export async function startSandbox(args: string[] = []): Promise<SandboxHandle> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'loopsign-sandbox-'));
  const argv = [process.execPath, BIN, '--json', 'sandbox', '--state-dir', stateDir, ...args];
  const [command, ...rest] = PDEATHSIG ? ['setpriv', '--pdeathsig', 'TERM', ...argv] : argv;
  const child = spawn(command!, rest, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_STATE_HOME: path.join(stateDir, 'xdg-state') },
  });
  let stdout = '';
  let stderr = '';
  // The tail only: a sandbox shared by a worker's files lives as long as the whole run.
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-65_536)));
  const info = await new Promise<SandboxInfo>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start in 30 s:\n${stderr}`)), 30_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line) {
        clearTimeout(timer);
        const doc = JSON.parse(line);
        if (!doc.ok) reject(new Error(`sandbox failed: ${line}`));
        else resolve(doc as SandboxInfo);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code}:\n${stderr}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    info,
    stateDir,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      // Its state (manifest, dev wallet, the chain's dump) is of no use once it stopped.
      rmSync(stateDir, { recursive: true, force: true });
      return code;
    },
    control: controlClient(info.baseUrl, () => stderr.slice(-2000)),
    env: () => sandboxEnv(info),
  };
}

/** A client for a sandbox's test controls; `tail` is what to quote of its log when a control fails. */
export function controlClient(baseUrl: string, tail: () => string = () => ''): SandboxHandle['control'] {
  return async (pathname, body, method) => {
    const res = await fetch(`${baseUrl}${pathname}`, {
      method: method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const doc = await res.json();
    // A control that failed (a keeper pass that threw, a bad setting) fails the test here, with its reason,
    // rather than later as a result that never became ready.
    if (!res.ok) throw new Error(`sandbox control ${pathname} failed (${res.status}): ${JSON.stringify(doc)}\n${tail()}`);
    return doc;
  };
}

/** Environment that points loopsign at this sandbox with the wallet its info names. */
export function sandboxEnv(info: SandboxInfo): Record<string, string> {
  return {
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: info.manifest,
    LOOPSIGN_KEYSTORE: info.devWallet.keystore,
    LOOPSIGN_PASSWORD_FILE: info.devWallet.passwordFile,
  };
}

/** True while a process with this PID exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function api(
  base: string,
  method: string,
  pathname: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${pathname}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
