// Web3 Secret Storage v3 (shared/spec/chain.md §13): scrypt (or pbkdf2 for reading), aes-128-ctr, keccak-256 MAC.
// Reads what geth, Foundry's cast (no address, n=8192) and ethers (`Crypto`, x-ethers) write.
// scrypt runs on node:crypto, which is about 1.5x faster than pure JS at n=2^18 (it needs maxmem raised).
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { toChecksumAddress } from '../address.js';
import { CredentialError } from '../errors.js';

const scryptAsync = promisify(scrypt) as (
  password: Buffer,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;
const pbkdf2Async = promisify(pbkdf2);

export interface KeystoreV3 {
  version: 3;
  id?: string;
  address?: string;
  crypto: {
    cipher: 'aes-128-ctr';
    cipherparams: { iv: string };
    ciphertext: string;
    kdf: 'scrypt' | 'pbkdf2';
    kdfparams: Record<string, unknown>;
    mac: string;
  };
}

export interface ScryptParams {
  n: number;
  r: number;
  p: number;
  dklen: number;
  salt: Buffer;
}

export const DEFAULT_SCRYPT = { n: 262144, r: 8, p: 1, dklen: 32 } as const;
const MAX_SCRYPT_MEMORY = 512 * 1024 * 1024;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function unhex(value: unknown, what: string, bytes?: number): Buffer {
  if (typeof value !== 'string') throw invalid(`${what} is missing`);
  const text = value.startsWith('0x') ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]*$/.test(text) || text.length % 2 !== 0) throw invalid(`${what} is not hex`);
  const buf = Buffer.from(text, 'hex');
  if (bytes !== undefined && buf.length !== bytes) throw invalid(`${what} must be ${bytes} bytes`);
  return buf;
}

function invalid(reason: string): CredentialError {
  return new CredentialError('keystore_invalid', `not a usable v3 keystore: ${reason}`, {
    hint: 'give a Web3 Secret Storage v3 file (as written by loopsign, geth, cast or ethers)',
  });
}

/** EIP-55 checksum form of a 20-byte address given as 40 hex digits, with or without 0x. */
export function checksumAddress(addressHex: string): `0x${string}` {
  return toChecksumAddress(`0x${addressHex.replace(/^0x/i, '')}`);
}

export function addressOfPrivateKey(privateKey: Uint8Array): `0x${string}` {
  const publicKey = secp256k1.getPublicKey(privateKey, false); // 65 bytes, 0x04 prefix
  return checksumAddress(hex(keccak_256(publicKey.subarray(1)).subarray(12)));
}

/** Parse a private key given by a user: 64 hex digits, optional 0x, surrounding whitespace ignored. */
export function parsePrivateKey(text: string): Uint8Array {
  const trimmed = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(trimmed)) {
    throw new CredentialError('invalid_private_key', 'the private key must be 32 bytes of hex (64 hex digits, optional 0x)');
  }
  const key = Buffer.from(trimmed, 'hex');
  if (!secp256k1.utils.isValidPrivateKey(key)) {
    throw new CredentialError('invalid_private_key', 'the private key is not a valid secp256k1 key (zero or above the curve order)');
  }
  return new Uint8Array(key);
}

export function generatePrivateKey(): Uint8Array {
  return secp256k1.utils.randomPrivateKey();
}

function checkScryptParams(kdfparams: Record<string, unknown>): ScryptParams {
  const { n, r, p, dklen } = kdfparams;
  const ints = [n, r, p, dklen].every((v) => typeof v === 'number' && Number.isSafeInteger(v));
  if (!ints) throw invalid('scrypt parameters must be integers');
  const N = n as number;
  const R = r as number;
  const P = p as number;
  const D = dklen as number;
  if (N <= 1 || (N & (N - 1)) !== 0) throw invalid('scrypt n must be a power of two above 1');
  if (R <= 0) throw invalid('scrypt r must be positive');
  if (P < 1 || P > 16) throw invalid('scrypt p must be 1..16');
  if (D < 32 || D > 64) throw invalid('scrypt dklen must be 32..64');
  if (128 * N * R > MAX_SCRYPT_MEMORY) throw invalid('scrypt parameters need more than 512 MiB');
  return { n: N, r: R, p: P, dklen: D, salt: unhex(kdfparams.salt, 'kdfparams.salt') };
}

export async function deriveScrypt(password: Buffer, params: ScryptParams): Promise<Buffer> {
  return scryptAsync(password, params.salt, params.dklen, {
    N: params.n,
    r: params.r,
    p: params.p,
    maxmem: 128 * params.n * params.r * params.p + 32 * 1024 * 1024,
  });
}

/** The key-derivation setting of a keystore, as read from its kdfparams. */
export type KdfSetting = { kdf: 'scrypt'; n: number; r: number; p: number } | { kdf: 'pbkdf2'; c: number };

interface ParsedKeystore {
  address?: string;
  iv: Buffer;
  ciphertext: Buffer;
  mac: Buffer;
  kdf: KdfSetting;
  derive: (password: Buffer) => Promise<Buffer>;
}

// The lightest settings common wallets write (issue 11 §7): geth's "light" scrypt (N=4096, r=8, p=6), Foundry cast
// (N=8192, r=8, p=1) and pbkdf2 at c=262144. scrypt is compared by its work N·r·p, so the floor is the lighter of
// the two scrypt settings (cast: 65536); anything below unlocks only with --allow-weak-kdf.
export const MIN_SCRYPT_WORK = 8192 * 8 * 1;
export const MIN_PBKDF2_ROUNDS = 262_144;

export function kdfLabel(k: KdfSetting): string {
  return k.kdf === 'scrypt' ? `scrypt n=${k.n}, r=${k.r}, p=${k.p}` : `pbkdf2 c=${k.c}`;
}

export function isWeakKdf(k: KdfSetting): boolean {
  return k.kdf === 'scrypt' ? k.n * k.r * k.p < MIN_SCRYPT_WORK : k.c < MIN_PBKDF2_ROUNDS;
}

/** Refuses (exit 6) a keystore whose KDF is lighter than any common wallet writes: its password is cheap to guess. */
export function checkKdfStrength(k: KdfSetting, allowWeak: boolean): void {
  if (allowWeak || !isWeakKdf(k)) return;
  throw new CredentialError(
    'weak_kdf',
    `the keystore's key derivation (${kdfLabel(k)}) is weaker than any common wallet writes, so its password is cheap to guess`,
    {
      hint: 'run `loopsign wallet rekey` to re-encrypt it at scrypt n=2^18 (or pass --allow-weak-kdf to use it once as it is)',
      details: { kdf: k },
    },
  );
}

/** Validate the structure before spending any time on the KDF. */
export function parseKeystore(json: unknown): ParsedKeystore {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw invalid('the file is not a JSON object');
  const obj = json as Record<string, unknown>;
  if (obj.version !== 3) throw invalid(`version is ${JSON.stringify(obj.version)}, expected 3`);
  const c = (obj.crypto ?? obj.Crypto) as Record<string, unknown> | undefined;
  if (!c || typeof c !== 'object') throw invalid('the crypto section is missing');
  if (c.cipher !== 'aes-128-ctr') throw invalid(`cipher ${JSON.stringify(c.cipher)} is not supported (aes-128-ctr only)`);
  const cipherparams = c.cipherparams as Record<string, unknown> | undefined;
  const iv = unhex(cipherparams?.iv, 'cipherparams.iv', 16);
  const ciphertext = unhex(c.ciphertext, 'ciphertext', 32);
  const mac = unhex(c.mac, 'mac', 32);
  const kdfparams = c.kdfparams as Record<string, unknown> | undefined;
  if (!kdfparams || typeof kdfparams !== 'object') throw invalid('kdfparams are missing');
  let derive: (password: Buffer) => Promise<Buffer>;
  let kdf: KdfSetting;
  if (c.kdf === 'scrypt') {
    const params = checkScryptParams(kdfparams);
    kdf = { kdf: 'scrypt', n: params.n, r: params.r, p: params.p };
    derive = (password) => deriveScrypt(password, params);
  } else if (c.kdf === 'pbkdf2') {
    const { c: rounds, dklen, prf } = kdfparams;
    if (prf !== 'hmac-sha256') throw invalid('pbkdf2 must use hmac-sha256');
    if (typeof rounds !== 'number' || !Number.isSafeInteger(rounds) || rounds < 1 || rounds > 10_000_000)
      throw invalid('pbkdf2 c is out of range');
    if (typeof dklen !== 'number' || dklen < 32 || dklen > 64) throw invalid('pbkdf2 dklen must be 32..64');
    const salt = unhex(kdfparams.salt, 'kdfparams.salt');
    kdf = { kdf: 'pbkdf2', c: rounds };
    derive = (password) => pbkdf2Async(password, salt, rounds, dklen, 'sha256');
  } else {
    throw invalid(`kdf ${JSON.stringify(c.kdf)} is not supported (scrypt or pbkdf2)`);
  }
  let address: string | undefined;
  if (obj.address !== undefined) {
    if (typeof obj.address !== 'string' || !/^(0x)?[0-9a-fA-F]{40}$/.test(obj.address)) throw invalid('address is malformed');
    address = checksumAddress(obj.address);
  }
  return address === undefined ? { iv, ciphertext, mac, kdf, derive } : { address, iv, ciphertext, mac, kdf, derive };
}

function macOf(dk: Buffer, ciphertext: Buffer): Buffer {
  return Buffer.from(keccak_256(Buffer.concat([dk.subarray(16, 32), ciphertext])));
}

export interface UnlockedKey {
  privateKey: Uint8Array;
  address: `0x${string}`;
}

export interface DecryptOptions {
  /** Unlock a keystore whose KDF is below the floor (checkKdfStrength); only `wallet rekey` and import need it. */
  allowWeakKdf?: boolean;
}

/**
 * Decrypt; a MAC mismatch means a wrong password (exit 6). Tries the password as given, then its NFKC form.
 * A weak KDF is refused before the password is tried, unless allowed.
 */
export async function decryptKeystore(json: unknown, password: string, options: DecryptOptions = {}): Promise<UnlockedKey> {
  const ks = parseKeystore(json);
  checkKdfStrength(ks.kdf, options.allowWeakKdf === true);
  const candidates = [password];
  const nfkc = password.normalize('NFKC');
  if (nfkc !== password) candidates.push(nfkc);
  for (const candidate of candidates) {
    const dk = await ks.derive(Buffer.from(candidate, 'utf8'));
    if (!timingSafeEqual(macOf(dk, ks.ciphertext), ks.mac)) continue;
    const decipher = createDecipheriv('aes-128-ctr', dk.subarray(0, 16), ks.iv);
    const privateKey = new Uint8Array(Buffer.concat([decipher.update(ks.ciphertext), decipher.final()]));
    // The MAC proves the password, not the plaintext: a file can hold 32 bytes that are no secp256k1 key (zero or
    // above the curve order). Refused as the user's file; noble's own error would be an internal error quoting them.
    if (!secp256k1.utils.isValidPrivateKey(privateKey))
      throw invalid('its key is not a valid secp256k1 key (zero or above the curve order)');
    const address = addressOfPrivateKey(privateKey);
    if (ks.address !== undefined && ks.address !== address) {
      throw new CredentialError(
        'keystore_address_mismatch',
        `the keystore's address field (${ks.address}) does not match its key (${address})`,
        {
          hint: 'the file has been edited or corrupted; do not use it',
        },
      );
    }
    return { privateKey, address };
  }
  throw new CredentialError('wrong_password', 'wrong password for this keystore (the MAC check failed)', {
    hint: 'check --password-file / the password environment variable; the keystore itself was not changed',
  });
}

export interface EncryptOptions {
  n?: number;
  r?: number;
  p?: number;
  salt?: Buffer;
  iv?: Buffer;
  id?: string;
}

/** Encrypt a key as a v3 keystore. Passwords are written in NFKC form (what ethers does). */
export async function encryptKeystore(privateKey: Uint8Array, password: string, options: EncryptOptions = {}): Promise<KeystoreV3> {
  const params: ScryptParams = {
    n: options.n ?? DEFAULT_SCRYPT.n,
    r: options.r ?? DEFAULT_SCRYPT.r,
    p: options.p ?? DEFAULT_SCRYPT.p,
    dklen: DEFAULT_SCRYPT.dklen,
    salt: options.salt ?? randomBytes(32),
  };
  const iv = options.iv ?? randomBytes(16);
  const dk = await deriveScrypt(Buffer.from(password.normalize('NFKC'), 'utf8'), params);
  const cipher = createCipheriv('aes-128-ctr', dk.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(privateKey), cipher.final()]);
  return {
    version: 3,
    id: options.id ?? randomUUID(),
    address: addressOfPrivateKey(privateKey).slice(2).toLowerCase(),
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: hex(iv) },
      ciphertext: hex(ciphertext),
      kdf: 'scrypt',
      kdfparams: { dklen: params.dklen, n: params.n, p: params.p, r: params.r, salt: hex(params.salt) },
      mac: hex(macOf(dk, ciphertext)),
    },
  };
}

/** The address a keystore file claims, without decrypting (cast keystores have none). */
export function claimedAddress(json: unknown): `0x${string}` | undefined {
  return parseKeystore(json).address as `0x${string}` | undefined;
}
