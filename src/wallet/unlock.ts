// Loading, saving and unlocking the configured keystore.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { CredentialError } from '../errors.js';
import { productionOverrideKeys, type ResolvedConfig } from '../config.js';
import type { Output } from '../output.js';
import type { Env } from '../env.js';
import { createFileAtomically, ensurePrivateDir, writeFileAtomically } from '../fsutil.js';
import {
  checkKdfStrength,
  decryptKeystore,
  parseKeystore,
  parsePrivateKey,
  addressOfPrivateKey,
  type KeystoreV3,
  type UnlockedKey,
} from './keystore.js';
import { obtainPassword } from './password.js';
import { fewBasePointMultiplications } from './base-point.js';
import { timed } from '../timings.js';

export async function readKeystoreFile(file: string): Promise<unknown> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (stat.isDirectory()) throw new CredentialError('keystore_invalid', `keystore path ${file} is a directory`);
    if (stat.size > 64 * 1024)
      throw new CredentialError('keystore_invalid', `keystore ${file} is ${stat.size} bytes; a v3 keystore is well under 64 KiB`);
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof CredentialError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new CredentialError('keystore_not_found', `no keystore at ${file}`, {
        hint: 'create one with `loopsign wallet new`, import one with `loopsign wallet import`, or point --keystore at yours',
      });
    }
    throw new CredentialError('keystore_unreadable', `cannot read keystore ${file} (${code ?? (error as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CredentialError('keystore_invalid', `keystore ${file} is not valid JSON`, {
      hint: 'give a Web3 Secret Storage v3 file (as written by loopsign, geth, cast or ethers)',
    });
  }
}

/** Write a keystore: folder 0700, file 0600, atomically; never over an existing file unless forced. */
export async function saveKeystore(file: string, keystore: KeystoreV3, force: boolean): Promise<void> {
  await ensurePrivateDir(path.dirname(file));
  const text = JSON.stringify(keystore, null, 2) + '\n';
  if (force) {
    await writeFileAtomically(file, text);
    return;
  }
  try {
    await createFileAtomically(file, text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CredentialError('keystore_exists', `a keystore already exists at ${file}; it was not changed`, {
        hint: 'pass --force to replace it (back it up first with `loopsign wallet export --out FILE`), or choose another --keystore',
      });
    }
    throw error;
  }
}

export interface Signer extends UnlockedKey {
  source: 'keystore' | 'env';
}

/**
 * Unlock the configured wallet. LOOPSIGN_PRIVATE_KEY (throwaway CI wallets) wins over the keystore and is
 * announced with a warning so nobody relies on it by accident.
 */
export async function unlockWallet(config: ResolvedConfig, out: Output, env: Env): Promise<Signer> {
  return (await startUnlock(config, out, env)).signer;
}

export interface Unlocking {
  /** The keystore's own address field (decryptKeystore refuses a key that does not match it); none when the file has none. */
  address?: `0x${string}`;
  signer: Promise<Signer>;
}

/**
 * Unlocking that overlaps other work: the checks, warnings and password (a prompt included) come first; the key
 * derivation (scrypt, in libuv's thread pool, about a second at n=2^18) then runs while the caller does what
 * needs only the address — the ask flow asks the service and checks the plan meanwhile, and awaits `signer`
 * only to sign. `env` is the run's environment: LOOPSIGN_PRIVATE_KEY and the password's variable are read there, and
 * nowhere else.
 */
export async function startUnlock(
  config: ResolvedConfig,
  out: Output,
  env: Env,
  // Runs on the address the keystore names (when it names one), before the password is asked for and the key derived:
  // a keystore refused for its address (--from) costs no prompt, no scrypt, and leaves no key bytes behind.
  checkAddress: (address: `0x${string}`) => void = () => undefined,
): Promise<Unlocking> {
  // Every signing command unlocks here, so this is where replaced production trust anchors are announced.
  const overrides = config.chainId.value === 8453 ? productionOverrideKeys(config.file) : [];
  if (overrides.length > 0) {
    out.warn(
      `production trust anchors are replaced by the config file (${overrides.join(', ')}, allowed by allowProductionOverrides): plans are checked against those addresses, not the built-in ones`,
      { overrides },
    );
  }
  // The key's address, then the run's signatures, multiply by the base point: a small table first.
  fewBasePointMultiplications();
  const raw = env.LOOPSIGN_PRIVATE_KEY;
  if (raw !== undefined && raw !== '') {
    out.warn('using the raw private key from LOOPSIGN_PRIVATE_KEY; keep this for throwaway CI wallets only');
    const privateKey = parsePrivateKey(raw);
    const address = addressOfPrivateKey(privateKey);
    try {
      checkAddress(address);
    } catch (error) {
      privateKey.fill(0);
      throw error;
    }
    return { address, signer: Promise.resolve({ privateKey, address, source: 'env' }) };
  }
  const file = config.keystore.value;
  const json = await readKeystoreFile(file);
  // Structure and KDF strength are checked before a password is asked for.
  const parsed = parseKeystore(json);
  checkKdfStrength(parsed.kdf, config.allowWeakKdf);
  if (parsed.address) checkAddress(parsed.address as `0x${string}`);
  const password = await obtainPassword(config, env, { purpose: `keystore ${file}` });
  const signer = timed('unlock', () => decryptKeystore(json, password, { allowWeakKdf: config.allowWeakKdf })).then(
    (key): Signer => ({ ...key, source: 'keystore' }),
  );
  signer.catch(() => undefined); // awaited by the caller later; a wrong password must not be an unhandled rejection meanwhile
  return { address: parsed.address as `0x${string}` | undefined, signer };
}
