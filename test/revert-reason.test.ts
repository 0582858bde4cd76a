// What a simulation's revert is read as: the allowance shortfall that an approval before the call would cover, and
// nothing else that mentions an allowance.
import { describe, expect, it } from 'vitest';
import { BaseError, encodeErrorResult, parseAbi } from 'viem';
import { allowanceShortfall, revertReason } from '../src/wallet/revert-reason.js';

const OZ5 = parseAbi(['error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)', 'error AlreadyCommitted()']);

/** A viem error carrying revert data, as a node's answer to an estimate or a call does. */
function reverted(errorName: 'ERC20InsufficientAllowance' | 'AlreadyCommitted'): BaseError {
  const data =
    errorName === 'AlreadyCommitted'
      ? encodeErrorResult({ abi: OZ5, errorName })
      : encodeErrorResult({ abi: OZ5, errorName, args: ['0x0000000000000000000000000000000000000001', 0n, 5n] });
  const e = new BaseError('Execution reverted');
  return Object.assign(e, { data });
}

describe('allowanceShortfall', () => {
  it("is OpenZeppelin v5's custom error as revertReason names it, and the older tokens' strings", () => {
    const named = revertReason(reverted('ERC20InsufficientAllowance'))!;
    expect(named).toMatch(/^ERC20InsufficientAllowance: /);
    expect(allowanceShortfall(named)).toBe(true);
    expect(allowanceShortfall('execution reverted: ERC20: insufficient allowance')).toBe(true);
    expect(allowanceShortfall('execution reverted: ERC20: transfer amount exceeds allowance')).toBe(true);
  });

  it("is not the node's gas cap, nor another revert", () => {
    expect(allowanceShortfall('gas required exceeds allowance (30000000)')).toBe(false);
    expect(allowanceShortfall(revertReason(reverted('AlreadyCommitted'))!)).toBe(false);
    expect(allowanceShortfall('execution reverted')).toBe(false);
  });
});
