// `loopsign history`: what was spent — by day (UTC), chain, asset, operation and wallet — from the same recorded
// effects the spending policy counts. An operation's amount on a day is the exposure of its live effects signed that
// day (for each spender the larger of what was allowed and what was pulled), as each policy window counts it; the
// last-24-hours and this-month figures are the policy's own window sums.
import { formatUnits } from 'viem';
import type { Store } from './db.js';
import { calendarMonth, rolling24h, windowUsage } from '../policy/usage.js';
import type { Asset } from '../wallet/spend-effects.js';

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
  const groups = store.read(
    (db) =>
      db
        .prepare(
          `SELECT e.chain_id AS chainId, e.wallet AS wallet, e.operation_id AS operation, o.kind AS kind, strftime('%Y-%m-%d', e.at / 1000, 'unixepoch') AS day,
                  e.asset AS asset, e.spender AS spender,
                  SUM(CASE WHEN e.kind = 'pull' THEN e.amount ELSE 0 END) AS pulled, SUM(CASE WHEN e.kind = 'pull' THEN 0 ELSE e.amount END) AS allowed
           FROM effects e JOIN operations o ON o.id = e.operation_id
           WHERE e.live = 1 AND e.at >= ? AND (? IS NULL OR e.chain_id = ?)
           GROUP BY e.chain_id, e.wallet, e.operation_id, day, e.asset, e.spender
           ORDER BY day, e.chain_id, e.asset, e.operation_id`,
        )
        .safeIntegers(true)
        .all(since, options.chainId ?? null, options.chainId ?? null) as {
        chainId: bigint;
        wallet: string;
        operation: string;
        kind: string;
        day: string;
        asset: Asset;
        spender: string;
        pulled: bigint;
        allowed: bigint;
      }[],
  );
  const rows = new Map<string, SpendRow & { value: bigint }>();
  for (const g of groups) {
    const key = `${g.day}|${g.chainId}|${g.asset}|${g.operation}`;
    const row = rows.get(key) ?? { day: g.day, chainId: Number(g.chainId), asset: g.asset, amount: '0', display: '', operation: g.operation, kind: g.kind, wallet: g.wallet, value: 0n };
    row.value += g.allowed > g.pulled ? g.allowed : g.pulled;
    rows.set(key, row);
  }
  const out = [...rows.values()].filter((r) => r.value > 0n);
  const totals = new Map<string, { chainId: number; asset: Asset; value: bigint }>();
  for (const r of out) {
    const t = totals.get(`${r.chainId}|${r.asset}`) ?? { chainId: r.chainId, asset: r.asset, value: 0n };
    t.value += r.value;
    totals.set(`${r.chainId}|${r.asset}`, t);
  }
  const now = options.now ?? new Date();
  const chains = options.chainId !== undefined ? [options.chainId] : [...new Set(out.map((r) => r.chainId))];
  const windows: WindowTotal[] = [];
  store.read((db) => {
    for (const chainId of chains) {
      for (const w of [rolling24h(now), calendarMonth(now)]) {
        const used = windowUsage(db, chainId, w.since);
        for (const asset of Object.keys(used) as Asset[]) windows.push({ chainId, window: w.name, asset, amount: used[asset]!.toString(), display: display(used[asset]!, asset) });
      }
    }
  });
  return {
    since: options.since?.toISOString() ?? null,
    rows: out.map(({ value, ...r }) => ({ ...r, amount: value.toString(), display: display(value, r.asset) })),
    totals: [...totals.values()].map((t) => ({ chainId: t.chainId, asset: t.asset, amount: t.value.toString(), display: display(t.value, t.asset) })),
    windows,
  };
}

/** The rows as CSV (RFC 4180: every field quoted when it needs to be; here ids and words never do). */
export function historyCsv(h: History): string {
  const lines = ['day,chain_id,asset,amount,display,operation,kind,wallet'];
  for (const r of h.rows) lines.push([r.day, r.chainId, r.asset, r.amount, r.display, r.operation, r.kind, r.wallet].join(','));
  return lines.join('\n');
}
