// A reservation lives 30 minutes (chain.md §6.11), and the registry keeps its slot taken after that until the
// submitter cancels it or a submit consumes it: the same reserveSubmission sent again reverts (empty data). So when a
// resumed ask finds its journaled reservation past its 30 minutes and its submit not yet sent, it
//   1. takes the old reservation out of the ask stage (to EXPIRED_STAGE), so the executor will reserve again, and with
//      it a submit journaled for it that can no longer pay (signed but not mined before the end, or reverted after it);
//   2. cancels it: loopsign's own call (src/wallet/reservation-guard.ts), journaled and sent through the executor in a
//      stage of its own, like every transaction;
//   3. lets the executor reserve again, approve (or find the journaled approval) and submit.
// Every step survives a kill: step 2 runs whenever a retired reservation is the latest and no new one was signed, so a
// rerun after step 1 cancels, a rerun after the cancel was signed sends those bytes (never new ones), and a rerun after
// it was mined finds it and sends nothing. Each retired reservation has its own cancel stage, so a cancel mined for
// an earlier one never passes for a later one's. Journals that an older loopsign left with a retired reservation and
// no cancel (it sent the reservation again, which the live registry refuses) are resumed the same way.
import { parseAbiItem, type Hex } from 'viem';
import { ChainError, asKnownError } from '../errors.js';
import { sameHex } from '../hex.js';
import { crashHook } from '../store/crash-hook.js';
import { isLive, type TxRecord } from '../store/records.js';
import { contentHash, questionsOfSubmit } from '../protocol/submission.js';
import { callDigest, type Executor } from '../wallet/executor.js';
import { receiptOrNone } from '../wallet/finality.js';
import type { GuardContext, PlanCall } from '../wallet/plan-guard.js';
import { cancelReservationCall } from '../wallet/reservation-guard.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import type { Run } from './run.js';

/** Where a reservation past its 30 minutes goes: out of the ask stage, so the plan's reservation is signed again. */
export const EXPIRED_STAGE = 'ask:expired-reservation';
/** The cancel of the n-th retired reservation: this stage for the first, `-n` after it for the others. */
export const CANCEL_STAGE = 'ask:cancel-expired-reservation';

const LIFETIME = 1800n;
// A reservation this close to its end is treated as expired: the submit still has a reservation-age wait and a block
// to go, and the registry refuses a submit past the end.
const MARGIN = 30n;

const contentSubmitted = parseAbiItem(
  'event ContentSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 contentHash, string url, string title, string tags, uint256 indexed categoryId)',
);

export const cancelStage = (n: number) => (n <= 1 ? CANCEL_STAGE : `${CANCEL_STAGE}-${n}`);

/**
 * Before the ask stage is executed: an expired journaled reservation is retired and cancelled (steps 1 and 2 above).
 * `calls` is the checked wallet plan, `g` the guard context it was checked with.
 */
export async function cancelExpiredReservation(run: Run, g: GuardContext, calls: PlanCall[], ex: Executor): Promise<void> {
  const { client, journal } = run;
  const out = run.ctx.out;
  if (calls[0]?.phase !== 'reserve_submission') return;
  const wallet = journal.wallet as Hex;
  const submitCall = calls[calls.length - 1]!;
  const carries = (t: TxRecord, call: PlanCall) => callsOfRawTransaction(t.raw, wallet).some((c) => callDigest(c) === callDigest(call));
  const inAsk = (call: PlanCall, status: (t: TxRecord) => boolean) => journal.txsFor('ask').find((t) => status(t) && carries(t, call));

  const reserve = inAsk(calls[0], isLive);
  if (!reserve) {
    if (inAsk(submitCall, isLive)) return;
  } else {
    if (reserve.status !== 'mined' || reserve.blockNumber === undefined) return;
    const submit = inAsk(submitCall, (t) => isLive(t) || t.status === 'reverted');
    if (submit?.status === 'mined') return;
    const reservedAt = (await client.getBlock({ blockNumber: BigInt(reserve.blockNumber) })).timestamp;
    const latest = (await client.getBlock({ blockTag: 'latest' })).timestamp;
    if (latest < reservedAt + LIFETIME - MARGIN) return;
    if (submit && !(await doomed(run, submit, reservedAt, latest))) return;
    out.progress(
      'ask.reservation_expired',
      `the journaled reservation ${reserve.hash} is past its 30 minutes, and the registry keeps its slot until it is cancelled: cancelling it, then reserving again`,
    );
    // A submit journaled for it can no longer pay (below): it goes with it, first, so that no run ever finds the
    // submit in the ask stage without its reservation.
    if (submit) await journal.updateTx(submit.hash, { stage: EXPIRED_STAGE });
    await journal.updateTx(reserve.hash, { stage: EXPIRED_STAGE });
    crashHook('ask:reservation_retired');
  }

  const retired = journal.txsFor(EXPIRED_STAGE).filter((t) => t.status === 'mined' && carries(t, calls[0]!));
  const last = retired[retired.length - 1];
  if (!last) return;
  const stage = cancelStage(retired.length);
  const reserved = callsOfRawTransaction(last.raw, wallet).find((c) => callDigest(c) === callDigest(calls[0]!))!;
  const cancel = cancelReservationCall(g, reserved);
  try {
    await ex.execute(stage, [cancel], 'ordered');
  } catch (error) {
    throw await notCancelled(run, last, submitCall, error);
  }
  // A retired submit still journaled as signed used a nonce below the cancel's, so the chain has its outcome now (a
  // revert: its reservation had expired). Recorded, it stops counting as a payment it can no longer make.
  for (const t of journal.txsFor(EXPIRED_STAGE).filter((t) => t.status === 'signed' && carries(t, submitCall))) {
    const receipt = await receiptOrNone(client, t.hash);
    if (receipt)
      await journal.updateTx(t.hash, {
        status: receipt.status === 'success' ? 'mined' : 'reverted',
        blockNumber: receipt.blockNumber.toString(),
      });
  }
  out.progress('ask.reservation_cancelled', `the expired reservation ${last.hash} is cancelled; reserving again`);
}

/**
 * Whether a submit journaled for an expired reservation can no longer pay: it reverted after the reservation's end
 * (the registry refuses a submit past expiresAt), or it has no receipt and the chain is past that end, so any block
 * that takes it will refuse it too (this run's next transactions take later nonces, so it can only be mined before
 * the cancel and the new reservation). A submit mined in time, or one that reverted for another reason, is left to the
 * executor, which reports it.
 */
async function doomed(run: Run, submit: TxRecord, reservedAt: bigint, latest: bigint): Promise<boolean> {
  const expiresAt = reservedAt + LIFETIME;
  let block = submit.status === 'reverted' ? submit.blockNumber : undefined;
  if (submit.status === 'signed') {
    const receipt = await receiptOrNone(run.client, submit.hash);
    if (!receipt) return latest > expiresAt;
    if (receipt.status === 'success') return false;
    block = receipt.blockNumber.toString();
  }
  if (block === undefined) return false;
  return (await run.client.getBlock({ blockNumber: BigInt(block) })).timestamp > expiresAt;
}

/**
 * The registry would not cancel the reservation (a simulation that reverts, or a cancel that reverted on chain): it
 * holds none of this commitment from this wallet any more. Said so, with the submission that consumed it when the
 * chain shows one (this very question from this wallet, in the reservation's lifetime), instead of a bare revert.
 */
async function notCancelled(run: Run, reserve: TxRecord, submit: PlanCall, error: unknown): Promise<unknown> {
  const known = asKnownError(error);
  if (!(known instanceof ChainError) || (known.code !== 'call_would_revert' && known.code !== 'transaction_reverted')) return error;
  const consumed = await consumingSubmission(run, reserve, submit).catch(() => undefined);
  const what = consumed
    ? `a submission of this very question from this wallet consumed it: transaction ${consumed.transactionHash} (content id ${consumed.contentIds.join(', ')}), which this ask's journal did not record`
    : 'it holds no reservation of this commitment from this wallet (a submission consumed it, or it was cancelled, by a transaction this journal did not record; no submission of this question from this wallet was found in the reservation’s lifetime)';
  return new ChainError(
    'reservation_not_cancelled',
    `the ContentRegistry would not cancel this ask's expired reservation (journaled in ${reserve.hash}): ${what}. Nothing more was sent, and nothing is paid again`,
    {
      hint: consumed
        ? "the question is on chain: do not ask it again with a new clientRequestId unless you mean a second question; check `loopsign status` and the wallet's transactions"
        : "check `loopsign status` and the wallet's transactions (was it used by other software?) before asking again",
      details: consumed ? { consumedBy: consumed } : {},
      cause: error,
    },
  );
}

/** A ContentSubmitted event from this wallet for the questions of the ask's own submit call, within the reservation's life. */
async function consumingSubmission(
  run: Run,
  reserve: TxRecord,
  submit: PlanCall,
): Promise<{ transactionHash: Hex; contentIds: string[] } | undefined> {
  const registry = run.chain.contracts.contentRegistry as Hex | undefined;
  if (!registry || reserve.blockNumber === undefined) return undefined;
  const hashes = questionsOfSubmit(submit.data).map(contentHash);
  const from = BigInt(reserve.blockNumber);
  const latest = await run.client.getBlockNumber();
  // Every block is at least a second after the one before on a production chain: a submit that consumed the
  // reservation came within this many blocks of it (and RPCs limit a log query's range).
  const to = latest < from + LIFETIME ? latest : from + LIFETIME;
  const logs = await run.client.getLogs({
    address: registry,
    event: contentSubmitted,
    args: { submitter: run.wallet },
    fromBlock: from,
    toBlock: to,
  });
  const hits = logs.filter((l) => hashes.some((h) => sameHex(h, l.args.contentHash)));
  if (hits.length === 0) return undefined;
  return { transactionHash: hits[0]!.transactionHash!, contentIds: hits.map((l) => String(l.args.contentId)) };
}
