// Addresses a user types (flags, ask files, the config file): 0x + 40 hex, and when written in mixed case, with a
// valid EIP-55 checksum. A bad checksum is a typo until proven otherwise: refused as input (exit 2) naming the flag,
// never left to a library deeper down, where it surfaced as an internal error.
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { UsageCode } from './error-codes.js';
import { UsageError } from './errors.js';

const FORM = /^0x[0-9a-fA-F]{40}$/;

/**
 * The EIP-55 form of a 0x + 40 hex address: the one implementation of the checksum (the keystore's addresses use it
 * too). Not viem's getAddress, which gives the same (test/address.test.ts): the wallet commands that create, import,
 * export and rekey a keystore load no viem, and loading it would add some 40 ms to each.
 */
export function toChecksumAddress(address: string): `0x${string}` {
  const hex = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(hex));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  return out as `0x${string}`;
}

/** What is wrong with an address as typed: its form, its checksum, or nothing. */
export function addressProblem(value: unknown): 'form' | 'checksum' | undefined {
  if (typeof value !== 'string' || !FORM.test(value)) return 'form';
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return undefined; // no checksum to check
  return toChecksumAddress(value) === value ? undefined : 'checksum';
}

export const CHECKSUM_HINT =
  'copy the address again from where it came from (a mixed-case address carries a checksum, and this one does not match: a typo?); write it all in lower case only if you are sure of it';

/** A user's address (`what` names where it came from, e.g. `--wallet`), or UsageError (exit 2). */
export function checkAddress(value: unknown, what: string, code: UsageCode = 'invalid_address'): `0x${string}` {
  const problem = addressProblem(value);
  if (problem === 'form') throw new UsageError(code, `${what} ${String(value)} is not an address (0x followed by 40 hex characters)`);
  if (problem === 'checksum')
    throw new UsageError('bad_address_checksum', `${what} ${String(value)} has a bad checksum`, { hint: CHECKSUM_HINT });
  return value as `0x${string}`;
}
