// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

interface IRegistryView {
    function isContentActive(uint256 contentId) external view returns (bool);
}

interface IEngineView {
    function currentRoundId(uint256 contentId) external view returns (uint256);
}

/// Holds question bounties. The registry pulls them from the submitter (who approved this escrow); the x402
/// submitter transfers them in directly. Simplified economics: bounties stay here (no rater payouts).
contract QuestionRewardPoolEscrow {
    using SafeERC20 for IERC20;

    error NotAuthorized();

    /// The live escrow's frontend fee on reward claims (bps); the sandbox pays no claims, but reports it as live does.
    uint16 public defaultFrontendFeeBps = 300;
    address public immutable owner;
    address public registry;
    address public x402Submitter;
    mapping(uint256 => uint256) public funded;

    event RewardPoolFunded(uint256 indexed poolKey, address indexed payer, address token, uint256 amount);

    constructor() {
        owner = msg.sender;
    }

    function configure(address registry_, address x402_) external {
        if (msg.sender != owner || registry != address(0)) revert NotAuthorized();
        registry = registry_;
        x402Submitter = x402_;
    }

    function fundFrom(address payer, address token, uint256 amount, uint256 poolKey) external {
        if (msg.sender != registry) revert NotAuthorized();
        IERC20(token).safeTransferFrom(payer, address(this), amount);
        funded[poolKey] += amount;
        emit RewardPoolFunded(poolKey, payer, token, amount);
    }

    function recordFunded(address payer, address token, uint256 amount, uint256 poolKey) external {
        if (msg.sender != x402Submitter) revert NotAuthorized();
        funded[poolKey] += amount;
        emit RewardPoolFunded(poolKey, payer, token, amount);
    }
}

/// Feedback bonus pools (chain.md §3.4 bonus plan). Funded by the asker through approve + create, or by the
/// x402 one-shot path, which moves the USDC in first.
contract FeedbackBonusEscrow {
    using SafeERC20 for IERC20;

    error NotAuthorized();
    error UnknownContent();
    error RoundMismatch();
    error InvalidBonus();

    struct Pool {
        uint256 contentId;
        uint256 roundId;
        uint8 asset;
        uint256 amount;
        uint256 feedbackClosesAt;
        address awarder;
        address funder;
        uint16 frontendFeeBps;
    }

    /// The live escrow's frontend fee: each pool keeps the default of its creation (300 bps), at most 500 bps; an
    /// award through a frontend pays it that share. The sandbox makes no awards, so the fee shows in the pool and
    /// its event only.
    uint256 public constant DEFAULT_FRONTEND_FEE_BPS = 300;
    uint256 public constant MAX_FRONTEND_FEE_BPS = 500;
    uint16 public defaultFrontendFeeBps = uint16(DEFAULT_FRONTEND_FEE_BPS);

    address public immutable owner;
    address public usdc;
    address public lrep;
    address public registry;
    address public engine;
    address public x402Submitter;
    uint256 public poolCount;
    mapping(uint256 => Pool) public pools;

    // The live escrow's event, field order included (chain.md §4.3).
    event FeedbackBonusPoolCreated(
        uint256 indexed poolId,
        uint256 indexed contentId,
        uint256 indexed roundId,
        address funder,
        address awarder,
        uint256 amount,
        uint256 feedbackClosesAt,
        uint256 frontendFeeBps,
        uint8 asset
    );

    constructor() {
        owner = msg.sender;
    }

    function configure(address usdc_, address lrep_, address registry_, address engine_, address x402_) external {
        if (msg.sender != owner || registry != address(0)) revert NotAuthorized();
        usdc = usdc_;
        lrep = lrep_;
        registry = registry_;
        engine = engine_;
        x402Submitter = x402_;
    }

    /// As live: a require string (stripped from the live deploy profile's bytecode, so empty data there).
    function setDefaultFrontendFeeBps(uint256 frontendFeeBps_) external {
        if (msg.sender != owner) revert NotAuthorized();
        require(frontendFeeBps_ <= MAX_FRONTEND_FEE_BPS, "Fee too high");
        defaultFrontendFeeBps = uint16(frontendFeeBps_);
    }

    function createFeedbackBonusPoolWithAsset(uint256 contentId, uint256 roundId, uint8 asset, uint256 amount, uint256 feedbackClosesAt, address awarder)
        external
        returns (uint256 poolId)
    {
        poolId = _create(msg.sender, contentId, roundId, asset, amount, feedbackClosesAt, awarder);
        IERC20(asset == 1 ? usdc : lrep).safeTransferFrom(msg.sender, address(this), amount);
    }

    /// The x402 one-shot path: the submitter already transferred `amount` USDC here.
    function createPoolFromX402(address funder, uint256 contentId, uint256 roundId, uint256 amount, uint256 feedbackClosesAt, address awarder)
        external
        returns (uint256 poolId)
    {
        if (msg.sender != x402Submitter) revert NotAuthorized();
        poolId = _create(funder, contentId, roundId, 1, amount, feedbackClosesAt, awarder);
    }

    function _create(address funder, uint256 contentId, uint256 roundId, uint8 asset, uint256 amount, uint256 feedbackClosesAt, address awarder)
        internal
        returns (uint256 poolId)
    {
        if (!IRegistryView(registry).isContentActive(contentId)) revert UnknownContent();
        if (roundId == 0 || IEngineView(engine).currentRoundId(contentId) != roundId) revert RoundMismatch();
        if (asset > 1 || amount == 0 || awarder == address(0) || feedbackClosesAt <= block.timestamp) revert InvalidBonus();
        poolId = ++poolCount;
        pools[poolId] = Pool(contentId, roundId, asset, amount, feedbackClosesAt, awarder, funder, defaultFrontendFeeBps);
        emit FeedbackBonusPoolCreated(poolId, contentId, roundId, funder, awarder, amount, feedbackClosesAt, defaultFrontendFeeBps, asset);
    }
}
