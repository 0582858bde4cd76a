// What was spent on a chain over a window, counted from every operation's recorded effects in the database (so it
// survives restarts and counts every loopsign process and every wallet): per operation, the exposure of what it
// signed inside the window (an approval and the pull that used it count once), summed over operations. Effects of
// reverted or dropped transactions and of authorizations proven dead are not live and count nothing. One indexed
// query (effects_by_window) answers a window, however many operations there are.
import type { Db } from '../store/db.js';
import type { Amounts } from '../store/ledger.js';
import type { Asset, SpendEffect } from '../wallet/spend-effects.js';

export interface Window {
  name: string;
  since: Date;
}

export function rolling24h(now = new Date()): Window {
  return { name: 'the last 24 hours', since: new Date(now.getTime() - 86_400_000) };
}

export function calendarMonth(now = new Date()): Window {
  return { name: `${now.toISOString().slice(0, 7)} (UTC)`, since: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) };
}

// Per operation and spender: the larger of what was allowed and what was pulled (ledger.ts `exposure`, in SQL).
const WINDOW_SQL = `
  SELECT asset, SUM(exposure) AS used FROM (
    SELECT asset, MAX(SUM(CASE WHEN kind = 'pull' THEN amount ELSE 0 END), SUM(CASE WHEN kind = 'pull' THEN 0 ELSE amount END)) AS exposure
    FROM effects
    WHERE live = 1 AND chain_id = ? AND at >= ? AND operation_id <> ?
    GROUP BY operation_id, asset, spender
  ) GROUP BY asset`;

/** What every operation on the chain (but `except`) can cause from effects signed since `since`. */
export function windowUsage(db: Db, chainId: number, since: Date, except = ''): Amounts {
  const rows = db.prepare(WINDOW_SQL).safeIntegers(true).all(chainId, since.getTime(), except) as { asset: Asset; used: bigint }[];
  const out: Amounts = {};
  for (const r of rows) out[r.asset] = r.used;
  return out;
}

/** One operation's live effects (optionally one stage, or since a time). */
export function operationEffects(db: Db, operationId: string, options: { stage?: string; since?: Date } = {}): SpendEffect[] {
  const rows = db
    .prepare('SELECT asset, kind, spender, amount FROM effects WHERE live = 1 AND operation_id = ? AND (? IS NULL OR stage = ?) AND at >= ?')
    .safeIntegers(true)
    .all(operationId, options.stage ?? null, options.stage ?? null, options.since?.getTime() ?? 0) as { asset: Asset; kind: SpendEffect['kind']; spender: `0x${string}`; amount: bigint }[];
  return rows.map((r) => ({ asset: r.asset, kind: r.kind, spender: r.spender, amount: r.amount }));
}

export function sum(list: Amounts[]): Amounts {
  const out: Amounts = {};
  for (const a of list) for (const [k, v] of Object.entries(a) as [keyof Amounts, bigint][]) out[k] = (out[k] ?? 0n) + v;
  return out;
}
