// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// The drand network rounds are committed against (chain.md §4.2 ProtocolConfig reads).
contract ProtocolConfig {
    bytes32 public immutable drandChainHash;
    uint64 public immutable drandGenesisTime;
    uint64 public immutable drandPeriod;

    constructor(bytes32 chainHash, uint64 genesis, uint64 period) {
        drandChainHash = chainHash;
        drandGenesisTime = genesis;
        drandPeriod = period;
    }
}
