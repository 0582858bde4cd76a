// Spending as the policy counts it (issue 20): each signature adds to what its operation can make the wallet pay —
// its exposure, for each spender the larger of what was allowed and what was pulled — and that increment counts at
// the moment it was signed. An approval counts when it is signed; the pull that then uses it adds nothing; a
// signature that stops counting (a reverted or dropped transaction, an authorization that expired unused) takes its
// increment back, and the later ones are recomputed around it. So every atomic unit that could leave the wallet is
// counted exactly once, at the time loopsign signed what made it possible, and a window's total is one indexed sum.
import type { Db } from './db.js';
import { exposure, type Amounts } from './ledger.js';
import type { Asset, SpendEffect } from '../wallet/spend-effects.js';

interface EffectRow {
  source: string;
  at: number;
  asset: Asset;
  kind: SpendEffect['kind'];
  spender: `0x${string}`;
  amount: bigint;
}

export const HOUR_MS = 3_600_000;

/** Recomputes an operation's usage rows from its live effects, in the order they were signed (and the hourly sums). */
export function recomputeUsage(db: Db, operationId: string): void {
  const op = db.prepare('SELECT chain_id, wallet, kind FROM operations WHERE id = ?').get(operationId) as
    | { chain_id: number; wallet: string; kind: string }
    | undefined;
  const take = db.prepare('UPDATE usage_hourly SET amount = amount - ? WHERE chain_id = ? AND hour = ? AND asset = ?');
  for (const r of db
    .prepare('SELECT chain_id, at, asset, amount FROM usage WHERE operation_id = ?')
    .safeIntegers(true)
    .all(operationId) as { chain_id: bigint; at: bigint; asset: string; amount: bigint }[]) {
    take.run(r.amount, r.chain_id, r.at / BigInt(HOUR_MS), r.asset);
  }
  db.prepare('DELETE FROM usage WHERE operation_id = ?').run(operationId);
  // A budget sweep returns the session's tokens to the grant's owner: journaled and capped by its ledger like any
  // transaction, but not spending, so neither the policy's windows nor `history` count it.
  if (!op || op.kind === 'budget-sweep') return;
  const rows = db
    .prepare(
      `SELECT COALESCE('t' || tx_id, 'a' || authorization_id) AS source, at, asset, kind, spender, amount
       FROM effects WHERE operation_id = ? AND live = 1 ORDER BY at, id`,
    )
    .safeIntegers(true)
    .all(operationId) as (Omit<EffectRow, 'at'> & { at: bigint })[];
  const row = db.prepare('INSERT INTO usage (operation_id, chain_id, wallet, asset, at, amount) VALUES (?, ?, ?, ?, ?, ?)');
  const add = db.prepare(
    'INSERT INTO usage_hourly (chain_id, hour, asset, amount) VALUES (?, ?, ?, ?) ON CONFLICT (chain_id, hour, asset) DO UPDATE SET amount = amount + excluded.amount',
  );
  const insert = {
    run: (id: string, chainId: number, wallet: string, asset: Asset, at: bigint, amount: bigint) => (
      row.run(id, chainId, wallet, asset, at, amount), add.run(chainId, at / BigInt(HOUR_MS), asset, amount)
    ),
  };
  const seen: SpendEffect[] = [];
  let before: Amounts = {};
  for (let i = 0; i < rows.length; ) {
    const source = rows[i]!.source;
    const at = rows[i]!.at;
    for (; i < rows.length && rows[i]!.source === source; i++)
      seen.push({ asset: rows[i]!.asset, kind: rows[i]!.kind, spender: rows[i]!.spender, amount: rows[i]!.amount });
    const after = exposure(seen);
    for (const asset of Object.keys(after) as Asset[]) {
      const added = (after[asset] ?? 0n) - (before[asset] ?? 0n);
      if (added > 0n) insert.run(operationId, op.chain_id, op.wallet, asset, at, added);
    }
    before = after;
  }
}
