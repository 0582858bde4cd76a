// The EIP-712 Delegation an owner signs for a grant, its hash (the key the enforcers keep their state under), and the
// redemption calldata a session sends: DelegationManager.redeemDelegations → USDC.transfer(session, amount) from the
// owner. Shapes from MetaMask's DelegationManager v1.3.0 (src/utils/Constants.sol, src/DelegationManager.sol).
import { encodeDelegations, hashDelegation, ROOT_AUTHORITY } from '@metamask/delegation-core';
import { encodeFunctionData, encodePacked, parseAbi, recoverTypedDataAddress, type Hex } from 'viem';
import type { Address } from '../chains/table.js';
import type { Caveat } from './terms.js';

export interface Delegation {
  delegate: Address;
  delegator: Address;
  authority: Hex;
  caveats: Caveat[];
  salt: bigint;
  signature: Hex;
}

export { ROOT_AUTHORITY };

export const DELEGATION_TYPES = {
  Delegation: [
    { name: 'delegate', type: 'address' },
    { name: 'delegator', type: 'address' },
    { name: 'authority', type: 'bytes32' },
    { name: 'caveats', type: 'Caveat[]' },
    { name: 'salt', type: 'uint256' },
  ],
  Caveat: [
    { name: 'enforcer', type: 'address' },
    { name: 'terms', type: 'bytes' },
  ],
} as const;

/** What the owner's signer signs: the Delegation under the DelegationManager's domain (caveat args are not signed). */
export function delegationTypedData(d: Omit<Delegation, 'signature'>, chainId: number, delegationManager: Address) {
  return {
    domain: { name: 'DelegationManager', version: '1', chainId, verifyingContract: delegationManager },
    types: DELEGATION_TYPES,
    primaryType: 'Delegation' as const,
    message: {
      delegate: d.delegate,
      delegator: d.delegator,
      authority: d.authority,
      caveats: d.caveats.map((c) => ({ enforcer: c.enforcer, terms: c.terms })),
      salt: d.salt,
    },
  };
}

/** The signer the signature recovers to (the owner, for a grant loopsign accepts). */
export function delegationSigner(d: Delegation, chainId: number, delegationManager: Address): Promise<Address> {
  return recoverTypedDataAddress({ ...delegationTypedData(d, chainId, delegationManager), signature: d.signature }) as Promise<Address>;
}

/** The delegation's struct hash: DelegationManager.getDelegationHash, the key of the enforcers' per-grant state. */
export function delegationHash(d: Omit<Delegation, 'signature'>): Hex {
  return hashDelegation({ ...d, signature: '0x' }) as Hex;
}

export const DELEGATION_MANAGER_ABI = parseAbi([
  'function redeemDelegations(bytes[] _permissionContexts, bytes32[] _modes, bytes[] _executionCallDatas)',
  'function disabledDelegations(bytes32 delegationHash) view returns (bool)',
  'function paused() view returns (bool)',
]);

export const TRANSFER_ABI = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

/** ERC-7579 mode: single call, revert on failure, no selector or payload (the only mode the period enforcers accept). */
export const SINGLE_DEFAULT_MODE: Hex = `0x${'00'.repeat(32)}`;

/**
 * The calldata of one pull: the session redeems the (root) delegation to run `token.transfer(to, amount)` as the owner.
 * The redeemer supplies the caveats' args: the MultiTokenPeriodEnforcer's token index (0) is set by terms.ts.
 */
export function pullCalldata(d: Delegation, token: Address, to: Address, amount: bigint): Hex {
  const context = encodeDelegations([d]) as Hex;
  const transfer = encodeFunctionData({ abi: TRANSFER_ABI, functionName: 'transfer', args: [to, amount] });
  const execution = encodePacked(['address', 'uint256', 'bytes'], [token, 0n, transfer]);
  return encodeFunctionData({
    abi: DELEGATION_MANAGER_ABI,
    functionName: 'redeemDelegations',
    args: [[context], [SINGLE_DEFAULT_MODE], [execution]],
  });
}
