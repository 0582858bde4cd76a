// Shared helpers for the benchmarks: timing, medians, and running the built binary.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(ROOT, 'bin', 'loopsign.js');

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function timeCommand(argv, env = process.env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { env, stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return ms;
}

/** Interleave runs of several commands so machine noise hits them alike; returns medians in ms. */
export function medianOfInterleaved(commands, runs) {
  const samples = commands.map(() => []);
  for (let i = 0; i < runs; i++) commands.forEach((c, j) => samples[j].push(timeCommand(c)));
  return samples.map(median);
}

export async function medianAsync(fn, runs) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(samples);
}

/** A sandbox from the built binary (extra `sandbox` options in `args`); resolves with its printed info and a stop function. */
export async function startSandbox(stateDir, args = []) {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [BIN, '--json', 'sandbox', '--state-dir', stateDir, ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const info = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.on('exit', (c) => reject(new Error(`sandbox exited ${c}`)));
  });
  const stop = () =>
    new Promise((r) => {
      child.once('exit', r);
      child.kill('SIGTERM');
    });
  const env = (home) => ({
    ...process.env,
    XDG_STATE_HOME: path.join(home, 'state'),
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: info.manifest,
    LOOPSIGN_KEYSTORE: info.devWallet.keystore,
    LOOPSIGN_PASSWORD_FILE: info.devWallet.passwordFile,
  });
  return { info, stop, env };
}
