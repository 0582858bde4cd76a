// buildCommitVoteParams (interface.md "Rating context and vote commit"; chain.md §9): everything a commit needs,
// built locally. Direction, prediction and salt stay on this machine; only the commit fields leave it.
import { randomBytes } from 'node:crypto';
import { keccak256, toHex, type Hex } from 'viem';
import type { DrandNetwork } from '../chains/table.js';
import { commitHash, commitKey, roundContext, votePlaintext } from './commit.js';
import { checkCiphertextTarget } from './ciphertext.js';
import { sdkCommitWindow, targetRoundWindow } from './drand.js';
import { checkStakeBounds, parseStake, predictedUpBps, VoteInputError } from './stake.js';
import { tlockEncrypt } from './tlock.js';

export interface CommitRuntime {
  targetRound?: string | number | null;
  drandChainHash: string;
  drandGenesisTimeSeconds: string | number;
  drandPeriodSeconds: string | number;
  roundStartTimeSeconds?: string | number | null;
}

export interface BuildCommitInput {
  voter: Hex;
  contentId: bigint;
  isUp: boolean;
  predictedUpPercent: string | number;
  stakeAmount: string | number;
  epochDuration: string | number;
  roundId: bigint;
  roundReferenceRatingBps: number;
  frontend?: Hex;
  runtime: CommitRuntime;
  /** 32 bytes hex; random from the CSPRNG when absent. */
  salt?: Hex;
  /** Seconds; the chain's idea of now (defaults to this machine's clock). */
  now?: number;
  /** Skip the stake bounds check (offline building reports bounds separately). */
  allowAnyStake?: boolean;
}

export interface BuiltCommit {
  roundId: string;
  roundReferenceRatingBps: number;
  targetRound: string;
  drandChainHash: Hex;
  commitHash: Hex;
  ciphertext: Hex;
  stakeWei: string;
  stakeAtomicUnits: string;
  frontend: Hex;
  /** Local only: never sent to the service. */
  secret: { isUp: boolean; predictedUpBps: number; salt: Hex; commitKey: Hex; ciphertextHash: Hex; roundContext: string };
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as Hex;

function num(value: string | number | null | undefined, field: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new VoteInputError(field, 'must be a non-negative integer');
  return n;
}

/** The drand network a runtime names, which must be one loopsign pins; its parameters must match. */
export function resolveNetwork(runtime: CommitRuntime, networks: DrandNetwork[]): DrandNetwork {
  const hash = runtime.drandChainHash.replace(/^0x/, '').toLowerCase();
  const network = networks.find((n) => n.chainHash === hash);
  if (!network) throw new VoteInputError('runtime.drandChainHash', `unsupported drand chain 0x${hash}`);
  if (
    num(runtime.drandGenesisTimeSeconds, 'runtime.drandGenesisTimeSeconds') !== network.genesis ||
    num(runtime.drandPeriodSeconds, 'runtime.drandPeriodSeconds') !== network.period
  ) {
    throw new VoteInputError('runtime', `drand genesis/period do not match the pinned ${network.name} network`);
  }
  return network;
}

/** The on-chain target-round window for this round, and the round loopsign uses within it. */
export function chooseTargetRound(
  runtime: CommitRuntime,
  network: DrandNetwork,
  epoch: number,
  now: number,
): { window: [number, number]; targetRound: number } {
  const start =
    runtime.roundStartTimeSeconds === undefined || runtime.roundStartTimeSeconds === null
      ? undefined
      : num(runtime.roundStartTimeSeconds, 'runtime.roundStartTimeSeconds');
  let window: [number, number] | null;
  if (start !== undefined) {
    const epochEnd = start + (Math.floor(Math.max(0, now - start) / epoch) + 1) * epoch;
    window = targetRoundWindow(epochEnd, network.genesis, network.period);
  } else {
    window = sdkCommitWindow(now, epoch, network.genesis, network.period);
  }
  if (!window || window[0] > window[1] || window[1] === 0)
    throw new VoteInputError('runtime', 'no valid drand target round for the commit window');
  const suggested =
    runtime.targetRound === undefined || runtime.targetRound === null ? undefined : num(runtime.targetRound, 'runtime.targetRound');
  const targetRound = suggested !== undefined && suggested >= window[0] && suggested <= window[1] ? suggested : window[1];
  return { window, targetRound };
}

export async function buildCommitVoteParams(input: BuildCommitInput, networks: DrandNetwork[]): Promise<BuiltCommit> {
  const stake = parseStake(input.stakeAmount);
  if (!input.allowAnyStake) checkStakeBounds(stake);
  const bps = predictedUpBps(input.predictedUpPercent);
  if (input.roundId <= 0n) throw new VoteInputError('roundId', 'must be positive');
  const network = resolveNetwork(input.runtime, networks);
  const epoch = num(input.epochDuration, 'epochDuration');
  if (epoch <= 0) throw new VoteInputError('epochDuration', 'must be positive');
  const { targetRound } = chooseTargetRound(input.runtime, network, epoch, input.now ?? Math.floor(Date.now() / 1000));
  const salt = input.salt ?? (toHex(randomBytes(32)) as Hex);
  if (!/^0x[0-9a-fA-F]{64}$/.test(salt)) throw new VoteInputError('salt', 'must be 32 bytes of hex');

  const armored = await tlockEncrypt(network, targetRound, votePlaintext({ isUp: input.isUp, predictedUpBps: bps, salt }));
  const ciphertextBytes = Buffer.from(armored, 'utf8');
  checkCiphertextTarget(ciphertextBytes, BigInt(targetRound), network.chainHash);
  const ciphertext = toHex(ciphertextBytes);
  const drandChainHash = `0x${network.chainHash}` as Hex;
  const fields = {
    isUp: input.isUp,
    predictedUpBps: bps,
    salt: salt.toLowerCase() as Hex,
    voter: input.voter,
    contentId: input.contentId,
    roundId: input.roundId,
    roundReferenceRatingBps: input.roundReferenceRatingBps,
    targetRound: BigInt(targetRound),
    drandChainHash,
    ciphertext,
  };
  const hash = commitHash(fields);
  return {
    roundId: input.roundId.toString(),
    roundReferenceRatingBps: input.roundReferenceRatingBps,
    targetRound: String(targetRound),
    drandChainHash,
    commitHash: hash,
    ciphertext,
    stakeWei: stake.toString(),
    stakeAtomicUnits: stake.toString(),
    frontend: input.frontend ?? ZERO_ADDRESS,
    secret: {
      isUp: input.isUp,
      predictedUpBps: bps,
      salt: fields.salt,
      commitKey: commitKey(input.voter, hash),
      ciphertextHash: keccak256(ciphertext),
      roundContext: roundContext(input.roundId, input.roundReferenceRatingBps).toString(),
    },
  };
}
