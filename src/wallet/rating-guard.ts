// The rating plan guard (issue 5; chain.md §3.4, §10 row 11): the service's rating plan must carry exactly the
// commit built on this machine — trusted engine or advisory recorder, an exact LREP approval to the engine for the
// stake at most, and commit hash, ciphertext, target round, drand chain hash, round context, stake and frontend
// equal to the local ones. The open-round plan may only open this question's round on the trusted engine.
import { keccak256, type Hex } from 'viem';
import type { ChainConfig } from '../chains/table.js';
import { advisoryRecorderAbi, votingEngineAbi } from '../protocol/abi.js';
import type { BuiltCommit } from '../vote/build.js';
import { sameAddress, sameHex } from '../hex.js';
import { isDoc, objectField } from '../service/doc.js';
import { checkPlanShape, decode, expectApprove, expectTo, refuse, tokenAddress, trusted, type PlanCall } from './plan-guard.js';

/** contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext. */
type CommitArgs = [bigint, bigint, bigint, Hex, Hex, Hex];

/** The contracts a rating context names must be the pinned ones. */
export function checkRatingContracts(chain: ChainConfig, contracts: Record<string, unknown> | undefined): void {
  const want: [string, keyof ChainConfig['contracts'] | 'LREP'][] = [
    ['votingEngine', 'roundVotingEngine'],
    ['advisoryVoteRecorder', 'advisoryVoteRecorder'],
    ['lrep', 'LREP'],
  ];
  for (const [key, name] of want) {
    const got = contracts?.[key];
    if (got === undefined || got === null) continue;
    const pinned = name === 'LREP' ? tokenAddress(chain, 'LREP') : trusted(chain, name);
    if (!sameAddress(got, pinned))
      refuse('untrusted_contract', `the rating context names ${key} ${String(got)}, not the trusted ${pinned}`);
  }
}

export function checkOpenRoundPlan(chain: ChainConfig, plan: unknown, contentId: bigint): PlanCall[] {
  const calls = checkPlanShape(plan, 1, 'open-round');
  const call = calls[0]!;
  if (call.phase !== 'open_round') refuse('unexpected_phases', `phase ${call.phase}, expected open_round`, { call: 0 });
  expectTo(call, 0, trusted(chain, 'roundVotingEngine'), 'RoundVotingEngine');
  const [id] = decode(votingEngineAbi, call, 0, 'openRound') as [bigint];
  if (id !== contentId)
    refuse('wrong_content', `the plan opens the round of question ${id}, not ${contentId}`, { call: 0, phase: call.phase });
  return calls;
}

export function checkRatingPlan(chain: ChainConfig, prepared: unknown, commit: BuiltCommit, contentId: bigint): PlanCall[] {
  if (!isDoc(prepared)) refuse('malformed_response', 'the rating plan response is not a JSON object');
  const stake = BigInt(commit.stakeWei);
  const advisory = stake === 0n;
  const calls = checkPlanShape(prepared.transactionPlan, advisory ? 1 : [1, 2], 'rating');
  const ciphertextHash = objectField(prepared, 'commit')?.ciphertextHash;
  if (ciphertextHash !== undefined && !sameHex(ciphertextHash, keccak256(commit.ciphertext))) {
    refuse('ciphertext_mismatch', 'the service reports another ciphertext hash than the one built here');
  }
  const roundContext = BigInt(commit.secret.roundContext);
  const eq = (cond: boolean, i: number, phase: string, f: string) => {
    if (!cond) refuse('commit_mismatch', `${f} in the plan is not the locally built value`, { call: i, phase, field: f });
  };
  const last = calls[calls.length - 1]!;
  const i = calls.length - 1;
  // What an advisory record and a staked commit both carry: each must be the locally built value.
  const commonFields = ([cid, ctx, target, hash, commitHash, ciphertext]: CommitArgs) => {
    eq(cid === contentId, i, last.phase, 'contentId');
    eq(ctx === roundContext, i, last.phase, 'roundContext');
    eq(target === BigInt(commit.targetRound), i, last.phase, 'targetRound');
    eq(sameHex(hash, commit.drandChainHash), i, last.phase, 'drandChainHash');
    eq(sameHex(commitHash, commit.commitHash), i, last.phase, 'commitHash');
    eq(sameHex(ciphertext, commit.ciphertext), i, last.phase, 'ciphertext');
  };
  if (advisory) {
    if (last.phase !== 'record_advisory_vote')
      refuse('unexpected_phases', `phase ${last.phase}, expected record_advisory_vote`, { call: i });
    expectTo(last, i, trusted(chain, 'advisoryVoteRecorder'), 'AdvisoryVoteRecorder');
    commonFields(decode(advisoryRecorderAbi, last, i, 'recordAdvisoryVote') as CommitArgs);
    return calls;
  }
  const engine = trusted(chain, 'roundVotingEngine');
  if (calls.length === 2) {
    if (calls[0]!.phase !== 'approve_lrep') refuse('unexpected_phases', `phase ${calls[0]!.phase}, expected approve_lrep`, { call: 0 });
    expectApprove(calls[0]!, 0, tokenAddress(chain, 'LREP'), engine, stake, 'RoundVotingEngine');
  }
  if (last.phase !== 'commit_rating') refuse('unexpected_phases', `phase ${last.phase}, expected commit_rating`, { call: i });
  expectTo(last, i, engine, 'RoundVotingEngine');
  const args = decode(votingEngineAbi, last, i, 'commitVote') as [...CommitArgs, bigint, Hex];
  commonFields(args.slice(0, 6) as CommitArgs);
  const [, , , , , , stakeAmount, frontend] = args;
  eq(stakeAmount === stake, i, last.phase, 'stakeAmount');
  eq(sameAddress(frontend, commit.frontend), i, last.phase, 'frontend');
  return calls;
}
