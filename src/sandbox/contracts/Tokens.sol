// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {ERC3009} from "@openzeppelin/contracts/token/ERC20/extensions/draft-ERC3009.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

/// A USDC stand-in: 6 decimals, EIP-712 domain ("USD Coin", "2"), EIP-3009 receiveWithAuthorization with random
/// nonces, as Circle's token. The sandbox owner mints to funded accounts.
contract SandboxUSDC is ERC20, ERC3009 {
    address public immutable owner;

    constructor() ERC20("USD Coin", "USDC") EIP712("USD Coin", "2") {
        owner = msg.sender;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "only owner");
        _mint(to, amount);
    }

    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }
}

/// LoopReputation (LREP): 6 decimals, ERC-2612 permit.
contract LoopReputation is ERC20, ERC20Permit {
    address public immutable owner;

    constructor() ERC20("LoopReputation", "LREP") ERC20Permit("LoopReputation") {
        owner = msg.sender;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "only owner");
        _mint(to, amount);
    }
}
