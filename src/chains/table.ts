// Built-in trust anchors per chain (shared/spec/chain.md §1–2, §9.3, §12.4). These addresses are the only ones
// the guards accept as call targets; the service's own claims are never used in their place. Bump TABLE_VERSION
// whenever a value changes so `loopsign config show` tells which table a run used.

export const TABLE_VERSION = '2026-08.2';

export type Address = `0x${string}`;

export interface DrandNetwork {
  name: string;
  chainHash: string; // 64 hex, no 0x
  genesis: number;
  period: number;
  publicKey: string; // G2 public key, hex
  scheme: string;
}

export interface TokenInfo {
  address?: Address;
  decimals: number;
  /** EIP-712 domain for EIP-3009 (USDC only). */
  eip712?: { name: string; version: string };
}

export interface ChainContracts {
  contentRegistry?: Address;
  roundVotingEngine?: Address;
  advisoryVoteRecorder?: Address;
  x402QuestionSubmitter?: Address;
  questionRewardPoolEscrow?: Address;
  feedbackBonusEscrow?: Address;
  protocolConfig?: Address;
  frontendRegistry?: Address;
}

export interface ChainConfig {
  chainId: number;
  name: string;
  role: 'production' | 'staging' | 'sandbox';
  tableVersion: string;
  contracts: ChainContracts;
  tokens: { USDC: TokenInfo; LREP: TokenInfo };
  drand: DrandNetwork;
  /** Pinned ERC-7821 batch delegate for EIP-7702; never taken from the service. */
  batchDelegate?: Address;
  /**
   * MetaMask's DelegationManager (issue 38): the only contract an agent's budget pull may call. Base and Base Sepolia:
   * @metamask/delegation-deployments (Delegation Framework v1.3.0); the sandbox: its manifest.
   */
  delegationManager?: Address;
  /**
   * The budget trust anchors (src/chains/delegation.ts) an owner's own revocations call (issue 38): set only by the
   * `budget` commands, so no other plan's calls to them are ever accounted for.
   */
  delegation?: { delegationManager: Address; nonceEnforcer: Address };
  defaultRpcUrl?: string;
  /**
   * Which block a slot's fate is final at before its calls may move to a new nonce (issue 35): `finalized` (default)
   * or `safe` (Base: the L1 batch is posted; undone only by an L1 reorg deep enough to re-post Base batches).
   */
  finality?: 'finalized' | 'safe';
  /** Seconds between blocks, for the wait a run that stops for finality advises. */
  blockSeconds?: number;
  /** Fee cap when the user sets none (gwei per gas): refusing above it keeps a fee spike from draining the wallet. */
  defaultMaxFeePerGasGwei: number;
  /** Where the chain's addresses came from, for config show. */
  source: string;
  /** The service profile whose trust anchors apply, and where each contract/token address came from. */
  profile?: string;
  sources?: Record<string, string>;
  /** Set when the profile knows of no trusted deployment of the service's contracts on this chain. */
  noDeployment?: string;
  /** On the sandbox chain: the manifest path that was read and not found (no sandbox runs there). */
  missingManifest?: string;
  /**
   * Set only on the chain a `budget sweep` operation's executor and ledger see (src/budget/sweep.ts): the grant's
   * owner, the one address a USDC or LREP `transfer` of that operation may go to. Never in the table or a profile.
   */
  returnTo?: Address;
  /**
   * Set only on the chain a `budget grant --eth-now` operation's executor and ledger see: the one plain ETH transfer
   * that operation may send (to the grant's session address, exactly this many wei). Never in the table or a profile.
   */
  ethNow?: { to: Address; value: bigint };
}

export const QUICKNET: DrandNetwork = {
  name: 'quicknet',
  chainHash: '52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971',
  genesis: 1692803367,
  period: 3,
  publicKey:
    '83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a',
  scheme: 'bls-unchained-g1-rfc9380',
};

export const QUICKNET_T: DrandNetwork = {
  name: 'quicknet-t',
  chainHash: 'cc9c398442737cbd141526600919edd69f1d6f9b4adb67e4d912fbc64341a9a5',
  genesis: 1689232296,
  period: 3,
  publicKey:
    'b15b65b46fb29104f6a4b5d1e11a8da6344463973d423661bb0804846a0ecd1ef93c25057f1c0baab2ac53e56c662b66072f6d84ee791a3382bfb055afab1e6a375538d8ffc451104ac971d2dc9b168e2d3246b0be2015969cbaac298f6502da',
  scheme: 'bls-unchained-g1-rfc9380',
};

export const SUPPORTED_CHAIN_IDS = [8453, 84532, 31337] as const;

export const BUILTIN_CHAINS: Record<number, ChainConfig> = {
  8453: {
    chainId: 8453,
    name: 'Base mainnet',
    role: 'production',
    tableVersion: TABLE_VERSION,
    // The service's contracts (and LREP) come from the active service profile (src/protocol/profiles/).
    contracts: {},
    tokens: {
      USDC: {
        address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        decimals: 6,
        eip712: { name: 'USD Coin', version: '2' },
      },
      LREP: { decimals: 6 },
    },
    drand: QUICKNET,
    batchDelegate: '0x000000005c84F8Fd50b21CAC312528A64437030e',
    delegationManager: '0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3',
    defaultRpcUrl: 'https://mainnet.base.org',
    // Base's base fee is usually around 0.01 gwei; 2 gwei is two orders of magnitude of headroom.
    defaultMaxFeePerGasGwei: 2,
    source: 'built-in',
  },
  84532: {
    chainId: 84532,
    name: 'Base Sepolia',
    role: 'staging',
    tableVersion: TABLE_VERSION,
    // No service contracts are published for Base Sepolia (the profile says so): the operator supplies them by configuration.
    contracts: {},
    tokens: {
      USDC: {
        address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        decimals: 6,
        eip712: { name: 'USDC', version: '2' },
      },
      LREP: { decimals: 6 },
    },
    drand: QUICKNET_T,
    delegationManager: '0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3',
    defaultRpcUrl: 'https://sepolia.base.org',
    defaultMaxFeePerGasGwei: 2,
    source: 'built-in',
  },
  31337: {
    chainId: 31337,
    name: 'loopsign sandbox (anvil)',
    role: 'sandbox',
    tableVersion: TABLE_VERSION,
    // Filled from the running sandbox's manifest: its contracts are deployed fresh on every start.
    contracts: {},
    tokens: { USDC: { decimals: 6, eip712: { name: 'USD Coin', version: '2' } }, LREP: { decimals: 6 } },
    drand: QUICKNET,
    // anvil starts at 1 gwei and rises under load; nothing real is spent.
    defaultMaxFeePerGasGwei: 100,
    source: 'built-in',
  },
};
