// The chain's memory of a feedback bonus (issue 35). The escrow accepts any number of pools for one question, so the
// journal alone cannot be what stops a second one: a journal can go back in time (a database restored, side files
// lost) and a node can hide the journal's own mined transaction. Before anything is signed for a bonus, the pinned
// escrow's FeedbackBonusPoolCreated events for this question (contentId is indexed) are read and those this wallet
// funded are kept. The range starts at the block of the submission's own receipt: a pool for a question cannot be
// created before the question exists (the escrow requires an active content), so no earlier block can hold one, and
// the operation needs nothing journaled beyond the submission it proves from the chain. A failed read is no verdict:
// exit 4, nothing signed.
import { parseAbiItem, type Hex, type PublicClient } from 'viem';
import { ChainError } from '../errors.js';
import { sameAddress } from '../hex.js';

const POOL_CREATED = parseAbiItem(
  'event FeedbackBonusPoolCreated(uint256 indexed poolId, uint256 indexed contentId, uint256 indexed roundId, address funder, address awarder, uint256 amount, uint256 feedbackClosesAt, uint256 frontendFeeBps, uint8 asset)',
);

/**
 * Blocks per eth_getLogs request. Providers bound the range of one request (several at 10,000 blocks on Base, some
 * lower); 5,000 blocks of Base is under three hours, so a rerun within the hour that an ask takes is one request.
 */
export const LOG_RANGE = 5_000n;

export interface PoolOnChain {
  poolId: bigint;
  roundId: bigint;
  amount: bigint;
  asset: number;
  transactionHash: Hex;
  blockNumber: bigint;
}

/** The bonus pools `funder` created for `contentId` at the pinned `escrow`, from `fromBlock` to the latest block. */
export async function bonusPoolsOnChain(
  client: PublicClient,
  escrow: Hex,
  funder: Hex,
  contentId: string,
  fromBlock: bigint,
  range: bigint = LOG_RANGE,
): Promise<PoolOnChain[]> {
  const failed = (error: unknown): never => {
    throw new ChainError(
      'chain_check_failed',
      `could not read the feedback bonus escrow's pools for question ${contentId} from the RPC (${(error as Error).message.split('\n')[0]}); nothing was signed for the bonus`,
      {
        hint: 'a failed read is no answer: check the RPC, then run the same command again (it pays the bonus only if the chain shows no pool from this wallet for this question)',
        details: { contentId, fromBlock: fromBlock.toString() },
      },
    );
  };
  let latest: bigint;
  try {
    latest = await client.getBlockNumber({ cacheTime: 0 });
  } catch (error) {
    return failed(error);
  }
  const pools: PoolOnChain[] = [];
  for (let from = fromBlock; from <= latest; from += range) {
    const to = from + range - 1n < latest ? from + range - 1n : latest;
    let logs: Awaited<ReturnType<typeof client.getLogs<typeof POOL_CREATED>>>;
    try {
      logs = await client.getLogs({
        address: escrow,
        event: POOL_CREATED,
        args: { contentId: BigInt(contentId) },
        fromBlock: from,
        toBlock: to,
      });
    } catch (error) {
      return failed(error);
    }
    for (const l of logs) {
      // What the node answered is checked again: the pinned escrow, this question, this wallet, not a removed log.
      if (l.removed || !sameAddress(l.address, escrow) || l.args.contentId !== BigInt(contentId) || !sameAddress(l.args.funder, funder))
        continue;
      pools.push({
        poolId: l.args.poolId!,
        roundId: l.args.roundId!,
        amount: l.args.amount!,
        asset: l.args.asset!,
        transactionHash: l.transactionHash!,
        blockNumber: l.blockNumber!,
      });
    }
  }
  return pools;
}
