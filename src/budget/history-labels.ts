// `history` and on-chain budgets: each spend row whose wallet is the session address S of a grant on record (imported
// by `budget import`, or granted here) is labelled "paid by S, grant of O"; `--owner O` keeps only the rows of S
// addresses with a grant from O and sums across them. Derived from the grants on record alone (the journal records
// no grant), so a row is labelled the same whichever loopsign version paid it.
import { formatUnits, isAddressEqual } from 'viem';
import type { Address } from '../chains/table.js';
import type { History, SpendRow } from '../store/history.js';
import type { RecordedGrant } from './records.js';

export interface PaidBy {
  session: string;
  owner: string;
  /** The delegation hashes of the grants of this owner to this session on the row's chain. */
  grants: string[];
}

export type LabelledHistory = Omit<History, 'rows' | 'totals'> & {
  rows: (SpendRow & { paidBy?: PaidBy })[];
  totals: History['totals'];
  owner?: { address: string; sessions: string[] };
};

function paidBy(row: SpendRow, grants: RecordedGrant[]): PaidBy | undefined {
  return paidByOf(row.chainId, row.wallet, grants);
}

/** The label of what `wallet` paid on `chainId`, when it is the session address of a grant on record. */
export function paidByOf(chainId: number, wallet: string, grants: RecordedGrant[]): PaidBy | undefined {
  const mine = grants.filter((g) => g.grant.chainId === chainId && isAddressEqual(g.grant.session as Address, wallet as Address));
  if (mine.length === 0) return undefined;
  // One owner per session address is the design (notes/agent-budget.md §2.1); several are named by the first.
  const owner = mine[0]!.grant.owner;
  return {
    session: wallet,
    owner,
    grants: mine.filter((g) => isAddressEqual(g.grant.owner as Address, owner as Address)).map((g) => g.grant.delegations[0]!.hash),
  };
}

export function labelBySession(h: History, grants: RecordedGrant[], owner?: Address): LabelledHistory {
  const rows = h.rows.map((r) => {
    const p = paidBy(r, grants);
    return p ? { ...r, paidBy: p } : r;
  });
  if (owner === undefined) return { ...h, rows };
  const sessions = [
    ...new Set(grants.filter((g) => isAddressEqual(g.grant.owner as Address, owner)).map((g) => g.grant.session.toLowerCase())),
  ];
  const kept = rows.filter((r) => sessions.includes(r.wallet.toLowerCase()));
  const totals = new Map<string, { chainId: number; asset: SpendRow['asset']; value: bigint }>();
  for (const r of kept) {
    const key = `${r.chainId}|${r.asset}`;
    const t = totals.get(key) ?? { chainId: r.chainId, asset: r.asset, value: 0n };
    t.value += BigInt(r.amount);
    totals.set(key, t);
  }
  return {
    ...h,
    rows: kept,
    totals: [...totals.values()].map((t) => ({
      chainId: t.chainId,
      asset: t.asset,
      amount: t.value.toString(),
      display: `${formatUnits(t.value, 6)} ${t.asset}`,
    })),
    owner: { address: owner, sessions },
  };
}
