// State loss is detected, not absorbed (issue 35). Every transaction loopsign signs is recorded, with its nonce,
// before it leaves the process, so the wallet's transaction count on chain can never be past what the database
// explains: one more than the highest slot it recorded for the wallet on this chain instance (two more for a
// self-executed EIP-7702 batch, whose authorization takes the next nonce), or the mark recorded below. A count past
// that means the database does not know transactions of this wallet: it lost records (restored from a backup, its
// side files lost after a crash) or other software used the wallet. Either way a payment decided from this memory
// could be one already made. The database itself no longer loses committed records with its side files (every
// signature's record is checkpointed into loopsign.db, src/store/db.ts), and the payment the contracts accept twice,
// a bonus pool, is read from the chain before it is paid (src/ask/bonus-on-chain.ts); so this is said, loudly, once per
// new count (a warning naming the numbers and the flag), not refused: other software and a second state folder on one
// wallet are common and documented, and an agent over MCP cannot pass the flag. --accept-foreign-nonces records the
// count as confirmed without the warning. The one exception is the bonus pool itself (unconfirmedCount, below): a
// count only warned about explains nothing there, since one empty log read would then be the pool's only memory.
//
// The count is read from the chain before the database is read: a transaction another loopsign process of this
// database gets mined meanwhile was recorded before it was broadcast, so it is never taken for a foreign one.
// A database that knows nothing of the wallet on this instance (its first use there, or a new state folder) takes
// the count as its first mark: that cannot be told apart from a database lost whole (docs/store.md says what still
// holds then).
import type { Hex, PublicClient } from 'viem';
import { ChainError } from '../errors.js';
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

async function record(
  store: Store,
  m: WalletMark,
  count: bigint,
  reason: 'first_sight' | 'confirmed' | 'warned',
  now: number,
): Promise<void> {
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
 * Whether the wallet's count on chain (`count`, read before this call) is past what the database explains: then the
 * count becomes the wallet's mark, and the caller warns unless `accept`. Returns what it did.
 */
export async function checkWalletMark(
  store: Store,
  m: WalletMark,
  count: bigint,
  o: { accept: boolean; now: number; flag: string },
): Promise<'explained' | 'first_sight' | 'confirmed' | { unexplained: string }> {
  const explained = explainedCount(store, m);
  if (count <= explained.count) return 'explained';
  if (!explained.known) {
    await record(store, m, count, 'first_sight', o.now);
    return 'first_sight';
  }
  await record(store, m, count, o.accept ? 'confirmed' : 'warned', o.now);
  if (o.accept) return 'confirmed';
  return {
    unexplained: `wallet ${m.wallet} has sent ${count} transactions on chain ${m.chainId}, but loopsign's database explains only ${explained.count}: it lost records (restored from a backup) or other software (or another loopsign state folder) used this wallet. Check the wallet's latest transactions; ${o.flag} confirms them as yours without this warning`,
  };
}

/**
 * The check a paying run makes once, before its first signature (ask and rate alike): the count read when the run
 * opened, against the database's memory of the wallet; a warning when it is unexplained (or confirmed by the flag).
 * Memoised: the first call checks, every later one awaits that check.
 */
export function walletMemoryCheck(o: {
  store: Store;
  /** Read at the check, not before: the journal records its chain instance when it opens. */
  mark: () => WalletMark;
  count: Promise<bigint>;
  accept: boolean;
  now: () => number;
  warn: (message: string) => void;
}): () => Promise<void> {
  let checked: Promise<void> | undefined;
  return () =>
    (checked ??= (async () => {
      const done = await checkWalletMark(o.store, o.mark(), await o.count, {
        accept: o.accept,
        now: o.now(),
        flag: '--accept-foreign-nonces',
      });
      if (done === 'confirmed')
        o.warn(`the wallet's transactions that loopsign's database does not know are confirmed as yours (--accept-foreign-nonces)`);
      else if (typeof done === 'object') o.warn(done.unexplained);
    })());
}

/**
 * For the one payment the contracts accept twice, a feedback bonus pool: the wallet's count on chain (read just now)
 * against what the database recorded itself or the user confirmed. A count the database was only warned about does
 * not explain anything here: a database restored from before the pool was funded, and one log read that comes back
 * empty (a provider whose log index lags), would fund a second pool on a warning. undefined when explained.
 */
export function unconfirmedCount(store: Store, m: WalletMark, count: bigint): { explained: bigint } | undefined {
  const explained = store.read((db) => {
    const highest = highestSlot(db, m.chainId, m.wallet, m.genesis);
    const mark = db
      .prepare(
        "SELECT count FROM wallet_marks WHERE chain_id = ? AND genesis = ? AND wallet = ? AND reason IN ('first_sight', 'confirmed')",
      )
      .get(m.chainId, m.genesis, m.wallet) as { count: number } | undefined;
    const recorded = BigInt(highest?.next ?? 0);
    const marked = BigInt(mark?.count ?? 0);
    return recorded > marked ? recorded : marked;
  });
  return count > explained ? { explained } : undefined;
}

/** Records the user's confirmation (--accept-foreign-nonces) of the wallet's count as explained. */
export async function confirmCount(store: Store, m: WalletMark, count: bigint, now: number): Promise<void> {
  await record(store, m, count, 'confirmed', now);
}
