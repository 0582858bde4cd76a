// Function signatures the signer meets on chain (chain.md §4), as viem ABIs. The client decodes plan calldata
// with these; the sandbox encodes its plans with the same ones. Selectors are pinned by the vector tests.
import { parseAbi } from 'viem';

const QUESTION_ARGS =
  'string contextUrl, string[] imageUrls, string videoUrl, string title, string tags, uint256 categoryId, (string detailsUrl, bytes32 detailsHash) details, bytes32 salt, (uint8 asset, uint256 amount, uint256 requiredVoters, uint8 bountyEligibility) rewardTerms, (uint32 epochDuration, uint32 maxDuration, uint16 minVoters, uint16 maxVoters) roundConfig, (bytes32 questionMetadataHash, bytes32 resultSpecHash) spec';
const CONFIDENTIALITY = '(bool gated, uint8 bondAsset, uint64 bondAmount, uint8 flags) confidentiality';
const AUTH =
  '(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) paymentAuthorization';

export const erc20Abi = parseAbi([
  'function approve(address spender, uint256 value) returns (bool)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function balanceOf(address owner) view returns (uint256)',
  // EIP-3009 (USDC): whether an authorization's nonce has been used.
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function decimals() view returns (uint8)',
  'function transfer(address to, uint256 value) returns (bool)',
]);

export const contentRegistryAbi = parseAbi([
  'function reserveSubmission(bytes32 revealCommitment)',
  'function cancelReservedSubmission(bytes32 revealCommitment)',
  `function submitQuestionWithRewardAndRoundConfig(${QUESTION_ARGS}, ${CONFIDENTIALITY}) returns (uint256)`,
  'function submitQuestionBundleWithRewardAndRoundConfig((string contextUrl, string[] imageUrls, string videoUrl, string title, string tags, uint256 categoryId, (string detailsUrl, bytes32 detailsHash) details, bytes32 salt, (bytes32 questionMetadataHash, bytes32 resultSpecHash) spec)[] questions, (uint8 asset, uint256 amount, uint256 requiredVoters, uint8 bountyEligibility) rewardTerms, (uint32 epochDuration, uint32 maxDuration, uint16 minVoters, uint16 maxVoters) roundConfig) returns (uint256 bundleId, uint256[] contentIds)',
  'function getContentRoundConfig(uint256 contentId) view returns ((uint32 epochDuration, uint32 maxDuration, uint16 minVoters, uint16 maxVoters))',
  'function isContentActive(uint256 contentId) view returns (bool)',
  // The live registry's public mapping: a question key (chain.md §6.6) already submitted on this chain. Read before
  // anything is signed, since a second submission of a key reverts only after the reservation and approval are mined.
  'function submissionKeyUsed(bytes32 submissionKey) view returns (bool)',
  // The live registry's events (chain.md §4.3): a submission is proven from these in the wallet's own receipts.
  'event SubmissionReserved(address indexed submitter, bytes32 indexed revealCommitment, uint256 expiresAt)',
  'event ContentSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 contentHash, string url, string title, string tags, uint256 indexed categoryId)',
  'event ContentDetailsSubmitted(uint256 indexed contentId, string detailsUrl, bytes32 detailsHash)',
  'event SubmissionRewardPoolAttached(uint256 indexed contentId, address indexed submitter, uint8 indexed rewardAsset, uint256 amount, uint256 requiredVoters, uint256 requiredSettledRounds, uint256 bountyStartBy, uint256 bountyWindowSeconds, uint256 feedbackWindowSeconds, uint8 bountyEligibility, bytes32 bountyEligibilityDataHash, uint256 rewardPoolId)',
  'event QuestionBundleSubmitted(uint256 indexed bundleId, address indexed submitter, uint256 questionCount, uint8 indexed rewardAsset, uint256 amount, uint256 requiredCompleters, uint256 bountyStartBy, uint256 bountyWindowSeconds, uint256 feedbackWindowSeconds, uint8 bountyEligibility, bytes32 bountyEligibilityDataHash, bytes32 bundleHash, uint256 rewardPoolId)',
  'event QuestionBundleContentLinked(uint256 indexed bundleId, uint256 indexed contentId, uint256 indexed bundleIndex)',
]);

export const x402SubmitterAbi = parseAbi([
  `function submitQuestionWithX402Payment(${QUESTION_ARGS}, ${CONFIDENTIALITY}, ${AUTH}) returns (uint256 contentId)`,
  `function submitQuestionWithX402OneShotPayment(${QUESTION_ARGS}, ${CONFIDENTIALITY}, (uint256 amount, address awarder, uint256 executeBy) feedbackBonusTerms, ${AUTH}) returns (uint256 contentId, uint256 feedbackBonusPoolId)`,
  'event X402QuestionSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 indexed paymentNonce, uint256 amount)',
  'event X402FeedbackBonusAttached(uint256 indexed contentId, uint256 indexed feedbackBonusPoolId, address indexed funder, uint256 amount, uint256 feedbackClosesAt, address awarder)',
]);

/** Legacy overloads: recognised only to refuse them precisely (chain.md §4.1). */
export const x402LegacyAbi = parseAbi([
  `function submitQuestionWithX402Payment(${QUESTION_ARGS}, ${AUTH}) returns (uint256 contentId)`,
  `function submitQuestionWithX402OneShotPayment(${QUESTION_ARGS}, (uint256 amount, address awarder, uint256 executeBy) feedbackBonusTerms, ${AUTH}) returns (uint256 contentId, uint256 feedbackBonusPoolId)`,
]);

export const feedbackBonusEscrowAbi = parseAbi([
  'function createFeedbackBonusPoolWithAsset(uint256 contentId, uint256 roundId, uint8 asset, uint256 amount, uint256 feedbackClosesAt, address awarder) returns (uint256 poolId)',
  'event FeedbackBonusPoolCreated(uint256 indexed poolId, uint256 indexed contentId, uint256 indexed roundId, address funder, address awarder, uint256 amount, uint256 feedbackClosesAt, uint256 frontendFeeBps, uint8 asset)',
]);

export const votingEngineAbi = parseAbi([
  'function commitVote(uint256 contentId, uint256 roundContext, uint64 targetRound, bytes32 drandChainHash, bytes32 commitHash, bytes ciphertext, uint256 stakeAmount, address frontend)',
  'function commitVoteWithPermit(uint256 contentId, uint256 roundContext, uint64 targetRound, bytes32 drandChainHash, bytes32 commitHash, bytes ciphertext, uint256 stakeAmount, address frontend, uint256 permitDeadline, uint8 v, bytes32 r, bytes32 s)',
  'function openRound(uint256 contentId)',
  'function revealVoteByCommitKey(uint256 contentId, uint256 roundId, bytes32 commitKey, bool isUp, uint16 predictedUpBps, bytes32 salt)',
  'function previewCommitContext(uint256 contentId) view returns (uint256 openRoundId, uint16 referenceRatingBps)',
  'function currentRoundId(uint256) view returns (uint256)',
  'function roundCore(uint256 contentId, uint256 roundId) view returns (uint48 startTime, uint8 state, uint16 voteCount, uint16 revealedCount, uint64 totalStake, uint48 thresholdReachedAt, uint48 settledAt, uint8 upWins)',
  'function roundConfigSnapshot(uint256, uint256) view returns (uint32 epochDuration, uint32 maxDuration, uint16 minVoters, uint16 maxVoters)',
  'function advisoryRoundContext(uint256 contentId, uint256 roundId, uint64 targetRound) view returns (uint16 referenceRatingBps, uint256 targetRevealableAt, bytes32 drandChainHash, uint64 drandGenesisTime, uint64 drandPeriod, bool rbtsScoringClosed, address advisoryVoteRecorder)',
  'function protocolConfig() view returns (address)',
  'function commitCore(uint256 contentId, uint256 roundId, bytes32 commitKey) view returns (address voter, uint64 stakeAmount, address frontend, uint48 revealableAfter, bool revealed, bool isUp, uint8 epochIndex)',
  'event VoteCommitted(uint256 indexed contentId, uint256 indexed roundId, address indexed voter, bytes32 commitHash, uint16 roundReferenceRatingBps, uint64 targetRound, bytes32 drandChainHash, uint256 stake, bytes32 ciphertextHash, bytes ciphertext)',
]);

export const advisoryRecorderAbi = parseAbi([
  'function recordAdvisoryVote(uint256 contentId, uint256 roundContext, uint64 targetRound, bytes32 drandChainHash, bytes32 commitHash, bytes ciphertext) returns (bytes32 advisoryCommitKey)',
  'event AdvisoryVoteRecorded(uint256 indexed contentId, uint256 indexed roundId, address indexed voter, bytes32 advisoryCommitKey, bytes32 commitHash, uint16 roundReferenceRatingBps, uint64 targetRound, bytes32 drandChainHash, bytes32 ciphertextHash, bytes ciphertext)',
]);

export const protocolConfigAbi = parseAbi([
  'function drandChainHash() view returns (bytes32)',
  'function drandGenesisTime() view returns (uint64)',
  'function drandPeriod() view returns (uint64)',
]);

export const erc7821Abi = parseAbi([
  'function execute(bytes32 mode, bytes executionData) payable',
  'function supportsExecutionMode(bytes32 mode) view returns (bool)',
]);

export const BATCH_MODE = '0x0100000000000000000000000000000000000000000000000000000000000000' as const;

/** The EIP-3009 ReceiveWithAuthorization type, as x402 typed data lists it (chain.md §8.1). */
export const RECEIVE_WITH_AUTHORIZATION = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
];
