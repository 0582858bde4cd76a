// The owner's side of a budget grant (issue 38): plan (read the chain, check the pinned contracts' code, decide the
// caveats), then, once a person said yes, point the owner's account at the pinned DeleGator (EIP-7702) if it is not
// yet, and sign the Delegation. Everything signed is built here from the owner's own flags and the pinned anchors.
import { randomBytes } from 'node:crypto';
import { formatGwei, isAddressEqual, parseAbi, type Hex, type LocalAccount, type PublicClient } from 'viem';
import { ChainError, RefusedError, UsageError } from '../errors.js';
import type { Address } from '../chains/table.js';
import { checkDelegationCode, type CheckedCode, type DelegationAnchors } from '../chains/delegation.js';
import { delegationHash, delegationSigner, delegationTypedData, ROOT_AUTHORITY, type Delegation } from './delegation.js';
import { grantCaveats, utcDayStart, type GrantLimits } from './terms.js';
import { grantDocument, type GrantFile } from './grant-file.js';

export interface GrantRequest {
  session: Address;
  perDay: bigint;
  per30Days: bigint;
  expiresInSeconds: number;
}

export interface GrantDeps {
  client: PublicClient;
  chainId: number;
  owner: Address;
  usdc: Address;
  anchors: DelegationAnchors;
  /** The chain's pinned Calibur (loopsign's batch delegate): the only other code the owner may run, and is replaced. */
  batchDelegate?: Address;
  stateDir: string;
  maxFeePerGas: bigint;
}

/** The owner's EIP-7702 state: none, the pinned DeleGator already, or loopsign's batch delegate (which the grant replaces). */
export type OwnerCode = 'none' | 'deleGator' | 'batchDelegate';

export interface GrantPlan {
  chainId: number;
  owner: Address;
  limits: GrantLimits;
  ownerCode: OwnerCode;
  contracts: CheckedCode[];
  anchors: DelegationAnchors;
}

const NONCE_ENFORCER_ABI = parseAbi(['function currentNonce(address delegationManager, address delegator) view returns (uint256)']);

/** 0xef0100 ‖ address: the code of an account delegated by EIP-7702. */
export function delegatedTo(code: Hex | undefined): Address | undefined {
  if (!code || code.length !== 2 + 46 || !code.toLowerCase().startsWith('0xef0100')) return undefined;
  return `0x${code.slice(8)}` as Address;
}

export async function ownerCode(d: GrantDeps): Promise<OwnerCode> {
  const code = await d.client.getCode({ address: d.owner });
  if (!code || code === '0x') return 'none';
  const target = delegatedTo(code);
  if (target && isAddressEqual(target, d.anchors.contracts.deleGator)) return 'deleGator';
  if (target && d.batchDelegate && isAddressEqual(target, d.batchDelegate)) return 'batchDelegate';
  throw new RefusedError(
    'budget_owner_delegated_elsewhere',
    `the owner ${d.owner} runs ${target ? `the EIP-7702 delegate ${target}` : 'contract code'}, neither loopsign's batch delegate nor the pinned DeleGator ${d.anchors.contracts.deleGator}; nothing was signed`,
    { hint: 'grant from an account that runs no other code', details: { owner: d.owner, delegate: target ?? null } },
  );
}

export async function planGrant(d: GrantDeps, r: GrantRequest): Promise<GrantPlan> {
  if (isAddressEqual(r.session, d.owner))
    throw new UsageError('budget_self_grant', `--to ${r.session} is the owner's own address`, {
      hint: "give the agent's session address (`loopsign wallet address` where the agent runs)",
    });
  if (r.perDay <= 0n || r.per30Days <= 0n || r.perDay > r.per30Days)
    throw new UsageError(
      'invalid_budget_caps',
      `the caps do not fit: per day ${r.perDay}, per 30 days ${r.per30Days} (atomic units); each must be above 0 and the daily cap at most the 30-day cap`,
    );
  const contracts = await checkDelegationCode(d.client, d.anchors, d.stateDir);
  const code = await ownerCode(d);
  // Chain time, not this machine's: the enforcers count periods by block.timestamp.
  const now = Number((await d.client.getBlock({ blockTag: 'latest' })).timestamp);
  const nonce = (await d.client.readContract({
    address: d.anchors.contracts.nonceEnforcer,
    abi: NONCE_ENFORCER_ABI,
    functionName: 'currentNonce',
    args: [d.anchors.contracts.delegationManager, d.owner],
  })) as bigint;
  return {
    chainId: d.chainId,
    owner: d.owner,
    ownerCode: code,
    contracts,
    anchors: d.anchors,
    limits: {
      token: d.usdc,
      session: r.session,
      perDay: r.perDay,
      per30Days: r.per30Days,
      start: utcDayStart(now),
      expiresAt: now + r.expiresInSeconds,
      nonce,
    },
  };
}

/**
 * Points the owner's account at the pinned DeleGator: one type-4 transaction to itself (no call), whose authorization
 * (nonce + 1: the sender's own nonce is used by the transaction first) names the DeleGator. Checked on chain after.
 */
async function delegateOwner(d: GrantDeps, account: LocalAccount): Promise<Hex> {
  if (!account.signAuthorization)
    throw new UsageError('budget_signer_unsupported', 'the configured signer cannot sign an EIP-7702 authorization', {
      hint: 'use the keystore (or LOOPSIGN_PRIVATE_KEY) for the first grant of this account',
    });
  const nonce = await d.client.getTransactionCount({ address: d.owner, blockTag: 'pending' });
  const authorization = await account.signAuthorization({ address: d.anchors.contracts.deleGator, chainId: d.chainId, nonce: nonce + 1 });
  const fees = await d.client.estimateFeesPerGas();
  if (fees.maxFeePerGas > d.maxFeePerGas)
    throw new ChainError(
      'fee_cap',
      `the network asks ${formatGwei(fees.maxFeePerGas)} gwei per gas, above the cap of ${formatGwei(d.maxFeePerGas)}; nothing was signed`,
      { hint: 'wait for fees to fall, or raise maxFeePerGasGwei (LOOPSIGN_MAX_FEE_GWEI)' },
    );
  const request = { account: d.owner, to: d.owner, data: '0x' as Hex, value: 0n, authorizationList: [authorization] };
  const gas = ((await d.client.estimateGas(request)) * 12n) / 10n;
  const raw = await account.signTransaction({
    type: 'eip7702',
    chainId: d.chainId,
    nonce,
    to: d.owner,
    data: '0x',
    value: 0n,
    gas,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    authorizationList: [authorization],
  });
  const hash = await d.client.sendRawTransaction({ serializedTransaction: raw });
  const receipt = await d.client.waitForTransactionReceipt({ hash, pollingInterval: 250 });
  const now = delegatedTo(await d.client.getCode({ address: d.owner }));
  if (receipt.status !== 'success' || !now || !isAddressEqual(now, d.anchors.contracts.deleGator))
    throw new ChainError('rpc_failed', `the transaction ${hash} that points the owner at the DeleGator did not take effect`, {
      hint: 'check the transaction on the chain, then run `loopsign budget grant` again',
    });
  return hash;
}

export interface SignedGrant {
  grant: GrantFile;
  /** The EIP-7702 transaction, when this grant set the owner's delegation. */
  delegationTx?: Hex;
}

export async function signGrant(d: GrantDeps, plan: GrantPlan, account: LocalAccount, now: Date): Promise<SignedGrant> {
  if (!account.signTypedData) throw new UsageError('budget_signer_unsupported', 'the configured signer cannot sign EIP-712 typed data');
  const delegationTx = plan.ownerCode === 'deleGator' ? undefined : await delegateOwner(d, account);
  const unsigned = {
    delegate: plan.limits.session,
    delegator: plan.owner,
    authority: ROOT_AUTHORITY as Hex,
    caveats: grantCaveats(plan.anchors.contracts, plan.limits),
    salt: BigInt(`0x${randomBytes(32).toString('hex')}`),
  };
  const signature = await account.signTypedData(delegationTypedData(unsigned, plan.chainId, plan.anchors.contracts.delegationManager));
  const delegation: Delegation = { ...unsigned, signature };
  // As `budget import` will: the signature is the owner's over exactly this delegation.
  const signer = await delegationSigner(delegation, plan.chainId, plan.anchors.contracts.delegationManager);
  if (!isAddressEqual(signer, plan.owner))
    throw new RefusedError(
      'signature_not_from_signer',
      `the grant's signature recovers to ${signer}, not the owner ${plan.owner}; nothing was written`,
    );
  const grant = grantDocument({
    chainId: plan.chainId,
    owner: plan.owner,
    session: plan.limits.session,
    delegationManager: plan.anchors.contracts.delegationManager,
    deleGator: plan.anchors.contracts.deleGator,
    entry: { asset: 'USDC', hash: delegationHash(unsigned), delegation, limits: plan.limits },
    createdAt: now,
  });
  return delegationTx ? { grant, delegationTx } : { grant };
}
