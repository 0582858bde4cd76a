// Names for the reverts a plan call can meet, so a refusal reads "RoundNotOpen: …" rather than "custom error
// 0x…": the commit reasons of chain.md §9.12, the engine's round and reveal errors, and OpenZeppelin v5's token
// errors. Only a name and a hint; whether to send is never decided from it.
import { BaseError, decodeErrorResult, parseAbi, type Hex } from 'viem';

const KNOWN_ERRORS = parseAbi([
  'error InvalidStake()',
  'error InvalidCommitHash()',
  'error RoundNotOpen()',
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
  // ProtocolConfig.validateRoundConfig's refusal, which the live registry passes on for a submit's round settings.
  'error InvalidConfig()',
  'error EpochNotEnded()',
  'error NoCommit()',
  'error AlreadyRevealed()',
  'error HashMismatch()',
  'error UnrevealedPastEpochVotes()',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
]);

const HINTS: Record<string, string> = {
  RoundNotOpen:
    'the question has no round open for votes now (a round closed to votes but not settled yet keeps a new one from opening; try again once it settles)',
  AlreadyCommitted: 'this wallet already voted in this round',
  SelfVote: 'a submitter cannot rate their own question',
  CooldownActive: 'this wallet voted on this question less than 24 hours ago',
  MaxVotersReached: 'the round is full',
  ThresholdReached: 'the round already has the votes it needs',
  ConfidentialityCredentialRequired: 'gated content needs an active human credential on this wallet',
  TargetRoundOutOfWindow: 'the commit window moved on; run the command again to build a fresh commit',
  InvalidConfig:
    "the round settings are outside the chain's bounds (ProtocolConfig: a question of 20 seconds to 30 days, 3 to 100 settlement voters, a cap of 3 to 200 voters)",
  EpochNotEnded: "the vote cannot be revealed before its round's epoch ends and its drand round is out; try again later",
  NoCommit: 'the voting engine has no such commit in this round',
  AlreadyRevealed: 'the vote is revealed already',
  HashMismatch: 'the reveal does not match the commit (the journaled vote is not the one on chain)',
  UnrevealedPastEpochVotes: "the round's reveal grace is over: a late reveal no longer counts",
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

/**
 * What an empty revert (no data at all: the live ContentRegistry's bare `require`s, and the x402 submitter's and bonus
 * escrow's `require` strings, which production builds strip) can and cannot tell, for the call that met it: what
 * loopsign checked itself before it got there, and the rules it cannot tell apart.
 */
export function emptyRevertNote(phase: string): string {
  const prefix = 'the contract reverted without a reason (the live contracts give none for this)';
  switch (phase) {
    case 'reserve_submission':
      return `${prefix}. loopsign checked the commitment is this ask's; the registry refuses a reservation whose slot this wallet already holds (live, or expired and not cancelled), and it cannot tell which`;
    case 'submit_question':
      return `${prefix}. loopsign checked the call is this ask's question, terms and wallet, that the category is one of the registry's (1 to 8) and that the question was not on chain before it signed; it cannot tell which of the registry's other rules refused it: the reservation (missing, less than a second old, or past its 30 minutes), the question already submitted since, the media and URL rules, the title and tag lengths, the details hash, or the reward floor`;
    case 'submit_x402_question':
      return `${prefix}. loopsign checked the authorization's nonce binds this very question and its terms, that the category is one of the registry's (1 to 8) and that the question was not on chain before it signed; it cannot tell which rule refused it: the authorization (used, expired or not yet valid), the question already submitted since, the media and URL rules, the title and tag lengths, the details hash, or the reward floor`;
    case 'create_feedback_bonus_pool':
      return `${prefix}. loopsign checked the bonus is this ask's, for its own question; it cannot tell which of the escrow's rules refused it (the round, the amount, the awarder, the approval)`;
    default:
      return `${prefix}; loopsign cannot tell which rule refused the call`;
  }
}
