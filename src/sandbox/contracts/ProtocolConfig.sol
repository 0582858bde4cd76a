// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./Types.sol";

/// The drand network rounds are committed against, the reveal grace, and the round bounds and reward minimums a
/// question's settings must meet (chain.md §4.2 ProtocolConfig reads; the live service's preflight reads `config`,
/// `minSubmissionUsdcPool` and `validateRoundConfig`, as the vendored corpus's chain reads show). As live, the drand
/// settings change by a config call (the sandbox sets its own beacon before any round opens), and each round
/// snapshots them when it opens. The bounds are the live defaults; the sandbox never changes them.
contract ProtocolConfig {
    error InvalidConfig();
    error NotAuthorized();

    /// The live struct and its field order (the public getter returns these eight values).
    struct RoundConfigBounds {
        uint32 minEpochDuration;
        uint32 maxEpochDuration;
        uint32 minRoundDuration;
        uint32 maxRoundDuration;
        uint16 minSettlementVoters;
        uint16 maxSettlementVoters;
        uint16 minVoterCap;
        uint16 maxVoterCap;
    }

    address public immutable owner;
    bytes32 public drandChainHash;
    uint64 public drandGenesisTime;
    uint64 public drandPeriod;
    /// The live default: reveals may come in for 60 minutes after the last commit became revealable.
    uint256 public revealGracePeriod = 60 minutes;
    /// The default round settings (20 minutes, 3 settlement voters, a cap of 100).
    RoundConfig public config = RoundConfig(20 minutes, 20 minutes, 3, 100);
    /// The live defaults: 20 seconds to 30 days an epoch, up to 60 days a round, 3 to 100 settlement voters, a cap of
    /// 3 to 200 voters.
    RoundConfigBounds public roundConfigBounds = RoundConfigBounds(20, 30 days, 20, 60 days, 3, 100, 3, 200);
    uint256 public minSubmissionUsdcPool = 1_000_000;
    uint256 public minSubmissionLrepPool = 1_000_000;
    /// Where voters' credentials are read (the live ProtocolConfig.raterRegistry): the engine asks it.
    address public raterRegistry;

    event DrandConfigUpdated(bytes32 chainHash, uint64 genesisTime, uint64 period);
    event RaterRegistryUpdated(address raterRegistry);

    constructor() {
        owner = msg.sender;
    }

    /// The live setter's checks: a hash, a genesis in the past, a period no longer than the shortest epoch.
    function setDrandConfig(bytes32 chainHash, uint64 genesisTime, uint64 period) external {
        if (msg.sender != owner) revert NotAuthorized();
        if (chainHash == bytes32(0) || genesisTime == 0 || period == 0 || genesisTime > block.timestamp) revert InvalidConfig();
        if (period > roundConfigBounds.minEpochDuration) revert InvalidConfig();
        drandChainHash = chainHash;
        drandGenesisTime = genesisTime;
        drandPeriod = period;
        emit DrandConfigUpdated(chainHash, genesisTime, period);
    }

    function setRaterRegistry(address value) external {
        if (msg.sender != owner) revert NotAuthorized();
        if (value == address(0)) revert InvalidConfig();
        raterRegistry = value;
        emit RaterRegistryUpdated(value);
    }

    /// The live view (its signature and its refusal, InvalidConfig()): a question's round settings within the bounds,
    /// one epoch a round, a cap no smaller than the settlement voters. The registry checks every submit with it, and
    /// the service's preflight calls it before it builds a plan.
    function validateRoundConfig(uint256 epochDuration, uint256 maxDuration, uint256 minVoters, uint256 maxVoters)
        external
        view
        returns (RoundConfig memory cfg)
    {
        RoundConfigBounds memory b = roundConfigBounds;
        bool ok = epochDuration >= b.minEpochDuration && epochDuration <= b.maxEpochDuration && maxDuration >= b.minRoundDuration
            && maxDuration <= b.maxRoundDuration && maxDuration == epochDuration && minVoters >= b.minSettlementVoters
            && minVoters <= b.maxSettlementVoters && maxVoters >= b.minVoterCap && maxVoters <= b.maxVoterCap && maxVoters >= minVoters;
        if (!ok) revert InvalidConfig();
        cfg = RoundConfig(uint32(epochDuration), uint32(maxDuration), uint16(minVoters), uint16(maxVoters));
    }
}
