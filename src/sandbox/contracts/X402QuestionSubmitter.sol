// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import "./Types.sol";

interface IUSDC3009 {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

interface IRegistryX402 {
    function submitQuestionFromX402Gateway(
        BundleQuestion calldata q,
        address submitter,
        bool gated,
        RewardTerms calldata rewardTerms,
        RoundConfig calldata roundConfig,
        bytes32 commitment
    ) external returns (uint256);
}

interface IRewardEscrowX402 {
    function recordFunded(address payer, address token, uint256 amount, uint256 poolKey) external;
}

interface IBonusEscrowX402 {
    function createPoolFromX402(address funder, uint256 contentId, uint256 roundId, uint256 amount, uint256 feedbackClosesAt, address awarder)
        external
        returns (uint256);
}

/// Submits a question paid by an EIP-3009 ReceiveWithAuthorization (chain.md §8). The authorization's nonce must
/// be the one bound to exactly this question and these terms, recomputed here (§8.3), so a signature for one ask
/// can never pay for another. The question itself is checked by the registry (SubmissionRules, its once-per-chain
/// key), in the same transaction, so a refused question moves no money.
contract X402QuestionSubmitter {
    bytes32 internal constant PAYMENT_TAG = keccak256("rateloop-x402-question-payment-v4");
    bytes32 internal constant ONE_SHOT_TAG = keccak256("rateloop-x402-question-one-shot-payment-v7");

    // configure is the sandbox's own; the live submitter's checks are `require` strings, which RateLoop's production
    // (deploy profile) build strips, so every other refusal here reverts with empty data.
    error NotAuthorized();

    // The live submitter's events (chain.md §4.3): `submitter` is the authorization's payer.
    event X402QuestionSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 indexed paymentNonce, uint256 amount);
    event X402FeedbackBonusAttached(
        uint256 indexed contentId,
        uint256 indexed feedbackBonusPoolId,
        address indexed funder,
        uint256 amount,
        uint256 feedbackClosesAt,
        address awarder
    );

    struct Question {
        string contextUrl;
        string[] imageUrls;
        string videoUrl;
        string title;
        string tags;
        uint256 categoryId;
        Details details;
        bytes32 salt;
    }

    address public immutable owner;
    address public registry;
    address public rewardEscrow;
    address public bonusEscrow;
    address public usdc;

    constructor() {
        owner = msg.sender;
    }

    function configure(address registry_, address escrow_, address bonusEscrow_, address usdc_) external {
        if (msg.sender != owner || registry != address(0)) revert NotAuthorized();
        registry = registry_;
        rewardEscrow = escrow_;
        bonusEscrow = bonusEscrow_;
        usdc = usdc_;
    }

    function submitQuestionWithX402Payment(
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
        Confidentiality calldata confidentiality,
        PaymentAuthorization calldata auth
    ) external returns (uint256 contentId) {
        Question memory q = Question(contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, salt);
        _checkAuth(auth, rewardTerms, rewardTerms.amount);
        bytes32 expected = keccak256(
            bytes.concat(
                abi.encode(PAYMENT_TAG, block.chainid, registry, rewardEscrow, address(this), auth.from, auth.to),
                abi.encode(auth.value, auth.validAfter, auth.validBefore, _submissionPayloadHash(q)),
                abi.encode(
                    QuestionHashes.rewardTermsHash(rewardTerms),
                    QuestionHashes.roundConfigHash(roundConfig),
                    QuestionHashes.confidentialityHash(confidentiality),
                    spec.questionMetadataHash,
                    spec.resultSpecHash
                )
            )
        );
        if (auth.nonce != expected) _fail();
        _pull(auth);
        contentId = _register(q, auth.from, rewardTerms, roundConfig, spec, confidentiality);
        IERC20(usdc).transfer(rewardEscrow, rewardTerms.amount);
        IRewardEscrowX402(rewardEscrow).recordFunded(auth.from, usdc, rewardTerms.amount, contentId);
        emit X402QuestionSubmitted(contentId, auth.from, auth.nonce, auth.value);
    }

    function submitQuestionWithX402OneShotPayment(
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
        Confidentiality calldata confidentiality,
        FeedbackBonusTerms calldata bonus,
        PaymentAuthorization calldata auth
    ) external returns (uint256 contentId, uint256 feedbackBonusPoolId) {
        Question memory q = Question(contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, salt);
        if (bonus.amount == 0 || bonus.awarder == address(0) || bonus.executeBy != auth.validBefore) _fail();
        _checkAuth(auth, rewardTerms, rewardTerms.amount + bonus.amount);
        bytes32 expected = keccak256(
            bytes.concat(
                abi.encode(ONE_SHOT_TAG, block.chainid, registry, rewardEscrow, bonusEscrow, address(this), auth.from, auth.to),
                abi.encode(auth.value, auth.validAfter, auth.validBefore, _submissionPayloadHash(q)),
                abi.encode(
                    QuestionHashes.rewardTermsHash(rewardTerms),
                    QuestionHashes.roundConfigHash(roundConfig),
                    QuestionHashes.confidentialityHash(confidentiality),
                    keccak256(abi.encode(bonus.amount, bonus.awarder, bonus.executeBy)),
                    spec.questionMetadataHash,
                    spec.resultSpecHash
                )
            )
        );
        if (auth.nonce != expected) _fail();
        _pull(auth);
        contentId = _register(q, auth.from, rewardTerms, roundConfig, spec, confidentiality);
        IERC20(usdc).transfer(rewardEscrow, rewardTerms.amount);
        IRewardEscrowX402(rewardEscrow).recordFunded(auth.from, usdc, rewardTerms.amount, contentId);
        IERC20(usdc).transfer(bonusEscrow, bonus.amount);
        uint256 closesAt = block.timestamp + roundConfig.maxDuration;
        feedbackBonusPoolId = IBonusEscrowX402(bonusEscrow).createPoolFromX402(auth.from, contentId, 1, bonus.amount, closesAt, bonus.awarder);
        emit X402FeedbackBonusAttached(contentId, feedbackBonusPoolId, auth.from, bonus.amount, closesAt, bonus.awarder);
        emit X402QuestionSubmitted(contentId, auth.from, auth.nonce, auth.value);
    }

    function _checkAuth(PaymentAuthorization calldata auth, RewardTerms calldata rewardTerms, uint256 value) internal view {
        // As live: no sender check. Whoever holds the payer's authorization may submit (the nonce binds the question).
        if (auth.to != address(this) || rewardTerms.asset != 1 || auth.value != value) _fail();
    }

    function _fail() internal pure {
        assembly ("memory-safe") {
            revert(0, 0)
        }
    }

    function _pull(PaymentAuthorization calldata auth) internal {
        IUSDC3009(usdc).receiveWithAuthorization(auth.from, address(this), auth.value, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s);
    }

    function _submissionPayloadHash(Question memory q) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                keccak256(bytes(q.contextUrl)),
                QuestionHashes.stringArrayHash(q.imageUrls),
                keccak256(bytes(q.videoUrl)),
                keccak256(bytes(q.details.detailsUrl)),
                q.details.detailsHash,
                keccak256(bytes(q.title)),
                keccak256(bytes(q.tags)),
                q.categoryId,
                q.salt
            )
        );
    }

    function _register(
        Question memory q,
        address submitter,
        RewardTerms calldata rewardTerms,
        RoundConfig calldata roundConfig,
        Spec calldata spec,
        Confidentiality calldata confidentiality
    ) internal returns (uint256) {
        bytes32 media = QuestionHashes.mediaHash(q.imageUrls, q.videoUrl);
        bytes32 detailsHash = QuestionHashes.detailsTupleHash(q.details);
        bytes32 commitment = keccak256(
            bytes.concat(
                abi.encode(
                    QuestionHashes.REVEAL_TAG,
                    QuestionHashes.submissionKey(q.categoryId, media, detailsHash, q.contextUrl, q.title, q.tags),
                    media,
                    keccak256(abi.encode(q.title, q.tags)),
                    detailsHash,
                    q.categoryId,
                    q.salt,
                    submitter
                ),
                abi.encode(
                    QuestionHashes.rewardTermsHash(rewardTerms),
                    QuestionHashes.roundConfigHash(roundConfig),
                    spec.questionMetadataHash,
                    spec.resultSpecHash,
                    QuestionHashes.confidentialityHash(confidentiality)
                )
            )
        );
        BundleQuestion memory bq = BundleQuestion(q.contextUrl, q.imageUrls, q.videoUrl, q.title, q.tags, q.categoryId, q.details, q.salt, spec);
        return IRegistryX402(registry).submitQuestionFromX402Gateway(bq, submitter, confidentiality.gated, rewardTerms, roundConfig, commitment);
    }
}
