// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Who is a verified human, for the engine's credential checks (gated questions). Written for the sandbox from the
/// live RaterRegistry's observed interface (notes/real-contract-rules.md): a seeder records a credential with
/// `seedHumanCredential(rater, expiresAt, anchorId, evidenceHash)`, the engine asks `hasActiveHumanCredential`, and a
/// credential is active while verified, not revoked and not expired. One anchor (the live registry's nullifier) names
/// one rater. The sandbox's deployer is its only seeder (the live SEEDER_ROLE); it seeds each account it funds.
contract RaterRegistry {
    error NotAuthorized();
    error InvalidAddress();
    error InvalidCredential();

    /// The live getter's shape (RaterRegistry.getHumanCredential): provider 1 is a seeded human.
    struct HumanCredential {
        bool verified;
        bool revoked;
        uint8 provider;
        bytes32 nullifierHash;
        bytes32 scope;
        uint64 verifiedAt;
        uint64 expiresAt;
        bytes32 evidenceHash;
    }

    uint8 internal constant PROVIDER_SEEDED_HUMAN = 1;
    bytes32 public constant SEEDED_HUMAN_SCOPE = keccak256("loopsign-sandbox-seeded-human");

    address public immutable seeder;
    mapping(address => HumanCredential) internal credentials;
    /// The rater an anchor was seeded for: an anchor cannot make a second human.
    mapping(bytes32 => address) public anchorOwner;

    // The live events (their field order and indexed flags).
    event HumanCredentialVerified(
        address indexed rater,
        bytes32 indexed nullifierHash,
        bytes32 indexed scope,
        uint8 provider,
        uint64 verifiedAt,
        uint64 expiresAt,
        bytes32 evidenceHash
    );
    event HumanCredentialRevoked(address indexed rater, bytes32 indexed nullifierHash, uint8 indexed provider);

    constructor() {
        seeder = msg.sender;
    }

    /// Records (or renews) `rater`'s credential until `expiresAt`, which must be in the future; `anchorId` must be
    /// non-zero and not another rater's.
    function seedHumanCredential(address rater, uint64 expiresAt, bytes32 anchorId, bytes32 evidenceHash) external {
        if (msg.sender != seeder) revert NotAuthorized();
        if (rater == address(0)) revert InvalidAddress();
        if (expiresAt <= block.timestamp || anchorId == bytes32(0)) revert InvalidCredential();
        address owner = anchorOwner[anchorId];
        if (owner != address(0) && owner != rater) revert InvalidCredential();
        anchorOwner[anchorId] = rater;
        credentials[rater] =
            HumanCredential(true, false, PROVIDER_SEEDED_HUMAN, anchorId, SEEDED_HUMAN_SCOPE, uint64(block.timestamp), expiresAt, evidenceHash);
        emit HumanCredentialVerified(rater, anchorId, SEEDED_HUMAN_SCOPE, PROVIDER_SEEDED_HUMAN, uint64(block.timestamp), expiresAt, evidenceHash);
    }

    function revokeHumanCredential(address rater) external {
        if (msg.sender != seeder) revert NotAuthorized();
        HumanCredential storage c = credentials[rater];
        if (!c.verified || c.revoked) revert InvalidCredential();
        c.revoked = true;
        emit HumanCredentialRevoked(rater, c.nullifierHash, c.provider);
    }

    function getHumanCredential(address rater) external view returns (HumanCredential memory) {
        return credentials[rater];
    }

    function hasActiveHumanCredential(address rater) public view returns (bool) {
        HumanCredential storage c = credentials[rater];
        return c.verified && !c.revoked && c.expiresAt > block.timestamp;
    }
}
