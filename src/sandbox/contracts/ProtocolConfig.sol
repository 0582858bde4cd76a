// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// The drand network rounds are committed against, and the reveal grace (chain.md §4.2 ProtocolConfig reads). As
/// live, the settings change by a config call (the sandbox sets its own beacon before any round opens), and each
/// round snapshots them when it opens.
contract ProtocolConfig {
    error InvalidConfig();
    error NotAuthorized();

    address public immutable owner;
    bytes32 public drandChainHash;
    uint64 public drandGenesisTime;
    uint64 public drandPeriod;
    /// The live default: reveals may come in for 60 minutes after the last commit became revealable.
    uint256 public revealGracePeriod = 60 minutes;

    event DrandConfigUpdated(bytes32 chainHash, uint64 genesisTime, uint64 period);

    constructor() {
        owner = msg.sender;
    }

    /// The live setter's checks: a hash, a genesis in the past, a period.
    function setDrandConfig(bytes32 chainHash, uint64 genesisTime, uint64 period) external {
        if (msg.sender != owner) revert NotAuthorized();
        if (chainHash == bytes32(0) || genesisTime == 0 || period == 0 || genesisTime > block.timestamp) revert InvalidConfig();
        drandChainHash = chainHash;
        drandGenesisTime = genesisTime;
        drandPeriod = period;
        emit DrandConfigUpdated(chainHash, genesisTime, period);
    }
}
