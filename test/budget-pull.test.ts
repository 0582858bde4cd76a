// The budget pull's two checks (issue 38), without a chain: the spend ledger's classifier accepts a redeemDelegations
// call only to the chain's pinned DelegationManager and only as one USDC/LREP transfer (counted as no spending of the
// wallet), and the guard before signing accepts a pull only when it redeems the imported grant, to this wallet, for the
// pinned USDC, through the pinned manager.
import { randomBytes } from 'node:crypto';
import { encodeFunctionData, encodePacked, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { encodeDelegations } from '@metamask/delegation-core';
import { delegationHash, delegationTypedData, pullCalldata, ROOT_AUTHORITY, type Delegation } from '../src/budget/delegation.js';
import { grantDocument } from '../src/budget/grant-file.js';
import { grantCaveats } from '../src/budget/terms.js';
import { checkPullCall } from '../src/budget/pull.js';
import { decodePullCall, REDEEM_ABI } from '../src/budget/pull-call.js';
import { callEffects } from '../src/wallet/spend-effects.js';
import { chainForProfile } from '../src/chains/index.js';
import type { DelegationAnchors, DelegationContracts } from '../src/chains/delegation.js';
import type { Address } from '../src/chains/table.js';

const addr = () => privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
const contracts: DelegationContracts = {
  delegationManager: addr(),
  deleGator: addr(),
  erc20PeriodTransferEnforcer: addr(),
  multiTokenPeriodEnforcer: addr(),
  allowedCalldataEnforcer: addr(),
  timestampEnforcer: addr(),
  nonceEnforcer: addr(),
};
const anchors: DelegationAnchors = { chainId: 31337, contracts, pinnedCodeHashes: {}, source: 'test' };
const usdc = addr() as Hex;
const lrep = addr() as Hex;
const owner = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
const wallet = addr() as Hex;
const chain = chainForProfile(31337);
chain.tokens.USDC.address = usdc as Address;
chain.tokens.LREP.address = lrep as Address;
chain.delegationManager = contracts.delegationManager;

async function signed(session: Hex, salt = 1n): Promise<Delegation> {
  const limits = {
    token: usdc as Address,
    session: session as Address,
    perDay: 20_000_000n,
    per30Days: 100_000_000n,
    start: 1_790_000_000 - (1_790_000_000 % 86_400),
    expiresAt: 1_800_000_000,
    nonce: 0n,
  };
  const unsigned = {
    delegate: session as Address,
    delegator: owner.address,
    authority: ROOT_AUTHORITY as Hex,
    caveats: grantCaveats(contracts, limits),
    salt,
  };
  return { ...unsigned, signature: await owner.signTypedData(delegationTypedData(unsigned, 31337, contracts.delegationManager) as never) };
}

async function grantOf(d: Delegation) {
  const { signature: _s, ...unsigned } = d;
  return grantDocument({
    chainId: 31337,
    owner: owner.address,
    session: d.delegate,
    delegationManager: contracts.delegationManager,
    deleGator: contracts.deleGator,
    entry: {
      asset: 'USDC',
      hash: delegationHash(unsigned),
      delegation: d,
      limits: {
        token: usdc as Address,
        session: d.delegate,
        perDay: 20_000_000n,
        per30Days: 100_000_000n,
        start: 0,
        expiresAt: 1_800_000_000,
        nonce: 0n,
      },
    },
    createdAt: new Date(),
  });
}

const call = (to: Hex, data: Hex) => ({ phase: 'budget_pull', to, data, value: '0' });

describe('a budget pull in the spend ledger', () => {
  it('counts as no spending only when it is one token transfer through the pinned DelegationManager', async () => {
    const d = await signed(wallet);
    const pull = pullCalldata(d, usdc, wallet, 1_500_000n);
    expect(callEffects(chain, call(contracts.delegationManager, pull))).toEqual([]);
    expect(decodePullCall(pull)).toEqual(expect.objectContaining({ recipient: wallet, amount: 1_500_000n }));
    // The same calldata to any other contract names no trusted contract.
    expect(() => callEffects(chain, call(addr() as Hex, pull))).toThrow(/not to a trusted contract/);
    // A redemption running anything but a token transfer (here: a call to the wallet itself), or a batch mode.
    const other = encodePacked(['address', 'uint256', 'bytes'], [wallet, 0n, '0x12345678']);
    const context = encodeDelegations([d]) as Hex;
    const odd = encodeFunctionData({
      abi: REDEEM_ABI,
      functionName: 'redeemDelegations',
      args: [[context], [`0x${'00'.repeat(32)}`], [other]],
    });
    expect(() => callEffects(chain, call(contracts.delegationManager, odd))).toThrow(/not a budget pull/);
    const batch = encodeFunctionData({
      abi: REDEEM_ABI,
      functionName: 'redeemDelegations',
      args: [[context], [`0x01${'00'.repeat(31)}`], [pull]],
    });
    expect(() => callEffects(chain, call(contracts.delegationManager, batch))).toThrow(/not a budget pull/);
  });
});

describe('the guard before a pull is signed', () => {
  it('accepts the imported grant’s transfer to this wallet and refuses every other shape', async () => {
    const d = await signed(wallet);
    const grant = await grantOf(d);
    const o = { anchors, grant, wallet, token: usdc };
    expect(checkPullCall(call(contracts.delegationManager, pullCalldata(d, usdc, wallet, 7n)), o)).toBe(7n);
    const refused = (c: ReturnType<typeof call>) => {
      try {
        checkPullCall(c, o);
        return 'accepted';
      } catch (error) {
        return (error as { code: string }).code + ': ' + (error as Error).message;
      }
    };
    // Another manager, another recipient, another token, nothing, another delegation (even the owner's to this wallet).
    expect(refused(call(addr() as Hex, pullCalldata(d, usdc, wallet, 7n)))).toMatch(
      /^budget_pull_refused: .*not the pinned DelegationManager/,
    );
    expect(refused(call(contracts.delegationManager, pullCalldata(d, usdc, addr() as Hex, 7n)))).toMatch(/not this wallet/);
    expect(refused(call(contracts.delegationManager, pullCalldata(d, lrep, wallet, 7n)))).toMatch(/not the pinned USDC/);
    expect(refused(call(contracts.delegationManager, pullCalldata(d, usdc, wallet, 0n)))).toMatch(/moves nothing/);
    const another = await signed(wallet, 2n);
    expect(refused(call(contracts.delegationManager, pullCalldata(another, usdc, wallet, 7n)))).toMatch(/not the imported grant/);
  });
});
