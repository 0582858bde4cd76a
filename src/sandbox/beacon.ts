// A drand-style beacon for the quicknet scheme (bls-unchained-g1-rfc9380): BLS signatures on G1 over
// sha256(u64be(round)), public key on G2, with the sandbox's own key. Its clock is the chain's clock, so making
// time pass on the chain also publishes rounds.
import { createHash } from 'node:crypto';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import type { DrandNetwork } from '../chains/table.js';
import { drandChainHash, roundAt } from '../vote/drand.js';
import type { Beacon } from '../vote/tlock.js';

const DST = 'BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_';

export class SandboxBeacon {
  readonly network: DrandNetwork;
  readonly groupHash: string;
  private readonly secretKey: Uint8Array;
  private readonly cache = new Map<number, Beacon>();

  constructor(
    genesis: number,
    private readonly now: () => number,
    period = 3,
    secretKey: Uint8Array = bls12_381.utils.randomPrivateKey(),
  ) {
    this.secretKey = secretKey;
    const publicKey = Buffer.from(bls12_381.getPublicKeyForShortSignatures(secretKey)).toString('hex'); // G2, compressed
    this.groupHash = createHash('sha256').update(`loopsign-sandbox-group:${publicKey}`).digest('hex');
    const beaconId = 'loopsign-sandbox';
    this.network = {
      name: beaconId,
      chainHash: drandChainHash(period, genesis, publicKey, this.groupHash, beaconId),
      genesis,
      period,
      publicKey,
      scheme: 'bls-unchained-g1-rfc9380',
    };
  }

  /** The latest published round at the chain's current time. */
  currentRound(): number {
    return roundAt(this.now(), this.network.genesis, this.network.period);
  }

  /** A signed beacon, or undefined when the round is not out yet. */
  round(round: number): Beacon | undefined {
    if (!Number.isSafeInteger(round) || round < 1 || round > this.currentRound()) return undefined;
    let beacon = this.cache.get(round);
    if (!beacon) {
      const message = createHash('sha256').update(u64be(round)).digest();
      const signature = bls12_381.signShortSignature(message, this.secretKey, { DST }); // G1, compressed
      const sigHex = Buffer.from(signature).toString('hex');
      beacon = { round, randomness: createHash('sha256').update(Buffer.from(sigHex, 'hex')).digest('hex'), signature: sigHex };
      this.cache.set(round, beacon);
    }
    return beacon;
  }

  /** drand's /info document. */
  info(): Record<string, unknown> {
    const n = this.network;
    return {
      public_key: n.publicKey,
      period: n.period,
      genesis_time: n.genesis,
      hash: n.chainHash,
      groupHash: this.groupHash,
      schemeID: n.scheme,
      metadata: { beaconID: n.name },
    };
  }
}

function u64be(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
