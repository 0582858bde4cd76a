// `wallet rekey`: re-encrypt the configured keystore at loopsign's KDF setting (scrypt n=2^18), in place and
// atomically. The key is unlocked whatever its KDF (that is the point), the new file is decrypted in memory before
// it replaces the old one, and a new password comes only from a file or an environment variable, never argv.
import { CredentialError } from '../errors.js';
import type { ResolvedConfig } from '../config.js';
import type { Env } from '../env.js';
import { writeFileAtomically } from '../fsutil.js';
import { decryptKeystore, encryptKeystore, parseKeystore, type KdfSetting } from './keystore.js';
import { obtainPassword, readPasswordFile } from './password.js';
import { readKeystoreFile } from './unlock.js';

export interface RekeyOptions {
  /** A file holding the new password. */
  newPasswordFile?: string;
  /** The name of an environment variable holding the new password. */
  newPasswordEnv?: string;
  /**
   * The new file's scrypt cost, when not loopsign's setting (2^18). No command gives it: the tests of the password
   * flows do, where each derivation at 2^18 costs ~0.7 s of CPU and proves nothing more.
   */
  scryptN?: number;
}

export interface RekeyOutcome {
  address: `0x${string}`;
  keystore: string;
  before: KdfSetting;
  after: KdfSetting;
  passwordChanged: boolean;
}

async function newPassword(options: RekeyOptions, env: Env): Promise<string | undefined> {
  if (options.newPasswordFile !== undefined && options.newPasswordEnv !== undefined) {
    throw new CredentialError('password_source_conflict', 'give the new password by --new-password-file or --new-password-env, not both');
  }
  if (options.newPasswordFile !== undefined) return readPasswordFile(options.newPasswordFile);
  if (options.newPasswordEnv !== undefined) {
    const value = env[options.newPasswordEnv];
    if (value === undefined || value === '')
      throw new CredentialError('password_required', `the environment variable ${options.newPasswordEnv} (the new password) is not set`);
    return value;
  }
  return undefined;
}

/** `env` is the run's environment: the current and the new password's variables are read there. */
export async function rekeyWallet(config: ResolvedConfig, env: Env, options: RekeyOptions = {}): Promise<RekeyOutcome> {
  const file = config.keystore.value;
  const json = await readKeystoreFile(file);
  const before = parseKeystore(json).kdf;
  const replacement = await newPassword(options, env);
  const password = await obtainPassword(config, env, { purpose: `keystore ${file}` });
  const { privateKey, address } = await decryptKeystore(json, password, { allowWeakKdf: true });
  const target = replacement ?? password;
  const id = (json as { id?: unknown }).id;
  const keystore = await encryptKeystore(privateKey, target, {
    ...(typeof id === 'string' ? { id } : {}),
    ...(options.scryptN !== undefined ? { n: options.scryptN } : {}),
  });
  // Proof before replacing the only copy: the new file unlocks with the password it was written for, to this key.
  const check = await decryptKeystore(keystore, target);
  if (check.address !== address)
    throw new CredentialError('rekey_failed', 'the re-encrypted keystore did not unlock to the same key; the keystore was not changed');
  await writeFileAtomically(file, JSON.stringify(keystore, null, 2) + '\n');
  const k = keystore.crypto.kdfparams as { n: number; r: number; p: number };
  return { address, keystore: file, before, after: { kdf: 'scrypt', n: k.n, r: k.r, p: k.p }, passwordChanged: replacement !== undefined };
}
