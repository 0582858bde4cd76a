// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import "./Types.sol";
import "./SubmissionRules.sol";

interface IRewardEscrow {
    function fundFrom(address payer, address token, uint256 amount, uint256 poolKey) external;
}

interface IVotingEngineInit {
    function initContent(uint256 contentId) external;
    function protocolConfig() external view returns (address);
}

interface IProtocolConfigRounds {
    function validateRoundConfig(uint256 epochDuration, uint256 maxDuration, uint256 minVoters, uint256 maxVoters)
        external
        view
        returns (RoundConfig memory);
}

/// Questions: reserve a commitment, then reveal it by submitting (chain.md §3.4, §6.9–6.11). The reveal
/// commitment is recomputed here from the calldata, so a submit that differs in any field from what was
/// reserved reverts, and a submit less than RESERVED_SUBMISSION_MIN_AGE after its reservation reverts too.
/// Reservation slots follow the live registry's rule (docs/sandbox.md): one slot per (commitment, submitter); it
/// stays taken after its 30 minutes until the submitter cancels it or a submit consumes it, so reserving the same
/// commitment again reverts, with empty revert data as the live registry gives.
/// A question's key (its category, media, details, context URL, title and tags: QuestionHashes.submissionKey) is
/// used once per chain: `submissionKeyUsed` is the live registry's public view, and a second submission of the same
/// key reverts. The submission checks are SubmissionRules' (the live media validator's, category and reward rules);
/// like the live registry, this one reverts with empty data, except the round bounds, which it asks ProtocolConfig's
/// validateRoundConfig about, as live (its `InvalidConfig()` passes through).
contract ContentRegistry {
    uint256 public constant RESERVED_SUBMISSION_MIN_AGE = 1;
    uint256 public constant RESERVATION_TTL = 30 minutes;

    // Sandbox-only entry points (configure, the x402 gateway's caller check) keep a name; every rule the live
    // registry checks with a bare `require` reverts with empty data (SubmissionRules.fail).
    error NotAuthorized();
    error UnknownContent();

    struct Reservation {
        address submitter;
        uint64 reservedAt;
    }

    /// What the sandbox keeps of a question: the live `contents` entry's fields it has, its round settings (live:
    /// contentRoundConfig), and its confidentiality (live: the ConfidentialityEscrow's, which the sandbox folds in here).
    struct Question {
        address submitter;
        uint48 createdAt;
        uint64 categoryId;
        bytes32 contentHash;
        RoundConfig roundConfig;
        Confidentiality confidentiality;
    }

    address public immutable owner;
    address public usdc;
    address public lrep;
    address public rewardEscrow;
    address public votingEngine;
    address public x402Submitter;

    // Internal like the live registry's: there is no public reservation getter to depend on. Keyed by
    // (commitment, submitter), as live: another address that copies a commitment cannot squat this wallet's slot.
    mapping(bytes32 => Reservation) internal reservations;
    mapping(uint256 => Question) private questions;
    /// The live registry's public view: a question key already submitted on this chain.
    mapping(bytes32 => bool) public submissionKeyUsed;
    uint256 public contentCount;
    uint256 public bundleCount;

    // The live registry's events, with their real signatures (chain.md §4.3): clients prove a submission from them.
    event SubmissionReserved(address indexed submitter, bytes32 indexed revealCommitment, uint256 expiresAt);
    event SubmissionReservationCancelled(address indexed submitter, bytes32 indexed revealCommitment);
    event ContentSubmitted(
        uint256 indexed contentId,
        address indexed submitter,
        bytes32 contentHash,
        string url,
        string title,
        string tags,
        uint256 indexed categoryId
    );
    event ContentDetailsSubmitted(uint256 indexed contentId, string detailsUrl, bytes32 detailsHash);
    event SubmissionRewardPoolAttached(
        uint256 indexed contentId,
        address indexed submitter,
        uint8 indexed rewardAsset,
        uint256 amount,
        uint256 requiredVoters,
        uint256 requiredSettledRounds,
        uint256 bountyStartBy,
        uint256 bountyWindowSeconds,
        uint256 feedbackWindowSeconds,
        uint8 bountyEligibility,
        bytes32 bountyEligibilityDataHash,
        uint256 rewardPoolId
    );
    event QuestionBundleSubmitted(
        uint256 indexed bundleId,
        address indexed submitter,
        uint256 questionCount,
        uint8 indexed rewardAsset,
        uint256 amount,
        uint256 requiredCompleters,
        uint256 bountyStartBy,
        uint256 bountyWindowSeconds,
        uint256 feedbackWindowSeconds,
        uint8 bountyEligibility,
        bytes32 bountyEligibilityDataHash,
        bytes32 bundleHash,
        uint256 rewardPoolId
    );
    event QuestionBundleContentLinked(uint256 indexed bundleId, uint256 indexed contentId, uint256 indexed bundleIndex);

    constructor() {
        owner = msg.sender;
    }

    function configure(address usdc_, address lrep_, address escrow_, address engine_, address x402_) external {
        if (msg.sender != owner || votingEngine != address(0)) revert NotAuthorized();
        usdc = usdc_;
        lrep = lrep_;
        rewardEscrow = escrow_;
        votingEngine = engine_;
        x402Submitter = x402_;
    }

    /// A slot already taken reverts, live or expired: only cancelReservedSubmission or a submit frees it. The
    /// reverts carry no data, as the live registry's bare `require`s.
    function reserveSubmission(bytes32 revealCommitment) external {
        if (revealCommitment == bytes32(0)) revert();
        bytes32 key = _reservationKey(revealCommitment, msg.sender);
        if (reservations[key].submitter != address(0)) revert();
        reservations[key] = Reservation(msg.sender, uint64(block.timestamp));
        emit SubmissionReserved(msg.sender, revealCommitment, block.timestamp + RESERVATION_TTL);
    }

    /// The submitter's own reservation, live or expired, is cleared; anyone else's call (or no reservation) reverts
    /// with empty data.
    function cancelReservedSubmission(bytes32 revealCommitment) external {
        bytes32 key = _reservationKey(revealCommitment, msg.sender);
        if (reservations[key].submitter != msg.sender) revert();
        delete reservations[key];
        emit SubmissionReservationCancelled(msg.sender, revealCommitment);
    }

    function _reservationKey(bytes32 revealCommitment, address submitter) internal pure returns (bytes32) {
        return keccak256(abi.encode(revealCommitment, submitter));
    }

    function submitQuestionWithRewardAndRoundConfig(
        string calldata contextUrl,
        string[] calldata imageUrls,
        string calldata videoUrl,
        string calldata title,
        string calldata tags,
        uint256 categoryId,
        Details calldata details,
        bytes32 salt,
        RewardTerms calldata rewardTerms,
        RoundConfig calldata roundConfig,
        Spec calldata spec,
        Confidentiality calldata confidentiality
    ) external returns (uint256 contentId) {
        BundleQuestion memory q = BundleQuestion(contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, salt, spec);
        bytes32 commitment = _admitSingle(q, rewardTerms, roundConfig, confidentiality);
        _consumeReservation(commitment);
        contentId = _register(msg.sender, confidentiality, roundConfig, q);
        IRewardEscrow(rewardEscrow).fundFrom(msg.sender, _token(rewardTerms.asset), rewardTerms.amount, contentId);
        _emitRewardAttached(contentId, msg.sender, rewardTerms, roundConfig);
    }

    function submitQuestionBundleWithRewardAndRoundConfig(
        BundleQuestion[] calldata questions,
        RewardTerms calldata rewardTerms,
        RoundConfig calldata roundConfig
    ) external returns (uint256 bundleId, uint256[] memory contentIds) {
        SubmissionRules.check(questions.length >= 2 && questions.length <= 10);
        _checkRound(roundConfig);
        // A bundle, unlike a single question, needs requiredVoters == minVoters and at most 100 voters a round.
        SubmissionRules.check(roundConfig.maxVoters <= SubmissionRules.BUNDLE_MAX_VOTERS && rewardTerms.requiredVoters == roundConfig.minVoters);
        SubmissionRules.checkReward(rewardTerms);
        bytes32[] memory items = new bytes32[](questions.length);
        for (uint256 i = 0; i < questions.length; i++) {
            BundleQuestion calldata q = questions[i];
            SubmissionRules.checkQuestion(q.contextUrl, q.imageUrls, q.videoUrl, q.title, q.tags, q.categoryId, q.details, q.salt, q.spec, false);
            // Marked as it is checked, so two equal questions in one bundle are refused too.
            _useKey(
                QuestionHashes.submissionKey(
                    q.categoryId, QuestionHashes.mediaHash(q.imageUrls, q.videoUrl), QuestionHashes.detailsTupleHash(q.details), q.contextUrl, q.title, q.tags
                )
            );
            items[i] = keccak256(
                abi.encode(
                    QuestionHashes.BUNDLE_ITEM_TAG,
                    keccak256(abi.encode(q.contextUrl, q.title, q.tags)),
                    QuestionHashes.mediaHash(q.imageUrls, q.videoUrl),
                    QuestionHashes.detailsTupleHash(q.details),
                    q.categoryId,
                    q.salt,
                    i,
                    q.spec.questionMetadataHash,
                    q.spec.resultSpecHash
                )
            );
        }
        bytes32 commitment = keccak256(
            abi.encode(
                QuestionHashes.BUNDLE_REVEAL_TAG,
                keccak256(abi.encode(QuestionHashes.BUNDLE_TAG, items)),
                msg.sender,
                rewardTerms.asset,
                rewardTerms.amount,
                rewardTerms.requiredVoters,
                rewardTerms.bountyEligibility,
                roundConfig.epochDuration,
                roundConfig.maxDuration,
                roundConfig.minVoters,
                roundConfig.maxVoters
            )
        );
        _consumeReservation(commitment);
        bundleId = ++bundleCount;
        contentIds = new uint256[](questions.length);
        for (uint256 i = 0; i < questions.length; i++) {
            contentIds[i] = _register(msg.sender, Confidentiality(false, 0, 0, 0), roundConfig, questions[i]);
            emit QuestionBundleContentLinked(bundleId, contentIds[i], i);
        }
        IRewardEscrow(rewardEscrow).fundFrom(msg.sender, _token(rewardTerms.asset), rewardTerms.amount, contentIds[0]);
        uint256 d = roundConfig.maxDuration;
        emit QuestionBundleSubmitted(
            bundleId, msg.sender, questions.length, rewardTerms.asset, rewardTerms.amount, rewardTerms.requiredVoters,
            block.timestamp + d, d, d, rewardTerms.bountyEligibility, bytes32(0), commitment, contentIds[0]
        );
    }

    /// Called by the X402QuestionSubmitter after it pulled the payment with the signed authorization (the live
    /// registry's gateway entry point): the payer is the submitter.
    function submitQuestionFromX402Gateway(
        BundleQuestion calldata q,
        address submitter,
        bool gated,
        RewardTerms calldata rewardTerms,
        RoundConfig calldata roundConfig,
        bytes32 /* commitment: the x402 submitter bound the payment to it */
    ) external returns (uint256 contentId) {
        if (msg.sender != x402Submitter) revert NotAuthorized();
        _checkRound(roundConfig);
        SubmissionRules.checkQuestion(q.contextUrl, q.imageUrls, q.videoUrl, q.title, q.tags, q.categoryId, q.details, q.salt, q.spec, gated);
        SubmissionRules.checkReward(rewardTerms);
        _useKey(
            QuestionHashes.submissionKey(
                q.categoryId, QuestionHashes.mediaHash(q.imageUrls, q.videoUrl), QuestionHashes.detailsTupleHash(q.details), q.contextUrl, q.title, q.tags
            )
        );
        contentId = _register(submitter, Confidentiality(gated, 0, 0, 0), roundConfig, q);
        _emitRewardAttached(contentId, submitter, rewardTerms, roundConfig);
    }

    function getContentRoundConfig(uint256 contentId) external view returns (RoundConfig memory) {
        if (questions[contentId].submitter == address(0)) revert UnknownContent();
        return questions[contentId].roundConfig;
    }

    /// The live registry's view: a submitted question is active (this sandbox never cancels one).
    function isContentActive(uint256 contentId) external view returns (bool) {
        return questions[contentId].submitter != address(0);
    }

    /// The live registry's public `contents` getter, its fields in its order (ContentRegistryTypes.Content): an unknown
    /// id reads as zeros, as live. A sandbox question stays Active (status 0) with its first rating (50).
    function contents(uint256 contentId)
        external
        view
        returns (
            uint64 id,
            bytes32 contentHash,
            address submitter,
            uint48 createdAt,
            uint48 lastActivityAt,
            uint8 status,
            uint8 dormantCount,
            address reviver,
            uint8 rating,
            uint64 categoryId
        )
    {
        Question storage q = questions[contentId];
        if (q.submitter == address(0)) return (0, bytes32(0), address(0), 0, 0, 0, 0, address(0), 0, 0);
        return (uint64(contentId), q.contentHash, q.submitter, q.createdAt, q.createdAt, 0, 0, address(0), 50, q.categoryId);
    }

    /// The live registry's view of who stands behind a question for self-vote checks (a sandbox submitter is its own
    /// identity holder).
    function getSubmitterIdentity(uint256 contentId) external view returns (address) {
        return questions[contentId].submitter;
    }

    /// The live ConfidentialityEscrow's view (IConfidentialityEscrow.confidentialityConfig: gated, bond asset and
    /// amount, flags), answered by the registry: the sandbox has no separate escrow (it takes no bonds).
    function confidentialityConfig(uint256 contentId) external view returns (Confidentiality memory) {
        return questions[contentId].confidentiality;
    }

    /// The live registry's view of the ProtocolConfig it checks round settings with (the sandbox's is the engine's).
    function protocolConfig() public view returns (address) {
        return IVotingEngineInit(votingEngine).protocolConfig();
    }

    function _checkRound(RoundConfig calldata r) internal view {
        IProtocolConfigRounds(protocolConfig()).validateRoundConfig(r.epochDuration, r.maxDuration, r.minVoters, r.maxVoters);
    }

    function _token(uint8 asset) internal view returns (address) {
        if (asset == 1) return usdc;
        if (asset == 0) return lrep;
        SubmissionRules.fail();
    }

    /// A single question's checks, its key marked used, and the reveal commitment its reservation must hold.
    function _admitSingle(BundleQuestion memory q, RewardTerms calldata t, RoundConfig calldata r, Confidentiality calldata c)
        internal
        returns (bytes32)
    {
        _checkRound(r);
        SubmissionRules.checkQuestion(q.contextUrl, q.imageUrls, q.videoUrl, q.title, q.tags, q.categoryId, q.details, q.salt, q.spec, c.gated);
        SubmissionRules.checkReward(t);
        bytes32 media = QuestionHashes.mediaHash(q.imageUrls, q.videoUrl);
        bytes32 detailsHash = QuestionHashes.detailsTupleHash(q.details);
        bytes32 subKey = QuestionHashes.submissionKey(q.categoryId, media, detailsHash, q.contextUrl, q.title, q.tags);
        _useKey(subKey);
        return keccak256(
            bytes.concat(
                abi.encode(QuestionHashes.REVEAL_TAG, subKey, media, keccak256(abi.encode(q.title, q.tags)), detailsHash, q.categoryId, q.salt),
                abi.encode(
                    msg.sender,
                    QuestionHashes.rewardTermsHash(t),
                    QuestionHashes.roundConfigHash(r),
                    q.spec.questionMetadataHash,
                    q.spec.resultSpecHash,
                    QuestionHashes.confidentialityHash(c)
                )
            )
        );
    }

    /// A question key is used once per chain (the live registry's submissionKeyUsed): a second use reverts, empty.
    function _useKey(bytes32 key) internal {
        SubmissionRules.check(!submissionKeyUsed[key]);
        submissionKeyUsed[key] = true;
    }

    /// The reservation must be this submitter's, at least RESERVED_SUBMISSION_MIN_AGE old and not past its end (live:
    /// valid up to and including expiresAt, reservedAt + 30 minutes); each failure reverts with empty data, as live.
    function _consumeReservation(bytes32 commitment) internal {
        bytes32 key = _reservationKey(commitment, msg.sender);
        Reservation memory r = reservations[key];
        SubmissionRules.check(r.submitter == msg.sender);
        SubmissionRules.check(block.timestamp <= r.reservedAt + RESERVATION_TTL);
        SubmissionRules.check(block.timestamp >= r.reservedAt + RESERVED_SUBMISSION_MIN_AGE);
        delete reservations[key];
    }

    function _emitRewardAttached(uint256 contentId, address submitter, RewardTerms calldata t, RoundConfig calldata r) internal {
        // As the live registry: one settled round, the bounty window and the feedback window are the round's length.
        uint256 d = r.maxDuration;
        emit SubmissionRewardPoolAttached(contentId, submitter, t.asset, t.amount, t.requiredVoters, 1, block.timestamp + d, d, d, t.bountyEligibility, bytes32(0), contentId);
    }

    function _register(
        address submitter,
        Confidentiality memory confidentiality,
        RoundConfig calldata r,
        BundleQuestion memory q
    ) internal returns (uint256 contentId) {
        Spec memory spec = q.spec;
        contentId = ++contentCount;
        bytes32 contentHash = keccak256(
            abi.encode(
                QuestionHashes.CONTEXT_TAG,
                q.contextUrl,
                q.imageUrls,
                q.videoUrl,
                QuestionHashes.detailsTupleHash(q.details),
                q.title,
                q.tags,
                q.categoryId,
                spec.questionMetadataHash,
                spec.resultSpecHash
            )
        );
        Question storage c = questions[contentId];
        c.submitter = submitter;
        c.createdAt = uint48(block.timestamp);
        c.categoryId = uint64(q.categoryId);
        c.contentHash = contentHash;
        c.roundConfig = r;
        c.confidentiality = confidentiality;
        emit ContentSubmitted(contentId, submitter, contentHash, q.contextUrl, q.title, q.tags, q.categoryId);
        if (bytes(q.details.detailsUrl).length != 0) emit ContentDetailsSubmitted(contentId, q.details.detailsUrl, q.details.detailsHash);
        IVotingEngineInit(votingEngine).initContent(contentId);
    }
}
