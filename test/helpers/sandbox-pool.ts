// A test file's turn on its worker's shared sandbox (test/setup/sandbox-pool.ts starts and resets them): the
// sandbox's chain and service, with a wallet of the file's own — a fresh key in an encrypted keystore written as the
// sandbox writes its dev wallet, funded as the dev wallet is — so balances, nonces and journals are the file's alone.
// The handle looks like startSandbox's, its info.devWallet and env() naming the file's wallet; stop() gives the
// sandbox back to be reset instead of stopping it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { addressOfPrivateKey, encryptKeystore, generatePrivateKey } from '../../src/wallet/keystore.js';
import { registerSecret } from './cli.js';
import { controlClient, sandboxEnv, type SandboxHandle, type SandboxInfo } from './sandbox.js';

// What the sandbox gives its dev wallet at start (src/sandbox/index.ts): 100 ETH, 100,000 USDC, 10,000 LREP.
const FUNDS = { eth: '100', usdc: '100000000000', lrep: '10000000000' };

/** The broker's URL, or undefined when this run has no pool (its global setup not configured) or it is turned off. */
export function poolBroker(): string | undefined {
  if (process.env.LOOPSIGN_TEST_SANDBOX === 'per-file') return undefined;
  try {
    return inject('sandboxBroker');
  } catch {
    return undefined;
  }
}

async function broker(url: string, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const doc = await res.json();
  if (!res.ok) throw new Error(`sandbox pool ${route} failed: ${doc.error}`);
  return doc;
}

/** A keystore and password file for a new random key, as the sandbox writes its dev wallet (scrypt n=2^13). */
async function freshWallet(): Promise<{ dir: string; wallet: SandboxInfo['devWallet'] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-wallet-'));
  const key = generatePrivateKey();
  const password = randomBytes(18).toString('base64url');
  registerSecret(Buffer.from(key).toString('hex'));
  registerSecret(password);
  const keystore = path.join(dir, 'dev-wallet.json');
  const passwordFile = path.join(dir, 'dev-wallet.password');
  writeFileSync(passwordFile, password + '\n', { mode: 0o600 });
  writeFileSync(keystore, JSON.stringify(await encryptKeystore(key, password, { n: 8192 }), null, 2) + '\n', { mode: 0o600 });
  return { dir, wallet: { address: addressOfPrivateKey(key), keystore, passwordFile } };
}

/** This worker's shared sandbox, with a funded wallet of this file's own. */
export async function sharedSandbox(url: string): Promise<SandboxHandle> {
  const file = path.relative(process.cwd(), expect.getState().testPath ?? 'a test file');
  const ticket = { pool: process.env.VITEST_POOL_ID ?? '0', file: `${file} (${randomBytes(4).toString('hex')})` };
  const [{ info: shared, stateDir }, { dir, wallet }] = await Promise.all([broker(url, '/acquire', ticket), freshWallet()]);
  const control = controlClient(shared.baseUrl);
  await control('/__sandbox/fund', { address: wallet.address, ...FUNDS });
  const info: SandboxInfo = { ...shared, devWallet: wallet };
  let given = false;
  return {
    info,
    stateDir,
    control,
    env: () => sandboxEnv(info),
    stop: async () => {
      if (given) return null;
      given = true;
      rmSync(dir, { recursive: true, force: true });
      await broker(url, '/release', ticket);
      return null;
    },
  };
}
