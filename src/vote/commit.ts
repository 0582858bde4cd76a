// The vote commit (chain.md §9.2, §9.7, §9.9): plaintext, commit hash (193-byte preimage), keys, round context.
import { concat, encodePacked, keccak256, numberToHex, type Hex } from 'viem';

export interface VotePlain {
  isUp: boolean;
  predictedUpBps: number;
  salt: Hex;
}

/** 36 bytes: 0x02 version, direction, uint16 BE prediction, 32-byte salt. */
export function votePlaintext(v: VotePlain): Uint8Array {
  const out = new Uint8Array(36);
  out[0] = 0x02;
  out[1] = v.isUp ? 1 : 0;
  out[2] = (v.predictedUpBps >> 8) & 0xff;
  out[3] = v.predictedUpBps & 0xff;
  const salt = Buffer.from(v.salt.slice(2), 'hex');
  if (salt.length !== 32) throw new Error('salt must be 32 bytes');
  out.set(salt, 4);
  return out;
}

export function decodeVotePlaintext(bytes: Uint8Array): VotePlain {
  if (bytes.length !== 36) throw new Error(`vote plaintext must be 36 bytes, got ${bytes.length}`);
  if (bytes[0] !== 0x02) throw new Error(`unknown vote plaintext version ${bytes[0]}`);
  if (bytes[1]! > 1) throw new Error('direction byte must be 0 or 1');
  const bps = (bytes[2]! << 8) | bytes[3]!;
  if (bps < 100 || bps > 9900) throw new Error(`prediction ${bps} bps is outside 100 … 9900`);
  return { isUp: bytes[1] === 1, predictedUpBps: bps, salt: `0x${Buffer.from(bytes.subarray(4)).toString('hex')}` };
}

export function roundContext(roundId: bigint, referenceRatingBps: number): bigint {
  if (roundId <= 0n) throw new Error('roundId must be positive');
  if (!Number.isInteger(referenceRatingBps) || referenceRatingBps < 0 || referenceRatingBps > 10000)
    throw new Error('reference rating must be 0 … 10000');
  return (roundId << 16n) | BigInt(referenceRatingBps);
}

export interface CommitFields extends VotePlain {
  voter: Hex;
  contentId: bigint;
  roundId: bigint;
  roundReferenceRatingBps: number;
  targetRound: bigint;
  drandChainHash: Hex;
  ciphertext: Hex;
}

export function commitPreimage(c: CommitFields): Hex {
  return encodePacked(
    ['bool', 'uint16', 'bytes32', 'address', 'uint256', 'uint256', 'uint16', 'uint64', 'bytes32', 'bytes32'],
    [
      c.isUp,
      c.predictedUpBps,
      c.salt,
      c.voter,
      c.contentId,
      c.roundId,
      c.roundReferenceRatingBps,
      c.targetRound,
      c.drandChainHash,
      keccak256(c.ciphertext),
    ],
  );
}

export function commitHash(c: CommitFields): Hex {
  return keccak256(commitPreimage(c));
}

export function commitKey(voter: Hex, hash: Hex): Hex {
  return keccak256(encodePacked(['address', 'bytes32'], [voter, hash]));
}

export function advisoryCommitKey(voter: Hex, contentId: bigint, roundId: bigint, hash: Hex): Hex {
  return keccak256(concat(['0xa1', encodePacked(['address', 'uint256', 'uint256', 'bytes32'], [voter, contentId, roundId, hash])]));
}

export const toBytes32 = (n: bigint): Hex => numberToHex(n, { size: 32 });
