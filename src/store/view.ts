// One operation's journal as a person or a script reads it (`loopsign history --operation`): its steps, transactions
// and authorizations with what each can pay. Raw bytes and authorization signatures are left out (a signed
// authorization is bearer money until it expires), and output redaction hides the vote's secret.
import type { Store } from './db.js';
import { readOperation } from './operation.js';
import { isKind, type TxRecord } from './records.js';

/** The view, and the records of its transactions in the same order (for their states, src/wallet/tx-states.ts). */
export function operationView(
  store: Store,
  id: string,
): { view: Record<string, unknown> & { transactions: Record<string, unknown>[] }; chainId: number; txs: TxRecord[] } | undefined {
  const kind = store.read((db) => (db.prepare('SELECT kind FROM operations WHERE id = ?').get(id) as { kind: string } | undefined)?.kind);
  if (kind === undefined || !isKind(kind)) return undefined;
  const op = readOperation(store, kind, id)!;
  const effects = store.read(
    (db) =>
      db
        .prepare(
          'SELECT t.hash AS tx_hash, e.authorization_id, e.asset, e.kind, e.spender, e.amount, e.live FROM effects e LEFT JOIN transactions t ON t.id = e.tx_id WHERE e.operation_id = ? ORDER BY e.id',
        )
        .all(id) as {
        tx_hash: string | null;
        authorization_id: number | null;
        asset: string;
        kind: string;
        spender: string;
        amount: number | bigint;
        live: number;
      }[],
  );
  const of = (pick: (e: (typeof effects)[number]) => boolean) =>
    effects.filter(pick).map((e) => ({ asset: e.asset, kind: e.kind, spender: e.spender, amount: String(e.amount), counts: e.live === 1 }));
  const view = {
    operation: op.id,
    kind: op.kind,
    chainId: op.chainId,
    wallet: op.wallet,
    step: op.step,
    operationKey: op.operationKey ?? null,
    createdAt: new Date(op.createdAt).toISOString(),
    updatedAt: new Date(op.updatedAt).toISOString(),
    data: op.data,
    transactions: op.txs.map((t) => ({
      stage: t.stage,
      hash: t.hash,
      nonce: t.nonce,
      kind: t.kind,
      status: t.status,
      blockNumber: t.blockNumber ?? null,
      calls: t.calls,
      signedAt: new Date(t.signedAt).toISOString(),
      effects: of((e) => e.tx_hash === t.hash.toLowerCase()),
    })),
    authorizations: op.authorizations.map((a) => ({
      stage: a.stage,
      message: a.message,
      signedAt: new Date(a.signedAt).toISOString(),
      dead: a.dead,
      effects: of((e) => e.authorization_id === a.id),
    })),
  };
  return { view, chainId: op.chainId, txs: op.txs };
}
