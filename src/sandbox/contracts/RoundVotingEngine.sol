// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AgeArmor} from "./AgeArmor.sol";
import {ProtocolConfig} from "./ProtocolConfig.sol";
import "./Types.sol";

/// The live ClusterPayoutOracle's payout entry (IClusterPayoutOracle.PayoutWeight): the shape of
/// applyRbtsSettlementSnapshot's arguments, so its selector is the live one.
struct PayoutWeight {
    uint8 domain;
    uint256 rewardPoolId;
    uint256 contentId;
    uint256 roundId;
    bytes32 commitKey;
    bytes32 identityKey;
    address account;
    uint256 baseWeight;
    uint16 independenceBps;
    uint256 effectiveWeight;
    bytes32 reasonHash;
}

/// The registry's views the engine reads, each with the live signature (the confidentiality one is the live
/// ConfidentialityEscrow's, which the sandbox's registry answers).
interface IRegistryForEngine {
    function getContentRoundConfig(uint256 contentId) external view returns (RoundConfig memory);
    function getSubmitterIdentity(uint256 contentId) external view returns (address);
    function confidentialityConfig(uint256 contentId) external view returns (Confidentiality memory);
}

/// The live rater registry's credential view (RaterRegistry.hasActiveHumanCredential).
interface IRaterRegistry {
    function hasActiveHumanCredential(address rater) external view returns (bool);
}

/// Rounds, encrypted vote commits, reveals and settlement (chain.md §4.2, §9). Every rule a commit meets on the
/// live chain is checked: round open, round context, stake bounds (also per voter per round), commit hash, self votes,
/// duplicates, the 24 h cooldown per voter per question, voter cap, drand chain hash (the round's own snapshot),
/// target-round window and ciphertext shape. Settlement follows the live engine's path: settleRound leaves a decided
/// round SettlementPending with its stakes held (a tie is Tied), and the payout snapshot settles it; the sandbox runs
/// no payout oracle, so only the live engine's own timeout path applies (the empty snapshot, one hour after the round
/// became ready), which returns the revealed stakes. Simplified economics: no rewards, no forfeits; refunds of
/// cancelled, tied and reveal-failed rounds are pulled by the voter (claimCancelledRoundRefund), as live.
contract RoundVotingEngine {
    using SafeERC20 for IERC20;

    uint256 public constant MIN_STAKE = 1_000_000;
    uint256 public constant MAX_STAKE = 10_000_000;
    /// The live engine's cooldown: one staked vote per voter per question in any 24 hours.
    uint256 public constant VOTE_COOLDOWN = 24 hours;
    /// How long a SettlementPending round waits for a payout snapshot before the empty one may be applied.
    uint256 public constant RBTS_SETTLEMENT_SNAPSHOT_TIMEOUT = 1 hours;

    uint8 internal constant OPEN = 0;
    uint8 internal constant SETTLED = 1;
    uint8 internal constant CANCELLED = 2;
    uint8 internal constant TIED = 3;
    uint8 internal constant REVEAL_FAILED = 4;
    uint8 internal constant SETTLEMENT_PENDING = 5;

    // The live engine's names for the same refusals (RateLoop 0b442ae).
    error InvalidStake();
    error InvalidCommitHash();
    error RoundNotOpen();
    error SelfVote();
    error ContentNotActive();
    error ConfidentialityCredentialRequired();
    error AlreadyCommitted();
    error MaxVotersReached();
    error DrandChainHashMismatch();
    error TargetRoundOutOfWindow();
    error CooldownActive();
    error ThresholdReached();
    error NoCommit();
    error AlreadyRevealed();
    error EpochNotEnded();
    error HashMismatch();
    error NotEnoughVotes();
    error UnrevealedPastEpochVotes();
    error RoundNotExpired();
    error RevealGraceActive();
    error RoundNotCancelledOrTied();
    error AlreadyClaimed();
    error IndexOutOfBounds();
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
        // Snapshotted when the round opens, as live: a later ProtocolConfig change never moves an open round.
        bytes32 drandChainHash;
        uint64 drandGenesisTime;
        uint64 drandPeriod;
        uint32 revealGracePeriod;
        /// The latest moment any of the round's commits becomes revealable (the reveal grace runs from it).
        uint48 lastRevealableAt;
        /// When the round became SettlementPending: the snapshot timeout runs from it.
        uint48 payoutReadyAt;
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
    /// The last staked vote of a voter on a question (the cooldown), and a voter's total stake in a round (the cap).
    mapping(uint256 => mapping(address => uint256)) internal lastVoteTimestamp;
    mapping(uint256 => mapping(uint256 => mapping(address => uint256))) internal voterRoundStake;
    mapping(uint256 => mapping(uint256 => mapping(bytes32 => bool))) internal refunded;

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
    // The live engine's events for the same moments (field order included).
    event VoteRevealed(uint256 indexed contentId, uint256 indexed roundId, address indexed voter, bool isUp);
    event RbtsVoteRevealed(
        uint256 indexed contentId, uint256 indexed roundId, address indexed voter, bool isUp, uint16 predictedUpBps, uint256 effectiveWeight
    );
    event RoundTied(uint256 indexed contentId, uint256 indexed roundId);
    event RoundCancelled(uint256 indexed contentId, uint256 indexed roundId);
    event RoundRevealFailed(uint256 indexed contentId, uint256 indexed roundId);
    event RbtsSettlementPending(uint256 indexed contentId, uint256 indexed roundId, address oracle);
    event RbtsSettlementSnapshotTimedOut(uint256 indexed contentId, uint256 indexed roundId);
    event RoundSettled(uint256 indexed contentId, uint256 indexed roundId, bool upWins, uint256 losingPool);
    event CancelledRoundRefundClaimed(uint256 indexed contentId, uint256 indexed roundId, address indexed voter, uint256 amount);

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

    /// Gated content needs an active human credential, which the rater registry ProtocolConfig names holds (as live:
    /// the sandbox seeds one for each account it funds). No registry configured: no one has a credential.
    function _hasHumanCredential(address voter) internal view returns (bool) {
        address raters = ProtocolConfig(protocolConfig).raterRegistry();
        return raters != address(0) && IRaterRegistry(raters).hasActiveHumanCredential(voter);
    }

    function initContent(uint256 contentId) external {
        if (msg.sender != registry) revert NotAuthorized();
        _open(contentId);
    }

    /// As live: an open round that accepts votes is kept (nothing to do); one that expired short of commits is
    /// cancelled, one whose reveals failed is finalized, and a new round opens; a round closed to votes but not
    /// settled yet (or past its reveal threshold) is RoundNotOpen. A terminal round (SettlementPending included) is
    /// followed by a new one.
    function openRound(uint256 contentId) external {
        if (IRegistryForEngine(registry).getSubmitterIdentity(contentId) == address(0)) revert ContentNotActive();
        uint256 id = currentRoundId[contentId];
        if (id != 0 && rounds[contentId][id].state == OPEN) {
            Round storage r = rounds[contentId][id];
            if (_canCancel(r)) {
                _markCancelled(contentId, id, r);
            } else if (_canFinalizeRevealFailed(r)) {
                _markRevealFailed(contentId, id, r);
            } else {
                if (!_isOpen(r) || r.thresholdReachedAt != 0) revert RoundNotOpen();
                return;
            }
        }
        _open(contentId);
    }

    function _open(uint256 contentId) internal {
        uint256 id = ++currentRoundId[contentId];
        Round storage r = rounds[contentId][id];
        r.startTime = uint48(block.timestamp);
        r.cfg = IRegistryForEngine(registry).getContentRoundConfig(contentId);
        uint16 ref = id == 1 ? 5000 : lastRatingBps[contentId];
        r.referenceRatingBps = ref;
        ProtocolConfig pc = ProtocolConfig(protocolConfig);
        r.drandChainHash = pc.drandChainHash();
        r.drandGenesisTime = pc.drandGenesisTime();
        r.drandPeriod = pc.drandPeriod();
        r.revealGracePeriod = uint32(pc.revealGracePeriod());
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
        uint256 at = targetRound == 0 ? 0 : _targetRoundTime(r, targetRound);
        return (r.referenceRatingBps, at, r.drandChainHash, r.drandGenesisTime, r.drandPeriod, r.state != OPEN, advisoryVoteRecorder);
    }

    function _targetRoundTime(Round storage r, uint64 targetRound) internal view returns (uint256) {
        return uint256(r.drandGenesisTime) + (uint256(targetRound) - 1) * r.drandPeriod;
    }

    /// When a commit may be revealed, as live: the later of its epoch's end and its target round's beacon.
    function _revealableAt(Round storage r, Commit storage c) internal view returns (uint256 at) {
        at = _targetRoundTime(r, c.targetRound);
        uint256 epochEnd = uint256(r.startTime) + r.cfg.epochDuration;
        if (at < epochEnd) at = epochEnd;
    }

    /// The live engine's view of a commit (its signature, chain.md §4.2): loopsign decides "revealed" from it.
    function commitCore(uint256 contentId, uint256 roundId, bytes32 commitKey)
        external
        view
        returns (address voter, uint64 stakeAmount, address frontend, uint48 revealableAfter, bool revealed, bool isUp, uint8 epochIndex)
    {
        Commit storage c = commits[contentId][roundId][commitKey];
        uint256 at = c.voter == address(0) ? 0 : _revealableAt(rounds[contentId][roundId], c);
        return (c.voter, c.stake, address(0), uint48(at), c.revealed, c.isUp, 0);
    }

    /// The live engine's view of what a commit's reveal is checked against (its signature, RateLoop 0b442ae).
    function commitRevealData(uint256 contentId, uint256 roundId, bytes32 commitKey)
        external
        view
        returns (bytes32 ciphertextHash, uint64 targetRound, bytes32 drandChainHash, uint48 revealableAfter, bool revealed, uint64 stakeAmount)
    {
        Round storage r = rounds[contentId][roundId];
        Commit storage c = commits[contentId][roundId][commitKey];
        uint256 at = c.voter == address(0) ? 0 : _revealableAt(r, c);
        bytes32 hash = c.voter == address(0) ? bytes32(0) : r.drandChainHash;
        return (c.ciphertextHash, c.targetRound, hash, uint48(at), c.revealed, c.stake);
    }

    /// The live engine's lookup of a voter's commit in a round.
    function voterCommitKey(uint256 contentId, uint256 roundId, address voter) external view returns (bytes32 commitHash, bytes32 commitKey) {
        commitKey = commitKeyOf[contentId][roundId][voter];
        commitHash = commits[contentId][roundId][commitKey].commitHash;
    }

    /// The live engine's enumeration of a round's commits.
    function getRoundCommitKey(uint256 contentId, uint256 roundId, uint256 index) external view returns (bytes32) {
        bytes32[] storage keys = commitKeysByRound[contentId][roundId];
        if (index >= keys.length) revert IndexOutOfBounds();
        return keys[index];
    }

    /// The live engine's cooldown view (a sandbox voter is its own identity holder and has no identity key).
    function voteCooldownTimestamps(uint256 contentId, address voter, address identityHolder, bytes32)
        external
        view
        returns (uint256 voterLastVote, uint256 identityHolderLastVote, uint256 identityLastVote)
    {
        return (lastVoteTimestamp[contentId][voter], lastVoteTimestamp[contentId][identityHolder], 0);
    }

    /// The live engine's RBTS view of a commit: its revealed prediction and the stake returned to it (the sandbox
    /// scores nothing: score and reward weight are 0, the scoring weight is the stake).
    function rbtsCommitState(uint256 contentId, uint256 roundId, bytes32 commitKey)
        external
        view
        returns (uint16 predictedUpBps, uint16 scoreBps, uint256 scoringWeight, uint256 rewardWeight, uint256 stakeReturned)
    {
        Commit storage c = commits[contentId][roundId][commitKey];
        bool returned = c.revealed && rounds[contentId][roundId].state == SETTLED;
        return (c.predictedUpBps, 0, c.revealed ? c.stake : 0, 0, returned ? c.stake : 0);
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
        return _validateCommit(voter, contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext, 0);
    }

    /// The checks in the live engine's order; a staked vote (stake > 0) also meets the cooldown and the stake cap.
    function _validateCommit(
        address voter,
        uint256 contentId,
        uint256 roundContext,
        uint64 targetRound,
        bytes32 drandChainHash,
        bytes32 commitHash,
        bytes calldata ciphertext,
        uint256 stake
    ) internal view returns (uint256 roundId) {
        address submitter = IRegistryForEngine(registry).getSubmitterIdentity(contentId);
        if (submitter == address(0)) revert ContentNotActive();
        roundId = currentRoundId[contentId];
        Round storage r = rounds[contentId][roundId];
        if (roundId == 0 || !_isOpen(r)) revert RoundNotOpen();
        if (roundContext >> 16 != roundId || uint16(roundContext) != r.referenceRatingBps) revert InvalidCommitHash();
        if (commitHash == bytes32(0)) revert InvalidCommitHash();
        if (r.thresholdReachedAt != 0) revert ThresholdReached();
        if (voter == submitter) revert SelfVote();
        if (stake > 0) {
            uint256 lastVote = lastVoteTimestamp[contentId][voter];
            if (lastVote > 0 && block.timestamp < lastVote + VOTE_COOLDOWN) revert CooldownActive();
        }
        if (commitKeyOf[contentId][roundId][voter] != bytes32(0)) revert AlreadyCommitted();
        if (r.voteCount >= r.cfg.maxVoters) revert MaxVotersReached();
        // The live cap is per identity per round; a sandbox voter is its own identity.
        if (stake > 0 && voterRoundStake[contentId][roundId][voter] + stake > MAX_STAKE) revert InvalidStake();
        if (drandChainHash != r.drandChainHash) revert DrandChainHashMismatch();
        uint256 g = r.drandGenesisTime;
        uint256 p = r.drandPeriod;
        uint256 epochEnd = uint256(r.startTime) + r.cfg.epochDuration;
        // roundAtOrAfter(epochEnd) <= targetRound <= roundAt(epochEnd + 2p)
        uint256 lo = epochEnd < g ? 0 : (epochEnd - g + p - 1) / p + 1;
        uint256 hi = epochEnd + 2 * p < g ? 0 : (epochEnd + 2 * p - g) / p + 1;
        if (targetRound == 0 || targetRound < lo || targetRound > hi) revert TargetRoundOutOfWindow();
        AgeArmor.validate(ciphertext, targetRound, drandChainHash);
        if (IRegistryForEngine(registry).confidentialityConfig(contentId).gated && !_hasHumanCredential(voter)) revert ConfidentialityCredentialRequired();
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
        if (stakeAmount < MIN_STAKE || stakeAmount > MAX_STAKE) revert InvalidStake();
        uint256 roundId = _validateCommit(msg.sender, contentId, roundContext, targetRound, drandChainHash, commitHash, ciphertext, stakeAmount);
        IERC20(lrep).safeTransferFrom(msg.sender, address(this), stakeAmount);
        Round storage r = rounds[contentId][roundId];
        bytes32 key = keccak256(abi.encodePacked(msg.sender, commitHash));
        bytes32 ciphertextHash = keccak256(ciphertext);
        commits[contentId][roundId][key] = Commit(msg.sender, commitHash, targetRound, ciphertextHash, uint64(stakeAmount), false, false, 0);
        commitKeyOf[contentId][roundId][msg.sender] = key;
        commitKeysByRound[contentId][roundId].push(key);
        lastVoteTimestamp[contentId][msg.sender] = block.timestamp;
        voterRoundStake[contentId][roundId][msg.sender] += stakeAmount;
        r.voteCount++;
        r.totalStake += uint64(stakeAmount);
        uint256 revealable = _revealableAt(r, commits[contentId][roundId][key]);
        if (revealable > r.lastRevealableAt) r.lastRevealableAt = uint48(revealable);
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

    /// Anyone may reveal once the commit's epoch has ended and its target round's beacon exists (by the chain's clock).
    function revealVoteByCommitKey(uint256 contentId, uint256 roundId, bytes32 commitKey, bool isUp, uint16 predictedUpBps, bytes32 salt) external {
        Round storage r = rounds[contentId][roundId];
        Commit storage c = commits[contentId][roundId][commitKey];
        if (r.state != OPEN) revert RoundNotOpen();
        if (c.voter == address(0)) revert NoCommit();
        if (c.revealed) revert AlreadyRevealed();
        if (block.timestamp < _revealableAt(r, c)) revert EpochNotEnded();
        // Once the round has its reveals and the grace is over, late reveals no longer count (live).
        if (r.thresholdReachedAt != 0 && _revealGraceElapsed(r)) revert UnrevealedPastEpochVotes();
        bytes32 expected = keccak256(
            abi.encodePacked(isUp, predictedUpBps, salt, c.voter, contentId, roundId, r.referenceRatingBps, c.targetRound, r.drandChainHash, c.ciphertextHash)
        );
        if (expected != c.commitHash) revert HashMismatch();
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
        if (r.revealedCount >= r.cfg.minVoters && r.thresholdReachedAt == 0) r.thresholdReachedAt = uint48(block.timestamp);
        emit VoteRevealed(contentId, roundId, c.voter, isUp);
        emit RbtsVoteRevealed(contentId, roundId, c.voter, isUp, predictedUpBps, c.stake);
    }

    /// The live rule: the grace runs from the last commit's reveal time (from the round's end, too, before the
    /// round had its reveals).
    function _revealGraceElapsed(Round storage r) internal view returns (bool) {
        if (r.lastRevealableAt == 0) return false;
        uint256 base = r.lastRevealableAt;
        if (r.thresholdReachedAt == 0 && uint256(r.startTime) + r.cfg.maxDuration > base) base = uint256(r.startTime) + r.cfg.maxDuration;
        return block.timestamp >= base + r.revealGracePeriod;
    }

    function _expired(Round storage r) internal view returns (bool) {
        return block.timestamp >= uint256(r.startTime) + r.cfg.maxDuration;
    }

    /// Settles a round with at least minVoters reveals (every past-epoch commit revealed, or the reveal grace over):
    /// equal stakes are Tied; otherwise the verdict is public and the round is SettlementPending, stakes held.
    function settleRound(uint256 contentId, uint256 roundId) external {
        Round storage r = rounds[contentId][roundId];
        if (r.startTime == 0 || r.state != OPEN) revert RoundNotOpen();
        if (r.revealedCount < r.cfg.minVoters) revert NotEnoughVotes();
        if (r.voteCount > r.revealedCount && !_revealGraceElapsed(r)) revert UnrevealedPastEpochVotes();
        uint256 total = uint256(r.upStake) + r.downStake;
        r.ratingBps = uint16((uint256(r.upStake) * 10000 + total / 2) / total);
        if (r.upStake == r.downStake) {
            r.state = TIED;
            r.settledAt = uint48(block.timestamp);
            lastRatingBps[contentId] = r.referenceRatingBps;
            emit RoundTied(contentId, roundId);
            return;
        }
        r.upWins = r.upStake > r.downStake ? 1 : 0;
        r.state = SETTLEMENT_PENDING;
        r.payoutReadyAt = uint48(block.timestamp);
        emit RbtsSettlementPending(contentId, roundId, address(0));
    }

    /// The payout snapshot. The sandbox runs no payout oracle, so only the live engine's timeout path exists: the
    /// empty snapshot, once RBTS_SETTLEMENT_SNAPSHOT_TIMEOUT has passed since the round became ready, returns the
    /// revealed stakes and settles the round. Any other snapshot reverts (empty data).
    function applyRbtsSettlementSnapshot(uint256 contentId, uint256 roundId, PayoutWeight[] calldata payoutWeights, bytes32[][] calldata proofs)
        external
    {
        Round storage r = rounds[contentId][roundId];
        if (r.state != SETTLEMENT_PENDING) revert RoundNotOpen();
        if (payoutWeights.length != 0 || proofs.length != 0) revert();
        if (block.timestamp < uint256(r.payoutReadyAt) + RBTS_SETTLEMENT_SNAPSHOT_TIMEOUT) revert RoundNotExpired();
        bytes32[] storage keys = commitKeysByRound[contentId][roundId];
        for (uint256 i = 0; i < keys.length; i++) {
            Commit storage c = commits[contentId][roundId][keys[i]];
            if (c.revealed && c.stake > 0) IERC20(lrep).safeTransfer(c.voter, c.stake);
        }
        r.state = SETTLED;
        r.settledAt = uint48(block.timestamp);
        lastRatingBps[contentId] = r.ratingBps;
        uint256 losing = r.upWins == 1 ? r.downStake : r.upStake;
        emit RbtsSettlementSnapshotTimedOut(contentId, roundId);
        emit RoundSettled(contentId, roundId, r.upWins == 1, losing);
    }

    function _canCancel(Round storage r) internal view returns (bool) {
        return _expired(r) && r.revealedCount < r.cfg.minVoters && r.voteCount < r.cfg.minVoters;
    }

    function _canFinalizeRevealFailed(Round storage r) internal view returns (bool) {
        return r.voteCount >= r.cfg.minVoters && r.revealedCount < r.cfg.minVoters && _expired(r) && _revealGraceElapsed(r);
    }

    function _markCancelled(uint256 contentId, uint256 roundId, Round storage r) internal {
        r.state = CANCELLED;
        r.settledAt = uint48(block.timestamp);
        lastRatingBps[contentId] = r.referenceRatingBps;
        emit RoundCancelled(contentId, roundId);
    }

    function _markRevealFailed(uint256 contentId, uint256 roundId, Round storage r) internal {
        r.state = REVEAL_FAILED;
        r.settledAt = uint48(block.timestamp);
        lastRatingBps[contentId] = r.referenceRatingBps;
        emit RoundRevealFailed(contentId, roundId);
    }

    /// An expired round without enough commits (live: cancelExpiredRound). Stakes are refunded by claim.
    function cancelExpiredRound(uint256 contentId, uint256 roundId) external {
        Round storage r = rounds[contentId][roundId];
        if (r.startTime == 0 || r.state != OPEN) revert RoundNotOpen();
        if (!_expired(r)) revert RoundNotExpired();
        if (!_canCancel(r)) revert ThresholdReached();
        _markCancelled(contentId, roundId, r);
    }

    /// A round with enough commits whose reveals never reached minVoters by the end of the reveal grace (live:
    /// finalizeRevealFailedRound).
    function finalizeRevealFailedRound(uint256 contentId, uint256 roundId) external {
        Round storage r = rounds[contentId][roundId];
        if (r.startTime == 0 || r.state != OPEN) revert RoundNotOpen();
        if (r.voteCount < r.cfg.minVoters) revert NotEnoughVotes();
        if (r.revealedCount >= r.cfg.minVoters) revert ThresholdReached();
        if (!_canFinalizeRevealFailed(r)) revert RevealGraceActive();
        _markRevealFailed(contentId, roundId, r);
    }

    /// A voter's refund from a cancelled round (every commit), or a tied or reveal-failed one (revealed commits).
    function claimCancelledRoundRefund(uint256 contentId, uint256 roundId) external {
        Round storage r = rounds[contentId][roundId];
        if (r.state != CANCELLED && r.state != TIED && r.state != REVEAL_FAILED) revert RoundNotCancelledOrTied();
        bytes32 key = commitKeyOf[contentId][roundId][msg.sender];
        if (key == bytes32(0)) revert NoCommit();
        Commit storage c = commits[contentId][roundId][key];
        if (r.state != CANCELLED && !c.revealed) revert NoCommit();
        if (refunded[contentId][roundId][key]) revert AlreadyClaimed();
        refunded[contentId][roundId][key] = true;
        IERC20(lrep).safeTransfer(c.voter, c.stake);
        emit CancelledRoundRefundClaimed(contentId, roundId, c.voter, c.stake);
    }
}
