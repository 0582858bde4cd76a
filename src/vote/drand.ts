// drand networks and round arithmetic (chain.md §9.3–9.5).
import { createHash } from 'node:crypto';
import type { DrandNetwork } from '../chains/table.js';
import { QUICKNET, QUICKNET_T } from '../chains/table.js';

/** sha256(u32be(period) ‖ i64be(genesis) ‖ publicKey ‖ groupHash ‖ beaconId). */
export function drandChainHash(period: number, genesis: number, publicKeyHex: string, groupHashHex: string, beaconId: string): string {
  const head = Buffer.alloc(12);
  head.writeUInt32BE(period, 0);
  head.writeBigInt64BE(BigInt(genesis), 4);
  return createHash('sha256')
    .update(head)
    .update(Buffer.from(publicKeyHex, 'hex'))
    .update(Buffer.from(groupHashHex, 'hex'))
    .update(beaconId === 'default' ? '' : beaconId)
    .digest('hex');
}

export const KNOWN_NETWORKS: DrandNetwork[] = [QUICKNET, QUICKNET_T];

/** round whose time is the latest at or before t (0 before genesis). */
export function roundAt(t: number, genesis: number, period: number): number {
  return t < genesis ? 0 : Math.floor((t - genesis) / period) + 1;
}

/** first round at or after t (0 before genesis). */
export function roundAtOrAfter(t: number, genesis: number, period: number): number {
  return t < genesis ? 0 : Math.ceil((t - genesis) / period) + 1;
}

/** When round r is treated as available (seconds). */
export function roundTime(round: number, genesis: number, period: number): number {
  return round <= 0 ? 0 : genesis + (round - 1) * period;
}

/** On-chain window: roundAtOrAfter(epochEnd) ≤ target ≤ roundAt(epochEnd + 2p). */
export function targetRoundWindow(epochEnd: number, genesis: number, period: number): [number, number] {
  return [roundAtOrAfter(epochEnd, genesis, period), roundAt(epochEnd + 2 * period, genesis, period)];
}

/** The SDK's window over commit times now … now+p−1 (chain.md §9.5), intersected; null when empty. */
export function sdkCommitWindow(now: number, epoch: number, genesis: number, period: number, anchor?: number): [number, number] | null {
  let lo = -Infinity;
  let hi = Infinity;
  for (let o = 0; o < period; o++) {
    const commit = now + o;
    const a = anchor ?? commit;
    const revealableAfter = a + (Math.floor((commit - a) / epoch) + 1) * epoch;
    const [l, h] = targetRoundWindow(revealableAfter, genesis, period);
    lo = Math.max(lo, l);
    hi = Math.min(hi, h);
  }
  return lo <= hi ? [lo, hi] : null;
}
