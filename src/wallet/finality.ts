// Finality reads (issue 35). A transaction's calls move to a new nonce only once its nonce is used in the FINALIZED
// chain by none of its versions: a reorg above that block can then no longer mine the old bytes beside the new ones.
// Base and Base Sepolia answer the `finalized` tag (their L1 batch is final, about 20 minutes behind the head) and
// `safe` (the batch is on L1, about 2 minutes); a chain's `finality` setting picks one (src/chains/table.ts). The
// sandbox's anvil runs with one slot an epoch, so its finalized block is two behind the head.
import type { Hex, PublicClient, TransactionReceipt } from 'viem';
import { ChainError, asKnownError } from '../errors.js';
import type { ChainConfig } from '../chains/table.js';
import type { TxRecord } from '../store/records.js';

/** A receipt, or undefined when the node says there is none; a read that fails is the node's failure (thrown). */
export async function receiptOrNone(client: PublicClient, hash: Hex): Promise<TransactionReceipt | undefined> {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if ((error as Error)?.name === 'TransactionReceiptNotFoundError') return undefined;
    throw asKnownError(error);
  }
}

/** The wallet's nonce count at the chain's finalized (or safe) block, and that block's number. */
export async function finalizedNonceCount(
  client: PublicClient,
  chain: ChainConfig,
  address: Hex,
): Promise<{ count: number; block: bigint }> {
  try {
    const head = await client.getBlock({ blockTag: chain.finality ?? 'finalized' });
    if (head.number === null) throw new Error('the finalized block has no number');
    const count = await client.getTransactionCount({ address, blockNumber: head.number });
    return { count, block: head.number };
  } catch (error) {
    throw asKnownError(error);
  }
}

/**
 * Whether a transaction paid is not final yet: nothing is signed, and the run stops (exit 4) saying at which block it
 * will be, and about when (agents read details.retryAfterSeconds).
 */
export async function notFinal(
  client: PublicClient,
  chain: ChainConfig,
  tx: Pick<TxRecord, 'hash' | 'nonce'>,
  finalized: bigint,
): Promise<ChainError> {
  const latest = await client.getBlockNumber({ cacheTime: 0 }).catch((error: unknown) => {
    throw asKnownError(error);
  });
  const blocks = latest > finalized ? latest - finalized : 1n;
  const retryAfterSeconds = Number(blocks) * (chain.blockSeconds ?? 2) + 5;
  return new ChainError(
    'nonce_not_final',
    `nonce ${tx.nonce} is used by a transaction that is not ${tx.hash}; whether this step paid becomes final at block ${latest} (the chain's ${chain.finality ?? 'finalized'} block is ${finalized}); nothing else was signed`,
    {
      hint: `run the same command again in about ${retryAfterSeconds} s: it signs these calls anew only if they did not pay`,
      details: {
        transaction: tx.hash,
        nonce: tx.nonce,
        finalAtBlock: latest.toString(),
        finalizedBlock: finalized.toString(),
        retryAfterSeconds,
      },
    },
  );
}
