// State loss is detected, not absorbed (issue 35). Every transaction loopsign signs is recorded, with its nonce,
// before it leaves the process, so the wallet's transaction count on chain can never be past what the database
// explains: one more than the highest slot it recorded for the wallet on this chain instance (two more for a
// self-executed EIP-7702 batch, whose authorization takes the next nonce), or the mark recorded below. A count past
// that means the database does not know transactions of this wallet: it lost records (restored from a backup, its
// side files lost after a crash) or other software used the wallet. Either way a payment decided from this memory
// could be one already made, so nothing is signed until the user confirms once (--accept-foreign-nonces), which
// records the count as the wallet's new mark.
//
// The count is read from the chain before the database is read: a transaction another loopsign process of this
// database gets mined meanwhile was recorded before it was broadcast, so it is never taken for a foreign one.
// A database that knows nothing of the wallet on this instance (its first use there, or a new state folder) takes
// the count as its first mark: that cannot be told apart from a database lost whole (docs/store.md says what still
// holds then).
import type { Hex, PublicClient } from 'viem';
import { ChainError, RefusedError } from '../errors.js';
import type { Store } from './db.js';
import { highestSlot } from './slots.js';

export interface WalletMark {
  chainId: number;
  /** The chain instance (block 0's hash). */
  genesis: string;
  /** Lowercase. */
  wallet: Hex;
}

/** The wallet's transaction count at the latest block (read first; see above). A failed read is exit 4. */
export async function latestCount(client: PublicClient, wallet: Hex): Promise<bigint> {
  try {
    return BigInt(await client.getTransactionCount({ address: wallet, blockTag: 'latest' }));
  } catch (error) {
    throw new ChainError(
      'rpc_failed',
      `could not read the wallet's transaction count from the RPC (${(error as Error).message.split('\n')[0]}); nothing was signed`,
      { hint: 'check the RPC, then run the same command again' },
    );
  }
}

/** What the database explains of the wallet's count: recorded nonces (and 7702 authorizations) and the mark. */
export function explainedCount(store: Store, m: WalletMark): { count: bigint; known: boolean } {
  return store.read((db) => {
    // The slot the nonce allocator starts past (src/store/slots.ts): the same memory, read the same way.
    const highest = highestSlot(db, m.chainId, m.wallet, m.genesis);
    const mark = db
      .prepare('SELECT count FROM wallet_marks WHERE chain_id = ? AND genesis = ? AND wallet = ?')
      .get(m.chainId, m.genesis, m.wallet) as { count: number } | undefined;
    const recorded = BigInt(highest?.next ?? 0);
    const marked = BigInt(mark?.count ?? 0);
    return { count: recorded > marked ? recorded : marked, known: highest !== undefined || mark !== undefined };
  });
}

async function record(store: Store, m: WalletMark, count: bigint, reason: 'first_sight' | 'confirmed', now: number): Promise<void> {
  await store.write((db) =>
    db
      .prepare(
        `INSERT INTO wallet_marks (chain_id, genesis, wallet, count, reason, at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (chain_id, genesis, wallet) DO UPDATE SET count = max(count, excluded.count), reason = excluded.reason, at = excluded.at`,
      )
      .run(m.chainId, m.genesis, m.wallet, Number(count), reason, now),
  );
}

/**
 * Refuses (exit 5, wallet_nonces_unexplained) to sign for a wallet whose count on chain (`count`, read before this
 * call) is past what the database explains, unless `accept`: then the count becomes the wallet's mark. Returns what it
 * did, for the caller's progress line.
 */
export async function checkWalletMark(
  store: Store,
  m: WalletMark,
  count: bigint,
  o: { accept: boolean; now: number; flag: string },
): Promise<'explained' | 'first_sight' | 'confirmed'> {
  const explained = explainedCount(store, m);
  if (count <= explained.count) return 'explained';
  if (!explained.known) {
    await record(store, m, count, 'first_sight', o.now);
    return 'first_sight';
  }
  if (!o.accept)
    throw new RefusedError(
      'wallet_nonces_unexplained',
      `wallet ${m.wallet} has sent ${count} transactions on chain ${m.chainId}, but loopsign's database explains only ${explained.count}: it lost records (restored from a backup, or its -wal file lost after a crash) or other software used this wallet; a payment decided from it could be one already made, so nothing was signed`,
      {
        hint: `check the wallet's latest transactions (an explorer, or the other software you use with it); if they are not loopsign's payments missing from its database, run the same command again with ${o.flag} (once: it records the new count)`,
        details: { chainId: m.chainId, wallet: m.wallet, onChain: count.toString(), explained: explained.count.toString() },
      },
    );
  await record(store, m, count, 'confirmed', o.now);
  return 'confirmed';
}
