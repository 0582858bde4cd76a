// Comparing addresses and hex values (hashes, nonces, salts, calldata) that a service, a signer, a journal or a
// receipt gave with those this machine trusts, on viem's isAddressEqual. viem throws for a value that is not an
// address; here such a value equals nothing, so that a malformed answer is refused as a mismatch by the guard that
// asked, never thrown as an internal error. For two well-formed values the result is the case-insensitive
// comparison the guards made by hand before (test/address.test.ts). Addresses a user types are src/address.ts.
import { isAddress, isAddressEqual } from 'viem';

/** Hex digits, 0x-prefixed (hashes, calldata) or bare (the service's payloadHash, a sha256 digest). */
const HEX = /^(0x)?[0-9a-fA-F]*$/;

/** Whether both are addresses (0x + 40 hex digits in any case; a checksum is not checked) of the same account. */
export function sameAddress(a: unknown, b: unknown): boolean {
  return (
    typeof a === 'string' &&
    typeof b === 'string' &&
    isAddress(a, { strict: false }) &&
    isAddress(b, { strict: false }) &&
    isAddressEqual(a, b)
  );
}

/** Whether both are the same hex value (both 0x-prefixed, or both bare), whatever the case of their digits. */
export function sameHex(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && HEX.test(a) && HEX.test(b) && a.toLowerCase() === b.toLowerCase();
}
