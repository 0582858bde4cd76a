// A reservation lives 30 minutes (chain.md §6.11). When a resumed ask finds its journaled reservation older than that
// and the submit not yet mined, the reservation is sent again: it moves no money, and the submit needs it.
import type { Hex, PublicClient } from 'viem';
import type { Output } from '../output.js';
import type { Operation } from '../store/operation.js';
import { isLive, type TxRecord } from '../store/records.js';
import { callDigest } from '../wallet/executor.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import type { PlanCall } from '../wallet/plan-guard.js';

export async function renewExpiredReservation(
  client: PublicClient,
  journal: Operation<'ask'>,
  calls: PlanCall[],
  out: Output,
): Promise<void> {
  if (calls[0]?.phase !== 'reserve_submission') return;
  const carried = (t: TxRecord, call: PlanCall) =>
    callsOfRawTransaction(t.raw, journal.wallet as Hex).some((c) => callDigest(c) === callDigest(call));
  const txs = journal.txsFor('ask');
  const reserve = txs.find((t) => t.status === 'mined' && carried(t, calls[0]!));
  const submitted = txs.some((t) => isLive(t) && carried(t, calls[calls.length - 1]!));
  if (!reserve || submitted || reserve.blockNumber === undefined) return;
  const reservedAt = (await client.getBlock({ blockNumber: BigInt(reserve.blockNumber) })).timestamp;
  const latest = (await client.getBlock({ blockTag: 'latest' })).timestamp;
  if (latest < reservedAt + 1800n - 30n) return;
  out.progress('ask.reserve_again', 'the journaled reservation has expired (30 minutes); reserving again');
  // Moved out of the ask stage, so the executor sends the reservation again (it moves no money).
  await journal.updateTx(reserve.hash, { stage: 'ask:expired-reservation' });
}
