// `loopsign history`: what was spent — by day (UTC), chain, asset, operation and wallet — from the usage rows the
// spending policy sums (src/store/usage.ts: each signature's increment of what its operation can pay, at the time it
// was signed), so a day's rows add up to what any window over it counts; the last-24-hours and this-month figures are
// the policy's own window sums.
import { formatUnits } from 'viem';
import type { Store } from './db.js';
import { calendarMonth, rolling24h, windowUsage } from '../policy/usage.js';
import type { Asset } from '../wallet/spend-effects.js';
import { isKind, type TxRecord } from './records.js';
import { readOperation } from './operation.js';

export interface SpendRow {
  day: string;
  chainId: number;
  asset: Asset;
  amount: string;
  display: string;
  operation: string;
  kind: string;
  wallet: string;
}

export interface WindowTotal {
  chainId: number;
  window: string;
  asset: Asset;
  amount: string;
  display: string;
}

export interface History {
  since: string | null;
  rows: SpendRow[];
  /** Per chain and asset over the rows. */
  totals: { chainId: number; asset: Asset; amount: string; display: string }[];
  /** The policy's windows now (every wallet on the chain), whatever --since says. */
  windows: WindowTotal[];
}

const display = (amount: bigint, asset: Asset) => `${formatUnits(amount, 6)} ${asset}`;

export function spendHistory(store: Store, options: { since?: Date; chainId?: number; now?: Date } = {}): History {
  const since = options.since?.getTime() ?? 0;
  const rows = store.read(
    (db) =>
      db
        .prepare(
          `SELECT strftime('%Y-%m-%d', u.at / 1000, 'unixepoch') AS day, u.chain_id AS chainId, u.asset AS asset, SUM(u.amount) AS value,
                  u.operation_id AS operation, o.kind AS kind, u.wallet AS wallet
           FROM usage u JOIN operations o ON o.id = u.operation_id
           WHERE u.at >= ? AND (? IS NULL OR u.chain_id = ?)
           GROUP BY day, u.chain_id, u.asset, u.operation_id
           ORDER BY day, u.chain_id, u.asset, MIN(u.at)`,
        )
        .safeIntegers(true)
        .all(since, options.chainId ?? null, options.chainId ?? null) as {
        day: string;
        chainId: bigint;
        asset: Asset;
        value: bigint;
        operation: string;
        kind: string;
        wallet: string;
      }[],
  );
  const totals = new Map<string, { chainId: number; asset: Asset; value: bigint }>();
  for (const r of rows) {
    const t = totals.get(`${r.chainId}|${r.asset}`) ?? { chainId: Number(r.chainId), asset: r.asset, value: 0n };
    t.value += r.value;
    totals.set(`${r.chainId}|${r.asset}`, t);
  }
  const now = options.now ?? new Date();
  const chains = options.chainId !== undefined ? [options.chainId] : [...new Set(rows.map((r) => Number(r.chainId)))];
  const windows: WindowTotal[] = [];
  store.read((db) => {
    for (const chainId of chains) {
      for (const w of [rolling24h(now), calendarMonth(now)]) {
        const used = windowUsage(db, chainId, w.since);
        for (const asset of Object.keys(used) as Asset[])
          windows.push({ chainId, window: w.name, asset, amount: used[asset]!.toString(), display: display(used[asset]!, asset) });
      }
    }
  });
  return {
    since: options.since?.toISOString() ?? null,
    rows: rows.map((r) => ({
      day: r.day,
      chainId: Number(r.chainId),
      asset: r.asset,
      amount: r.value.toString(),
      display: display(r.value, r.asset),
      operation: r.operation,
      kind: r.kind,
      wallet: r.wallet,
    })),
    totals: [...totals.values()].map((t) => ({
      chainId: t.chainId,
      asset: t.asset,
      amount: t.value.toString(),
      display: display(t.value, t.asset),
    })),
    windows,
  };
}

/** The rows as CSV (RFC 4180: every field quoted when it needs to be; here ids and words never do). */
export function historyCsv(h: History): string {
  const lines = ['day,chain_id,asset,amount,display,operation,kind,wallet'];
  for (const r of h.rows) lines.push([r.day, r.chainId, r.asset, r.amount, r.display, r.operation, r.kind, r.wallet].join(','));
  return lines.join('\n');
}

/** The journaled transactions of these operations, in order, each with its operation and chain (`history` shows them). */
export function journaledTransactions(store: Store, operations: string[]): { operation: string; chainId: number; tx: TxRecord }[] {
  const out: { operation: string; chainId: number; tx: TxRecord }[] = [];
  for (const id of new Set(operations)) {
    const kind = store.read((db) => (db.prepare('SELECT kind FROM operations WHERE id = ?').get(id) as { kind: string } | undefined)?.kind);
    if (kind === undefined || !isKind(kind)) continue;
    const op = readOperation(store, kind, id);
    for (const tx of op?.txs ?? []) out.push({ operation: id, chainId: op!.chainId, tx });
  }
  return out;
}
