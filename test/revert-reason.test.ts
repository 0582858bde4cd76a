// What a simulation's revert is read as: the allowance shortfall that an approval before the call would cover, and
// nothing else that mentions an allowance.
import { describe, expect, it } from 'vitest';
import { BaseError, encodeErrorResult, parseAbi } from 'viem';
import { allowanceShortfall, emptyRevertNote, revertReason } from '../src/wallet/revert-reason.js';

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

describe('emptyRevertNote', () => {
  // The live registry and the x402 submitter revert with no data: the message says what loopsign checked itself and
  // which of the contract's rules it cannot tell apart, never a custom error name the live chain does not give.
  it("names what was checked and what cannot be told, for the submission's calls", () => {
    const submit = emptyRevertNote('submit_question');
    expect(submit).toMatch(/^the contract reverted without a reason/);
    expect(submit).toMatch(/loopsign checked .*category.*not on chain before it signed/);
    expect(submit).toMatch(/cannot tell which .*reservation.*reward floor/);
    expect(emptyRevertNote('submit_x402_question')).toMatch(/authorization's nonce binds this very question.*cannot tell which rule/);
    expect(emptyRevertNote('reserve_submission')).toMatch(/slot this wallet already holds/);
    expect(emptyRevertNote('commit_rating')).toMatch(/cannot tell which rule refused the call$/);
    for (const phase of ['submit_question', 'submit_x402_question', 'reserve_submission', 'create_feedback_bonus_pool', 'x'])
      expect(emptyRevertNote(phase)).not.toMatch(/Reservation(TooNew|Expired|NotFound)|InvalidRewardTerms|NonceMismatch/);
  });
});

describe('revertReason: the round bounds', () => {
  it("names ProtocolConfig's InvalidConfig() (the live registry passes it on for a submit's round settings) with its bounds", () => {
    const abi = parseAbi(['error InvalidConfig()']);
    const e = Object.assign(new BaseError('Execution reverted'), { data: encodeErrorResult({ abi, errorName: 'InvalidConfig' }) });
    expect(revertReason(e)).toMatch(
      /^InvalidConfig: the round settings are outside the chain's bounds \(ProtocolConfig: .*20 seconds to 30 days/,
    );
  });
});

describe("the voting engine's reveal errors (live names, RateLoop 0b442ae)", () => {
  it('are named with a hint: a reveal too early is EpochNotEnded, a wrong one HashMismatch', () => {
    const abi = parseAbi(['error EpochNotEnded()', 'error HashMismatch()', 'error UnrevealedPastEpochVotes()']);
    const named = (errorName: 'EpochNotEnded' | 'HashMismatch' | 'UnrevealedPastEpochVotes') =>
      revertReason(Object.assign(new BaseError('Execution reverted'), { data: encodeErrorResult({ abi, errorName }) }));
    expect(named('EpochNotEnded')).toMatch(/^EpochNotEnded: the vote cannot be revealed before/);
    expect(named('HashMismatch')).toMatch(/^HashMismatch: the reveal does not match the commit/);
    expect(named('UnrevealedPastEpochVotes')).toMatch(/^UnrevealedPastEpochVotes: /);
  });
});
