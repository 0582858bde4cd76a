// What a call can make the wallet pay (issue 11 §1): every call loopsign signs is classified here, from its
// calldata and the chain's trusted addresses alone, into the token movements it can cause. An approval lets a
// spender pull up to its amount; a submit, bonus or commit call pulls an amount through an allowance or an
// EIP-3009 authorization; everything else the plans contain moves nothing. A call this module cannot account for
// is refused, whatever the plan guard said: the spend ledger must see every way money can leave.
import { decodeAbiParameters, decodeFunctionData, parseAbi, parseTransaction, type Hex } from 'viem';
import { RefusedError } from '../errors.js';
import { sameAddress } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import {
  advisoryRecorderAbi,
  contentRegistryAbi,
  erc20Abi,
  erc7821Abi,
  feedbackBonusEscrowAbi,
  votingEngineAbi,
  x402SubmitterAbi,
} from '../protocol/abi.js';
import { decodePullCall } from '../budget/pull-call.js';

export type Asset = 'USDC' | 'LREP';

export interface SpendEffect {
  asset: Asset;
  /** approve: the spender may pull up to amount; authorization: an EIP-3009 authorization the holder may redeem; pull: the call moves amount. */
  kind: 'approve' | 'authorization' | 'pull';
  spender: Hex;
  amount: bigint;
}

export interface CallLike {
  to: Hex;
  data: Hex;
}

// An owner's revocations of budget grants (issue 38): MetaMask's DelegationManager v1.3.0 and NonceEnforcer.
export const budgetRevokeAbi = parseAbi([
  'struct Caveat { address enforcer; bytes terms; bytes args; }',
  'struct Delegation { address delegate; address delegator; bytes32 authority; Caveat[] caveats; uint256 salt; bytes signature; }',
  'function disableDelegation(Delegation _delegation)',
  'function incrementNonce(address _delegationManager)',
]);

// The reward and bonus asset enums of the contracts (chain.md §5.1): LREP 0, USDC 1.
const ASSET_OF_ENUM: Record<number, Asset> = { 0: 'LREP', 1: 'USDC' };

function unaccounted(call: CallLike, why: string): never {
  throw new RefusedError(
    'unaccounted_call',
    `refused: a call to ${call.to} ${why}; loopsign signs only calls whose payments it can account for`,
    {
      hint: 'nothing was signed; the plan asks for a call outside the protocol the spend ledger knows',
      details: { rule: 'unaccounted_call', to: call.to, selector: call.data.slice(0, 10) },
    },
  );
}

function decoded(abi: readonly unknown[], call: CallLike): { functionName: string; args: readonly any[] } | undefined {
  try {
    return decodeFunctionData({ abi: abi as never, data: call.data }) as never;
  } catch {
    return undefined;
  }
}

function assetOfEnum(call: CallLike, value: unknown): Asset {
  const asset = ASSET_OF_ENUM[Number(value)];
  if (!asset) unaccounted(call, `names reward asset ${String(value)}`);
  return asset;
}

/** The token movements one call can cause (throws for a call that cannot be accounted for). */
export function callEffects(chain: ChainConfig, call: CallLike): SpendEffect[] {
  const c = chain.contracts;
  const to = (contract: Hex | undefined) => sameAddress(call.to, contract);
  for (const asset of ['USDC', 'LREP'] as const) {
    if (!to(chain.tokens[asset].address)) continue;
    const d = decoded(erc20Abi, call);
    // A budget sweep's transfer back to the grant's owner (its operation's chain names the owner; no other does).
    if (d?.functionName === 'transfer' && chain.returnTo && sameAddress(d.args[0] as Hex, chain.returnTo))
      return [{ asset, kind: 'pull', spender: chain.returnTo, amount: d.args[1] as bigint }];
    if (d?.functionName !== 'approve') unaccounted(call, `on the ${asset} token is not an approval`);
    const [spender, amount] = d.args as [Hex, bigint];
    const trustedSpenders = [c.questionRewardPoolEscrow, c.feedbackBonusEscrow, c.roundVotingEngine];
    if (!trustedSpenders.some((t) => sameAddress(spender, t)))
      unaccounted(call, `approves ${spender}, which is not a trusted escrow or the voting engine`);
    return [{ asset, kind: 'approve', spender, amount }];
  }
  if (to(c.contentRegistry)) {
    const d = decoded(contentRegistryAbi, call);
    if (d?.functionName === 'reserveSubmission' || d?.functionName === 'cancelReservedSubmission') return [];
    if (
      d?.functionName === 'submitQuestionWithRewardAndRoundConfig' ||
      d?.functionName === 'submitQuestionBundleWithRewardAndRoundConfig'
    ) {
      const terms = (d.functionName === 'submitQuestionWithRewardAndRoundConfig' ? d.args[8] : d.args[1]) as {
        asset: number;
        amount: bigint;
      };
      return [{ asset: assetOfEnum(call, terms.asset), kind: 'pull', spender: c.questionRewardPoolEscrow as Hex, amount: terms.amount }];
    }
    unaccounted(call, 'on the ContentRegistry is not a reservation or a question submission');
  }
  if (to(c.x402QuestionSubmitter)) {
    const d = decoded(x402SubmitterAbi, call);
    if (!d) unaccounted(call, 'on the X402QuestionSubmitter is not a known submission');
    const auth = d.args[d.args.length - 1] as { value: bigint };
    return [{ asset: 'USDC', kind: 'pull', spender: call.to, amount: auth.value }];
  }
  if (to(c.feedbackBonusEscrow)) {
    const d = decoded(feedbackBonusEscrowAbi, call);
    if (d?.functionName !== 'createFeedbackBonusPoolWithAsset') unaccounted(call, 'on the FeedbackBonusEscrow is not a pool creation');
    const [, , asset, amount] = d.args as [bigint, bigint, number, bigint];
    return [{ asset: assetOfEnum(call, asset), kind: 'pull', spender: call.to, amount }];
  }
  if (to(c.roundVotingEngine)) {
    const d = decoded(votingEngineAbi, call);
    if (d?.functionName === 'openRound' || d?.functionName === 'revealVoteByCommitKey') return [];
    if (d?.functionName === 'commitVote' || d?.functionName === 'commitVoteWithPermit') {
      return [{ asset: 'LREP', kind: 'pull', spender: call.to, amount: d.args[6] as bigint }];
    }
    unaccounted(call, 'on the RoundVotingEngine is not an open, commit or reveal');
  }
  const budget = chain.delegation;
  if (budget && (to(budget.delegationManager) || to(budget.nonceEnforcer))) {
    // They stop pulls from this wallet and move nothing: disableDelegation on the manager, incrementNonce(manager) on
    // the NonceEnforcer (its nonce is the sender's, so only for this wallet).
    const d = decoded(budgetRevokeAbi, call);
    if (to(budget.delegationManager) && d?.functionName === 'disableDelegation') return [];
    if (to(budget.nonceEnforcer) && d?.functionName === 'incrementNonce' && sameAddress(d.args[0] as Hex, budget.delegationManager))
      return [];
    unaccounted(call, 'on the budget contracts is not a revocation');
  }
  if (to(chain.delegationManager)) {
    // A budget pull (issue 38): the owner's USDC or LREP moves to the recipient through the owner's grant. Nothing
    // leaves this wallet, so the pull counts as no spending (the ask's payment is what the ledger and the policy
    // count); src/budget/pull.ts checks before signing that it redeems the imported grant to this wallet.
    const pull = decodePullCall(call.data);
    const known = pull && (['USDC', 'LREP'] as const).some((a) => sameAddress(pull.token, chain.tokens[a].address));
    if (!known) unaccounted(call, 'on the DelegationManager is not a budget pull (one USDC or LREP transfer of a grant)');
    return [];
  }
  // `budget grant --eth-now`: the owner's one plain ETH transfer to the session for gas, only on that operation's chain
  // copy (its executor sends exactly chain.ethNow.value with it, src/wallet/executor.ts). ETH is no ledger asset.
  if (chain.ethNow && to(chain.ethNow.to) && call.data === '0x') return [];
  if (to(c.advisoryVoteRecorder)) {
    if (decoded(advisoryRecorderAbi, call)?.functionName === 'recordAdvisoryVote') return [];
    unaccounted(call, 'on the AdvisoryVoteRecorder is not an advisory vote');
  }
  return unaccounted(call, 'is not to a trusted contract of this chain');
}

/** The calls a signed transaction carries: one, or the inner calls of an ERC-7821 batch sent to the wallet itself. */
export function callsOfRawTransaction(raw: Hex, wallet: Hex): CallLike[] {
  const tx = parseTransaction(raw);
  return callsOfTransaction(tx.to as Hex, (tx.data ?? '0x') as Hex, wallet);
}

/** The calls of a transaction from `wallet` with this target and input (a mined one, read back from the chain). */
export function callsOfTransaction(to: Hex, data: Hex, wallet: Hex): CallLike[] {
  if (!sameAddress(to, wallet)) return [{ to, data }];
  // A self-send without data calls nothing (an EIP-7702 delegation's own transaction, issue 38; a cancel).
  if (data === '0x') return [];
  const d = decodeFunctionData({ abi: erc7821Abi, data });
  const [calls] = decodeAbiParameters(
    [
      {
        type: 'tuple[]',
        components: [
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'data', type: 'bytes' },
        ],
      },
    ],
    d.args![1] as Hex,
  );
  return calls.map((c) => ({ to: c.to as Hex, data: c.data as Hex }));
}
