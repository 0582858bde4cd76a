// The keystore source behind the wallet shape: startUnlock unchanged underneath (its address known before scrypt
// ends), the key bytes zeroed once the viem account is built, and a --from the keystore does not hold refused (exit 6).
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hexToBytes, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encryptKeystore } from '../src/wallet/keystore.js';
import { resolveConfig } from '../src/config.js';
import { startUnlock, type Signer } from '../src/wallet/unlock.js';
import { openWallet } from '../src/wallet/signers/open.js';
import { openKeystoreWallet } from '../src/wallet/signers/keystore-wallet.js';
import { CHAIN_ID, DELEGATE, expectExit, expectTypedDataAndMessage, quietOut } from './helpers/signers.js';
import { registerSecret } from './helpers/cli.js';

// Every key the unlock hands out, to see what the wallet leaves of it (no module mock: the wallet takes its unlock).
const handed: Signer[] = [];
/** Unlocks that went on to derive a key (startUnlock returned, its scrypt under way). */
let derivations = 0;
const recordingUnlock: typeof startUnlock = async (...args) => {
  const unlocking = await startUnlock(...args);
  derivations++;
  return { ...unlocking, signer: unlocking.signer.then((s) => (handed.push(s), s)) };
};

const KEY = keccak256(toHex('loopsign keystore wallet test key'));
const ADDRESS = privateKeyToAccount(KEY).address;
const PASSWORD = 'keystore-wallet-test-password';
registerSecret(KEY);
registerSecret(PASSWORD);
let dir: string;
let keystore: string;
/** The environment the wallet is opened with (process.env is not read). */
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'loopsign-signers-'));
  keystore = path.join(dir, 'keystore.json');
  writeFileSync(keystore, JSON.stringify(await encryptKeystore(hexToBytes(KEY), PASSWORD, { n: 8192 })));
  env = { LOOPSIGN_CONFIG: path.join(dir, 'none.json'), LOOPSIGN_PASSWORD: PASSWORD };
});

async function open(from?: Hex) {
  const config = await resolveConfig({ keystore }, env);
  return openWallet({ source: { kind: 'keystore' }, origin: 'flag', ...(from ? { from } : {}) } as never, {
    config,
    env,
    out: quietOut(),
    chainId: CHAIN_ID,
    delegate: DELEGATE,
  });
}

/** The keystore wallet as openWallet opens it, with the recording unlock. */
async function openRecorded(from?: Hex, source: { kind: 'keystore' | 'env' } = { kind: 'keystore' }, extra: Record<string, string> = {}) {
  const withExtra = { ...env, ...extra };
  const config = await resolveConfig(source.kind === 'keystore' ? { keystore } : {}, withExtra);
  return openKeystoreWallet(config, quietOut(), withExtra, source, from as never, recordingUnlock);
}

describe('keystore wallet', () => {
  it('knows its address before the key is derived, signs every kind, and zeroes the key bytes', async () => {
    const recorded = await openRecorded();
    expect(recorded.address).toBe(ADDRESS);
    expect((await recorded.account).address).toBe(ADDRESS);
    expect(handed).toHaveLength(1);
    expect(handed[0]!.privateKey.every((b) => b === 0)).toBe(true);
    const wallet = await open();
    expect(wallet.address).toBe(ADDRESS);
    expect(wallet.source).toEqual({ kind: 'keystore' });
    expect(wallet.capabilities.authorization).toBe(true);
    const account = await wallet.account;
    expect(account.address).toBe(ADDRESS);
    await expectTypedDataAndMessage(account);
    expect((await account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 })).address).toBe(DELEGATE);
  });

  it('refuses a --from the keystore does not hold (exit 6), before scrypt runs', async () => {
    // No key derived at all: a derivation left running would hand out key bytes nobody zeroes (and the next test
    // would count them).
    const before = derivations;
    await expectExit(openRecorded('0x000000000000000000000000000000000000dEaD'), 6, 'signer_address_mismatch');
    expect(derivations).toBe(before);
    await expectExit(
      openRecorded('0x000000000000000000000000000000000000dEaD', { kind: 'env' }, { LOOPSIGN_PRIVATE_KEY: KEY }),
      6,
      'signer_address_mismatch',
    );
    expect(derivations).toBe(before);
    await expectExit(open('0x000000000000000000000000000000000000dEaD'), 6, 'signer_address_mismatch');
    expect((await open(ADDRESS)).address).toBe(ADDRESS);
  });

  it('LOOPSIGN_PRIVATE_KEY is its own source, as today', async () => {
    const withKey = { ...env, LOOPSIGN_PRIVATE_KEY: KEY };
    const config = await resolveConfig({}, withKey);
    const wallet = await openWallet(
      { source: { kind: 'env' }, origin: 'env' },
      { config, env: withKey, out: quietOut(), chainId: CHAIN_ID },
    );
    expect(wallet.source).toEqual({ kind: 'env' });
    expect((await wallet.account).address).toBe(ADDRESS);
    const before = handed.length;
    const recorded = await openRecorded(undefined, { kind: 'env' }, { LOOPSIGN_PRIVATE_KEY: KEY });
    expect((await recorded.account).address).toBe(ADDRESS);
    expect(handed.length).toBe(before + 1);
    expect(handed.at(-1)!.privateKey.every((b) => b === 0)).toBe(true);
  });
});
