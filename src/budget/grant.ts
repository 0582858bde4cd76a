// The owner's side of a budget grant (issue 38): plan (read the chain, check the pinned contracts' code, decide the
// caveats), then, once a person said yes, point the owner's account at the pinned DeleGator (EIP-7702) if it is not
// yet (a journaled transaction on the executor, src/budget/owner-tx.ts), and sign the Delegation. Everything signed is
// built here from the owner's own flags and the pinned anchors.
import { randomBytes } from 'node:crypto';
import { isAddressEqual, parseAbi, type Hex, type LocalAccount, type PublicClient } from 'viem';
import { ChainError, RefusedError, UsageError } from '../errors.js';
import type { Address } from '../chains/table.js';
import { checkDelegationCode, type CheckedCode, type DelegationAnchors } from '../chains/delegation.js';
import { delegationHash, delegationSigner, delegationTypedData, ROOT_AUTHORITY, type Delegation } from './delegation.js';
import { grantCaveats, utcDayStart, type GrantLimits } from './terms.js';
import { grantDocument, type GrantEntry, type GrantFile } from './grant-file.js';

export interface GrantRequest {
  session: Address;
  perDay: bigint;
  per30Days: bigint;
  /** LREP caps (atomic units), when the owner also grants LREP: a second delegation of the same shape. */
  lrep?: { perDay: bigint; per30Days: bigint };
  expiresInSeconds: number;
}

export interface GrantDeps {
  client: PublicClient;
  chainId: number;
  owner: Address;
  usdc: Address;
  /** The chain's LREP token: needed only for a grant with LREP caps. */
  lrep?: Address;
  anchors: DelegationAnchors;
  /** The chain's pinned Calibur (loopsign's batch delegate): the only other code the owner may run, and is replaced. */
  batchDelegate?: Address;
  stateDir: string;
}

/** The owner's EIP-7702 state: none, the pinned DeleGator already, or loopsign's batch delegate (which the grant replaces). */
export type OwnerCode = 'none' | 'deleGator' | 'batchDelegate';

export interface GrantPlan {
  chainId: number;
  owner: Address;
  limits: GrantLimits;
  /** The LREP delegation's limits (same session, start, expiry and nonce), when LREP is granted. */
  lrepLimits?: GrantLimits;
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
  for (const [asset, caps] of [
    ['USDC', r],
    ['LREP', r.lrep],
  ] as const) {
    if (caps && (caps.perDay <= 0n || caps.per30Days <= 0n || caps.perDay > caps.per30Days))
      throw new UsageError(
        'invalid_budget_caps',
        `the ${asset} caps do not fit: per day ${caps.perDay}, per 30 days ${caps.per30Days} (atomic units); each must be above 0 and the daily cap at most the 30-day cap`,
      );
  }
  if (r.lrep && !d.lrep)
    throw new UsageError('budget_unsupported_chain', `no LREP address is configured on chain ${d.chainId}; grant USDC only`);
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
  const limits: GrantLimits = {
    token: d.usdc,
    session: r.session,
    perDay: r.perDay,
    per30Days: r.per30Days,
    start: utcDayStart(now),
    expiresAt: now + r.expiresInSeconds,
    nonce,
  };
  return {
    chainId: d.chainId,
    owner: d.owner,
    ownerCode: code,
    contracts,
    anchors: d.anchors,
    limits,
    ...(r.lrep && d.lrep ? { lrepLimits: { ...limits, token: d.lrep, perDay: r.lrep.perDay, per30Days: r.lrep.per30Days } } : {}),
  };
}

export interface SignedGrant {
  grant: GrantFile;
  /** The EIP-7702 transaction, when this grant set the owner's delegation. */
  delegationTx?: Hex;
}

/**
 * Signs the grant once the owner runs the DeleGator: `delegate` points the account at it first (a journaled transaction
 * on the executor, src/budget/owner-tx.ts; it settles what an earlier run journaled, and sends nothing when the account
 * already runs the DeleGator) and returns its transaction, if it sent or resumed one.
 */
export async function signGrant(
  d: GrantDeps,
  plan: GrantPlan,
  account: LocalAccount,
  now: Date,
  delegate: () => Promise<Hex | undefined>,
): Promise<SignedGrant> {
  if (!account.signTypedData) throw new UsageError('budget_signer_unsupported', 'the configured signer cannot sign EIP-712 typed data');
  const delegationTx = await delegate();
  const code = delegatedTo(await d.client.getCode({ address: d.owner }));
  if (!code || !isAddressEqual(code, plan.anchors.contracts.deleGator))
    throw new ChainError(
      'rpc_failed',
      `the owner ${d.owner} does not run the DeleGator ${plan.anchors.contracts.deleGator} after its delegation; nothing was signed`,
      {
        hint: 'check the transaction on the chain, then run `loopsign budget grant` again',
      },
    );
  const entries: GrantEntry[] = [];
  for (const [asset, limits] of [
    ['USDC', plan.limits],
    ['LREP', plan.lrepLimits],
  ] as const) {
    if (!limits) continue;
    const unsigned = {
      delegate: limits.session,
      delegator: plan.owner,
      authority: ROOT_AUTHORITY as Hex,
      caveats: grantCaveats(plan.anchors.contracts, limits),
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
    entries.push({ asset, hash: delegationHash(unsigned), delegation, limits });
  }
  const grant = grantDocument({
    chainId: plan.chainId,
    owner: plan.owner,
    session: plan.limits.session,
    delegationManager: plan.anchors.contracts.delegationManager,
    deleGator: plan.anchors.contracts.deleGator,
    entries,
    createdAt: now,
  });
  return delegationTx ? { grant, delegationTx } : { grant };
}
