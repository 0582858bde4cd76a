// `budget sweep` (issue 38, notes/agent-budget.md §1.4 item 3): the session address S gives its USDC and LREP above a
// float back to the owner O of its grant, as one journaled operation on the executor (nonce slots, the wallet's claim,
// a ledger capping each transfer at what was planned). What a pending operation of S still needs stays on S: an ask
// not yet done keeps what its own file says it may pay (bounty, bonus, capped by maxPaymentAmount), less what its
// mined transactions already paid, including an x402 authorization the service may still submit and a bonus pool S is
// still to fund (and, as awarder, to award). The reserve is computed under the wallet's claim, so an ask mid-flight in
// another process finishes its transactions first.
import { encodeFunctionData, formatUnits, type Hex } from 'viem';
import type { Db } from '../store/db.js';
import type { Asset } from '../wallet/spend-effects.js';

/**
 * Asks idle for longer than this are abandoned: nothing they signed can still be redeemed (x402: 30 min). Not one with
 * a budget pull of its own (src/budget/pull.ts): its rerun reuses that pull and never pulls again, so what it pulled
 * stays on S until it pays, however long it waits.
 */
export const PENDING_WINDOW_MS = 24 * 3_600_000;

export type Amounts = Record<Asset, bigint>;

export interface PendingNeed {
  operation: string;
  step: string;
  needs: Partial<Record<Asset, string>>;
}

const ASSETS: Asset[] = ['USDC', 'LREP'];
const zero = (): Amounts => ({ USDC: 0n, LREP: 0n });
const atomic = (v: unknown): bigint | undefined => (typeof v === 'string' && /^[0-9]{1,40}$/.test(v) ? BigInt(v) : undefined);
const asset = (v: unknown): Asset | undefined => (v === 'USDC' || v === 'LREP' ? v : undefined);

/**
 * What an ask's own request (the body loopsign sent, journaled before anything was signed) lets it pay in all, per
 * asset: as src/ask/caps.ts's total. Undefined when the request cannot be read (then the sweep refuses).
 */
export function askNeeds(request: unknown): Amounts | undefined {
  if (request === null || typeof request !== 'object') return undefined;
  const r = request as Record<string, any>;
  const bountyAsset = asset(r.bounty?.asset);
  const bountyAmount = atomic(r.bounty?.amount);
  if (!bountyAsset || bountyAmount === undefined) return undefined;
  const out = zero();
  out[bountyAsset] += bountyAmount;
  const b = r.feedbackBonus;
  if (b !== undefined && b !== null) {
    const bonusAsset = asset(b.asset);
    const bonusAmount = atomic(b.amount);
    if (!bonusAsset || bonusAmount === undefined) return undefined;
    out[bonusAsset] += bonusAmount;
  }
  const max = atomic(r.maxPaymentAmount);
  if (max !== undefined && max < out[bountyAsset]) out[bountyAsset] = max;
  return out;
}

/**
 * What S's pending operations on this chain still need, per asset, and which they are. An operation that cannot be
 * read is `unreadable` (the caller refuses: nothing is swept while loopsign cannot tell what it needs).
 */
export function pendingNeeds(
  db: Db,
  chainId: number,
  wallet: string,
  nowMs: number,
): { reserved: Amounts; pending: PendingNeed[]; unreadable: string[] } {
  const reserved = zero();
  const pending: PendingNeed[] = [];
  const unreadable: string[] = [];
  const ops = db
    .prepare(
      `SELECT id, step, data FROM operations
       WHERE chain_id = ? AND lower(wallet) = lower(?) AND kind = 'ask' AND step != 'done'
         AND (updated_at >= ? OR EXISTS (
           SELECT 1 FROM transactions t WHERE t.operation_id = operations.id
             AND t.stage IN ('ask_pull', 'bonus_pull') AND t.status IN ('signed', 'mined')))
       ORDER BY created_at`,
    )
    .all(chainId, wallet, nowMs - PENDING_WINDOW_MS) as { id: string; step: string; data: string }[];
  const paidOf = db.prepare(
    `SELECT e.asset AS asset, SUM(e.amount) AS paid FROM effects e JOIN transactions t ON t.id = e.tx_id
     WHERE e.operation_id = ? AND e.kind = 'pull' AND t.status = 'mined' GROUP BY e.asset`,
  );
  for (const op of ops) {
    let needs: Amounts | undefined;
    try {
      needs = askNeeds(JSON.parse(op.data).request);
    } catch {
      needs = undefined;
    }
    if (!needs) {
      unreadable.push(op.id);
      continue;
    }
    for (const row of paidOf.safeIntegers(true).all(op.id) as { asset: Asset; paid: bigint }[]) {
      if (ASSETS.includes(row.asset)) needs[row.asset] = needs[row.asset] > row.paid ? needs[row.asset] - row.paid : 0n;
    }
    if (needs.USDC === 0n && needs.LREP === 0n) continue;
    for (const a of ASSETS) reserved[a] += needs[a];
    pending.push({
      operation: op.id,
      step: op.step,
      needs: Object.fromEntries(ASSETS.filter((a) => needs![a] > 0n).map((a) => [a, needs![a].toString()])),
    });
  }
  return { reserved, pending, unreadable };
}

export interface SweepPlan {
  owner: Hex;
  float: Amounts;
  balances: Amounts;
  reserved: Amounts;
  /** What goes back to the owner, per asset: balance − float − reserved, at least 0. */
  amounts: Amounts;
  pending: PendingNeed[];
}

export function sweepAmounts(balances: Amounts, float: Amounts, reserved: Amounts): Amounts {
  const out = zero();
  for (const a of ASSETS) {
    const keep = float[a] + reserved[a];
    out[a] = balances[a] > keep ? balances[a] - keep : 0n;
  }
  return out;
}

const TRANSFER_ABI = [
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [{ type: 'bool' }],
  },
] as const;

/** The plan's calls: one `transfer(owner, amount)` per token with something to sweep, built here, never taken from anywhere else. */
export function sweepCalls(plan: SweepPlan, tokens: Record<Asset, Hex>) {
  return ASSETS.filter((a) => plan.amounts[a] > 0n).map((a) => ({
    phase: `sweep_${a.toLowerCase()}`,
    to: tokens[a],
    data: encodeFunctionData({ abi: TRANSFER_ABI, functionName: 'transfer', args: [plan.owner, plan.amounts[a]] }),
    value: '0',
  }));
}

export const display = (amount: bigint, a: Asset) => `${formatUnits(amount, 6)} ${a}`;
