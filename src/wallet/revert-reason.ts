// Names for the reverts a plan call can meet, so a refusal reads "RoundNotOpen: …" rather than "custom error
// 0x…": the commit reasons of chain.md §9.12, the engine's round and reveal errors, and OpenZeppelin v5's token
// errors. Only a name and a hint; whether to send is never decided from it.
import { BaseError, decodeErrorResult, parseAbi, type Hex } from 'viem';

const KNOWN_ERRORS = parseAbi([
  'error InvalidStake()',
  'error InvalidCommitHash()',
  'error RoundNotOpen()',
  'error RoundAlreadyOpen()',
  'error ThresholdReached()',
  'error SelfVote()',
  'error ContentNotActive()',
  'error IdentityBanned()',
  'error ConfidentialityCredentialRequired()',
  'error ConfidentialityBondRequired()',
  'error AlreadyCommitted()',
  'error CooldownActive()',
  'error MaxVotersReached()',
  'error CiphertextTooLarge()',
  'error InvalidCiphertext()',
  'error DrandChainHashMismatch()',
  'error TargetRoundOutOfWindow()',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
]);

const HINTS: Record<string, string> = {
  RoundNotOpen: 'the question has no round open for votes now',
  RoundAlreadyOpen: 'the question still has a round that is closed to votes but not settled; try again once it settles',
  AlreadyCommitted: 'this wallet already voted in this round',
  SelfVote: 'a submitter cannot rate their own question',
  CooldownActive: 'this wallet voted on this question less than 24 hours ago',
  MaxVotersReached: 'the round is full',
  ThresholdReached: 'the round already has the votes it needs',
  ConfidentialityCredentialRequired: 'gated content needs an active human credential on this wallet',
  TargetRoundOutOfWindow: 'the commit window moved on; run the command again to build a fresh commit',
  ERC20InsufficientBalance: 'the wallet does not hold enough of the token',
  ERC20InsufficientAllowance: 'the approval before this call did not cover it',
};

/** The revert's data (at least a selector) as the node answered it; undefined when the answer carries none. */
export function revertData(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) return undefined;
  let data: Hex | undefined;
  error.walk((e) => {
    const d = (e as { data?: unknown }).data;
    if (typeof d === 'string' && /^0x[0-9a-fA-F]{8}/.test(d)) data = d as Hex;
    return data !== undefined;
  });
  return data;
}

/** "Name: hint" for a revert whose data names a known error; undefined when there is none or it is unknown. */
export function revertReason(error: unknown): string | undefined {
  const data = revertData(error);
  if (!data) return undefined;
  try {
    const { errorName } = decodeErrorResult({ abi: KNOWN_ERRORS, data });
    return HINTS[errorName] ? `${errorName}: ${HINTS[errorName]}` : errorName;
  } catch {
    return undefined;
  }
}

/**
 * Whether a revert reason says a token's allowance did not cover a transfer: OpenZeppelin v5's ERC20InsufficientAllowance
 * (named by revertReason), or v4's and older tokens' strings. Not any text with "allowance" in it: a node's "gas required
 * exceeds allowance" is its gas cap, not the token's.
 */
export function allowanceShortfall(reason: string): boolean {
  return /InsufficientAllowance|insufficient allowance|amount exceeds allowance/i.test(reason);
}
