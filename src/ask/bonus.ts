// The feedback bonus of an ask. A wallet-calls ask funds it with its own plan: checked against the file and the chain
// (the proven content, its open round), journaled before its first transaction, and once any bonus transaction is
// signed only that journaled plan is ever resumed and confirmed — a rerun never funds a second pool, whatever the
// service answers. An x402 one-shot ask funds it in the submit call: the pool is read from that receipt.
import type { Hex, Log } from 'viem';
import { RefusedError, ServiceError } from '../errors.js';
import { sameAddress } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { checkBonusPlan, refuse, type BonusTarget, type GuardContext } from '../wallet/plan-guard.js';
import type { ExecutionMode } from '../wallet/executor.js';
import { bonusPoolsCreated } from '../protocol/submission.js';
import { bonusChainFacts, type SubmissionProof } from './proof.js';
import { executor, type Run } from './run.js';

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
  const { hashes } = await (await executor(run)).execute('bonus', calls, mode);
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
