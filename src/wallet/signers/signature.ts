// Signature arithmetic every external source shares: split what a signer returned into r and s (its v is not
// trusted), move s to the low half (EIP-2: nodes refuse high-s transactions, USDC's EIP-3009 refuses high-s
// authorizations), then find the parity by recovery against the pinned address. Normalising flips the parity, so
// the parity is always found after normalising, never carried over.
import { isAddressEqual, recoverAddress, type Hex } from 'viem';
import type { Address } from './types.js';
import { fewBasePointMultiplications } from '../base-point.js';

export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

export interface RS {
  r: bigint;
  s: bigint;
}
export interface SettledSignature {
  r: Hex;
  s: Hex;
  yParity: 0 | 1;
}

const hex32 = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`;

/** r and s of a 65-byte (r ‖ s ‖ v) or 64-byte (r ‖ s) hex signature; undefined when it is neither. */
export function splitSignature(signature: string): RS | undefined {
  if (!/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/.test(signature)) return undefined;
  return { r: BigInt(`0x${signature.slice(2, 66)}`), s: BigInt(`0x${signature.slice(66, 130)}`) };
}

export function rsOf(parts: { r: Hex | bigint; s: Hex | bigint }): RS {
  return { r: BigInt(parts.r), s: BigInt(parts.s) };
}

export function lowS(sig: RS): RS {
  return sig.s > HALF_N ? { r: sig.r, s: SECP256K1_N - sig.s } : sig;
}

/**
 * The low-s form of `sig` with the parity under which it recovers to `from` over `hash`; undefined when neither
 * parity does (a signature by another key, or over another digest).
 */
export async function settleSignature(hash: Hex, sig: RS, from: Address): Promise<SettledSignature | undefined> {
  if (sig.r <= 0n || sig.r >= SECP256K1_N || sig.s <= 0n || sig.s >= SECP256K1_N) return undefined;
  const { r, s } = lowS(sig);
  fewBasePointMultiplications(); // each recovery multiplies by the base point
  for (const yParity of [0, 1] as const) {
    const signature = { r: hex32(r), s: hex32(s), yParity };
    try {
      if (isAddressEqual(await recoverAddress({ hash, signature }), from)) return signature;
    } catch {
      // not a point on the curve under this parity
    }
  }
  return undefined;
}
