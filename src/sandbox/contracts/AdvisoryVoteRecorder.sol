// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

interface IEngineForAdvisory {
    function validateCommit(
        address voter,
        uint256 contentId,
        uint256 roundContext,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 commitHash,
        bytes calldata ciphertext
    ) external view returns (uint256 roundId);
}

/// The live ConfidentialityEscrow's view (the sandbox's registry answers it).
interface IRegistryForAdvisory {
    function confidentialityConfig(uint256 contentId) external view returns (bool gated, uint8 bondAsset, uint64 bondAmount, uint8 flags);
}

/// Zero-stake advisory votes (chain.md §9.10): same commit checks as a staked vote, no stake, not on gated content.
contract AdvisoryVoteRecorder {
    error ConfidentialityGated();
    error AlreadyCommitted();

    address public immutable engine;
    address public immutable registry;
    mapping(bytes32 => address) public voterOf;
    mapping(uint256 => mapping(uint256 => mapping(address => bool))) public hasRecorded;

    event AdvisoryVoteRecorded(
        uint256 indexed contentId,
        uint256 indexed roundId,
        address indexed voter,
        bytes32 advisoryCommitKey,
        bytes32 commitHash,
        uint16 roundReferenceRatingBps,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 ciphertextHash,
        bytes ciphertext
    );

    constructor(address engine_, address registry_) {
        engine = engine_;
        registry = registry_;
    }

    function recordAdvisoryVote(uint256 contentId, uint256 roundContext, uint64 targetRound, bytes32 drandChainHash, bytes32 commitHash, bytes calldata ciphertext)
        external
        returns (bytes32 advisoryCommitKey)
    {
        (bool gated,,,) = IRegistryForAdvisory(registry).confidentialityConfig(contentId);
        if (gated) revert ConfidentialityGated();
        uint256 roundId = IEngineForAdvisory(engine).validateCommit(msg.sender, contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext);
        if (hasRecorded[contentId][roundId][msg.sender]) revert AlreadyCommitted();
        hasRecorded[contentId][roundId][msg.sender] = true;
        advisoryCommitKey = keccak256(abi.encodePacked(bytes1(0xa1), msg.sender, contentId, roundId, commitHash));
        voterOf[advisoryCommitKey] = msg.sender;
        emit AdvisoryVoteRecorded(
            contentId, roundId, msg.sender, advisoryCommitKey, commitHash, uint16(roundContext), targetRound, drandChainHash, keccak256(ciphertext), ciphertext
        );
    }
}
