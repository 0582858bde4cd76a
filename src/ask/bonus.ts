// The feedback bonus of an ask. A wallet-calls ask funds it with its own plan: checked against the file and the chain
// (the proven content, its open round), journaled before its first transaction, and once any bonus transaction is
// signed only that journaled plan is ever resumed and confirmed — a rerun never funds a second pool, whatever the
// service answers. Before anything is signed for it, the chain is asked too (src/ask/bonus-on-chain.ts): a pool this
// wallet funded for this question, whatever the journal remembers, means the bonus is paid, and nothing is signed;
// a journal that saw the pool call mined while the chain shows no pool is a node's fault (exit 4), never a reason to
// pay again, unless the executor finds that record void at finality (a reorganisation took it away). An x402 one-shot ask funds it in the submit call: the pool is read from that receipt.
import { decodeFunctionData, type Hex, type Log } from 'viem';
import { ChainError, RefusedError, ServiceError } from '../errors.js';
import { sameAddress } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { checkBonusPlan, refuse, type BonusTarget, type GuardContext } from '../wallet/plan-guard.js';
import type { ExecutionMode } from '../wallet/executor.js';
import { bonusPoolsCreated } from '../protocol/submission.js';
import { feedbackBonusEscrowAbi } from '../protocol/abi.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import { bonusChainFacts, type SubmissionProof } from './proof.js';
import { bonusPoolsOnChain, type PoolOnChain } from './bonus-on-chain.js';
import { executor, refuseUnconfirmedNonces, settler, type Run } from './run.js';
import { budgetApplies } from '../budget/grants.js';

/** The bonus as loopsign reports it: only values it checked (the pool from its own receipt). */
export interface BonusOutcome {
  status: 'funded' | 'unavailable';
  asset?: string;
  amount?: string;
  contentId?: string;
  roundId?: string;
  poolId?: string | null;
  transactionHashes?: Hex[];
  /** What the service said, when loopsign could not fund or prove it. */
  service?: ServiceDoc | null;
}

export async function fundBonus(
  run: Run,
  g: GuardContext,
  operationKey: Hex,
  confirmed: ServiceDoc,
  proof: SubmissionProof,
): Promise<BonusOutcome> {
  const { journal, ctx, client, service } = run;
  const contentId = proof.contentIds[0]!;
  const escrow = run.chain.contracts.feedbackBonusEscrow as Hex;
  if (!journal.data.bonusPlan && journal.txsFor('bonus').length === 0) refuseIfSetAsideHere(run, proof);
  ctx.out.progress('bonus.chain_check', `reading the bonus escrow for a pool this wallet funded for question ${contentId}`);
  const onChain = await bonusPoolsOnChain(client, escrow, run.wallet, contentId, proof.blockNumber);
  if (onChain.length > 0) return alreadyFunded(run, operationKey, contentId, onChain);
  const minedPool = () =>
    journal
      .txsFor('bonus')
      .find(
        (t) =>
          t.status === 'mined' && callsOfRawTransaction(t.raw, run.wallet).some((c) => sameAddress(c.to, escrow) && isPoolCall(c.data)),
      );
  // The journal saw the pool call mined and the chain shows no pool: the executor judges that record first (it allocates
  // no nonce). A node hiding it is refused there (journal_contradicted); a reorganisation that took its block away
  // leaves it void only once its nonce is final under another transaction (nonce_not_final until then).
  if (minedPool()) await (await settler(run)).settleJournaled('bonus');
  const paid = minedPool();
  if (paid)
    throw new ChainError(
      'bonus_not_on_chain',
      `the journal recorded this ask's feedback bonus pool call mined (transaction ${paid.hash}, nonce ${paid.nonce}), but the RPC shows no pool from this wallet for question ${contentId}: a node behind, hiding it, or a reorganised chain; nothing was signed`,
      {
        hint: 'check the transaction on another node or an explorer; run the same command again once the RPC shows it (loopsign never funds a pool the journal saw paid)',
        details: { transactionHash: paid.hash, contentId },
      },
    );
  // Nothing of the bonus is on chain as far as this node's events and the journal tell: the database's memory of the
  // wallet must hold too, or a person confirms it.
  await refuseUnconfirmedNonces(run, contentId);
  let plan = journal.data.bonusPlan;
  if (!plan) {
    if (journal.txsFor('bonus').length > 0)
      throw new RefusedError('bonus_plan_missing', 'bonus transactions are journaled without their plan; refusing to fund again', {
        hint: `inspect operation ${journal.id} with \`loopsign history --operation ${journal.id}\`; nothing was sent`,
      });
    let bonus = objectField(confirmed, 'feedbackBonus');
    if (!objectField(bonus, 'transactionPlan')) bonus = objectField(await service.status(operationKey), 'feedbackBonus');
    if (!bonus || !objectField(bonus, 'transactionPlan')) {
      ctx.out.warn(
        'the service returned no feedback bonus plan (feedback_bonus_plan_unavailable); the ask itself is submitted and nothing was paid for a bonus',
      );
      return { status: 'unavailable', service: bonus ?? null };
    }
    const facts = await bonusChainFacts(client, run.chain, contentId);
    checkBonusPlan(g, bonus, facts);
    plan = {
      bonus,
      target: {
        contentId: facts.contentId,
        roundId: facts.roundId.toString(),
        roundStart: facts.roundStart.toString(),
        now: facts.now.toString(),
      },
    };
    await journal.setStep('bonus:planned', { bonusPlan: plan });
  }
  // Checked again as journaled (a rerun may come after the round moved on: the facts are those it was checked with).
  const t = plan.target;
  const target: BonusTarget = { contentId: t.contentId, roundId: BigInt(t.roundId), roundStart: BigInt(t.roundStart), now: BigInt(t.now) };
  if (target.contentId !== contentId)
    refuse('bonus_wrong_content', `the journaled bonus plan is for question ${target.contentId}, the proven submission is ${contentId}`);
  const calls = checkBonusPlan(g, plan.bonus, target);
  ctx.out.progress('bonus.checked', 'the feedback bonus plan passed every check');
  const mode: ExecutionMode =
    objectField(plan.bonus, 'transactionPlan')?.requiresAtomicExecution === true ? 'atomic' : run.atomic ? 'segmented' : 'ordered';
  // With an imported grant, the bonus's budget pull comes first, under the same claim (src/budget/pull.ts).
  const ex = await executor(run);
  const { hashes } = (await budgetApplies(run))
    ? await (await import('../budget/pull.js')).executeWithPull(run, ex, 'bonus', calls, mode)
    : await ex.execute('bonus', calls, mode);
  await journal.setStep('bonus:executed', { bonusHashes: hashes });
  ctx.out.progress('bonus.confirm', 'confirming the feedback bonus with the service');
  const res = await service.confirmBonus(operationKey, hashes);
  await journal.setStep('bonus:confirmed', { bonusConfirm: res });
  const status = objectField(res, 'feedbackBonus')?.status;
  if (status !== 'funded') throw new ServiceError('bonus_not_funded', `the service reports the feedback bonus as ${String(status)}`);
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  const funder = (await run.account).address;
  const pool = bonusPoolsCreated(
    receipts.flatMap((r) => r.logs),
    run.chain.contracts.feedbackBonusEscrow as Hex,
  ).find((p) => String(p.contentId) === contentId && sameAddress(p.funder, funder));
  const want = g.ask.feedbackBonus!;
  return {
    status: 'funded',
    asset: want.asset,
    amount: want.amount.toString(),
    contentId,
    roundId: target.roundId.toString(),
    poolId: pool ? String(pool.poolId) : null,
    transactionHashes: hashes,
  };
}

const isPoolCall = (data: Hex): boolean => {
  try {
    return decodeFunctionData({ abi: feedbackBonusEscrowAbi, data }).functionName === 'createFeedbackBonusPoolWithAsset';
  } catch {
    return false;
  }
};

/**
 * The bonus is on chain already (this run's journal may or may not know it): nothing is signed; the service is
 * confirmed with the journaled bonus transactions, or the pool's own transaction when the journal lost them, and the
 * outcome is read from the chain's event, not from receipts the node may hide.
 */
async function alreadyFunded(run: Run, operationKey: Hex, contentId: string, pools: PoolOnChain[]): Promise<BonusOutcome> {
  const { journal, ctx, service } = run;
  const pool = pools[0]!;
  ctx.out.progress(
    'bonus.on_chain',
    `a feedback bonus pool from this wallet for question ${contentId} is on chain already (pool ${pool.poolId}, transaction ${pool.transactionHash}); nothing is signed for the bonus`,
  );
  // What the journal holds of the stage is settled (each record found on chain, or its own bytes sent again; one a
  // reorganised chain mined after all counts again), so the ledger and the policy's windows count what was paid.
  if (journal.txsFor('bonus').length > 0) await (await settler(run)).settleJournaled('bonus');
  if (pools.length > 1)
    ctx.out.warn(
      `this wallet funded ${pools.length} feedback bonus pools for question ${contentId} (pools ${pools.map((p) => p.poolId).join(', ')})`,
    );
  const journaled = journal.data.bonusHashes ?? [];
  const hashes = journaled.some((h) => h.toLowerCase() === pool.transactionHash.toLowerCase())
    ? journaled
    : [...journaled, pool.transactionHash];
  if (hashes !== journaled) await journal.setStep('bonus:executed', { bonusHashes: hashes });
  ctx.out.progress('bonus.confirm', 'confirming the feedback bonus with the service');
  const res = await service.confirmBonus(operationKey, hashes);
  await journal.setStep('bonus:confirmed', { bonusConfirm: res });
  const status = objectField(res, 'feedbackBonus')?.status;
  if (status !== 'funded')
    throw new ServiceError(
      'bonus_not_funded',
      `the service reports the feedback bonus as ${String(status)}, while the chain shows this wallet's pool ${pool.poolId} for question ${contentId} (transaction ${pool.transactionHash}); nothing was signed`,
    );
  return {
    status: 'funded',
    // The chain's asset enum (chain.md: LREP = 0, USDC = 1).
    asset: pool.asset === 1 ? 'USDC' : 'LREP',
    amount: pool.amount.toString(),
    contentId,
    roundId: pool.roundId.toString(),
    poolId: pool.poolId.toString(),
    transactionHashes: hashes,
  };
}

/**
 * A record of this ask set aside as another chain instance's (--set-aside-stale) that journaled the very transaction
 * proving this submission, without this operation signing it, was of this chain: the node said "no receipt" for its
 * transactions (a backend behind, or a lie) and block 0 differed from the one recorded (a lie when it was recorded).
 * Whatever bonus that record signed can be on this chain, out of this operation's ledger: a fresh plan would fund a
 * second pool. Read from the journal alone, so no answer of the node or the service can pass it.
 */
function refuseIfSetAsideHere(run: Run, proof: SubmissionProof): void {
  const { journal } = run;
  const hash = proof.transactionHash.toLowerCase();
  if (journal.txs().some((t) => t.hash.toLowerCase() === hash)) return;
  const prefix = `${journal.id}~other-chain-`;
  const aside = journal.store.read(
    (db) =>
      db
        .prepare(
          `SELECT o.id AS id FROM operations o WHERE substr(o.id, 1, ?) = ?
             AND EXISTS (SELECT 1 FROM transactions t WHERE t.operation_id = o.id AND lower(t.hash) = ? AND t.status IN ('signed', 'mined'))
             AND EXISTS (SELECT 1 FROM transactions t WHERE t.operation_id = o.id AND t.stage = 'bonus' AND t.status IN ('signed', 'mined'))`,
        )
        .get(prefix.length, prefix, hash) as { id: string } | undefined,
  );
  if (aside)
    throw new RefusedError(
      'bonus_in_set_aside_record',
      `the submission this ask proves (transaction ${proof.transactionHash}) is one the record set aside as another chain instance's (${aside.id}) journaled, and that record signed a feedback bonus: it may be paid on this chain already; refusing to fund it again`,
      {
        hint: `inspect it with \`loopsign history --operation ${aside.id}\`; nothing was sent for a bonus`,
      },
    );
}

export function oneShotBonus(chain: ChainConfig, wallet: Hex, proof: SubmissionProof, receipt: { logs: readonly Log[] }): BonusOutcome {
  const pool = bonusPoolsCreated(receipt.logs, chain.contracts.feedbackBonusEscrow as Hex).find(
    (p) => String(p.contentId) === proof.contentIds[0] && sameAddress(p.funder, wallet),
  );
  return pool
    ? {
        status: 'funded',
        asset: 'USDC',
        amount: String(pool.amount),
        contentId: proof.contentIds[0]!,
        roundId: String(pool.roundId),
        poolId: String(pool.poolId),
        transactionHashes: [proof.transactionHash],
      }
    : { status: 'unavailable', service: null };
}
