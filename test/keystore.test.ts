import { describe, expect, it } from 'vitest';
import { decryptKeystoreJson, encryptKeystoreJsonSync } from 'ethers';
import {
  addressOfPrivateKey,
  checksumAddress,
  decryptKeystore,
  encryptKeystore,
  parsePrivateKey,
} from '../src/wallet/keystore.js';
import { TEST_ADDRESS, TEST_PRIVATE_KEY, VECTOR_PASSWORD, readVector } from './helpers/cli.js';
import { LoopsignError } from '../src/errors.js';

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    return (error as LoopsignError).code;
  }
  return 'no error';
}

describe('keystore v3', () => {
  const vector = readVector('keystore-v3-vector.json');

  it('unlocks the shared vector', async () => {
    const { privateKey, address } = await decryptKeystore(vector, VECTOR_PASSWORD);
    expect(hex(privateKey)).toBe(TEST_PRIVATE_KEY);
    expect(address).toBe(TEST_ADDRESS);
  });

  it('rejects any other password with a MAC error', async () => {
    expect(await codeOf(decryptKeystore(vector, 'correct horse battery stapler'))).toBe('wrong_password');
  });

  it('reproduces the vector ciphertext and mac from the same key, salt, iv and parameters', async () => {
    const ks = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), VECTOR_PASSWORD, {
      n: 32768,
      salt: Buffer.alloc(32, 1),
      iv: Buffer.alloc(16, 2),
    });
    const c = vector.crypto ?? vector.Crypto;
    expect(ks.crypto.ciphertext).toBe(c.ciphertext);
    expect(ks.crypto.mac).toBe(c.mac);
    expect(ks.address).toBe(TEST_ADDRESS.slice(2).toLowerCase());
  });

  it('writes new keystores with scrypt n=2^18, r=8, p=1 and an id', async () => {
    const ks = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'pw');
    expect(ks.crypto.kdfparams).toMatchObject({ n: 262144, r: 8, p: 1, dklen: 32 });
    expect(ks.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reads keystores written by ethers (Crypto, x-ethers) and ethers reads ours', async () => {
    const foreign = JSON.parse(
      encryptKeystoreJsonSync({ address: TEST_ADDRESS, privateKey: TEST_PRIVATE_KEY }, 'ethers-pw', { scrypt: { N: 1 << 12 } }),
    );
    expect(foreign.Crypto ?? foreign.crypto).toBeDefined();
    const mine = await decryptKeystore(foreign, 'ethers-pw');
    expect(mine.address).toBe(TEST_ADDRESS);

    const ours = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'loopsign-pw', { n: 1 << 12 });
    const theirs = await decryptKeystoreJson(JSON.stringify(ours), 'loopsign-pw');
    expect(theirs.privateKey).toBe(TEST_PRIVATE_KEY);
  });

  it("reads Foundry cast's layout: no address, n=8192, capitalised fields tolerated", async () => {
    const cast = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'cast-pw', { n: 8192 });
    delete (cast as { address?: string }).address;
    delete (cast as { id?: string }).id;
    expect((await decryptKeystore(cast, 'cast-pw')).address).toBe(TEST_ADDRESS);
  });

  it('tries the NFKC form of a password on read (ethers normalises)', async () => {
    const ks = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'ｐａｓｓ', { n: 1024 }); // fullwidth → "pass"
    expect((await decryptKeystore(ks, 'pass')).address).toBe(TEST_ADDRESS);
    expect((await decryptKeystore(ks, 'ｐａｓｓ')).address).toBe(TEST_ADDRESS);
  });

  it('refuses a keystore whose address field does not match its key', async () => {
    const ks = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'pw', { n: 1024 });
    ks.address = '1111111111111111111111111111111111111111';
    expect(await codeOf(decryptKeystore(ks, 'pw'))).toBe('keystore_address_mismatch');
  });

  it.each([
    ['not an object', [1, 2]],
    ['version 2', { version: 2, crypto: {} }],
    ['unknown cipher', { version: 3, crypto: { cipher: 'aes-256-gcm' } }],
    ['huge scrypt n', { version: 3, crypto: { ...readVector('keystore-v3-vector.json').crypto, kdfparams: { n: 1 << 30, r: 8, p: 1, dklen: 32, salt: '00' } } }],
    ['n not a power of two', { version: 3, crypto: { ...readVector('keystore-v3-vector.json').crypto, kdfparams: { n: 1000, r: 8, p: 1, dklen: 32, salt: '00' } } }],
    ['short ciphertext', { version: 3, crypto: { ...readVector('keystore-v3-vector.json').crypto, ciphertext: 'abcd' } }],
  ])('refuses a malformed keystore (%s) before running the KDF', async (_name, json) => {
    expect(await codeOf(decryptKeystore(json, 'x'))).toBe('keystore_invalid');
  });

  it('derives checksummed addresses and validates private keys', () => {
    expect(checksumAddress(TEST_ADDRESS.toLowerCase())).toBe(TEST_ADDRESS);
    expect(addressOfPrivateKey(parsePrivateKey(TEST_PRIVATE_KEY.slice(2) + '\n'))).toBe(TEST_ADDRESS);
    expect(() => parsePrivateKey('0x' + '00'.repeat(32))).toThrow(/not a valid secp256k1 key/);
    expect(() => parsePrivateKey('0x1234')).toThrow(/32 bytes of hex/);
  });
});
