// The grants an agent's wallet imported (issue 38), as recorded in loopsign's state folder, and the journal stages of
// its pulls. Light on purpose: every ask reads this to know whether a budget applies, and loads the pull's machinery
// (src/budget/pull.ts, MetaMask's codecs) only when one does.
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { isAddressEqual, type Hex } from 'viem';
import type { Address } from '../chains/table.js';
import { parseGrantFile, type GrantFile } from './grant-file.js';
import { decodePullCall } from './pull-call.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import { isLive, type TxRecord } from '../store/records.js';

export type PayingStage = 'ask' | 'bonus';

/** The stage a pull of `stage` is journaled under when it is its own transaction. */
export const pullStage = (stage: PayingStage) => `${stage}_pull`;

/** Where the grants `budget import` (and `budget grant`) record: one file per grant, named by its hash. */
export function grantsDir(stateDir: string): string {
  return path.join(stateDir, 'budget', 'grants');
}

/**
 * The grants imported for this wallet on this chain (delegate and recipient are this wallet), newest first. A grant
 * the wallet gave as an owner is not one it pulls from. A file there that is not a grant is refused (exit 2).
 */
export async function sessionGrants(stateDir: string, chainId: number, wallet: Hex): Promise<GrantFile[]> {
  const dir = grantsDir(stateDir);
  const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const mine: GrantFile[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    let raw: unknown;
    try {
      raw = JSON.parse(await fs.readFile(file, 'utf8'));
    } catch {
      raw = undefined; // refused just below, naming the file
    }
    const doc = parseGrantFile(raw, file);
    if (doc.chainId !== chainId) continue;
    if (!isAddressEqual(doc.session as Address, wallet) || !isAddressEqual(doc.delegations[0]!.delegation.delegate as Address, wallet))
      continue;
    mine.push(doc);
  }
  return mine.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** The newest grant imported for this wallet on this chain, if any: the one new pulls redeem. */
export async function sessionGrant(stateDir: string, chainId: number, wallet: Hex): Promise<GrantFile | undefined> {
  return (await sessionGrants(stateDir, chainId, wallet))[0];
}

/**
 * Whether an ask's paying stages go through the pull (src/budget/pull.ts): this wallet imported a grant on this chain,
 * or the ask journaled a pull (which its rerun must settle, not forget).
 */
export async function budgetApplies(run: {
  ctx: { paths: { state: string } };
  chain: { chainId: number };
  wallet: Hex;
  journal: { txs(): readonly { stage: string }[] };
}): Promise<boolean> {
  if (run.journal.txs().some((t) => t.stage === pullStage('ask') || t.stage === pullStage('bonus'))) return true;
  return (await sessionGrant(run.ctx.paths.state, run.chain.chainId, run.wallet)) !== undefined;
}

/** A pull an ask made from the owner's grant, as its own transaction or inside its payment's batch. */
export interface BudgetPull {
  stage: PayingStage;
  asset: 'USDC';
  /** Atomic units. */
  amount: string;
  transactionHash: string;
  status: TxRecord['status'];
}

/** The pulls an ask's journal carries (signed or mined), read back from the signed bytes. */
export function budgetPullsOf(txs: readonly TxRecord[], wallet: Hex): BudgetPull[] {
  const out: BudgetPull[] = [];
  for (const tx of txs.filter(isLive)) {
    let calls: ReturnType<typeof callsOfRawTransaction>;
    try {
      calls = callsOfRawTransaction(tx.raw, wallet);
    } catch {
      continue; // not a call or a batch loopsign reads (no pull is one of those)
    }
    for (const call of calls) {
      const pull = decodePullCall(call.data);
      if (!pull) continue;
      const stage: PayingStage = tx.stage === pullStage('bonus') || tx.stage === 'bonus' ? 'bonus' : 'ask';
      out.push({ stage, asset: 'USDC', amount: pull.amount.toString(), transactionHash: tx.hash, status: tx.status });
    }
  }
  return out;
}
