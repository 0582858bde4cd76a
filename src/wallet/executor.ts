// Executes checked plans from the local wallet (chain.md §11–12).
// - Ordered: call by call, each receipt awaited, the reservation's minimum age and waitAfterMs honoured.
// - Atomic: one EIP-7702 self-call to the chain's pinned ERC-7821 delegate, simulated first; a batch that would
//   revert, a missing delegate, or a wallet delegated elsewhere is refused and nothing is sent.
// Every transaction is admitted by the operation's spend ledger, signed and recorded (hash and raw bytes) in one
// write transaction of the database, and broadcast only after it commits; on resume a journaled transaction is
// found on chain or re-broadcast byte for byte, never re-signed. A resumed plan is matched with the journal call by
// call (target and full calldata), never by position or grouping: a call some journaled transaction already carries
// is never signed again, whatever mode this run uses, and the rest of the plan is sent around it. A whole plan runs
// under the wallet's claim (a row in the database, src/store/claims.ts), so concurrent loopsign processes on one
// wallet take turns: no two transactions signed with one nonce, and no plan's exact approval overwritten by
// another's. The claim is not a database lock: no lock is held across a broadcast or a receipt wait.
import {
  encodeAbiParameters,
  encodeFunctionData,
  formatGwei,
  keccak256,
  parseTransaction,
  toBytes,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { ChainError, RefusedError, asKnownError, noAnswerFromNode, nodeErrorNotRevert } from '../errors.js';
import type { SpendLedger } from '../store/ledger.js';
import { callEffects, callsOfRawTransaction, type CallLike } from './spend-effects.js';
import type { ChainConfig } from '../chains/table.js';
import { shortMessage } from '../chains/client.js';
import { BATCH_MODE, erc7821Abi } from '../protocol/abi.js';
import { Operation } from '../store/operation.js';
import type { Db } from '../store/db.js';
import { highestSlot, openSlots, type SlotCancel, type SlotRow } from '../store/slots.js';
import { crashHook } from '../store/crash-hook.js';
import { finalizedNonceCount, notFinal, ownReceipt, receiptOrNone, takerOf } from './finality.js';
import { isLive, type Kind, type TxRecord } from '../store/records.js';
import { claim } from '../store/claims.js';
import type { Output } from '../output.js';
import type { PlanCall } from './plan-guard.js';
import { allowanceShortfall, emptyRevertNote, revertData, revertReason } from './revert-reason.js';
import { timed } from '../timings.js';

/** How many times a receipt wait cut short by a failed RPC read starts again (pauses of 0.5, 1, 2 and 4 s). */
const RECEIPT_WAIT_RESTARTS = 4;

export type ExecutionMode = 'ordered' | 'atomic' | 'segmented';

export interface ExecutionResult {
  /** One hash per transaction carrying the plan's calls, in plan order (journaled ones included). */
  hashes: Hex[];
  transactions: number;
  /** Transactions signed by this run. */
  sent: number;
}

export interface ExecutorOptions {
  client: PublicClient;
  account: LocalAccount;
  chain: ChainConfig;
  /** The operation whose plan this is (its journal: transactions signed before, and where new ones are recorded). */
  op: Operation<Kind>;
  out: Output;
  /** Every signature is admitted by this ledger first. */
  ledger: SpendLedger;
  /** The user agreed to delegate this wallet to the pinned batch delegate (--atomic). */
  allowDelegation: boolean;
  /** Why this signer cannot sign an EIP-7702 authorization, if it cannot (a remote signer, a Ledger). */
  cannotDelegate?: string;
  /** Refuse to sign above this max fee per gas (wei). */
  maxFeePerGas: bigint;
  /** When a slot's fate is not final yet, wait in place (a terminal's --wait-final) instead of stopping (exit 4). */
  waitFinal?: boolean;
  /**
   * The configured chain's pinned DeleGator (issue 38), trusted as this wallet's batch delegate once the wallet runs it;
   * asked for only by an atomic plan.
   */
  deleGator?: () => Promise<TrustedDeleGator | undefined>;
}

/**
 * An owner's account on the pinned DeleGator of a budget grant (issue 38) runs its atomic plans through the DeleGator's
 * ERC-7579 `execute(mode, executionCalldata)`: the same selector, batch mode 0x01 and (target, value, data)[] encoding as
 * ERC-7821, callable by the account itself. Its address comes from the chain's trust anchors (src/chains/delegation.ts).
 */
export interface TrustedDeleGator {
  address: Hex;
  /** Refuses unless the code at `address` is the pinned (or first-use recorded) DeleGator's. */
  verify(): Promise<void>;
}

const RESERVATION_WAIT_MS = 1250;
// --wait-final waits at most this long (Base's finalized block is about 20 minutes behind its head).
const FINAL_WAIT_MS = 3_600_000;
// Another process's plan takes seconds to a minute on a live chain; waiting longer than this means it is stuck.
const WALLET_LOCK_WAIT_MS = 600_000;

export class Executor {
  private readonly client: PublicClient;
  private readonly account: LocalAccount;
  private readonly chain: ChainConfig;
  private readonly op: Operation<Kind>;
  private readonly out: Output;
  private readonly ledger: SpendLedger;
  private readonly allowDelegation: boolean;
  private readonly cannotDelegate: string | undefined;
  private readonly maxFeePerGas: bigint;
  private readonly waitFinal: boolean;
  private readonly deleGator: (() => Promise<TrustedDeleGator | undefined>) | undefined;
  private holding = false;

  constructor(o: ExecutorOptions) {
    ({
      client: this.client,
      account: this.account,
      chain: this.chain,
      op: this.op,
      out: this.out,
      ledger: this.ledger,
      allowDelegation: this.allowDelegation,
      cannotDelegate: this.cannotDelegate,
      maxFeePerGas: this.maxFeePerGas,
    } = o);
    this.waitFinal = o.waitFinal === true;
    this.deleGator = o.deleGator;
  }

  /** The transactions a plan becomes under a mode (chain.md §12.5 for segmented). */
  static segments(calls: PlanCall[], mode: ExecutionMode): number[][] {
    // Nothing left to send (a rerun after every call was carried) is no transaction, not an empty batch.
    if (calls.length === 0) return [];
    if (mode === 'ordered') return calls.map((_, i) => [i]);
    if (mode === 'atomic') return [calls.map((_, i) => i)];
    const out: number[][] = [];
    let run: number[] = [];
    calls.forEach((c, i) => {
      const alone = c.phase === 'reserve_submission' || (c.waitAfterMs ?? 0) > 0;
      if (alone) {
        if (run.length) out.push(run);
        out.push([i]);
        run = [];
      } else run.push(i);
    });
    if (run.length) out.push(run);
    return out;
  }

  async execute(stage: string, calls: PlanCall[], mode: ExecutionMode): Promise<ExecutionResult> {
    return this.withWalletLock(() => this.executeLocked(stage, calls, mode));
  }

  /**
   * Runs `fn` under the wallet's claim: one plan of this wallet at a time, across every loopsign process. Within `fn`
   * this executor's `execute` runs under the same claim (a flow may hold it from planning to execution).
   */
  async withWalletLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.holding) return fn();
    const held = await claim(this.op.store, `wallet:${this.chain.chainId}:${this.account.address.toLowerCase()}`, {
      waitMs: WALLET_LOCK_WAIT_MS,
      onWait: () => this.out.progress('wallet.wait', `waiting for another loopsign process sending from ${this.account.address}`),
      busy: () =>
        new ChainError(
          'wallet_busy',
          `another loopsign process has been sending from ${this.account.address} for over ${WALLET_LOCK_WAIT_MS / 60_000} minutes; nothing was signed`,
          {
            hint: 'wait for it to finish, then run the same command again (the journal resumes where this stopped)',
          },
        ),
    });
    this.holding = true;
    try {
      // What this run read of its journal before the wait may be stale: another operation that held the wallet
      // meanwhile may have signed the very bytes of a transaction journaled here and taken them over (dropped here).
      // Settling from the stale view took that transaction back for this operation's own ('already mined').
      this.op.refresh();
      return await fn();
    } finally {
      this.holding = false;
      await held.release();
    }
  }

  /**
   * Settles what `stage` journaled before any plan is made for it: each live transaction is found on chain or
   * re-broadcast byte for byte, and one whose nonce another mined transaction of this wallet took is marked dropped.
   * What stays live is what a plan must keep; when nothing does, nothing of the journaled plan can reach the chain.
   * For stages without a reservation (a reservation's minimum age is `execute`'s to wait for).
   */
  async settleJournaled(stage: string): Promise<void> {
    await this.withWalletLock(async () => {
      await this.reviveDropped(stage);
      for (const tx of this.op.txsFor(stage).filter(isLive)) await this.resume(tx, async () => {});
    });
  }

  /**
   * A dropped record of `stage` is one whose nonce another mined transaction took; a chain can reorganise that
   * transaction away and mine these very bytes in its place (a lagging node's rejected copy, or anyone who saw them).
   * Then they paid: the record is mined again, counts, and covers its calls, instead of having them signed a second
   * time. The node's "no receipt" leaves it dropped; a read that fails is the node's failure (exit 4), not "no receipt".
   */
  private async reviveDropped(stage: string): Promise<void> {
    const wallet = this.account.address;
    const covered = new Set(
      this.op
        .txsFor(stage)
        .filter(isLive)
        .flatMap((t) => callsOfRawTransaction(t.raw, wallet).map(callDigest)),
    );
    for (const tx of this.op.txsFor(stage).filter((t) => t.status === 'dropped')) {
      // A record found void at finality cannot be mined: a receipt for it now is a node's lie (or a reorg below the
      // finalized block), never a reason to count it again beside the calls signed anew (issue 35).
      if (tx.voidChecked) continue;
      // A receipt of another transaction is no receipt of this one.
      const receipt = await ownReceipt(this.client, tx.hash);
      if (!receipt) {
        // Dropped before slots (schema 1: at one confirmation of another transaction): its calls are signed anew only
        // once it is void at finality (a live record already carrying them was signed before this version).
        const uncovered = callsOfRawTransaction(tx.raw, wallet).some((c) => !covered.has(callDigest(c)));
        if (uncovered) await this.voidOrWait(tx);
        continue;
      }
      const status = receipt.status === 'success' ? 'mined' : 'reverted';
      if (await this.op.reviveMined(tx.hash, status, receipt.blockNumber.toString(), receipt.blockHash))
        this.out.progress(
          'tx.revived',
          `transaction ${tx.hash}, set aside because another transaction took its nonce, is ${status} after all (the chain reorganised): it counts, and its calls are not signed again`,
        );
    }
  }

  private async executeLocked(stage: string, calls: PlanCall[], mode: ExecutionMode): Promise<ExecutionResult> {
    const digests = calls.map(callDigest);
    const wallet = this.account.address;
    let coveredBy: (TxRecord | undefined)[];
    const receiptOf = new Map<Hex, TransactionReceipt>();
    // The reservation's minimum age is waited for once, before the first transaction this run puts on the wire after
    // the reservation: the one right after it in a fresh run; the submit itself when a run that stopped after the
    // approval resumes; a journaled submit that never reached the node before it is broadcast again. The first
    // run's wait may have been cut short (at RESERVATION_WAIT_MS, or by a node's word).
    const reserveAt = calls.findIndex((c) => c.phase === 'reserve_submission');
    let aged = false;
    const waitAge = async (first: number, reservation: Hex | undefined) => {
      const receipt = reservation && receiptOf.get(reservation);
      if (aged || reserveAt < 0 || first <= reserveAt || !receipt) return;
      aged = true;
      await timed('reservation age', () => this.waitReservationAge(receipt));
    };
    // A journaled transaction found dropped while resuming changes what is covered: plan again around what is left.
    for (;;) {
      await this.reviveDropped(stage);
      // What every journaled transaction of this stage carried, read back from its signed bytes.
      const journaled = this.op.txsFor(stage).map((tx) => ({ tx, digests: callsOfRawTransaction(tx.raw, wallet).map(callDigest) }));
      for (const j of journaled) {
        if (isLive(j.tx) && j.digests.some((d) => !digests.includes(d))) {
          throw new RefusedError(
            'plan_changed',
            `the plan for ${stage} differs from the one journaled before (transaction ${j.tx.hash} carried a call this plan does not have); refusing to guess what was paid`,
            {
              hint: 'run `loopsign status` to see what is on chain; nothing more was sent',
            },
          );
        }
      }
      coveredBy = digests.map((d) => journaled.find((j) => isLive(j.tx) && j.digests.includes(d))?.tx);
      digests.forEach((d, i) => {
        const reverted = journaled.find((j) => j.tx.status === 'reverted' && j.digests.includes(d));
        if (!coveredBy[i] && reverted) throw this.reverted(reverted.tx.hash, [i]);
      });
      // Journaled transactions first (mined, pending or lost before broadcast), in the order they were signed.
      let dropped = false;
      for (const tx of new Set(coveredBy.filter((t): t is TxRecord => t !== undefined))) {
        if (receiptOf.has(tx.hash)) continue;
        const receipt = await this.resume(tx, () => waitAge(coveredBy.indexOf(tx), coveredBy[reserveAt]?.hash));
        if (receipt === 'dropped') {
          dropped = true;
          break;
        }
        receiptOf.set(tx.hash, receipt);
      }
      if (!dropped) break;
    }

    // Then the calls no journaled transaction carries, grouped by this run's mode.
    const remaining = calls.map((_, i) => i).filter((i) => !coveredBy[i]);
    const segments = Executor.segments(
      remaining.map((i) => calls[i]!),
      mode,
    ).map((seg) => seg.map((k) => remaining[k]!));
    // A journaled transaction mined as one of its fee bumps is named by the bytes the chain holds.
    const hashOf: (Hex | undefined)[] = coveredBy.map((t) => t && (receiptOf.get(t.hash)?.transactionHash ?? t.hash));
    // The whole rest of the plan is admitted before its first signature, so a plan the ledger would stop half-way
    // (say, after a reservation) sends nothing at all; each transaction is admitted again as it is signed.
    await this.ledger.check(
      stage,
      remaining.flatMap((i) => callEffects(this.chain, calls[i]!)),
      this.client,
    );
    let sent = 0;
    for (const [k, seg] of segments.entries()) {
      const segCalls = seg.map((i) => calls[i]!);
      await waitAge(seg[0]!, hashOf[reserveAt]);
      const label = segCalls.map((c) => c.phase).join(' + ');
      this.out.progress(`${stage}.send`, `sending ${label} (${k + 1}/${segments.length})`, { stage, calls: seg });
      const receipt = seg.length === 1 ? await this.sendCall(stage, seg, segCalls[0]!) : await this.sendBatch(stage, seg, segCalls);
      sent++;
      receiptOf.set(receipt.transactionHash, receipt);
      for (const i of seg) hashOf[i] = receipt.transactionHash;
      const wait = segCalls[segCalls.length - 1]!.waitAfterMs ?? 0;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const hashes = [...new Set(hashOf as Hex[])];
    return { hashes, transactions: hashes.length, sent };
  }

  /**
   * A journaled transaction: mined, pending, or lost before broadcast (then the same bytes go out again). 'dropped'
   * when its slot is void: its nonce is used in the finalized chain by none of its versions (voidOrWait), so it can
   * never be mined; it stops counting and its calls are signed again at a new nonce. A record the journal saw mined is
   * never dropped on a node's word.
   */
  private async resume(tx: TxRecord, beforeRebroadcast: () => Promise<void>): Promise<TransactionReceipt | 'dropped'> {
    if (tx.status === 'reverted') throw this.reverted(tx.hash, tx.calls);
    let receipt = await ownReceipt(this.client, tx.hash).catch(() => undefined);
    if (!receipt) {
      for (const v of tx.versions ?? []) {
        const taken = await ownReceipt(this.client, v.hash).catch(() => undefined);
        if (!taken) continue;
        // A fee bump carries these very calls: mined, they paid, in the bump's bytes.
        if (v.kind === 'bump') return this.adopt(tx, v.hash, taken);
        // A cancel of this slot (signed by another run to fill the gap this one left) took the nonce: these calls did
        // not pay, and move to a new nonce once that is final. Seen mined, this record's own bytes won the slot: a
        // receipt for its cancel now is the node's word against it, unless the block it was seen in is gone (a reorg).
        if (tx.status === 'mined') await this.refuseIfStillCanonical(tx);
        await this.op.updateVersion(v.hash, taken.status === 'success' ? 'mined' : 'reverted', taken.blockNumber.toString());
        return this.voidOrWait(tx);
      }
      // The version to wait for: the latest fee bump, or the record's own bytes; a new bump when the chain's base fee
      // rose past what it offers (it could wait for ever).
      let current: { hash: Hex; raw: Hex; nonce: number } = [...(tx.versions ?? [])].reverse().find((v) => v.kind === 'bump') ?? tx;
      if (tx.status === 'signed') current = await this.bumpIfUnderpriced(tx, current);
      const pending = await this.client.getTransaction({ hash: current.hash }).catch(() => undefined);
      if (!pending) {
        await beforeRebroadcast();
        this.out.progress('tx.rebroadcast', `re-broadcasting journaled transaction ${current.hash}`);
        try {
          await this.broadcast(current.raw, current.hash, current.nonce);
        } catch (error) {
          if (!(error instanceof ChainError && error.code === 'nonce_used_elsewhere')) throw error;
          if (tx.status === 'mined') await this.refuseIfStillCanonical(tx, error);
          return this.voidOrWait(tx);
        }
      }
      const waited = await this.waitReceipt(current.hash);
      const by = waited.transactionHash.toLowerCase();
      if (by !== tx.hash.toLowerCase()) {
        this.op.refresh();
        const now = this.op.txs().find((t) => t.hash === tx.hash) ?? tx;
        const bump = now.versions?.find((v) => v.kind === 'bump' && v.hash.toLowerCase() === by);
        if (bump) return this.adopt(now, bump.hash, waited);
        if (now.status === 'mined') await this.refuseIfStillCanonical(now);
        return this.voidOrWait(now);
      }
      receipt = waited;
    } else {
      this.out.progress('tx.resume', `transaction ${tx.hash} is already mined; not sending it again`);
    }
    return this.finish(tx, receipt);
  }

  /**
   * A fee bump (issue 35: a slot's versions are its bytes, fee bumps, and at most one cancel). An open slot whose max
   * fee is below the latest block's base fee cannot be mined until fees fall; its calls are signed again at the same
   * nonce (same recipient, data, value, gas and authorization) with both fees raised by at least an eighth (what nodes
   * ask of a replacement) and room for the base fee to double, within the configured cap. The bump is recorded before
   * it is sent; only one version of a nonce can be mined, and the calls' effects are counted once, with the record.
   */
  private async bumpIfUnderpriced(tx: TxRecord, current: { hash: Hex; raw: Hex; nonce: number }) {
    const old = parseTransaction(current.raw);
    if ((old.type !== 'eip1559' && old.type !== 'eip7702') || old.maxFeePerGas === undefined) return current;
    const base = (
      await this.client.getBlock({ blockTag: 'latest' }).catch((error: unknown) => {
        throw asKnownError(error);
      })
    ).baseFeePerGas;
    if (base === null || base === undefined || old.maxFeePerGas >= base) return current;
    const network = await this.fees();
    const raise = (v: bigint) => v + v / 8n + 1n;
    const maxPriorityFeePerGas = [raise(old.maxPriorityFeePerGas ?? 0n), network.maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
    let maxFeePerGas = [raise(old.maxFeePerGas), 2n * base + maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
    if (maxFeePerGas > this.maxFeePerGas) maxFeePerGas = this.maxFeePerGas;
    if (maxFeePerGas < raise(old.maxFeePerGas) || maxFeePerGas <= base || maxPriorityFeePerGas > maxFeePerGas)
      throw new ChainError(
        'fee_cap',
        `transaction ${current.hash} (nonce ${tx.nonce}) offers ${formatGwei(old.maxFeePerGas)} gwei per gas, below the base fee of ${formatGwei(base)} gwei, and a replacement would pass the cap of ${formatGwei(this.maxFeePerGas)} gwei; nothing was signed`,
        {
          hint: 'wait for fees to fall and run the same command again (the journaled transaction is kept), or raise maxFeePerGasGwei in the config file (or LOOPSIGN_MAX_FEE_GWEI)',
        },
      );
    const raw = await this.account.signTransaction({
      type: old.type,
      chainId: old.chainId!,
      nonce: old.nonce!,
      to: old.to!,
      data: old.data ?? '0x',
      value: old.value ?? 0n,
      gas: old.gas!,
      ...(old.accessList ? { accessList: old.accessList } : {}),
      ...(old.type === 'eip7702' ? { authorizationList: old.authorizationList } : {}),
      maxFeePerGas,
      maxPriorityFeePerGas,
    } as Parameters<typeof this.account.signTransaction>[0]);
    // What is recorded is what was asked for: the very calls of the record, at its nonce, on this chain.
    const bump = parseTransaction(raw);
    const same = (a: unknown, b: unknown) =>
      JSON.stringify(a, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) ===
      JSON.stringify(b, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
    if (
      bump.nonce !== tx.nonce ||
      bump.chainId !== old.chainId ||
      bump.to?.toLowerCase() !== old.to?.toLowerCase() ||
      (bump.data ?? '0x') !== (old.data ?? '0x') ||
      (bump.value ?? 0n) !== (old.value ?? 0n) ||
      bump.gas !== old.gas ||
      !same(bump.type === 'eip7702' ? bump.authorizationList : undefined, old.type === 'eip7702' ? old.authorizationList : undefined)
    )
      throw new RefusedError(
        'signed_effects_mismatch',
        'refused: the signed fee bump does not carry the calls of the transaction it replaces; it was not recorded or sent',
        {
          details: { rule: 'signed_effects_mismatch' },
        },
      );
    const version = { hash: keccak256(raw), raw, nonce: tx.nonce };
    await this.op.recordBump(tx.hash, version);
    this.out.progress(
      'tx.bump',
      `transaction ${current.hash} (nonce ${tx.nonce}) offers ${formatGwei(old.maxFeePerGas)} gwei per gas, below the base fee of ${formatGwei(base)} gwei: the same calls signed again at its nonce with ${formatGwei(maxFeePerGas)} gwei (${version.hash}); only one of them can be mined`,
      { transaction: current.hash, bump: version.hash, nonce: tx.nonce },
    );
    this.op.refresh();
    return version;
  }

  /** A fee bump of `tx` was mined: its bytes become the record's, and the calls are paid once, by them. */
  private async adopt(tx: TxRecord, bump: Hex, receipt: TransactionReceipt): Promise<TransactionReceipt> {
    await this.op.adoptBump(tx.hash, bump);
    this.out.progress('tx.bump_mined', `transaction ${bump}, a fee bump of ${tx.hash}, is mined: it carries the same calls`);
    const now = this.op.txs().find((t) => t.hash.toLowerCase() === bump.toLowerCase());
    if (!now) throw new Error(`the adopted bump ${bump} is not in the journal`);
    return this.finish(now, receipt);
  }

  /**
   * A record the journal saw mined, which the node now shows neither mined nor able to be. Either a reorg took its block
   * away, the receipt it was recorded from was forged, or the node lies now. The node's word about the transaction
   * decides nothing; the block it was seen in does. Gone from its height (another hash): a reorg. Still there, it must
   * show which transaction of this wallet used the nonce in it: this one (the node contradicts itself), another one (a
   * block cannot hold two transactions of one sender at one nonce: the recorded receipt was not this transaction's), or
   * none (nothing to tell them apart). Refused (journal_contradicted) unless a reorg or another taker is shown; then
   * voidOrWait judges the slot at finality like any other. Records from before block hashes were kept (schema 4):
   * refused, as before.
   */
  private async refuseIfStillCanonical(tx: TxRecord, cause?: unknown): Promise<void> {
    if (!tx.blockHash || tx.blockNumber === undefined) throw this.contradicted(tx, cause);
    let block: Awaited<ReturnType<PublicClient['getBlock']>> | undefined;
    try {
      block = await this.client.getBlock({ blockNumber: BigInt(tx.blockNumber), includeTransactions: true });
    } catch (error) {
      if ((error as Error)?.name !== 'BlockNotFoundError') throw asKnownError(error);
    }
    if (!block || block.hash?.toLowerCase() !== tx.blockHash.toLowerCase()) return;
    const wallet = this.account.address.toLowerCase();
    const taker = block.transactions.find((t) => typeof t !== 'string' && t.from.toLowerCase() === wallet && t.nonce === tx.nonce);
    if (typeof taker !== 'object' || taker.hash.toLowerCase() === tx.hash.toLowerCase()) throw this.contradicted(tx, cause);
  }

  /** A transaction the journal saw mined that the node now shows neither mined nor able to be: the node's fault. */
  private contradicted(tx: TxRecord, cause?: unknown): ChainError {
    return new ChainError(
      'journal_contradicted',
      `transaction ${tx.hash} (nonce ${tx.nonce}) was mined in block ${tx.blockNumber ?? '?'} when loopsign last looked, and the RPC now says another transaction used its nonce; nothing was signed`,
      {
        hint: "a record seen mined is never set aside on one node's word: check the transaction in a block explorer, then run the same command again with another RPC (--rpc-url)",
        details: { transaction: tx.hash, nonce: tx.nonce, blockNumber: tx.blockNumber },
        cause,
      },
    );
  }

  /**
   * The one way a transaction's calls reach a new nonce (issue 35): its slot is void when the nonce count at the
   * chain's finalized block is past its nonce and none of its versions has a receipt (read after that count). Then it
   * can never be mined: it is dropped ('dropped'). Found mined meanwhile, it is what it is. Otherwise whether it paid
   * is not final yet: nothing is signed, and the run stops (exit 4) saying when to run again. A failed read is no
   * verdict (the node's failure, exit 4). A reorg above the finalized block can no longer mine these bytes beside a
   * re-signed copy.
   */
  private async voidOrWait(tx: TxRecord): Promise<TransactionReceipt | 'dropped'> {
    const final = await finalizedNonceCount(this.client, this.chain, this.account.address);
    if (final.count > tx.nonce) {
      const own = await ownReceipt(this.client, tx.hash);
      if (own) return this.finish(tx, own);
      for (const v of tx.versions ?? []) {
        if (v.kind !== 'bump') continue;
        const bumped = await ownReceipt(this.client, v.hash);
        if (bumped) return this.adopt(tx, v.hash, bumped);
      }
      // The only door to a new nonce opens for a record the journal saw mined only when the block it was seen in is no
      // longer the chain's at that height (a reorg), checked again here, at finality.
      if (tx.status === 'mined') await this.refuseIfStillCanonical(tx);
      // "No receipt" is not enough: the transaction that took the nonce must be found, and be none of this slot's
      // versions carrying its calls (a cancel carries none).
      const taker = await takerOf(this.client, this.account.address, tx.nonce, final.block);
      const ours = [tx.hash, ...(tx.versions ?? []).filter((v) => v.kind === 'bump').map((v) => v.hash)].map((h) => h.toLowerCase());
      if (taker.hash === undefined || ours.includes(taker.hash.toLowerCase()))
        throw new ChainError(
          'rpc_inconsistent',
          taker.hash === undefined
            ? `no transaction of ${this.account.address} with nonce ${tx.nonce} is in block ${taker.block}, where the RPC's count of its nonces passed it (an EIP-7702 authorization may have used it): whether transaction ${tx.hash} paid cannot be told; nothing was signed`
            : `the RPC shows transaction ${tx.hash} in block ${taker.block} and answers no receipt for it: its answers contradict each other; nothing was signed`,
          {
            hint: "check the wallet's transactions in a block explorer, then run the same command again with another RPC (--rpc-url)",
            details: { transaction: tx.hash, nonce: tx.nonce, block: taker.block.toString(), taker: taker.hash },
          },
        );
      for (const v of tx.versions ?? []) {
        const taken = await ownReceipt(this.client, v.hash);
        if (taken) await this.op.updateVersion(v.hash, taken.status === 'success' ? 'mined' : 'reverted', taken.blockNumber.toString());
      }
      await this.op.markVoid(tx.hash, tx.status === 'mined');
      this.out.progress(
        'tx.void',
        `transaction ${tx.hash} can never be mined: nonce ${tx.nonce} is used in the finalized chain (block ${final.block}) by another transaction; it paid nothing, and its calls are signed again at a new nonce`,
      );
      return 'dropped';
    }
    const waiting = await notFinal(this.client, this.chain, tx, final.block);
    if (!this.waitFinal) throw waiting;
    // Waiting in place: the finalized block is read again until it reaches the block named, then the slot judged anew.
    const at = BigInt(waiting.details!.finalAtBlock as string);
    const deadline = Date.now() + FINAL_WAIT_MS;
    for (let head = final.block; head < at; ) {
      if (Date.now() > deadline) throw waiting;
      this.out.progress('tx.wait_final', `waiting for block ${at} to be final (the chain's finalized block is ${head})`, {
        finalAtBlock: at.toString(),
        finalizedBlock: head.toString(),
      });
      await new Promise((r) => setTimeout(r, Math.max(1000, this.client.pollingInterval)));
      head = (await finalizedNonceCount(this.client, this.chain, this.account.address)).block;
    }
    return this.voidOrWait(tx);
  }

  private async finish(tx: TxRecord, receipt: TransactionReceipt): Promise<TransactionReceipt> {
    const status = receipt.status === 'success' ? 'mined' : 'reverted';
    await this.op.updateTx(tx.hash, { status, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash });
    if (status === 'reverted') throw this.reverted(tx.hash, tx.calls);
    return receipt;
  }

  private reverted(hash: Hex, calls: number[]): ChainError {
    return new ChainError('transaction_reverted', `transaction ${hash} (plan call ${calls.join(', ')}) reverted on chain`, {
      hint: 'nothing after it was sent; check `loopsign status` and the transaction in a block explorer',
    });
  }

  private async waitReceipt(hash: Hex): Promise<TransactionReceipt> {
    // viem's wait gives up at the first failed receipt read (a JSON-RPC error, an empty answer, a dropped
    // connection, each after the transport's own retries). A flaky node's failure is no word on the transaction:
    // the wait starts again a few times (within the same deadline) before a node that keeps failing is reported.
    const deadline = Date.now() + 180_000;
    for (let failures = 0; ; failures++) {
      try {
        return await timed('blocks', () => this.client.waitForTransactionReceipt({ hash, timeout: Math.max(1, deadline - Date.now()) }));
      } catch (error) {
        const pause = 500 * 2 ** failures;
        const known = asKnownError(error);
        if (
          failures < RECEIPT_WAIT_RESTARTS &&
          known instanceof ChainError &&
          known.code === 'rpc_failed' &&
          Date.now() + pause < deadline
        ) {
          await new Promise((r) => setTimeout(r, pause));
          continue;
        }
        throw new ChainError('receipt_timeout', `no receipt for ${hash}: ${shortMessage(error)}`, {
          hint: 'the transaction is journaled; run the same command again to resume',
        });
      }
    }
  }

  private async broadcast(raw: Hex, hash: Hex, nonce: number): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (error) {
      // The node's own words are in viem's details (its short message is only "Transaction creation failed").
      const m = `${shortMessage(error)} ${(error as { details?: string }).details ?? ''}`.toLowerCase();
      if (m.includes('already known') || m.includes('already imported')) return;
      if (m.includes('nonce too low')) {
        // Fine when it is this very transaction (sent before a crash); otherwise another transaction from this
        // wallet, sent outside loopsign, took the nonce, and this one can never be mined: say so now rather than
        // wait for a receipt that cannot come. Only the node's word that it has no such transaction says so: a read
        // that failed (a timeout, a 503) says nothing, and "paid nothing" would be false if this one was mined.
        let read = await this.client.getTransaction({ hash }).then(
          () => 'found' as const,
          (e: unknown) => ((e as Error)?.name === 'TransactionNotFoundError' ? ('absent' as const) : e),
        );
        if (read === 'found') return;
        // "No such transaction" is the node's word only if the same reads also show the nonce used: a load balancer
        // whose reading backend lags behind the one that took the transaction knows neither (it answers null, and the
        // nonce as it was), and "paid nothing" would be false there too.
        if (read === 'absent') {
          read = await this.client.getTransactionCount({ address: this.account.address, blockTag: 'latest' }).then(
            (count) =>
              count > nonce
                ? ('absent' as const)
                : new Error(`its reads show nonce ${nonce} unused yet (the latest block's count is ${count})`),
            (e: unknown) => e,
          );
        }
        if (read !== 'absent') {
          throw new ChainError(
            'broadcast_failed',
            `the RPC says nonce ${nonce} is used, and whether by transaction ${hash} itself could not be read: ${shortMessage(read)}`,
            {
              hint: 'the signed transaction is journaled; run the same command again (it is resent only if the chain does not have it)',
              cause: read,
            },
          );
        }
        throw new ChainError(
          'nonce_used_elsewhere',
          `nonce ${nonce} of ${this.account.address} is used by another transaction than ${hash} at the chain's head`,
          {
            // Callers turn this into a verdict at finality (voidOrWait); the words are for a caller that does not.
            hint: 'do not use this wallet from other software while loopsign is running; run the same command again',
          },
        );
      }
      // A timeout leaves it unknown whether the node took the transaction; the journal makes a rerun safe either way.
      throw new ChainError('broadcast_failed', `the RPC did not accept the transaction: ${shortMessage(error)}`, {
        hint: 'the signed transaction is journaled; run the same command again (it is resent only if the chain does not have it)',
        cause: error,
      });
    }
  }

  /**
   * chain.md §6.11: the submit must come at least 1 s of chain time after the reservation's block — in a block
   * stamped at least that late. Sent once the latest block is, or once the block the node is building (pending)
   * is: a live chain stamps every later block later still, and an automining dev chain (anvil), which can stamp
   * two blocks alike, stamps its next one at its clock, which the pending block shows. So on such a chain the
   * wait ends when its clock passes the next second (half a second on average) instead of after a fixed 1.25 s;
   * a node that shows neither still gets that one wall-clock wait, as before. A node that fails or never answers a
   * read here shows nothing: the wait still ends at RESERVATION_WAIT_MS (the reservation is mined and journaled, and
   * a node that stays broken fails the next step, which says so), never with a read's raw error (an "internal error"
   * with the reservation paid for) nor after the RPC timeout's retries (a minute at the default 20 s).
   */
  private async waitReservationAge(reserve: TransactionReceipt): Promise<void> {
    const start = Date.now();
    // A read's answer, or undefined when it fails or does not come before the wait's end.
    const read = <T>(request: () => Promise<T>): Promise<T | undefined> => {
      let timer: NodeJS.Timeout | undefined;
      const end = new Promise<undefined>(
        (r) => (timer = setTimeout(() => r(undefined), Math.max(0, start + RESERVATION_WAIT_MS - Date.now()))),
      );
      return Promise.race([request().catch(() => undefined), end]).finally(() => clearTimeout(timer));
    };
    const reserved = await read(() => this.client.getBlock({ blockNumber: reserve.blockNumber }));
    const due = reserved === undefined ? undefined : reserved.timestamp + 1n;
    for (;;) {
      if (Date.now() - start >= RESERVATION_WAIT_MS) return;
      if (due !== undefined) {
        const [latest, pending] = await Promise.all([
          read(() => this.client.getBlock({ blockTag: 'latest' })),
          read(() => this.client.getBlock({ blockTag: 'pending' })),
        ]);
        if ((latest !== undefined && latest.timestamp >= due) || (pending !== undefined && pending.timestamp >= due)) return;
        if (Date.now() - start >= RESERVATION_WAIT_MS) return;
      }
      // One look per polling interval (100 ms on the sandbox's local node), at most one every 250 ms: each look is two
      // block reads, and looking four times as often cost an ask about 24 reads (some 40 ms of CPU) to gain 37 ms.
      await new Promise((r) =>
        setTimeout(r, Math.min(250, this.client.pollingInterval, Math.max(0, start + RESERVATION_WAIT_MS - Date.now()))),
      );
    }
  }

  private async fees() {
    const f = await this.client.estimateFeesPerGas();
    if (f.maxFeePerGas! > this.maxFeePerGas) {
      throw new ChainError(
        'fee_cap',
        `the network asks a max fee of ${formatGwei(f.maxFeePerGas!)} gwei per gas, above the cap of ${formatGwei(this.maxFeePerGas)} gwei; nothing was signed`,
        {
          hint: 'wait for fees to fall and run the same command again, or raise maxFeePerGasGwei in the config file (or LOOPSIGN_MAX_FEE_GWEI)',
        },
      );
    }
    return { maxFeePerGas: f.maxFeePerGas!, maxPriorityFeePerGas: f.maxPriorityFeePerGas! };
  }

  /**
   * The wei a call sends: zero, but for the one plain transfer of a `budget grant --eth-now` operation, whose chain copy
   * names its recipient and amount (and no other operation's does). Any other value is refused before signing.
   */
  private valueOf(call: PlanCall): bigint {
    const v = BigInt(call.value ?? '0');
    const e = this.chain.ethNow;
    if (v === 0n) return 0n;
    if (e && call.data === '0x' && call.to.toLowerCase() === e.to.toLowerCase() && v === e.value) return v;
    throw new RefusedError('unaccounted_call', `refused: a call to ${call.to} sends ${v} wei; loopsign sends ETH only as --eth-now says`, {
      hint: 'nothing was signed',
      details: { rule: 'unaccounted_call', to: call.to },
    });
  }

  private async sendCall(stage: string, seg: number[], call: PlanCall): Promise<TransactionReceipt> {
    const from = this.account.address;
    const value = this.valueOf(call);
    let gas: bigint;
    try {
      gas = await this.client.estimateGas({ account: from, to: call.to, data: call.data, value, blockTag: 'pending' });
    } catch (error) {
      // No answer is no revert: the node's failure (rpc_failed, exit 4), not "would revert"; so are an error answer
      // that names no revert and an answer that cannot be read (rpc_bad_answer, src/chains/client.ts).
      if (noAnswerFromNode(error) || nodeErrorNotRevert(error) || error instanceof ChainError) throw asKnownError(error);
      const reason = revertReason(error) ?? shortMessage(error);
      if (
        allowanceShortfall(reason) &&
        this.op
          .txsFor(stage)
          .some(
            (t) =>
              t.status === 'mined' &&
              callsOfRawTransaction(t.raw, this.account.address).some((c) => callEffects(this.chain, c).some((e) => e.kind === 'approve')),
          )
      ) {
        // Approvals set, not add: another operation on this wallet replaced or used the one journaled here, and the
        // ledger will not let one ask approve its payment twice.
        throw new ChainError(
          'approval_replaced',
          `plan call ${seg[0]} (${call.phase}) would revert: the approval this operation journaled is no longer on chain (another operation on this wallet replaced or used it); nothing more was sent`,
          {
            // A vote has no clientRequestId to change: one operation per question and round.
            hint:
              this.op.kind === 'rate'
                ? "loopsign never approves one stake twice: this vote paid nothing beyond its approval and cannot be cast from its journal; check `loopsign status` and the wallet's allowance to the voting engine"
                : 'loopsign never approves one payment twice: ask again with a new clientRequestId (this one paid nothing beyond its approval)',
            cause: error,
          },
        );
      }
      // An empty revert names no rule: say what was checked and what cannot be told, not "execution reverted".
      const said = revertData(error) === undefined ? emptyRevertNote(call.phase) : reason;
      throw new ChainError('call_would_revert', `plan call ${seg[0]} (${call.phase}) would revert: ${said}`, {
        hint: 'nothing was sent for this call; check balances and `loopsign status`, then run the command again',
        cause: error,
      });
    }
    const fees = await this.fees();
    return this.send(stage, seg, [call], 'call', (nonce) =>
      this.account.signTransaction({
        type: 'eip1559',
        chainId: this.chain.chainId,
        to: call.to,
        data: call.data,
        value,
        nonce,
        gas: (gas * 12n) / 10n,
        ...fees,
      }),
    );
  }

  /**
   * One write transaction of the database: the spend ledger's admission (caps and policy windows, against what every
   * process recorded), the nonce (allocated inside it: a slow node delays other processes' admissions instead of
   * letting them past a window), the signature, and the record of the signed bytes with what they can pay. Then,
   * committed, the broadcast and the receipt.
   */
  private async send(
    stage: string,
    seg: number[],
    calls: PlanCall[],
    kind: TxRecord['kind'],
    sign: (nonce: number) => Promise<Hex>,
  ): Promise<TransactionReceipt> {
    const effects = calls.flatMap((c) => callEffects(this.chain, c));
    await this.fillGaps();
    const tx = await this.ledger.admitTransaction(stage, effects, this.client, async (db) => {
      const nonce = await this.allocate(db);
      return { raw: await sign(nonce), nonce, kind, calls: seg };
    });
    try {
      await this.broadcast(tx.raw, tx.hash, tx.nonce);
    } catch (error) {
      if (!(error instanceof ChainError && error.code === 'nonce_used_elsewhere')) throw error;
      return this.takenAfterSigning(tx);
    }
    const receipt = await this.waitReceipt(tx.hash);
    if (receipt.transactionHash.toLowerCase() !== tx.hash.toLowerCase()) return this.takenAfterSigning(tx);
    return this.finish(tx, receipt);
  }

  /**
   * Software outside loopsign used the nonce just allocated (or the node says so): mined after all, or void once that
   * is final; either way this run stops, and the rerun signs the calls anew only if they did not pay.
   */
  private async takenAfterSigning(tx: TxRecord): Promise<TransactionReceipt> {
    this.op.refresh();
    const verdict = await this.voidOrWait(this.op.txs().find((t) => t.hash === tx.hash) ?? tx);
    if (verdict !== 'dropped') return verdict;
    throw new ChainError(
      'nonce_used_elsewhere',
      `transaction ${tx.hash} can never be mined: nonce ${tx.nonce} of ${this.account.address} was used by another transaction (not one loopsign signed), and that is final; this step paid nothing`,
      {
        hint: 'do not use this wallet from other software while loopsign is running; run the same command again: these calls are signed anew at a new nonce',
      },
    );
  }

  /**
   * The nonce for the next transaction (issue 35), under the wallet's claim and inside the admitting write transaction:
   * past every slot journaled for this wallet on this chain instance, and at least the node's pending count. A node
   * whose count lags behind a slot it knows (a load balancer, an EIP-7702 authorization's nonce it does not count) no
   * longer gives out a nonce twice. A node that knows nothing of the journal's highest slot is refused: a gap there
   * would leave this transaction unminable (the node lags, or this is another instance with the same block 0).
   */
  private async allocate(db: Db): Promise<number> {
    const pending = await this.client.getTransactionCount({ address: this.account.address, blockTag: 'pending' });
    const genesis = this.op.chainGenesis;
    const top = genesis === undefined ? undefined : highestSlot(db, this.chain.chainId, this.account.address, genesis);
    if (!top || top.next <= pending) return pending;
    const known =
      top.status === 'signed' ||
      (await receiptOrNone(this.client, top.hash)) !== undefined ||
      (await this.client.getTransaction({ hash: top.hash }).catch(() => undefined)) !== undefined;
    if (known) return top.next;
    throw new ChainError(
      'rpc_lagging',
      `the RPC counts ${pending} transactions from ${this.account.address}, but knows nothing of transaction ${top.hash} (nonce ${top.nonce}), which loopsign journaled ${top.status} on this chain; nothing was signed`,
      {
        hint: 'the node lags behind the chain, or serves another instance of it: run the same command again once it has caught up, or with another RPC (--rpc-url)',
        details: { pendingCount: pending, journaledNonce: top.nonce, transaction: top.hash },
      },
    );
  }

  /**
   * Before a new nonce is allocated, every slot of this wallet that was signed and never reached the node (a run
   * killed before its broadcast) is filled, so the new transaction is not stuck behind the gap: this operation's own
   * bytes go out again; another operation's slot gets a zero-effect cancel at its nonce, a version of that slot (only
   * one of the two can be mined). Re-broadcasting another operation's payment would let its approval be overwritten by
   * this one's; its own rerun signs its calls anew once the cancel is final. No read here for a journal with nothing
   * open, which is every normal run.
   */
  private async fillGaps(): Promise<void> {
    const genesis = this.op.chainGenesis;
    if (genesis === undefined) return;
    const open = this.op.store.read((db) => openSlots(db, this.chain.chainId, this.account.address, genesis));
    if (open.length === 0) return;
    const latest = await this.client.getTransactionCount({ address: this.account.address, blockTag: 'latest' });
    for (const slot of open) {
      // An EIP-7702 self-executed batch holds its nonce and its authorization's: a gap at either stops the wallet.
      const unused = (slot.kind === 'batch+authorization' ? [slot.nonce, slot.nonce + 1] : [slot.nonce]).filter((n) => n >= latest);
      if (unused.length === 0) continue; // used: its owner's rerun finds out by what
      let known = false;
      for (const hash of [slot.hash, ...slot.bumps.map((b) => b.hash)]) {
        if ((await receiptOrNone(this.client, hash)) || (await this.client.getTransaction({ hash }).catch(() => undefined))) known = true;
        if (known) break;
      }
      if (known) continue;
      if (slot.operation === this.op.id && slot.nonce >= latest) {
        this.out.progress('tx.rebroadcast', `re-broadcasting journaled transaction ${slot.hash}`);
        await this.broadcast(slot.raw, slot.hash, slot.nonce);
        continue;
      }
      await this.cancelSlot(slot, unused);
    }
  }

  /**
   * Fills `nonces` of a slot with zero-effect cancels (versions of the slot: only one version of a nonce is mined). A
   * cancel journaled before is re-broadcast byte for byte, never signed again (a run killed between signing it and its
   * broadcast: signed again at unchanged fees, it was the very same bytes, which the journal refuses); one the node
   * knows is left to be mined.
   */
  private async cancelSlot(slot: SlotRow & { cancels: SlotCancel[]; bumps: SlotCancel[] }, nonces: number[]): Promise<void> {
    const self = this.account.address;
    const send: SlotCancel[] = [];
    const sign: number[] = [];
    for (const nonce of nonces) {
      const journaled = slot.cancels.filter((c) => c.nonce === nonce);
      if (journaled.length === 0) {
        sign.push(nonce);
        continue;
      }
      let known = false;
      for (const c of journaled) if (await this.client.getTransaction({ hash: c.hash }).catch(() => undefined)) known = true;
      if (!known) send.push(journaled[journaled.length - 1]!);
    }
    if (send.length === 0 && sign.length === 0) return;
    this.out.progress(
      'tx.cancel',
      `cancelling transaction ${slot.hash} (nonce ${nonces.join(' and ')}, of operation ${slot.operation}), signed by a run that stopped before sending it, so that this wallet's next transaction is not stuck behind it`,
    );
    if (sign.length > 0) {
      // A delegated wallet runs its delegate's receive on a self-send: the estimate covers it; a self-send that reverts
      // still uses the nonce, which is all a cancel is for.
      const gas = await this.client.estimateGas({ account: self, to: self, value: 0n }).catch(() => 100_000n);
      const fees = await this.fees();
      const signed = await this.op.store.write(async (db) => {
        const out: SlotCancel[] = [];
        for (const nonce of sign) {
          const raw = await this.account.signTransaction({
            type: 'eip1559',
            chainId: this.chain.chainId,
            to: self,
            data: '0x',
            value: 0n,
            nonce,
            gas: (gas * 12n) / 10n,
            ...fees,
          });
          const parsed = parseTransaction(raw);
          // What is recorded is what was asked for: a cancel pays nothing.
          if (
            parsed.to?.toLowerCase() !== self.toLowerCase() ||
            (parsed.value ?? 0n) !== 0n ||
            (parsed.data ?? '0x') !== '0x' ||
            parsed.nonce !== nonce
          )
            throw new RefusedError(
              'signed_effects_mismatch',
              'refused: the signed cancel is not a zero-value self-send at its nonce; it was not recorded or sent',
              {
                details: { rule: 'signed_effects_mismatch' },
              },
            );
          const version = { hash: keccak256(raw), raw, nonce };
          Operation.insertCancel(db, slot.hash, self, this.chain.chainId, version, Date.now());
          out.push(version);
        }
        return out;
      });
      crashHook('cancel:signed');
      send.push(...signed);
    }
    let last: Hex | undefined;
    for (const c of send.sort((a, b) => a.nonce - b.nonce)) {
      try {
        await this.broadcast(c.raw, c.hash, c.nonce);
        last = c.hash;
      } catch (error) {
        // The original was mined meanwhile, or something else took the nonce: the gap is filled either way.
        if (error instanceof ChainError && error.code === 'nonce_used_elsewhere') continue;
        throw error;
      }
    }
    if (last) await this.waitReceipt(last);
  }

  private async delegateState(): Promise<{ delegate: Hex; delegateCode: Hex; needsAuthorization: boolean }> {
    const onDeleGator = await this.deleGatorState();
    if (onDeleGator) return onDeleGator;
    const delegate = this.chain.batchDelegate as Hex | undefined;
    if (!delegate) {
      throw new RefusedError(
        'no_pinned_delegate',
        `no ERC-7821 batch delegate is pinned for chain ${this.chain.chainId}, so an atomic plan cannot run`,
        {
          hint: `pin one with chains.${this.chain.chainId}.batchDelegate in the config file after checking its code; nothing was sent`,
        },
      );
    }
    const delegateCode = ((await this.client.getCode({ address: delegate })) ?? '0x') as Hex;
    if (delegateCode === '0x')
      throw new RefusedError(
        'delegate_missing',
        `the pinned batch delegate ${delegate} has no code on chain ${this.chain.chainId}; nothing was sent`,
      );
    const supports = await this.client
      .readContract({ address: delegate, abi: erc7821Abi, functionName: 'supportsExecutionMode', args: [BATCH_MODE] })
      .catch(() => false);
    if (supports !== true)
      throw new RefusedError(
        'delegate_unsupported',
        `the pinned delegate ${delegate} does not support ERC-7821 batch mode 0x01; nothing was sent`,
      );
    const code = ((await this.client.getCode({ address: this.account.address })) ?? '0x').toLowerCase();
    const designator = `0xef0100${delegate.slice(2).toLowerCase()}`;
    if (code === '0x') {
      if (!this.allowDelegation) {
        throw new RefusedError(
          'delegation_not_allowed',
          'this plan must run as one atomic batch, which needs this wallet delegated (EIP-7702) to the pinned batch delegate',
          {
            hint: `rerun with --atomic to allow loopsign to delegate ${this.account.address} to ${delegate}; nothing was sent`,
          },
        );
      }
      if (this.cannotDelegate !== undefined) {
        throw new RefusedError(
          'signer_cannot_delegate',
          `refused: this plan must run as one atomic batch, which needs an EIP-7702 authorization this signer cannot sign (${this.cannotDelegate}); nothing was signed`,
          {
            hint: 'sign with the keystore or a KMS key for this plan, or ask the service for a plan without requiresAtomicExecution',
            details: { rule: 'signer_cannot_delegate' },
          },
        );
      }
      return { delegate, delegateCode, needsAuthorization: true };
    }
    if (code !== designator) {
      const current = code.startsWith('0xef0100') ? `0x${code.slice(8)}` : 'a contract';
      throw new RefusedError(
        'delegated_elsewhere',
        `wallet ${this.account.address} is already delegated to ${current}, not the pinned delegate ${delegate}; nothing was sent`,
        {
          hint: 're-delegating is an explicit decision: revoke the other delegation first',
        },
      );
    }
    return { delegate, delegateCode, needsAuthorization: false };
  }

  /** This wallet already runs the trusted DeleGator (a budget grant's owner): its code checked, it runs the batch. */
  private async deleGatorState(): Promise<{ delegate: Hex; delegateCode: Hex; needsAuthorization: false } | undefined> {
    const trusted = await this.deleGator?.();
    if (!trusted) return undefined;
    const delegate = trusted.address;
    const code = ((await this.client.getCode({ address: this.account.address })) ?? '0x').toLowerCase();
    if (code !== `0xef0100${delegate.slice(2).toLowerCase()}`) return undefined;
    await trusted.verify();
    const supports = await this.client
      .readContract({ address: delegate, abi: erc7821Abi, functionName: 'supportsExecutionMode', args: [BATCH_MODE] })
      .catch(() => false);
    if (supports !== true)
      throw new RefusedError('delegate_unsupported', `the pinned DeleGator ${delegate} does not support batch mode 0x01; nothing was sent`);
    return { delegate, delegateCode: ((await this.client.getCode({ address: delegate })) ?? '0x') as Hex, needsAuthorization: false };
  }

  /**
   * Points this wallet at `target` by EIP-7702 (issue 38: an owner's account onto the pinned DeleGator before its first
   * grant) with one self-transaction that carries no call, its authorization at the transaction's nonce + 1. Journaled
   * under `stage` like every transaction: under the wallet's claim, in a nonce slot (which holds the authorization's
   * nonce too), resumed byte for byte. A rerun settles what was journaled first, and signs a new authorization only when
   * the wallet is still not on `target` and nothing journaled can be mined any more. The caller decided that the wallet
   * may leave what it runs now. Returns the transaction that set it, or undefined when the wallet already ran `target`.
   */
  async setDelegation(stage: string, target: Hex): Promise<Hex | undefined> {
    return this.withWalletLock(async () => {
      const self = this.account.address;
      const designator = `0xef0100${target.slice(2).toLowerCase()}`;
      await this.reviveDropped(stage);
      let last: Hex | undefined;
      for (const tx of this.op.txsFor(stage).filter(isLive)) {
        const receipt = await this.resume(tx, async () => {});
        if (receipt !== 'dropped') last = receipt.transactionHash;
      }
      if (((await this.client.getCode({ address: self })) ?? '0x').toLowerCase() === designator) return last;
      if (this.cannotDelegate !== undefined)
        throw new RefusedError(
          'signer_cannot_delegate',
          `refused: pointing ${self} at ${target} needs an EIP-7702 authorization this signer cannot sign (${this.cannotDelegate}); nothing was signed`,
          { hint: 'sign this once with the keystore or a KMS key of the same address', details: { rule: 'signer_cannot_delegate' } },
        );
      const targetCode = ((await this.client.getCode({ address: target })) ?? '0x') as Hex;
      if (targetCode === '0x')
        throw new RefusedError('delegate_missing', `the delegate ${target} has no code on chain ${this.chain.chainId}; nothing was sent`);
      // The self-call runs the delegate's receive once the authorization is processed: estimated with its code in place.
      const request = { account: self, to: self, data: '0x' as Hex, value: 0n, stateOverride: [{ address: self, code: targetCode }] };
      const gas = await this.client.estimateGas({ ...request, blockTag: 'pending' }).catch((error: unknown) => {
        throw asKnownError(error);
      });
      const fees = await this.fees();
      this.out.progress(`${stage}.delegate`, `delegating ${self} to ${target} (EIP-7702)`);
      const receipt = await this.send(stage, [], [], 'batch+authorization', async (nonce) => {
        // Self-executed: the transaction bumps the nonce before the authorization list is processed.
        const authorization = await this.account.signAuthorization!({ chainId: this.chain.chainId, address: target, nonce: nonce + 1 });
        return this.account.signTransaction({
          type: 'eip7702',
          chainId: this.chain.chainId,
          to: self,
          data: '0x',
          value: 0n,
          nonce,
          gas: (gas * 13n) / 10n + 30_000n,
          authorizationList: [authorization],
          ...fees,
        });
      });
      return receipt.transactionHash;
    });
  }

  private async sendBatch(stage: string, seg: number[], calls: PlanCall[]): Promise<TransactionReceipt> {
    const self = this.account.address;
    // A batch's calls carry no value: the one ETH transfer loopsign sends (--eth-now) is a call of its own.
    if (calls.some((c) => this.valueOf(c) !== 0n))
      throw new RefusedError('unaccounted_call', 'refused: a batched call sends ETH; nothing was signed', { hint: 'nothing was signed' });
    const { delegate, delegateCode, needsAuthorization } = await this.delegateState();
    const executionData = encodeAbiParameters(
      [
        {
          type: 'tuple[]',
          components: [
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'data', type: 'bytes' },
          ],
        },
      ],
      [calls.map((c) => ({ to: c.to, value: 0n, data: c.data }))],
    );
    const data = encodeFunctionData({ abi: erc7821Abi, functionName: 'execute', args: [BATCH_MODE, executionData] });
    const stateOverride = needsAuthorization ? [{ address: self, code: delegateCode }] : undefined;
    let gas: bigint;
    try {
      // Simulated against the pending block: the time and state the transaction will actually meet.
      await this.client.call({ account: self, to: self, data, stateOverride, blockTag: 'pending' });
      gas = await this.client.estimateGas({ account: self, to: self, data, stateOverride, blockTag: 'pending' });
    } catch (error) {
      // A node that did not answer said nothing of a revert: its failure (rpc_failed, exit 4), not a refusal (exit 5);
      // nor did one whose error answer names no revert, or whose answer cannot be read (rpc_bad_answer).
      if (noAnswerFromNode(error) || nodeErrorNotRevert(error) || error instanceof ChainError) throw asKnownError(error);
      throw new RefusedError(
        'atomic_simulation_reverted',
        `the plan as one atomic batch (calls ${seg.join(', ')}) would revert: ${revertReason(error) ?? shortMessage(error)}; nothing was sent`,
        {
          hint: "an atomic plan is never split. If the plan reserves and submits a question in one batch, the reservation's minimum age makes that impossible; ask the service for a plan without requiresAtomicExecution",
          cause: error,
        },
      );
    }
    const fees = await this.fees();
    const gasLimit = (gas * 13n) / 10n + (needsAuthorization ? 30_000n : 0n);
    if (needsAuthorization)
      this.out.progress(`${stage}.delegate`, `delegating ${self} to the pinned batch delegate ${delegate} (EIP-7702)`);
    const receipt = await this.send(stage, seg, calls, needsAuthorization ? 'batch+authorization' : 'batch', async (nonce) => {
      if (!needsAuthorization)
        return this.account.signTransaction({
          type: 'eip1559',
          chainId: this.chain.chainId,
          to: self,
          data,
          value: 0n,
          nonce,
          gas: gasLimit,
          ...fees,
        });
      // Self-executed: the transaction bumps the nonce before the authorization list is processed.
      const authorization = await this.account.signAuthorization!({ chainId: this.chain.chainId, address: delegate, nonce: nonce + 1 });
      return this.account.signTransaction({
        type: 'eip7702',
        chainId: this.chain.chainId,
        to: self,
        data,
        value: 0n,
        nonce,
        gas: gasLimit,
        authorizationList: [authorization],
        ...fees,
      });
    });
    const code = ((await this.client.getCode({ address: self })) ?? '0x').toLowerCase();
    if (code !== `0xef0100${delegate.slice(2).toLowerCase()}`) {
      throw new ChainError(
        'delegation_missing',
        `after the batch, ${self} is not delegated to ${delegate}; the batch may not have executed`,
      );
    }
    return receipt;
  }
}

/** One call's identity: target and full calldata (plans never carry value; the executor always sends zero). */
export function callDigest(call: CallLike): Hex {
  return keccak256(toBytes(`${call.to.toLowerCase()}:${call.data.toLowerCase()}`));
}
