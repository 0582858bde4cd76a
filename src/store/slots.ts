// Nonce slots (issue 35): a nonce of a wallet on one chain instance is one slot, owned by one intent (an operation
// stage's calls). The store answers what the executor needs to allocate nonces locally and to fill gaps: the highest
// slot journaled, and the slots signed that the chain may not know. A journal of another chain instance (another block
// 0) or of the JSON era (none recorded) holds no slot here.
import type { Hex } from 'viem';
import type { Db } from './db.js';
import type { TxRecord } from './records.js';

export interface SlotRow {
  hash: Hex;
  raw: Hex;
  nonce: number;
  kind: TxRecord['kind'];
  status: TxRecord['status'];
  operation: string;
  stage: string;
}

const SLOT_COLUMNS = 't.hash, t.raw, t.nonce, t.kind, t.status, t.operation_id AS operation, t.stage';
/** Whether a journaled transaction (t) holds the nonce after its own: a self-executed EIP-7702 batch that is not void. */
export const HOLDS_NEXT = "t.kind = 'batch+authorization' AND NOT (t.status = 'dropped' AND t.void_checked = 1)";
const OF_WALLET = `FROM transactions t JOIN operations o ON o.id = t.operation_id
  WHERE t.chain_id = ? AND t.wallet = ? AND o.chain_genesis = ?`;

/**
 * The slot journaled with the highest nonce (an EIP-7702 self-executed batch holds n + 1 too, unless it is void: its
 * nonce used in the finalized chain by another transaction, so its authorization can never be processed), if any.
 */
export function highestSlot(db: Db, chainId: number, wallet: string, genesis: string): (SlotRow & { next: number }) | undefined {
  const row = db
    .prepare(
      `SELECT ${SLOT_COLUMNS}, t.nonce + CASE WHEN ${HOLDS_NEXT} THEN 2 ELSE 1 END AS next ${OF_WALLET}
       ORDER BY next DESC LIMIT 1`,
    )
    .get(chainId, wallet.toLowerCase(), genesis) as (SlotRow & { next: number }) | undefined;
  return row;
}

/** A cancel journaled for a slot: its signed bytes (re-broadcast as they are, never signed again) and its nonce. */
export interface SlotCancel {
  hash: Hex;
  raw: Hex;
  nonce: number;
}

/** Slots signed whose fate no receipt has told yet, lowest nonce first, with the cancels signed for each. */
export function openSlots(
  db: Db,
  chainId: number,
  wallet: string,
  genesis: string,
): (SlotRow & { cancels: SlotCancel[]; bumps: SlotCancel[] })[] {
  const rows = db
    .prepare(`SELECT t.id, ${SLOT_COLUMNS} ${OF_WALLET} AND t.status = 'signed' ORDER BY t.nonce`)
    .all(chainId, wallet.toLowerCase(), genesis) as (SlotRow & { id: number })[];
  const versions = db.prepare('SELECT hash, raw, nonce FROM slot_versions WHERE tx_id = ? AND kind = ? ORDER BY id');
  return rows.map(({ id, ...row }) => ({
    ...row,
    cancels: versions.all(id, 'cancel') as SlotCancel[],
    bumps: versions.all(id, 'bump') as SlotCancel[],
  }));
}
