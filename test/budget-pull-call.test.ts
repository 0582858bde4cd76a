// A budget pull read back (issue 38, src/budget/pull-call.ts) and how the spend ledger accounts it
// (src/wallet/spend-effects.ts). Red team: MetaMask's DelegationManager treats a permission context that decodes to no
// delegation at all as a *self-authorized* execution on the caller's own DeleGator (executeFromExecutor on msg.sender):
// from an owner's account on the DeleGator it moves the owner's own tokens anywhere (test/budget-redteam.e2e.test.ts
// shows it on the sandbox). Such a call is no budget pull and must never be accounted as "no spending".
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeFunctionData, encodePacked, parseAbi, type Hex } from 'viem';
import { chainForProfile } from '../src/chains/index.js';
import { RefusedError } from '../src/errors.js';
import { DELEGATION_CHAIN, decodePullCall } from '../src/budget/pull-call.js';
import { pullCalldata } from '../src/budget/delegation.js';
import { callEffects } from '../src/wallet/spend-effects.js';

const chain = chainForProfile(8453);
const USDC = chain.tokens.USDC.address as Hex;
const THIEF: Hex = '0x7777777777777777777777777777777777777777';
const S: Hex = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const O: Hex = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

function redeem(context: Hex, to: Hex, amount: bigint): Hex {
  const transfer = encodeFunctionData({
    abi: parseAbi(['function transfer(address, uint256) returns (bool)']),
    functionName: 'transfer',
    args: [to, amount],
  });
  return encodeFunctionData({
    abi: parseAbi(['function redeemDelegations(bytes[], bytes32[], bytes[])']),
    functionName: 'redeemDelegations',
    args: [[context], [`0x${'00'.repeat(32)}`], [encodePacked(['address', 'uint256', 'bytes'], [USDC, 0n, transfer])]],
  });
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('a budget pull, accounted by the spend ledger', () => {
  it('a pull of a grant (one delegation, O to S) is no spending of S', () => {
    const data = pullCalldata(
      {
        delegate: S,
        delegator: O,
        authority: `0x${'ff'.repeat(32)}`,
        caveats: [],
        salt: 1n,
        signature: '0x1234',
      } as never,
      USDC,
      S,
      1_000_000n,
    );
    expect(decodePullCall(data)?.amount).toBe(1_000_000n);
    expect(callEffects(chain, { to: chain.delegationManager as Hex, data })).toEqual([]);
  });

  it('RED TEAM: a self-authorized redemption (a context of no delegation) moves the caller’s own tokens: unaccounted_call, never "no spending"', () => {
    for (const context of [encodeAbiParameters(DELEGATION_CHAIN, [[]]), '0x' as Hex]) {
      const data = redeem(context, THIEF, 50_000_000n);
      expect(decodePullCall(data)).toBeUndefined();
      const e = thrown(() => callEffects(chain, { to: chain.delegationManager as Hex, data }));
      expect(e).toBeInstanceOf(RefusedError);
      expect((e as RefusedError).code).toBe('unaccounted_call');
    }
  });
});
