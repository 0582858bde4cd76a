// What a grant allows now, read from the chain (the enforcers' own views), never from a local count: per window the
// cap, what was pulled, what is left and when it resets; the expiry; and whether it was revoked or the manager paused.
import { encodeAbiParameters, parseAbi, type Hex, type PublicClient } from 'viem';
import { ChainError } from '../errors.js';
import type { DelegationContracts } from '../chains/delegation.js';
import { DELEGATION_MANAGER_ABI } from './delegation.js';
import { decodeGrantCaveats, type GrantLimits } from './terms.js';
import { grantEntry, type GrantAsset, type GrantFile } from './grant-file.js';

const PERIOD_VIEWS = parseAbi([
  'function getAvailableAmount(bytes32 delegationHash, address delegationManager, bytes terms) view returns (uint256 availableAmount, bool isNewPeriod, uint256 currentPeriod)',
]);
const MULTI_VIEWS = parseAbi([
  'function getAvailableAmount(bytes32 delegationHash, address delegationManager, bytes terms, bytes args) view returns (uint256 availableAmount, bool isNewPeriod, uint256 currentPeriod)',
]);
const NONCE_VIEWS = parseAbi(['function currentNonce(address delegationManager, address delegator) view returns (uint256)']);

export interface WindowState {
  window: 'day' | '30days';
  periodSeconds: number;
  cap: string;
  used: string;
  available: string;
  /** The start of the next period (unix seconds and ISO). */
  resetsAt: number;
  resetsAtIso: string;
}

export type GrantStatus = 'active' | 'expired' | 'revoked_disabled' | 'revoked_nonce' | 'paused';

export interface GrantState {
  grant: Hex;
  /** The asset this delegation caps (a grant with LREP caps has a second delegation, shown as its own state). */
  asset: GrantAsset;
  chainId: number;
  owner: string;
  session: string;
  /** The token's address (not `token`: output redacts that key, an API token's name). */
  tokenAddress: string;
  status: GrantStatus;
  expiresAt: number;
  expiresAtIso: string;
  chainTime: number;
  windows: WindowState[];
}

const iso = (s: number) => new Date(s * 1000).toISOString();

export async function readGrantState(
  client: PublicClient,
  contracts: DelegationContracts,
  file: GrantFile,
  asset: GrantAsset = 'USDC',
): Promise<GrantState> {
  const entry = grantEntry(file, asset)!;
  const caveats = entry.delegation.caveats as { enforcer: string; terms: Hex }[];
  const limits: GrantLimits = decodeGrantCaveats(contracts, caveats);
  const hash = entry.hash as Hex;
  const dm = contracts.delegationManager;
  try {
    const [day, month, disabled, paused, nonce, block] = await Promise.all([
      client.readContract({
        address: contracts.erc20PeriodTransferEnforcer,
        abi: PERIOD_VIEWS,
        functionName: 'getAvailableAmount',
        args: [hash, dm, caveats[0]!.terms],
      }),
      client.readContract({
        address: contracts.multiTokenPeriodEnforcer,
        abi: MULTI_VIEWS,
        functionName: 'getAvailableAmount',
        args: [hash, dm, caveats[1]!.terms, encodeAbiParameters([{ type: 'uint256' }], [0n])],
      }),
      client.readContract({ address: dm, abi: DELEGATION_MANAGER_ABI, functionName: 'disabledDelegations', args: [hash] }),
      client.readContract({ address: dm, abi: DELEGATION_MANAGER_ABI, functionName: 'paused' }),
      client.readContract({
        address: contracts.nonceEnforcer,
        abi: NONCE_VIEWS,
        functionName: 'currentNonce',
        args: [dm, file.owner as Hex],
      }),
      client.getBlock({ blockTag: 'latest' }),
    ]);
    const now = Number(block.timestamp);
    const window = (w: 'day' | '30days', cap: bigint, periodSeconds: number, r: readonly [bigint, boolean, bigint]): WindowState => {
      const resetsAt = limits.start + Number(r[2]) * periodSeconds;
      return {
        window: w,
        periodSeconds,
        cap: cap.toString(),
        used: (cap - r[0]).toString(),
        available: r[0].toString(),
        resetsAt,
        resetsAtIso: iso(resetsAt),
      };
    };
    const status: GrantStatus = disabled
      ? 'revoked_disabled'
      : nonce !== limits.nonce
        ? 'revoked_nonce'
        : now >= limits.expiresAt
          ? 'expired'
          : paused
            ? 'paused'
            : 'active';
    return {
      grant: hash,
      asset,
      chainId: file.chainId,
      owner: file.owner,
      session: limits.session,
      tokenAddress: limits.token,
      status,
      expiresAt: limits.expiresAt,
      expiresAtIso: iso(limits.expiresAt),
      chainTime: now,
      windows: [window('day', limits.perDay, 86_400, day), window('30days', limits.per30Days, 2_592_000, month)],
    };
  } catch (error) {
    throw new ChainError(
      'budget_read_failed',
      `reading grant ${hash} from the enforcers failed: ${(error as Error).message.split('\n')[0]}`,
      {
        hint: 'check the RPC (--rpc-url) and run again',
      },
    );
  }
}
