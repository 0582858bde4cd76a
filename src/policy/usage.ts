// What was spent on a chain over a window, counted from the spend ledgers of every journal (so it survives restarts
// and counts every loopsign process): per operation, the exposure of what it signed inside the window (an approval
// and the pull that used it count once), summed over operations. Reverted transactions and authorizations proven
// dead count nothing.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ChainConfig } from '../chains/table.js';
import { isLive, type JournalData, type JournalTx } from '../journal/journal.js';
import type { JournalAuthorization } from '../journal/journal.js';
import { exposure, type Amounts } from '../journal/ledger.js';
import { journalDir } from '../paths.js';
import { callEffects, callsOfRawTransaction, type SpendEffect } from '../wallet/spend-effects.js';

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

function txEffects(tx: JournalTx, data: JournalData, chain: ChainConfig): SpendEffect[] {
  if (tx.effects) return tx.effects.map((e) => ({ asset: e.asset, kind: e.kind, spender: e.spender as `0x${string}`, amount: BigInt(e.amount) }));
  // Journals written before effects were recorded: classify now, skipping calls of another deployment.
  try {
    return callsOfRawTransaction(tx.raw, data.wallet as `0x${string}`).flatMap((c) => callEffects(chain, c));
  } catch {
    return [];
  }
}

/** The effects one journal signed inside the window, and its exposure. */
export function journalUsage(data: JournalData, chain: ChainConfig, since: Date): Amounts {
  const at = (iso: string | undefined) => new Date(iso ?? data.updatedAt);
  const effects: SpendEffect[] = [];
  for (const tx of data.txs) if (isLive(tx) && at(tx.signedAt) >= since) effects.push(...txEffects(tx, data, chain));
  for (const a of (data.authorizations ?? []) as JournalAuthorization[]) {
    if (!a.dead && at(a.signedAt) >= since) effects.push({ asset: 'USDC', kind: 'authorization', spender: a.message.to as `0x${string}`, amount: BigInt(a.message.value) });
  }
  return exposure(effects);
}

/** Every journal on disk for this chain (optionally leaving one out: the operation being checked supplies its own). */
export async function journalsOf(chainId: number, except?: string): Promise<JournalData[]> {
  let names: string[];
  try {
    names = await fs.readdir(journalDir());
  } catch {
    return [];
  }
  const out: JournalData[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(journalDir(), name);
    if (except && path.resolve(file) === path.resolve(except)) continue;
    try {
      const data = JSON.parse(await fs.readFile(file, 'utf8')) as JournalData;
      if (data.chainId === chainId && Array.isArray(data.txs)) out.push(data);
    } catch {
      // a journal being rewritten (atomic rename) or not ours: nothing to count
    }
  }
  return out;
}

export function sum(list: Amounts[]): Amounts {
  const out: Amounts = {};
  for (const a of list) for (const [k, v] of Object.entries(a) as [keyof Amounts, bigint][]) out[k] = (out[k] ?? 0n) + v;
  return out;
}
