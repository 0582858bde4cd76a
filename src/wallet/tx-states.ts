// Where each journaled transaction stands (issue 35: `status` and `history` say per transaction whether it is
// included or final). The journal says what loopsign saw: signed, mined at block B, reverted, dropped (void once checked
// at finality), or its nonce taken by its own cancel (a slot version). Whether a mined one is final is the chain's
// answer: B at or below the chain's finalized (or safe, `chains.<id>.finality`) block, read once for all of them, and
// the transaction's own receipt read again at that block (a journal's block is what loopsign saw, not a proof that
// the transaction is still there). A failed read is no verdict: "unknown", with why, never "final". Nothing is read
// when no transaction was seen mined (an open, void or cancelled one is the journal's word alone).
import type { Hex, PublicClient } from 'viem';
import type { ChainConfig } from '../chains/table.js';
import type { TxRecord } from '../store/records.js';

export const TX_STATES = ['open', 'included', 'final', 'reverted', 'void', 'taken', 'cancelled', 'unknown'] as const;
export type TxState = (typeof TX_STATES)[number];

/** One transaction as `status` and `history` show it. Block numbers are decimal strings (JSON-safe). */
export interface TxStateView {
  stage: string;
  hash: Hex;
  nonce: number;
  state: TxState;
  /** The block it is in (included, final, reverted), as the chain answers it when it was read, else the journal's. */
  blockNumber: string | null;
  /** included: how many blocks hold it, its own counted (the head − its block + 1); a final one needs none. */
  confirmations: number | null;
  /** included: final once the chain's finalized (or safe) block reaches this block. */
  finalAtBlock: string | null;
  /** unknown: why no verdict. */
  reason?: string;
}

/** What was read of the chain, once per call: its finality tag's block and its head, or why they could not be read. */
export type FinalityView =
  | { tag: 'finalized' | 'safe'; finalizedBlock: string; headBlock: string }
  | { tag: 'finalized' | 'safe'; unknown: string };

export interface TxStates {
  /** null: nothing was read (no transaction the journal saw mined). */
  finality: FinalityView | null;
  transactions: TxStateView[];
}

const RECEIPTS_AT_ONCE = 8;

/** A receipt read again for a transaction that would be final: its block, none (the node has no receipt), or a failure. */
export type ReceiptCheck = { blockNumber: bigint } | { none: true } | { failed: string };

/** A chain read's failure in one line (the RPC URL is hidden by the output layer). */
function why(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string; details?: unknown };
  const short = (e?.shortMessage ?? e?.message ?? String(error)).split('\n')[0]!;
  // viem's short message of a node's error answer ("An unknown RPC error occurred.") says nothing; its details do.
  const details = typeof e?.details === 'string' ? e.details.split('\n')[0]!.slice(0, 300) : '';
  return details && !short.includes(details) ? `${short.replace(/\.$/, '')}: ${details}` : short;
}

/** A view in one key order (state beside the hash), the journal's block unless the chain's is given. */
const view = (t: TxRecord, state: TxState, o: Partial<TxStateView> = {}): TxStateView => ({
  stage: t.stage,
  hash: t.hash,
  nonce: t.nonce,
  state,
  blockNumber: o.blockNumber ?? t.blockNumber ?? null,
  confirmations: o.confirmations ?? null,
  finalAtBlock: o.finalAtBlock ?? null,
  ...(o.reason === undefined ? {} : { reason: o.reason }),
});

/**
 * Labels journaled transactions from what was read (pure: no chain access). `chain` is the finalized (or safe) block
 * and the head, or why they are unknown; `receipts` holds the receipts read again for those the journal saw mined at
 * or below the finalized block.
 */
export function labelTransactions(
  txs: TxRecord[],
  chain: { finalized: bigint; head: bigint } | { unknown: string } | undefined,
  receipts: Map<string, ReceiptCheck> = new Map(),
): TxStateView[] {
  return txs.map((t): TxStateView => {
    const unknown = (reason: string) => view(t, 'unknown', { reason });
    // Its nonce was taken by a cancel loopsign signed at the same nonce (a version of its slot): its calls did not pay.
    // A fee bump (the same calls) is another matter: once mined it becomes the record's own bytes (adoptBump).
    if ((t.versions ?? []).some((v) => v.kind === 'cancel' && v.status !== 'signed') && t.status !== 'mined' && t.status !== 'reverted')
      return view(t, 'cancelled');
    if (t.status === 'signed') return view(t, 'open');
    if (t.status === 'reverted') return view(t, 'reverted');
    if (t.status === 'dropped') return view(t, t.voidChecked ? 'void' : 'taken');
    // Mined, as the journal saw it.
    if (chain === undefined) return unknown('the chain was not read');
    if ('unknown' in chain) return unknown(chain.unknown);
    if (t.blockNumber === undefined) return unknown('the journal recorded no block for it');
    let block = BigInt(t.blockNumber);
    if (block <= chain.finalized) {
      const check = receipts.get(t.hash.toLowerCase());
      if (check === undefined) return unknown('its receipt was not read again');
      if ('failed' in check) return unknown(`its receipt could not be read: ${check.failed}`);
      if ('none' in check)
        return unknown(
          `the RPC has no receipt for it, though loopsign saw it mined in block ${t.blockNumber} (a node behind, or another chain instance)`,
        );
      block = check.blockNumber;
    }
    if (block <= chain.finalized) return view(t, 'final', { blockNumber: block.toString() });
    return view(t, 'included', {
      blockNumber: block.toString(),
      confirmations: chain.head >= block ? Number(chain.head - block + 1n) : 0,
      finalAtBlock: block.toString(),
    });
  });
}

/**
 * Reads what labelling needs, once: the chain's finalized (or safe) block and its head, then the receipt of each
 * transaction the journal saw mined at or below that block. No read when the journal saw none mined. `connect` may
 * fail (no RPC, another chain): that is an unknown, as a failed read is.
 */
export async function transactionStates(
  connect: () => Promise<PublicClient>,
  chain: Pick<ChainConfig, 'finality'>,
  txs: TxRecord[],
): Promise<TxStates> {
  const tag = chain.finality ?? 'finalized';
  const mined = txs.filter((t) => t.status === 'mined');
  if (mined.length === 0) return { finality: null, transactions: labelTransactions(txs, undefined) };
  let client: PublicClient;
  let finalized: bigint;
  let head: bigint;
  try {
    client = await connect();
    const [block, latest] = await Promise.all([client.getBlock({ blockTag: tag }), client.getBlockNumber({ cacheTime: 0 })]);
    if (block.number === null) throw new Error(`the ${tag} block has no number`);
    finalized = block.number;
    head = latest;
  } catch (error) {
    const unknown = `could not read the chain's ${tag} block (${why(error)})`;
    return { finality: { tag, unknown }, transactions: labelTransactions(txs, { unknown }) };
  }
  const receipts = new Map<string, ReceiptCheck>();
  const check = async (t: TxRecord) => {
    try {
      const r = await client.getTransactionReceipt({ hash: t.hash });
      // A receipt for another hash is none (a forgery).
      receipts.set(
        t.hash.toLowerCase(),
        r.transactionHash.toLowerCase() === t.hash.toLowerCase() ? { blockNumber: r.blockNumber } : { none: true },
      );
    } catch (error) {
      const name = (error as Error)?.name;
      receipts.set(t.hash.toLowerCase(), name === 'TransactionReceiptNotFoundError' ? { none: true } : { failed: why(error) });
    }
  };
  // A few at a time: `history` over many operations must not flood a public RPC into refusing (then unknown).
  const due = mined.filter((t) => t.blockNumber !== undefined && BigInt(t.blockNumber) <= finalized);
  for (let i = 0; i < due.length; i += RECEIPTS_AT_ONCE) await Promise.all(due.slice(i, i + RECEIPTS_AT_ONCE).map(check));
  return {
    finality: { tag, finalizedBlock: finalized.toString(), headBlock: head.toString() },
    transactions: labelTransactions(txs, { finalized, head }, receipts),
  };
}

/** One line for people: "final (block 12)", "included (block 12, 1 confirmation), final when …", … */
export function describeTxState(t: TxStateView, finality?: FinalityView | null): string {
  switch (t.state) {
    case 'open':
      return 'open: signed, no receipt seen yet';
    case 'included': {
      const now = finality && 'finalizedBlock' in finality ? ` (now ${finality.finalizedBlock})` : '';
      return `included (block ${t.blockNumber}, ${t.confirmations} confirmation${t.confirmations === 1 ? '' : 's'}), final when the ${finality?.tag ?? 'finalized'} block reaches ${t.finalAtBlock}${now}`;
    }
    case 'final':
      return `final (block ${t.blockNumber})`;
    case 'reverted':
      return `reverted${t.blockNumber ? ` in block ${t.blockNumber}` : ''}: it paid nothing`;
    case 'void':
      return 'void: its nonce is used in the finalized chain by another transaction; it never paid';
    case 'taken':
      return 'taken: another transaction used its nonce; void once that is final';
    case 'cancelled':
      return "cancelled: loopsign's cancel at its nonce took it; it did not pay";
    case 'unknown':
      return `unknown: ${t.reason}`;
  }
}
