// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

struct Details {
    string detailsUrl;
    bytes32 detailsHash;
}

struct RewardTerms {
    uint8 asset; // LREP = 0, USDC = 1
    uint256 amount;
    uint256 requiredVoters;
    uint8 bountyEligibility;
}

struct RoundConfig {
    uint32 epochDuration;
    uint32 maxDuration;
    uint16 minVoters;
    uint16 maxVoters;
}

struct Spec {
    bytes32 questionMetadataHash;
    bytes32 resultSpecHash;
}

struct Confidentiality {
    bool gated;
    uint8 bondAsset;
    uint64 bondAmount;
    uint8 flags;
}

struct BundleQuestion {
    string contextUrl;
    string[] imageUrls;
    string videoUrl;
    string title;
    string tags;
    uint256 categoryId;
    Details details;
    bytes32 salt;
    Spec spec;
}

struct PaymentAuthorization {
    address from;
    address to;
    uint256 value;
    uint256 validAfter;
    uint256 validBefore;
    bytes32 nonce;
    uint8 v;
    bytes32 r;
    bytes32 s;
}

struct FeedbackBonusTerms {
    uint256 amount;
    address awarder;
    uint256 executeBy;
}

/// The question hashes of chain.md §6.5–6.10, computed on chain exactly as the service's contracts do.
library QuestionHashes {
    bytes32 internal constant CONTEXT_TAG = keccak256("rateloop-question-context-v5");
    bytes32 internal constant REVEAL_TAG = keccak256("rateloop-question-reveal-v9");
    bytes32 internal constant BUNDLE_ITEM_TAG = keccak256("rateloop-question-bundle-item-v5");
    bytes32 internal constant BUNDLE_TAG = keccak256("rateloop-question-bundle-v5");
    bytes32 internal constant BUNDLE_REVEAL_TAG = keccak256("rateloop-question-bundle-reveal-v7");

    function mediaHash(string[] memory imageUrls, string memory videoUrl) internal pure returns (bytes32) {
        return keccak256(abi.encode(imageUrls, videoUrl));
    }

    function detailsTupleHash(Details memory d) internal pure returns (bytes32) {
        return keccak256(abi.encode(d.detailsUrl, d.detailsHash));
    }

    function rewardTermsHash(RewardTerms memory t) internal pure returns (bytes32) {
        return keccak256(abi.encode(t.asset, t.amount, t.requiredVoters, t.bountyEligibility));
    }

    function roundConfigHash(RoundConfig memory r) internal pure returns (bytes32) {
        return keccak256(abi.encode(r.epochDuration, r.maxDuration, r.minVoters, r.maxVoters));
    }

    function confidentialityHash(Confidentiality memory c) internal pure returns (bytes32) {
        return keccak256(abi.encode(c.gated, c.bondAsset, c.bondAmount, c.flags));
    }

    function submissionKey(uint256 categoryId, bytes32 media, bytes32 details, string memory contextUrl, string memory title, string memory tags)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(CONTEXT_TAG, categoryId, media, details, contextUrl, title, tags));
    }

    function stringArrayHash(string[] memory list) internal pure returns (bytes32) {
        bytes memory packed;
        for (uint256 i = 0; i < list.length; i++) packed = abi.encodePacked(packed, keccak256(bytes(list[i])));
        return keccak256(packed);
    }
}
