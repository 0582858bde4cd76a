// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// The sandbox's ERC-7821 batch delegate for EIP-7702 accounts (chain.md §12). Only the account itself may
/// execute; only mode 0x01 (batch, revert on any failure) is supported, so a batch is all or nothing.
contract BatchExecutor {
    bytes32 internal constant MODE_BATCH = 0x0100000000000000000000000000000000000000000000000000000000000000;

    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    error Unauthorized();
    error UnsupportedExecutionMode();
    error CallFailed(bytes reason);

    function supportsExecutionMode(bytes32 mode) external pure returns (bool) {
        return mode == MODE_BATCH;
    }

    function execute(bytes32 mode, bytes calldata executionData) external payable {
        if (msg.sender != address(this)) revert Unauthorized();
        if (mode != MODE_BATCH) revert UnsupportedExecutionMode();
        Call[] memory calls = abi.decode(executionData, (Call[]));
        for (uint256 i = 0; i < calls.length; i++) {
            address to = calls[i].to == address(0) ? address(this) : calls[i].to;
            (bool ok, bytes memory ret) = to.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(ret);
        }
    }

    /// ERC-1271: a 65-byte signature by the account's own key is valid.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecover(hash, signature);
        return err == ECDSA.RecoverError.NoError && signer == address(this) ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }

    receive() external payable {}
}
