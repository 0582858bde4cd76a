// Ed25519 (and retired P-256) verification keys: SPKI DER, key ids, pin files, trusted-key documents
// (evidence.md §7, §10). Only keys the user gives loopsign are trusted; the key inside a packet never is.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { UsageError } from '../errors.js';
import { arrayField, isDoc, objectField } from '../service/doc.js';

export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
export const KEY_ID = /^(ed25519|p256):[0-9a-f]{24}$/;

export function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

export function fromB64url(text: string): Buffer {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
  return Buffer.from(text, 'base64url');
}

export function keyIdOf(spkiDer: Uint8Array, algorithm = 'Ed25519'): string {
  const prefix = algorithm === 'ECDSA-SHA256' ? 'p256' : 'ed25519';
  return `${prefix}:${createHash('sha256').update(spkiDer).digest('hex').slice(0, 24)}`;
}

export function publicKeyObject(spkiB64url: string): KeyObject {
  return createPublicKey({ key: fromB64url(spkiB64url), format: 'der', type: 'spki' });
}

/** The key id of a pin (evidence.md §7.3), as the service derives it: ed25519: or p256: by the key's type. */
export function keyIdOfPin(spkiB64url: string): string {
  const type = publicKeyObject(spkiB64url).asymmetricKeyType;
  if (type !== 'ed25519' && type !== 'ec') throw new Error(`a ${String(type)} key is not an evidence key`);
  return keyIdOf(fromB64url(spkiB64url), type === 'ed25519' ? 'Ed25519' : 'ECDSA-SHA256');
}

/** --public-key: a pin file when such a file exists, else the base64url SPKI itself (evidence.md §9.2). */
export async function readPin(value: string): Promise<string> {
  let text = value;
  let fromFile = false;
  try {
    const stat = await fs.stat(value);
    if (stat.isFile()) {
      if (stat.size > 4096)
        throw new UsageError('invalid_pin', `--public-key ${value} is ${stat.size} bytes; a pin file is one short line`);
      text = await fs.readFile(value, 'utf8');
      fromFile = true;
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
  }
  // A pin file's line is trimmed (as the service's verifier trims it); a pin given literally is used as it is, as the
  // service's verifier uses it — one with spaces around it would be compared with them and match no key.
  const pin = fromFile ? text.trim() : text;
  if (!fromFile && pin !== pin.trim())
    throw new UsageError('invalid_pin', '--public-key has white space around it; give the base64url key alone (or the pin file)');
  let der: Buffer;
  try {
    der = fromB64url(pin);
    publicKeyObject(pin);
  } catch {
    throw new UsageError('invalid_pin', `--public-key is neither a readable pin file nor a base64url SPKI key`, {
      hint: 'give the .spki.txt file, or its one line of base64url (see `loopsign evidence pin`)',
    });
  }
  if (der.length !== 44 || !der.subarray(0, 12).equals(ED25519_SPKI_PREFIX)) {
    // Retired P-256 pins are longer; they are accepted as long as node parses them as SPKI.
    if (!der.subarray(0, 12).equals(ED25519_SPKI_PREFIX) && der.length < 44)
      throw new UsageError('invalid_pin', '--public-key is not an Ed25519 or P-256 SPKI key');
  }
  return pin;
}

export interface TrustedKey {
  algorithm: string;
  keyId: string;
  publicKeySpki: string;
  status: string;
  uses: string[];
}

/** Base64url text as bytes, or undefined when it is not base64url (a malformed key is the document's fault, not a crash). */
function bytesOf(text: string): Buffer | undefined {
  try {
    return fromB64url(text);
  } catch {
    return undefined;
  }
}

/** A listed key is consistent: its id derives from its SPKI, and (Ed25519) the SPKI is the prefix plus the JWK's x. */
export function checkListedKey(k: unknown): TrustedKey {
  if (!isDoc(k)) throw new UsageError('invalid_trusted_keys', `a trusted key is ${JSON.stringify(k ?? null).slice(0, 40)}, not an object`);
  const { keyId, publicKeySpki, algorithm, status, uses } = k;
  if (typeof keyId !== 'string' || !KEY_ID.test(keyId))
    throw new UsageError('invalid_trusted_keys', `trusted key ${JSON.stringify(keyId ?? null).slice(0, 60)}: malformed key id`);
  if (typeof publicKeySpki !== 'string') throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: no publicKeySpki`);
  const der = bytesOf(publicKeySpki);
  if (der === undefined) throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: publicKeySpki is not base64url`);
  if (keyIdOf(der, typeof algorithm === 'string' ? algorithm : undefined) !== keyId)
    throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: the key id does not derive from its SPKI`);
  if (algorithm === 'Ed25519') {
    const x = objectField(k, 'publicKeyJwk')?.x;
    const xBytes = typeof x === 'string' ? bytesOf(x) : undefined;
    if (xBytes === undefined || !Buffer.concat([ED25519_SPKI_PREFIX, xBytes]).equals(der)) {
      throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: publicKeySpki is not the SPKI of publicKeyJwk.x`);
    }
  } else if (algorithm !== 'ECDSA-SHA256') {
    throw new UsageError(
      'invalid_trusted_keys',
      `trusted key ${keyId}: unsupported algorithm ${JSON.stringify(algorithm ?? null).slice(0, 40)}`,
    );
  }
  if (status !== 'current' && status !== 'retired')
    throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: status must be current or retired`);
  // An array of strings, as the service's own verifier requires: a string would be matched by substring
  // ("not_decision_packet".includes("decision_packet")), and a missing list would allow every use.
  if (!Array.isArray(uses) || !uses.every((u: unknown): u is string => typeof u === 'string')) {
    throw new UsageError('invalid_trusted_keys', `trusted key ${keyId}: uses must be an array of strings`);
  }
  return { algorithm, keyId, publicKeySpki, status, uses };
}

const TRUSTED_KEYS_SCHEMAS: readonly unknown[] = ['rateloop.evidence-public-trusted-keys.v1', 'rateloop.evidence-trusted-key-history.v1'];

export function checkTrustedKeysDocument(doc: unknown): TrustedKey[] {
  const keys = arrayField(doc, 'keys');
  if (!isDoc(doc) || !TRUSTED_KEYS_SCHEMAS.includes(doc.schemaVersion) || keys === undefined || keys.length === 0 || keys.length > 256) {
    throw new UsageError(
      'invalid_trusted_keys',
      'not a trusted-keys document (schemaVersion rateloop.evidence-public-trusted-keys.v1 with 1 … 256 keys)',
    );
  }
  return keys.map((k) => checkListedKey(k));
}

/** The SPKI pin file format: one base64url line and a newline. */
export function pinFileText(spki: string): string {
  return `${spki}\n`;
}
