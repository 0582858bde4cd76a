// Finality reads (issue 35). A transaction's calls move to a new nonce only once its nonce is used in the FINALIZED
// chain by none of its versions: a reorg above that block can then no longer mine the old bytes beside the new ones.
// Base and Base Sepolia answer the `finalized` tag (their L1 batch is final, about 20 minutes behind the head) and
// `safe` (the batch is on L1, about 2 minutes); a chain's `finality` setting picks one (src/chains/table.ts). The
// sandbox's anvil runs with one slot an epoch, so its finalized block is two behind the head.
import {
  keccak256,
  recoverTransactionAddress,
  serializeTransaction,
  type Hex,
  type PublicClient,
  type Transaction,
  type TransactionReceipt,
  type TransactionSerializable,
} from 'viem';
import { ChainError, asKnownError } from '../errors.js';
import { sameAddress, sameHex } from '../hex.js';
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
      hint:
        `run the same command again in about ${retryAfterSeconds} s: it signs these calls anew only if they did not pay` +
        // The sandbox's anvil makes a block only for a transaction unless it was started with --block-time.
        (chain.chainId === 31337
          ? '; the sandbox makes a block only for a transaction unless it was started with a block time, so the next block may wait for the next transaction'
          : ''),
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

/**
 * The transaction of `wallet` that used `nonce` in the chain up to block `upTo` (the finalized block, whose nonce count
 * is past it): found in the block where the wallet's count passed the nonce, by an exponential then binary search
 * of counts, then that block's transactions. undefined `hash` when no transaction of the wallet in that block has the
 * nonce (an EIP-7702 authorization of the wallet used it). A slot is void only when this taker is none of its
 * versions: "no receipt" alone is what a node hiding a mined transaction says (issue 35's model test paid a bonus
 * pool twice on that one lie). A failed read is the node's failure (thrown).
 */
export async function takerOf(
  client: PublicClient,
  wallet: Hex,
  nonce: number,
  upTo: bigint,
): Promise<{ hash: Hex | undefined; block: bigint }> {
  try {
    const count = (block: bigint) => client.getTransactionCount({ address: wallet, blockNumber: block });
    // hi: a block whose count is past the nonce; lo: one whose count is not (or -1, before block 0).
    let hi = upTo;
    let lo = -1n;
    for (let step = 1n; hi > 0n; step *= 2n) {
      const probe = hi - step < 0n ? 0n : hi - step;
      if ((await count(probe)) > nonce) hi = probe;
      else {
        lo = probe;
        break;
      }
      if (probe === 0n) break;
    }
    while (hi - lo > 1n) {
      const mid = (hi + lo) / 2n;
      if ((await count(mid)) > nonce) hi = mid;
      else lo = mid;
    }
    const block = await client.getBlock({ blockNumber: hi, includeTransactions: true });
    const taker = block.transactions.find(
      (t) => typeof t !== 'string' && t.from.toLowerCase() === wallet.toLowerCase() && t.nonce === nonce,
    );
    if (typeof taker !== 'object') return { hash: undefined, block: hi };
    // The node's word that this is the taker is believed only once the wallet's signature says so: a node hiding the
    // slot's own mined transaction could otherwise answer its block with a made-up one, or with the slot's own
    // transaction under another hash, and "void" would have its calls signed a second time.
    if (!(await signedBy(taker, wallet))) {
      // An OP-stack deposit (a bridge transaction sent on L1 by this address) uses the wallet's nonce too, and carries
      // no signature to check: its proof is on L1, which no RPC answer here shows. Said as what it is.
      const deposit = (taker as { typeHex?: string }).typeHex === '0x7e' || (taker.type as string) === 'deposit';
      throw new ChainError(
        'rpc_inconsistent',
        deposit
          ? `the RPC shows an L1 deposit ${taker.hash} from ${wallet} with nonce ${nonce} in block ${hi}: a deposit carries no signature loopsign can check, so whether the transaction loopsign journaled at that nonce paid cannot be told from this RPC; nothing was signed`
          : `the RPC shows a transaction ${taker.hash} of ${wallet} with nonce ${nonce} in block ${hi} whose fields do not hash to that hash or do not carry the wallet's signature: whether the transaction loopsign journaled at that nonce paid cannot be told; nothing was signed`,
        {
          hint: deposit
            ? "if you bridged from L1 with this address, that deposit took the nonce and loopsign's transaction can never be mined (check both in a block explorer): this operation paid nothing for it; otherwise run the same command again with another RPC (--rpc-url)"
            : "check the wallet's transactions in a block explorer, then run the same command again with another RPC (--rpc-url)",
          details: { nonce, block: hi.toString(), taker: taker.hash },
        },
      );
    }
    return { hash: taker.hash, block: hi };
  } catch (error) {
    throw asKnownError(error);
  }
}

/**
 * Whether a transaction as a node answered it is one `wallet` signed: its fields, serialized with its signature, hash
 * to its hash, and that signature recovers the wallet. A node can rename or make up a transaction, never sign one. A
 * transaction whose type cannot be serialized here (an OP-stack deposit, which carries no signature) is not proven.
 */
export async function signedBy(t: Transaction, wallet: Hex): Promise<boolean> {
  try {
    const fields = { ...t, data: t.input } as unknown as TransactionSerializable;
    // viem's formatter derives yParity from v where a node gives only v; a legacy transaction's v carries its chain id.
    const signature = t.type === 'legacy' ? { r: t.r, s: t.s, v: t.v } : { r: t.r, s: t.s, yParity: t.yParity };
    const serialized = serializeTransaction(fields, signature as never);
    if (!sameHex(keccak256(serialized), t.hash)) return false;
    return sameAddress(await recoverTransactionAddress({ serializedTransaction: serialized as never }), wallet);
  } catch {
    return false;
  }
}

/** A receipt of exactly this transaction: one a node gives for another hash is none (a forgery, or a replacement). */
export async function ownReceipt(client: PublicClient, hash: Hex): Promise<TransactionReceipt | undefined> {
  const receipt = await receiptOrNone(client, hash);
  return receipt && receipt.transactionHash.toLowerCase() === hash.toLowerCase() ? receipt : undefined;
}
