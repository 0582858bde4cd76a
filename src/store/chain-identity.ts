// Which chain an operation's journal belongs to. A chain id names a network, not one instance of it: a local chain
// restarted (the sandbox, anvil) has the same id and none of the transactions journaled on the old one. The hash of
// block 0 tells instances apart, so it is recorded when an operation first reaches the chain, and a rerun against
// another instance is told what happened instead of resuming transactions that cannot exist there.
import type { Hex, PublicClient } from 'viem';
import { BusyError, ChainError } from '../errors.js';
import type { Store } from './db.js';
import type { Operation } from './operation.js';
import type { Kind, TxRecord } from './records.js';
import { claim } from './claims.js';

export async function genesisHash(client: PublicClient): Promise<string> {
  const { hash } = await client.getBlock({ blockNumber: 0n });
  // A block 0 without a hash (viem reads a missing one as null) or with a malformed one is the node's bad answer, not
  // an instance to record or compare (it threw a TypeError: internal_error, exit 1).
  if (typeof hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(hash)) {
    throw new ChainError(
      'rpc_bad_answer',
      `the RPC's answer to getBlock (block 0) cannot be read: its hash is ${typeof hash === 'string' ? JSON.stringify(hash.slice(0, 80)) : 'missing'}`,
      {
        hint: 'the node is faulty or is not an Ethereum JSON-RPC endpoint: check --rpc-url, then run the same command again',
      },
    );
  }
  return hash.toLowerCase();
}

/**
 * Records the chain instance on an operation's first run; on a rerun, refuses (exit 4) when the RPC serves another
 * instance than the one the journal was written on. `setAsideFlag` names the option that sets such a record aside.
 */
export async function checkSameChain(client: PublicClient, op: Operation<Kind>, setAsideFlag: string): Promise<void> {
  const genesis = await genesisHash(client);
  if (op.chainGenesis === undefined) {
    await op.save({}, { chainGenesis: genesis });
    return;
  }
  if (op.chainGenesis === genesis) return;
  // Nothing signed on the instance recorded: the operation is of this one from now on. Kept as it was, the old block 0
  // stayed the operation's while it signed here, so its rerun was told its journal held another instance's
  // transactions, and bytes mined on the old instance were taken for this one's (stale_nonce on every rerun).
  if (op.txs().length === 0 && op.authorizations().length === 0) {
    await op.save({}, { chainGenesis: genesis });
    return;
  }
  // Its transactions are on this chain, in the blocks it saw them mined in: the journal is this instance's, whatever
  // block 0 was recorded (a node can lie about block 0 once; recorded then, the lie made every honest rerun refuse).
  if (await minedHere(client, op.txs())) {
    await op.save({}, { chainGenesis: genesis });
    return;
  }
  throw new ChainError(
    'journal_other_chain',
    `this operation's journal (${op.id}) holds transactions of another chain ${op.chainId} instance (its block 0 was ${op.chainGenesis}, the RPC's is ${genesis}): the chain was restarted or replaced, so nothing journaled is on it; nothing was sent`,
    {
      hint: `use a new clientRequestId (or question), or rerun with ${setAsideFlag} to set the old record aside and start over`,
      details: { recordedGenesis: op.chainGenesis, genesis },
    },
  );
}

/**
 * Whether the last (up to three) transactions the journal saw mined have receipts on this chain, successful and in the
 * blocks it recorded. A restarted or replaced instance has none of them. Nothing else is read: with none mined, the
 * journal cannot be placed, and the block 0 recorded decides.
 */
async function minedHere(client: PublicClient, txs: readonly Pick<TxRecord, 'hash' | 'status' | 'blockNumber'>[]): Promise<boolean> {
  const mined = txs.filter((t) => t.status === 'mined' && t.blockNumber !== undefined).slice(-3);
  if (mined.length === 0) return false;
  for (const t of mined) {
    const receipt = await client.getTransactionReceipt({ hash: t.hash }).catch((error: unknown) => {
      // Not there is an answer; a node that failed to answer is its failure (exit 4), never "not this chain".
      if ((error as Error).name === 'TransactionReceiptNotFoundError') return undefined;
      throw error;
    });
    if (receipt?.status !== 'success' || receipt.blockNumber.toString() !== t.blockNumber) return false;
  }
  return true;
}

/**
 * Sets aside the record of operation `id` when it belongs to another chain instance than the RPC's: renamed (kept,
 * with what it signed still counted by the policy's windows), so the same operation starts afresh. Returns the new
 * name, or undefined when there was nothing to set aside.
 */
export async function setAsideIfStale(
  store: Store,
  client: PublicClient,
  id: string,
  chain: { chainId: number; role: 'production' | 'staging' | 'sandbox' },
): Promise<string | undefined> {
  const genesis = await genesisHash(client);
  const held = await claim(store, `operation:${id}`, {
    busy: () =>
      new BusyError('journal_locked', `another loopsign process is working on this operation (${id}); this run sent nothing`, {
        hint: 'wait for it to finish, then run the same command again: it resumes from the journal and never pays twice',
      }),
  });
  try {
    const op = store.read(
      (db) =>
        db.prepare('SELECT chain_genesis AS genesis, wallet FROM operations WHERE id = ?').get(id) as
          | { genesis: string | null; wallet: string }
          | undefined,
    );
    if (!op || op.genesis === null || op.genesis === genesis) return undefined;
    // A live chain's block 0 never changes: another one is a wrong or lying RPC, never a restarted chain whose journal
    // may be set aside (issue 35). Only a local chain (the sandbox, anvil) is ever restarted.
    if (chain.role !== 'sandbox')
      throw new ChainError(
        'journal_other_chain',
        `the RPC's block 0 (${genesis}) is not chain ${chain.chainId}'s as this operation's journal (${id}) recorded it (${op.genesis}): a live chain's block 0 never changes, so the RPC is wrong or lying; nothing was set aside or sent`,
        {
          hint: 'point --rpc-url at a node of this chain you trust, then run the same command again without --set-aside-stale',
          details: { recordedGenesis: op.genesis, genesis },
        },
      );
    // Never a journal whose mined transactions are on this chain (checkSameChain takes it as this instance's): set
    // aside, its operation would start afresh beside what it paid here.
    const mined = store.read(
      (db) =>
        db
          .prepare(
            "SELECT hash, status, block_number AS blockNumber, nonce FROM transactions WHERE operation_id = ? AND status = 'mined' ORDER BY seq",
          )
          .all(id) as { hash: Hex; status: 'mined'; blockNumber: string | null; nonce: number }[],
    );
    if (
      await minedHere(
        client,
        mined.map((t) => ({ ...t, blockNumber: t.blockNumber ?? undefined })),
      )
    )
      return undefined;
    // "No receipt" is no proof of another instance: a reading backend behind the one that gave the receipts answers it
    // too (and block 0 recorded from a lie differs from the honest one). A restarted chain has not used the wallet's
    // nonces the journal saw mined; when this node's latest count is past the first of them, the record is not set
    // aside (that would start the operation afresh beside what it may have paid here).
    if (mined.length > 0) {
      const first = Math.min(...mined.map((t) => t.nonce));
      const count = await client.getTransactionCount({ address: op.wallet as Hex, blockTag: 'latest' });
      if (count > first) {
        throw new ChainError(
          'journal_not_set_aside',
          `this operation's journal (${id}) names another block 0 than the RPC's, but the RPC answers no receipt for the transactions it saw mined while the wallet's nonce ${first}, the first of them, is used here: it may be this chain behind a lagging node, so it is not set aside; nothing was sent`,
          {
            hint: 'run the same command again without --set-aside-stale once the node has caught up; if the chain really was restarted (and the wallet used since), use a new clientRequestId',
            details: { recordedGenesis: op.genesis, genesis, firstMinedNonce: first, latestCount: count },
          },
        );
      }
    }
    return await store.write((db) => {
      const row = db.prepare('SELECT chain_genesis FROM operations WHERE id = ?').get(id) as { chain_genesis: string | null } | undefined;
      if (!row || row.chain_genesis === null || row.chain_genesis === genesis) return undefined;
      const aside = `${id}~other-chain-${Date.now()}`;
      db.prepare('UPDATE operations SET id = ? WHERE id = ?').run(aside, id);
      return aside;
    });
  } finally {
    await held.release();
  }
}
