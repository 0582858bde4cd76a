// What was spent on a chain over a window, as the policy counts it: the usage rows of every operation of every wallet
// on the chain (src/store/usage.ts: each signature's increment of its operation's exposure, at the time it was
// signed), so it survives restarts and counts every loopsign process. One range of one index answers a window,
// however many operations there are.
import type { Db } from '../store/db.js';
import { exposure, type Amounts } from '../store/ledger.js';
import { HOUR_MS } from '../store/usage.js';
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

const sums = (rows: { asset: Asset; used: bigint | null }[]): Amounts => {
  const out: Amounts = {};
  for (const r of rows) if (r.used) out[r.asset] = r.used;
  return out;
};

/**
 * What every operation on the chain (but `except`) signed since `since`: the rows of the hour the window starts in,
 * the hourly sums after it (src/store/usage.ts keeps them with the rows), less what `except` signed in the window.
 */
export function windowUsage(db: Db, chainId: number, since: Date, except?: string): Amounts {
  const from = BigInt(since.getTime());
  const firstFullHour = (from + BigInt(HOUR_MS) - 1n) / BigInt(HOUR_MS);
  const q = (sql: string, ...args: unknown[]) =>
    sums(
      db
        .prepare(sql)
        .safeIntegers(true)
        .all(...args) as { asset: Asset; used: bigint | null }[],
    );
  const partial = q(
    'SELECT asset, SUM(amount) AS used FROM usage WHERE chain_id = ? AND at >= ? AND at < ? GROUP BY asset',
    chainId,
    from,
    firstFullHour * BigInt(HOUR_MS),
  );
  const hours = q(
    'SELECT asset, SUM(amount) AS used FROM usage_hourly WHERE chain_id = ? AND hour >= ? GROUP BY asset',
    chainId,
    firstFullHour,
  );
  const total = sum([partial, hours]);
  if (except === undefined || except === '') return total;
  const own = operationUsage(db, except, since);
  for (const asset of Object.keys(own) as Asset[]) total[asset] = (total[asset] ?? 0n) - own[asset]!;
  return total;
}

/** What one operation signed since `since`, as the windows count it. */
export function operationUsage(db: Db, operationId: string, since: Date): Amounts {
  const rows = db
    .prepare('SELECT asset, SUM(amount) AS used FROM usage WHERE operation_id = ? AND at >= ? GROUP BY asset')
    .safeIntegers(true)
    .all(operationId, since.getTime()) as {
    asset: Asset;
    used: bigint;
  }[];
  const out: Amounts = {};
  for (const r of rows) out[r.asset] = r.used;
  return out;
}

/** One operation's live effects (optionally one stage). */
export function operationEffects(db: Db, operationId: string, options: { stage?: string } = {}): SpendEffect[] {
  const rows = db
    .prepare('SELECT asset, kind, spender, amount FROM effects WHERE live = 1 AND operation_id = ? AND (? IS NULL OR stage = ?)')
    .safeIntegers(true)
    .all(operationId, options.stage ?? null, options.stage ?? null) as {
    asset: Asset;
    kind: SpendEffect['kind'];
    spender: `0x${string}`;
    amount: bigint;
  }[];
  return rows.map((r) => ({ asset: r.asset, kind: r.kind, spender: r.spender, amount: r.amount }));
}

/** What signing `effects` would add to an operation that can already cause `had` (its increment, as usage counts it). */
export function increment(had: SpendEffect[], effects: SpendEffect[]): Amounts {
  const before = exposure(had);
  const after = exposure([...had, ...effects]);
  const out: Amounts = {};
  for (const asset of Object.keys(after) as Asset[]) {
    const added = (after[asset] ?? 0n) - (before[asset] ?? 0n);
    if (added > 0n) out[asset] = added;
  }
  return out;
}

export function sum(list: Amounts[]): Amounts {
  const out: Amounts = {};
  for (const a of list) for (const [k, v] of Object.entries(a) as [Asset, bigint][]) out[k] = (out[k] ?? 0n) + v;
  return out;
}
