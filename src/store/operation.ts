// One operation (an ask, a vote, an upload, a review request …) and what it signed, in the database. A run works on
// an operation only while it holds the operation's claim (src/store/claims.ts), so a second loopsign process on the
// same operation is told so at once. Every signed transaction and authorization is recorded (raw bytes and what it
// can pay) in the same write transaction that admitted it, before it leaves the process; an interrupted command
// resumes without sending anything twice. Nothing secret is kept but what the user needs to prove a vote.
import { createHash } from 'node:crypto';
import type { Hex } from 'viem';
import { BusyError, ChainError, RefusedError } from '../errors.js';
import type { Db, Store } from './db.js';
import { claim, type Claim } from './claims.js';
import { crashHook } from './crash-hook.js';
import {
  corrupt,
  isKind,
  parseAuthorizationRow,
  parseData,
  parseTxRow,
  parseVersionRow,
  type AuthorizationRecord,
  type DataOf,
  type Kind,
  type SlotVersion,
  type TxRecord,
} from './records.js';
import type { SpendEffect } from '../wallet/spend-effects.js';
import { jsonText } from '../output.js';
import { recomputeUsage } from './usage.js';
import { HOLDS_NEXT } from './slots.js';

/** The id of an operation: its kind and a digest of what identifies it (the ids journal files had, so imports keep them). */
export function operationId(kind: string, parts: (string | number)[]): string {
  return `${kind}-${createHash('sha256').update(parts.join(':').toLowerCase()).digest('hex').slice(0, 32)}`;
}

// Beyond a signed 64-bit integer no real payment goes: such an amount is refused before anything is recorded.
const MAX_AMOUNT = (1n << 63n) - 1n;

interface OperationRow {
  id: string;
  kind: string;
  chain_id: number;
  wallet: string;
  step: string;
  operation_key: string | null;
  chain_genesis: string | null;
  data: string;
  created_at: number;
  updated_at: number;
}

/** An operation as recorded, read without claiming it (status, history, lookups). */
export interface OperationSnapshot<K extends Kind = Kind> {
  id: string;
  kind: K;
  chainId: number;
  wallet: string;
  step: string;
  operationKey: string | undefined;
  chainGenesis: string | undefined;
  data: DataOf<K>;
  createdAt: number;
  updatedAt: number;
  txs: TxRecord[];
  authorizations: AuthorizationRecord[];
}

function snapshotOf<K extends Kind>(db: Db, row: OperationRow, kind: K): OperationSnapshot<K> {
  if (row.kind !== kind) throw corrupt(row.id, `it is a ${row.kind} operation, not ${kind}`);
  const txs = db
    .prepare(
      'SELECT id, stage, calls, hash, raw, nonce, kind, status, block_number, block_hash, signed_at, void_checked FROM transactions WHERE operation_id = ? ORDER BY seq',
    )
    .all(row.id) as { id: number }[];
  const versions = db
    .prepare(
      'SELECT v.tx_id, v.kind, v.hash, v.raw, v.nonce, v.status, v.block_number FROM slot_versions v JOIN transactions t ON t.id = v.tx_id WHERE t.operation_id = ? ORDER BY v.id',
    )
    .all(row.id) as { tx_id: number }[];
  const auths = db
    .prepare('SELECT id, stage, message, signature, signed_at, dead FROM authorizations WHERE operation_id = ? ORDER BY id')
    .all(row.id);
  return {
    id: row.id,
    kind,
    chainId: row.chain_id,
    wallet: row.wallet,
    step: row.step,
    operationKey: row.operation_key ?? undefined,
    chainGenesis: row.chain_genesis ?? undefined,
    data: parseData(kind, row.id, row.data),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    txs: txs.map((t) => {
      const tx = parseTxRow(row.id, t);
      const own = versions.filter((v) => v.tx_id === t.id).map((v) => parseVersionRow(row.id, v));
      return own.length ? { ...tx, versions: own } : tx;
    }),
    authorizations: auths.map((a) => parseAuthorizationRow(row.id, a)),
  };
}

const rowOf = (db: Db, id: string) => db.prepare('SELECT * FROM operations WHERE id = ?').get(id) as OperationRow | undefined;

/** An operation of this kind, if recorded (no claim: what a reader sees). */
export function readOperation<K extends Kind>(store: Store, kind: K, id: string): OperationSnapshot<K> | undefined {
  return store.read((db) => {
    const row = rowOf(db, id);
    return row ? snapshotOf(db, row, kind) : undefined;
  });
}

/**
 * The ask operation that recorded this operationKey, if any: the current one before any record set aside (`~` in its
 * id: another chain instance's, whose ask started afresh under the same key).
 */
export function findByOperationKey(store: Store, operationKey: string): OperationSnapshot<'ask'> | undefined {
  return store.read((db) => {
    const row = db
      .prepare("SELECT * FROM operations WHERE operation_key = ? AND kind = 'ask' ORDER BY instr(id, '~') > 0, created_at LIMIT 1")
      .get(operationKey.toLowerCase()) as OperationRow | undefined;
    return row ? snapshotOf(db, row, 'ask') : undefined;
  });
}

/** Every operation of a kind on a chain for a wallet (rate status lists the votes on a question this way). */
export function operationsOf<K extends Kind>(store: Store, kind: K, chainId: number, wallet: string): OperationSnapshot<K>[] {
  return store.read((db) =>
    (
      db
        .prepare('SELECT * FROM operations WHERE kind = ? AND chain_id = ? AND wallet = ? ORDER BY created_at')
        .all(kind, chainId, wallet.toLowerCase()) as OperationRow[]
    ).map((row) => snapshotOf(db, row, kind)),
  );
}

export class Operation<K extends Kind> {
  private snapshot: OperationSnapshot<K>;

  private constructor(
    readonly store: Store,
    snapshot: OperationSnapshot<K>,
    private readonly held: Claim,
  ) {
    this.snapshot = snapshot;
  }

  /** Opens (creating if needed) and claims an operation; a second run on it is refused at once (journal_locked). */
  static async open<K extends Kind>(
    store: Store,
    kind: K,
    id: string,
    init: { chainId: number; wallet: string; data: DataOf<K> },
  ): Promise<Operation<K>> {
    if (!isKind(kind)) throw new Error(`unknown operation kind ${kind}`);
    const held = await claim(store, `operation:${id}`, {
      busy: () =>
        new BusyError('journal_locked', `another loopsign process is working on this operation (${id}); this run sent nothing`, {
          hint: 'wait for it to finish, then run the same command again: it resumes from the journal and never pays twice',
        }),
    });
    try {
      const snapshot = await store.write((db) => {
        const now = Date.now();
        db.prepare(
          "INSERT INTO operations (id, kind, chain_id, wallet, step, data, created_at, updated_at) VALUES (?, ?, ?, ?, 'created', ?, ?, ?) ON CONFLICT(id) DO NOTHING",
        ).run(id, kind, init.chainId, init.wallet.toLowerCase(), jsonText(init.data), now, now);
        return snapshotOf(db, rowOf(db, id)!, kind);
      });
      return new Operation(store, snapshot, held);
    } catch (error) {
      await held.release();
      throw error;
    }
  }

  get id(): string {
    return this.snapshot.id;
  }
  get kind(): K {
    return this.snapshot.kind;
  }
  get chainId(): number {
    return this.snapshot.chainId;
  }
  get wallet(): string {
    return this.snapshot.wallet;
  }
  get step(): string {
    return this.snapshot.step;
  }
  get data(): DataOf<K> {
    return this.snapshot.data;
  }
  get chainGenesis(): string | undefined {
    return this.snapshot.chainGenesis;
  }
  /** Whether nothing was done yet (a fresh operation, not a rerun). */
  get fresh(): boolean {
    return this.snapshot.step === 'created' && this.snapshot.txs.length === 0 && this.snapshot.authorizations.length === 0;
  }

  txs(): readonly TxRecord[] {
    return this.snapshot.txs;
  }

  txsFor(stage: string): TxRecord[] {
    return this.snapshot.txs.filter((t) => t.stage === stage);
  }

  authorizations(): readonly AuthorizationRecord[] {
    return this.snapshot.authorizations;
  }

  /** Merges fields into the operation's data (undefined removes a field). */
  async save(patch: Partial<DataOf<K>> = {}, columns: { operationKey?: string; chainGenesis?: string } = {}): Promise<void> {
    // Not checkpointed on its own (docs/store.md): a step or a field lost with the -wal is found again by the rerun
    // (the plan fetched and checked anew, the chain read); what was signed and mined is, in the writes that record it.
    await this.write((db) => {
      const data = { ...this.snapshot.data, ...patch };
      for (const [k, v] of Object.entries(patch)) if (v === undefined) delete (data as Record<string, unknown>)[k];
      db.prepare(
        'UPDATE operations SET data = ?, updated_at = ?, operation_key = COALESCE(?, operation_key), chain_genesis = COALESCE(?, chain_genesis) WHERE id = ?',
      ).run(jsonText(data), Date.now(), columns.operationKey?.toLowerCase() ?? null, columns.chainGenesis ?? null, this.id);
    }, false);
  }

  /** Records a step (and fields) the operation reached. */
  async setStep(step: string, patch: Partial<DataOf<K>> = {}, columns: { operationKey?: string } = {}): Promise<void> {
    await this.write((db) => {
      db.prepare('UPDATE operations SET step = ? WHERE id = ?').run(step, this.id);
      return this.save(patch, columns);
    }, false);
    crashHook(step);
  }

  /**
   * Records a signed transaction and what it can pay, inside the write transaction that admitted it (`db`). Visible
   * to this object once that transaction commits (`refresh`).
   */
  insertTx(db: Db, tx: Omit<TxRecord, 'signedAt' | 'status'>, effects: SpendEffect[], at: number): void {
    this.refuseTakenSlot(db, tx);
    const seq = (
      db.prepare('SELECT COALESCE(MAX(seq), -1) + 1 AS seq FROM transactions WHERE operation_id = ?').get(this.id) as { seq: number }
    ).seq;
    const info = db
      .prepare(
        "INSERT INTO transactions (hash, operation_id, seq, stage, calls, raw, nonce, kind, status, chain_id, wallet, signed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'signed', ?, ?, ?)",
      )
      .run(
        tx.hash.toLowerCase(),
        this.id,
        seq,
        tx.stage,
        JSON.stringify(tx.calls),
        tx.raw,
        tx.nonce,
        tx.kind,
        this.chainId,
        this.wallet,
        at,
      );
    this.insertEffects(db, effects, tx.stage, at, { tx: Number(info.lastInsertRowid) });
    recomputeUsage(db, this.id);
  }

  /**
   * A nonce of this wallet on this chain instance is one slot, owned by one intent (issue 35): the executor allocates
   * past every slot journaled (src/wallet/nonces.ts), so a second record at a journaled nonce means something gave out
   * a nonce twice. Refused in the admitting write transaction: nothing is recorded or sent. An EIP-7702 self-executed
   * batch holds its nonce n and n + 1 (its authorization's). A journal of another instance (another block 0) or of the
   * JSON era (none recorded) holds no slot here.
   */
  private refuseTakenSlot(db: Db, tx: Pick<TxRecord, 'hash' | 'nonce' | 'kind'>): void {
    if (this.chainGenesis === undefined) return;
    const taken = db
      .prepare(
        `SELECT t.hash, t.operation_id AS operation FROM transactions t JOIN operations o ON o.id = t.operation_id
         WHERE t.chain_id = ? AND t.wallet = ? AND o.chain_genesis = ?
           AND (t.nonce = ? OR (${HOLDS_NEXT} AND t.nonce + 1 = ?) OR (? = 'batch+authorization' AND t.nonce = ? + 1))
         LIMIT 1`,
      )
      .get(this.chainId, this.wallet, this.chainGenesis, tx.nonce, tx.nonce, tx.kind, tx.nonce) as
      | { hash: Hex; operation: string }
      | undefined;
    if (taken)
      throw new ChainError(
        'stale_nonce',
        `nonce ${tx.nonce} of ${this.wallet} is already the slot of transaction ${taken.hash} (journaled by ${taken.operation}); one nonce is never signed for two transactions: nothing was recorded or sent`,
        {
          hint: 'run the same command again (a fresh nonce is taken past every journaled one); if it repeats, the RPC is inconsistent: use another (--rpc-url)',
        },
      );
  }

  /**
   * Records a cancel of a transaction's slot (a zero-value self-send with no data at its nonce), inside the write
   * transaction that signed it, before it leaves the process. The transaction is this wallet's on this chain, of any
   * operation: the executor cancels a slot that was signed and never reached the node (its run died before the
   * broadcast) so that the wallet's next transaction is not stuck behind the gap.
   */
  static insertCancel(
    db: Db,
    txHash: Hex,
    walletAddress: string,
    chainId: number,
    v: { hash: Hex; raw: Hex; nonce: number },
    at: number,
  ): void {
    const row = db
      .prepare("SELECT id, nonce, kind FROM transactions WHERE chain_id = ? AND wallet = ? AND hash = ? AND status = 'signed'")
      .get(chainId, walletAddress.toLowerCase(), txHash.toLowerCase()) as { id: number; nonce: number; kind: string } | undefined;
    // An EIP-7702 self-executed batch's slot holds its nonce and its authorization's (the next): a cancel fills either.
    const held = row && (v.nonce === row.nonce || (row.kind === 'batch+authorization' && v.nonce === row.nonce + 1));
    if (!held) throw new Error(`no open slot ${txHash} at nonce ${v.nonce} to cancel`);
    db.prepare(
      "INSERT INTO slot_versions (tx_id, kind, hash, raw, nonce, status, signed_at) VALUES (?, 'cancel', ?, ?, ?, 'signed', ?)",
    ).run(row.id, v.hash.toLowerCase(), v.raw, v.nonce, at);
  }

  /**
   * Records a fee bump of an open slot of this operation (the same calls at the same nonce, higher fees) before it is
   * broadcast: whichever version the chain mines, the journal knows its bytes. Checkpointed like every signature.
   */
  async recordBump(txHash: Hex, v: { hash: Hex; raw: Hex; nonce: number }): Promise<void> {
    await this.write((db) => {
      const row = db
        .prepare("SELECT id, nonce FROM transactions WHERE operation_id = ? AND hash = ? AND status = 'signed'")
        .get(this.id, txHash.toLowerCase()) as { id: number; nonce: number } | undefined;
      if (!row || row.nonce !== v.nonce) throw new Error(`no open slot ${txHash} at nonce ${v.nonce} to bump`);
      db.prepare(
        "INSERT INTO slot_versions (tx_id, kind, hash, raw, nonce, status, signed_at) VALUES (?, 'bump', ?, ?, ?, 'signed', ?)",
      ).run(row.id, v.hash.toLowerCase(), v.raw, v.nonce, Date.now());
    });
    crashHook('bump:signed');
  }

  /**
   * A bump of this record was mined: its bytes become the record's (hash and raw), and the bytes it replaced a version
   * of the slot, so that every later read of the record (receipts, proofs, the service's confirmation) names the
   * transaction the chain holds. The effects stay the record's: the calls are the same.
   */
  async adoptBump(txHash: Hex, bumpHash: Hex): Promise<void> {
    await this.write((db) => {
      const tx = db
        .prepare('SELECT id, hash, raw FROM transactions WHERE operation_id = ? AND hash = ?')
        .get(this.id, txHash.toLowerCase()) as { id: number; hash: string; raw: string } | undefined;
      const v = db
        .prepare("SELECT id, hash, raw FROM slot_versions WHERE hash = ? AND kind = 'bump' AND tx_id = ?")
        .get(bumpHash.toLowerCase(), tx?.id ?? -1) as { id: number; hash: string; raw: string } | undefined;
      if (!tx || !v) throw new Error(`no bump ${bumpHash} of transaction ${txHash} to adopt`);
      db.prepare('UPDATE slot_versions SET hash = ? WHERE id = ?').run(`swap:${v.id}`, v.id);
      db.prepare('UPDATE transactions SET hash = ?, raw = ? WHERE id = ?').run(v.hash, v.raw, tx.id);
      db.prepare("UPDATE slot_versions SET hash = ?, raw = ?, status = 'signed', block_number = NULL WHERE id = ?").run(
        tx.hash,
        tx.raw,
        v.id,
      );
    });
  }

  /** A version's status as the chain showed it. */
  async updateVersion(hash: Hex, status: SlotVersion['status'], blockNumber: string): Promise<void> {
    await this.write((db) => {
      db.prepare('UPDATE slot_versions SET status = ?, block_number = ? WHERE hash = ?').run(status, blockNumber, hash.toLowerCase());
    });
  }

  /**
   * A transaction found void at finality: its nonce is used in the finalized chain by none of its versions. It can never
   * be mined: it stops counting, and its calls may be signed anew at a new nonce (the only way calls reach one).
   * `reorged`: the executor proved that a record seen mined was reorganised away (the chain no longer has the block it
   * was seen in, and the finalized chain shows another transaction at its nonce); without it a mined record is kept.
   */
  async markVoid(hash: Hex, reorged = false): Promise<void> {
    await this.write((db) => {
      const row = db.prepare('SELECT id, status FROM transactions WHERE operation_id = ? AND hash = ?').get(this.id, hash.toLowerCase()) as
        | { id: number; status: string }
        | undefined;
      if (!row) return;
      // A record seen mined is never dropped (issue 35): the executor refuses first (journal_contradicted).
      if (row.status === 'mined' && !reorged) throw new Error(`transaction ${hash} was seen mined: it is never marked void`);
      db.prepare("UPDATE transactions SET status = 'dropped', void_checked = 1 WHERE id = ?").run(row.id);
      db.prepare('UPDATE effects SET live = 0 WHERE tx_id = ?').run(row.id);
      recomputeUsage(db, this.id);
    });
    const now = this.snapshot.txs.find((t) => t.hash.toLowerCase() === hash.toLowerCase());
    if (now) crashHook(`${now.stage}:dropped:${now.calls.join(',')}`);
  }

  /** Records a signed EIP-3009 authorization (as insertTx: inside the admitting transaction). Returns its id. */
  insertAuthorization(
    db: Db,
    stage: string,
    message: AuthorizationRecord['message'],
    signature: Hex,
    effects: SpendEffect[],
    at: number,
  ): number {
    const info = db
      .prepare(
        'INSERT INTO authorizations (operation_id, stage, message, signature, signed_at, chain_id, wallet) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(this.id, stage, JSON.stringify(message), signature, at, this.chainId, this.wallet);
    const id = Number(info.lastInsertRowid);
    this.insertEffects(db, effects, stage, at, { authorization: id });
    recomputeUsage(db, this.id);
    return id;
  }

  private insertEffects(db: Db, effects: SpendEffect[], stage: string, at: number, parent: { tx?: number; authorization?: number }): void {
    const insert = db.prepare(
      'INSERT INTO effects (operation_id, tx_id, authorization_id, stage, chain_id, wallet, asset, kind, spender, amount, at, live) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)',
    );
    for (const e of effects) {
      if (e.amount > MAX_AMOUNT || e.amount < 0n)
        throw new RefusedError(
          'amount_out_of_range',
          `refused: an amount of ${e.amount} atomic units cannot be a real payment; nothing was signed`,
        );
      insert.run(
        this.id,
        parent.tx ?? null,
        parent.authorization ?? null,
        stage,
        this.chainId,
        this.wallet,
        e.asset,
        e.kind,
        e.spender.toLowerCase(),
        e.amount,
        at,
      );
    }
  }

  /** A transaction's status (and block) as the chain showed it; a transaction that is not live pays nothing more. */
  async updateTx(hash: Hex, patch: { status?: TxRecord['status']; blockNumber?: string; blockHash?: Hex; stage?: string }): Promise<void> {
    const tx = this.snapshot.txs.find((t) => t.hash.toLowerCase() === hash.toLowerCase());
    if (!tx) return;
    await this.write((db) => {
      const { id, status } = db
        .prepare('SELECT id, status FROM transactions WHERE operation_id = ? AND hash = ?')
        .get(this.id, tx.hash.toLowerCase()) as { id: number; status: TxRecord['status'] };
      // A dropped transaction never comes back: its nonce was taken, or its very bytes are another operation's now.
      if (patch.status && status !== 'dropped') {
        db.prepare('UPDATE transactions SET status = ? WHERE id = ?').run(patch.status, id);
        db.prepare('UPDATE effects SET live = ? WHERE tx_id = ?').run(patch.status === 'signed' || patch.status === 'mined' ? 1 : 0, id);
        recomputeUsage(db, this.id);
      }
      if (patch.blockNumber !== undefined) db.prepare('UPDATE transactions SET block_number = ? WHERE id = ?').run(patch.blockNumber, id);
      if (patch.blockHash !== undefined)
        db.prepare('UPDATE transactions SET block_hash = ? WHERE id = ?').run(patch.blockHash.toLowerCase(), id);
      if (patch.stage !== undefined) {
        db.prepare('UPDATE transactions SET stage = ? WHERE id = ?').run(patch.stage, id);
        db.prepare('UPDATE effects SET stage = ? WHERE tx_id = ?').run(patch.stage, id);
      }
    });
    const now = this.snapshot.txs.find((t) => t.hash.toLowerCase() === hash.toLowerCase())!;
    if (patch.status) crashHook(`${now.stage}:${now.status}:${now.calls.join(',')}`);
  }

  /**
   * A record dropped here whose very bytes the chain has mined after all: the transaction that took its nonce was
   * mined, then reorganised away, and these bytes went into a block in its place. They paid, so the record counts
   * again and covers its calls (its rerun must not sign them again). Not when another operation holds the same bytes
   * (they were taken over: that operation's). Returns whether the record changed.
   */
  async reviveMined(hash: Hex, status: 'mined' | 'reverted', blockNumber: string, blockHash: Hex): Promise<boolean> {
    return this.write((db) => {
      const row = db.prepare('SELECT id, status FROM transactions WHERE operation_id = ? AND hash = ?').get(this.id, hash.toLowerCase()) as
        | { id: number; status: TxRecord['status'] }
        | undefined;
      if (row?.status !== 'dropped') return false;
      const owner = db
        .prepare("SELECT 1 FROM transactions WHERE chain_id = ? AND wallet = ? AND hash = ? AND operation_id <> ? AND status <> 'dropped'")
        .get(this.chainId, this.wallet, hash.toLowerCase(), this.id);
      if (owner) return false;
      db.prepare('UPDATE transactions SET status = ?, block_number = ?, block_hash = ? WHERE id = ?').run(
        status,
        blockNumber,
        blockHash.toLowerCase(),
        row.id,
      );
      db.prepare('UPDATE effects SET live = ? WHERE tx_id = ?').run(status === 'mined' ? 1 : 0, row.id);
      recomputeUsage(db, this.id);
      return true;
    });
  }

  /** Marks authorizations proven unusable (past their validity, their nonce never used): they stop counting. */
  async buryAuthorizations(ids: number[], db?: Db): Promise<void> {
    const bury = (d: Db) => {
      for (const id of ids) {
        d.prepare('UPDATE authorizations SET dead = 1 WHERE id = ? AND operation_id = ?').run(id, this.id);
        d.prepare('UPDATE effects SET live = 0 WHERE authorization_id = ?').run(id);
      }
      recomputeUsage(d, this.id);
    };
    if (db) bury(db);
    else await this.write(bury);
  }

  /** Reads the operation again from the database (after a write transaction that recorded something for it). */
  refresh(): void {
    this.snapshot = readOperation(this.store, this.kind, this.id)!;
  }

  /** Writes, then reads the operation back: what this object shows is always what is committed. */
  async write<T>(fn: (db: Db) => T | Promise<T>, durable = true): Promise<T> {
    try {
      return await this.store.write(fn, { durable });
    } finally {
      this.refresh();
    }
  }

  async close(): Promise<void> {
    await this.held.release().catch(() => undefined);
  }
}
