// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AgeArmor} from "./AgeArmor.sol";
import {ProtocolConfig} from "./ProtocolConfig.sol";
import "./Types.sol";

interface IRegistryForEngine {
    function getContentRoundConfig(uint256 contentId) external view returns (RoundConfig memory);
    function sandboxContentSubmitter(uint256 contentId) external view returns (address);
    function sandboxContentGated(uint256 contentId) external view returns (bool);
}

/// Rounds, encrypted vote commits, reveals and settlement (chain.md §4.2, §9). Every rule a commit meets on the
/// live chain is checked: round open, round context, stake bounds, commit hash, self votes, duplicates, voter cap,
/// drand chain hash, target-round window and ciphertext shape. Simplified economics: settlement returns stakes.
contract RoundVotingEngine {
    using SafeERC20 for IERC20;

    uint256 public constant MIN_STAKE = 1_000_000;
    uint256 public constant MAX_STAKE = 10_000_000;
    /// After maxDuration, how long reveals may still come in before a round with too few reveals fails.
    uint256 public constant REVEAL_GRACE = 600;

    uint8 internal constant OPEN = 0;
    uint8 internal constant SETTLED = 1;
    uint8 internal constant CANCELLED = 2;
    uint8 internal constant TIED = 3;
    uint8 internal constant REVEAL_FAILED = 4;

    error InvalidStake();
    error InvalidCommitHash();
    error RoundNotOpen();
    error RoundAlreadyOpen();
    error SelfVote();
    error ContentNotActive();
    error ConfidentialityCredentialRequired();
    error AlreadyCommitted();
    error MaxVotersReached();
    error DrandChainHashMismatch();
    error TargetRoundOutOfWindow();
    error UnknownCommit();
    error AlreadyRevealed();
    error RevealTooEarly();
    error RevealMismatch();
    error NotSettleable();
    error NotAuthorized();

    struct Round {
        uint48 startTime;
        uint8 state;
        uint16 voteCount;
        uint16 revealedCount;
        uint64 totalStake;
        uint48 thresholdReachedAt;
        uint48 settledAt;
        uint8 upWins;
        uint16 referenceRatingBps;
        uint16 ratingBps;
        uint16 upCount;
        uint16 downCount;
        uint64 upStake;
        uint64 downStake;
        bytes32 drandChainHash;
        RoundConfig cfg;
    }

    struct Commit {
        address voter;
        bytes32 commitHash;
        uint64 targetRound;
        bytes32 ciphertextHash;
        uint64 stake;
        bool revealed;
        bool isUp;
        uint16 predictedUpBps;
    }

    address public immutable owner;
    address public registry;
    address public lrep;
    address public protocolConfig;
    address public advisoryVoteRecorder;

    mapping(uint256 => uint256) public currentRoundId;
    mapping(uint256 => uint16) public lastRatingBps;
    mapping(uint256 => mapping(uint256 => Round)) internal rounds;
    mapping(uint256 => mapping(uint256 => mapping(bytes32 => Commit))) internal commits;
    mapping(uint256 => mapping(uint256 => mapping(address => bytes32))) internal commitKeyOf;
    mapping(uint256 => mapping(uint256 => bytes32[])) internal commitKeysByRound;
    mapping(address => bool) public humanCredential;

    event RoundOpened(uint256 indexed contentId, uint256 indexed roundId, uint256 startTime, uint16 referenceRatingBps);
    event VoteCommitted(
        uint256 indexed contentId,
        uint256 indexed roundId,
        address indexed voter,
        bytes32 commitHash,
        uint16 roundReferenceRatingBps,
        uint64 targetRound,
        bytes32 drandChainHash,
        uint256 stake,
        bytes32 ciphertextHash,
        bytes ciphertext
    );
    event VoteRevealed(uint256 indexed contentId, uint256 indexed roundId, address indexed voter, bytes32 commitKey, bool isUp, uint16 predictedUpBps);
    event RoundSettled(uint256 indexed contentId, uint256 indexed roundId, uint8 state, uint16 ratingBps, uint16 upCount, uint16 downCount);

    constructor() {
        owner = msg.sender;
    }

    function configure(address registry_, address lrep_, address protocolConfig_, address advisory_) external {
        if (msg.sender != owner || registry != address(0)) revert NotAuthorized();
        registry = registry_;
        lrep = lrep_;
        protocolConfig = protocolConfig_;
        advisoryVoteRecorder = advisory_;
    }

    /// Gated content needs an active human credential; the sandbox issues them to its funded accounts.
    function setHumanCredential(address account, bool active) external {
        if (msg.sender != owner) revert NotAuthorized();
        humanCredential[account] = active;
    }

    function initContent(uint256 contentId) external {
        if (msg.sender != registry) revert NotAuthorized();
        _open(contentId);
    }

    function openRound(uint256 contentId) external {
        if (IRegistryForEngine(registry).sandboxContentSubmitter(contentId) == address(0)) revert ContentNotActive();
        uint256 id = currentRoundId[contentId];
        if (id != 0 && rounds[contentId][id].state == OPEN) revert RoundAlreadyOpen();
        _open(contentId);
    }

    function _open(uint256 contentId) internal {
        uint256 id = ++currentRoundId[contentId];
        Round storage r = rounds[contentId][id];
        r.startTime = uint48(block.timestamp);
        r.cfg = IRegistryForEngine(registry).getContentRoundConfig(contentId);
        uint16 ref = id == 1 ? 5000 : lastRatingBps[contentId];
        r.referenceRatingBps = ref;
        r.drandChainHash = ProtocolConfig(protocolConfig).drandChainHash();
        emit RoundOpened(contentId, id, block.timestamp, ref);
    }

    function previewCommitContext(uint256 contentId) external view returns (uint256 openRoundId, uint16 referenceRatingBps) {
        uint256 id = currentRoundId[contentId];
        if (id != 0 && _isOpen(rounds[contentId][id])) return (id, rounds[contentId][id].referenceRatingBps);
        return (0, id == 0 ? 5000 : lastRatingBps[contentId]);
    }

    function roundCore(uint256 contentId, uint256 roundId)
        external
        view
        returns (uint48 startTime, uint8 state, uint16 voteCount, uint16 revealedCount, uint64 totalStake, uint48 thresholdReachedAt, uint48 settledAt, uint8 upWins)
    {
        Round storage r = rounds[contentId][roundId];
        return (r.startTime, r.state, r.voteCount, r.revealedCount, r.totalStake, r.thresholdReachedAt, r.settledAt, r.upWins);
    }

    function sandboxRoundTally(uint256 contentId, uint256 roundId)
        external
        view
        returns (uint16 ratingBps, uint16 upCount, uint16 downCount, uint64 upStake, uint64 downStake, uint16 referenceRatingBps)
    {
        Round storage r = rounds[contentId][roundId];
        return (r.ratingBps, r.upCount, r.downCount, r.upStake, r.downStake, r.referenceRatingBps);
    }

    function roundConfigSnapshot(uint256 contentId, uint256 roundId) external view returns (uint32, uint32, uint16, uint16) {
        RoundConfig storage c = rounds[contentId][roundId].cfg;
        return (c.epochDuration, c.maxDuration, c.minVoters, c.maxVoters);
    }

    function advisoryRoundContext(uint256 contentId, uint256 roundId, uint64 targetRound)
        external
        view
        returns (uint16 referenceRatingBps, uint256 targetRevealableAt, bytes32 drandChainHash, uint64 drandGenesisTime, uint64 drandPeriod, bool rbtsScoringClosed, address recorder)
    {
        Round storage r = rounds[contentId][roundId];
        ProtocolConfig pc = ProtocolConfig(protocolConfig);
        uint64 g = pc.drandGenesisTime();
        uint64 p = pc.drandPeriod();
        uint256 at = targetRound == 0 ? 0 : g + (uint256(targetRound) - 1) * p;
        return (r.referenceRatingBps, at, r.drandChainHash, g, p, r.state != OPEN, advisoryVoteRecorder);
    }

    /// The live engine's view of a commit (its signature, chain.md §4.2): loopsign decides "revealed" from it.
    function commitCore(uint256 contentId, uint256 roundId, bytes32 commitKey)
        external
        view
        returns (address voter, uint64 stakeAmount, address frontend, uint48 revealableAfter, bool revealed, bool isUp, uint8 epochIndex)
    {
        Commit storage c = commits[contentId][roundId][commitKey];
        ProtocolConfig pc = ProtocolConfig(protocolConfig);
        uint256 at = c.targetRound == 0 ? 0 : uint256(pc.drandGenesisTime()) + (uint256(c.targetRound) - 1) * pc.drandPeriod();
        return (c.voter, c.stake, address(0), uint48(at), c.revealed, c.isUp, 0);
    }

    /// The live engine's lookup of a voter's commit in a round.
    function voterCommitKey(uint256 contentId, uint256 roundId, address voter) external view returns (bytes32 commitHash, bytes32 commitKey) {
        commitKey = commitKeyOf[contentId][roundId][voter];
        commitHash = commits[contentId][roundId][commitKey].commitHash;
    }

    // sandbox* views serve the sandbox's keeper and tests; the live engine has none of them.
    function sandboxRoundCommitKeys(uint256 contentId, uint256 roundId) external view returns (bytes32[] memory) {
        return commitKeysByRound[contentId][roundId];
    }

    function sandboxCommitOf(uint256 contentId, uint256 roundId, bytes32 commitKey) external view returns (Commit memory) {
        return commits[contentId][roundId][commitKey];
    }

    function _isOpen(Round storage r) internal view returns (bool) {
        return r.startTime != 0 && r.state == OPEN && block.timestamp < uint256(r.startTime) + r.cfg.maxDuration;
    }

    /// The checks every commit (staked or advisory) must pass. Returns the round id.
    function validateCommit(
        address voter,
        uint256 contentId,
        uint256 roundContext,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 commitHash,
        bytes calldata ciphertext
    ) public view returns (uint256 roundId) {
        address submitter = IRegistryForEngine(registry).sandboxContentSubmitter(contentId);
        if (submitter == address(0)) revert ContentNotActive();
        roundId = currentRoundId[contentId];
        Round storage r = rounds[contentId][roundId];
        if (roundId == 0 || !_isOpen(r)) revert RoundNotOpen();
        if (roundContext >> 16 != roundId || uint16(roundContext) != r.referenceRatingBps) revert InvalidCommitHash();
        if (commitHash == bytes32(0)) revert InvalidCommitHash();
        if (voter == submitter) revert SelfVote();
        if (commitKeyOf[contentId][roundId][voter] != bytes32(0)) revert AlreadyCommitted();
        if (r.voteCount >= r.cfg.maxVoters) revert MaxVotersReached();
        if (drandChainHash != r.drandChainHash) revert DrandChainHashMismatch();
        ProtocolConfig pc = ProtocolConfig(protocolConfig);
        uint256 g = pc.drandGenesisTime();
        uint256 p = pc.drandPeriod();
        uint256 epochEnd = uint256(r.startTime) + r.cfg.epochDuration;
        // roundAtOrAfter(epochEnd) <= targetRound <= roundAt(epochEnd + 2p)
        uint256 lo = epochEnd < g ? 0 : (epochEnd - g + p - 1) / p + 1;
        uint256 hi = epochEnd + 2 * p < g ? 0 : (epochEnd + 2 * p - g) / p + 1;
        if (targetRound == 0 || targetRound < lo || targetRound > hi) revert TargetRoundOutOfWindow();
        AgeArmor.validate(ciphertext, targetRound, drandChainHash);
        if (IRegistryForEngine(registry).sandboxContentGated(contentId) && !humanCredential[voter]) revert ConfidentialityCredentialRequired();
    }

    function commitVote(
        uint256 contentId,
        uint256 roundContext,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 commitHash,
        bytes calldata ciphertext,
        uint256 stakeAmount,
        address frontend
    ) public {
        frontend; // fee attribution is evaluated off this sandbox; any address is accepted
        uint256 roundId = validateCommit(msg.sender, contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext);
        if (stakeAmount < MIN_STAKE || stakeAmount > MAX_STAKE) revert InvalidStake();
        IERC20(lrep).safeTransferFrom(msg.sender, address(this), stakeAmount);
        Round storage r = rounds[contentId][roundId];
        bytes32 key = keccak256(abi.encodePacked(msg.sender, commitHash));
        bytes32 ciphertextHash = keccak256(ciphertext);
        commits[contentId][roundId][key] = Commit(msg.sender, commitHash, targetRound, ciphertextHash, uint64(stakeAmount), false, false, 0);
        commitKeyOf[contentId][roundId][msg.sender] = key;
        commitKeysByRound[contentId][roundId].push(key);
        r.voteCount++;
        r.totalStake += uint64(stakeAmount);
        if (r.voteCount == r.cfg.minVoters) r.thresholdReachedAt = uint48(block.timestamp);
        emit VoteCommitted(contentId, roundId, msg.sender, commitHash, r.referenceRatingBps, targetRound, drandChainHash, stakeAmount, ciphertextHash, ciphertext);
    }

    function commitVoteWithPermit(
        uint256 contentId,
        uint256 roundContext,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 commitHash,
        bytes calldata ciphertext,
        uint256 stakeAmount,
        address frontend,
        uint256 permitDeadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        // A failing permit is swallowed: an existing allowance is then used.
        try IERC20Permit(lrep).permit(msg.sender, address(this), stakeAmount, permitDeadline, v, r, s) {} catch {}
        commitVote(contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext, stakeAmount, frontend);
    }

    /// Anyone may reveal once the target round's beacon exists (by the chain's clock).
    function revealVoteByCommitKey(uint256 contentId, uint256 roundId, bytes32 commitKey, bool isUp, uint16 predictedUpBps, bytes32 salt) external {
        Commit storage c = commits[contentId][roundId][commitKey];
        if (c.voter == address(0)) revert UnknownCommit();
        if (c.revealed) revert AlreadyRevealed();
        ProtocolConfig pc = ProtocolConfig(protocolConfig);
        if (block.timestamp < uint256(pc.drandGenesisTime()) + (uint256(c.targetRound) - 1) * pc.drandPeriod()) revert RevealTooEarly();
        Round storage r = rounds[contentId][roundId];
        bytes32 expected = keccak256(
            abi.encodePacked(isUp, predictedUpBps, salt, c.voter, contentId, roundId, r.referenceRatingBps, c.targetRound, r.drandChainHash, c.ciphertextHash)
        );
        if (expected != c.commitHash) revert RevealMismatch();
        c.revealed = true;
        c.isUp = isUp;
        c.predictedUpBps = predictedUpBps;
        r.revealedCount++;
        if (isUp) {
            r.upCount++;
            r.upStake += c.stake;
        } else {
            r.downCount++;
            r.downStake += c.stake;
        }
        emit VoteRevealed(contentId, roundId, c.voter, commitKey, isUp, predictedUpBps);
    }

    /// Settles a round whose commits are all revealed (with at least minVoters), or fails it after the grace.
    function settleRound(uint256 contentId, uint256 roundId) external {
        Round storage r = rounds[contentId][roundId];
        if (r.startTime == 0 || r.state != OPEN) revert NotSettleable();
        uint256 epochEnd = uint256(r.startTime) + r.cfg.epochDuration;
        bool allRevealed = r.voteCount > 0 && r.revealedCount == r.voteCount;
        bool expired = block.timestamp >= uint256(r.startTime) + r.cfg.maxDuration + REVEAL_GRACE;
        if (block.timestamp < epochEnd) revert NotSettleable();
        if (r.revealedCount >= r.cfg.minVoters && (allRevealed || expired)) {
            uint256 total = uint256(r.upStake) + r.downStake;
            r.ratingBps = uint16((uint256(r.upStake) * 10000 + total / 2) / total);
            r.upWins = r.upStake > r.downStake ? 1 : 0;
            r.state = r.upStake == r.downStake ? TIED : SETTLED;
            lastRatingBps[contentId] = r.ratingBps;
        } else if (expired) {
            r.state = r.voteCount >= r.cfg.minVoters ? REVEAL_FAILED : CANCELLED;
            lastRatingBps[contentId] = r.referenceRatingBps;
        } else {
            revert NotSettleable();
        }
        r.settledAt = uint48(block.timestamp);
        bytes32[] storage keys = commitKeysByRound[contentId][roundId];
        for (uint256 i = 0; i < keys.length; i++) {
            Commit storage c = commits[contentId][roundId][keys[i]];
            if (c.stake > 0) IERC20(lrep).safeTransfer(c.voter, c.stake);
        }
        emit RoundSettled(contentId, roundId, r.state, r.ratingBps, r.upCount, r.downCount);
    }
}
