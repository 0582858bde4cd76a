// Submitting an ask: the service's plan asked for and checked, the x402 authorization if that is the payment mode,
// the plan paid (or found already paid), confirmed with the service, and the submission proven from this wallet's own
// receipts before it is journaled — a claim the chain does not back must not stop a later honest run. A rerun after
// the confirmation skips all of it: no plan is executed twice.
import type { Hex } from 'viem';
import { RefusedError, ServiceError } from '../errors.js';
import { sameHex } from '../hex.js';
import { isLive } from '../store/records.js';
import { authorizationUsed } from '../store/ledger.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { checkAskEnvelope, checkWalletPlan, checkX402Plan, refuse, type GuardContext, type PlanCall } from '../wallet/plan-guard.js';
import type { ExecutionMode, Executor } from '../wallet/executor.js';
import { budgetApplies, pullStage } from '../budget/grants.js';
import { publicMetadataBase } from './check-plan.js';
import { candidateTransactions, proveSubmission, type SubmissionProof } from './proof.js';
import { checkFunds } from './funds.js';
import { refuseSubmittedQuestions } from './chain-preflight.js';
import { cancelExpiredReservation } from './reservation.js';
import { checkX402Answer, signX402 } from './x402.js';
import { executor, type Run } from './run.js';

export type Submitted =
  | { state: 'submitted'; operationKey: Hex; confirmed: ServiceDoc; guard: GuardContext; proof: SubmissionProof }
  /** Paid, and left for `loopsign confirm` (--no-confirm). */
  | { state: 'executed_not_confirmed'; operationKey: Hex; hashes: Hex[]; transactions: number };

export async function submitAsk(run: Run, options: { confirm: boolean }): Promise<Submitted> {
  const { ctx, journal, service } = run;
  let g = run.guard(journal.data.metadataBase);
  const journaled = journal.data.confirm;
  if (journaled && journal.data.operationKey) {
    return {
      state: 'submitted',
      operationKey: journal.data.operationKey,
      confirmed: journaled,
      guard: g,
      proof: await prove(run, g, journaled),
    };
  }
  ctx.out.progress('ask.request', `asking the service (${run.mode})`);
  const response = await service.ask(run.body);
  let operationKey: Hex;
  let confirmed: ServiceDoc;
  if (response.status === 'submitted') {
    // Believed only once this wallet's own receipt proves it (below); its operationKey must be this ask's.
    operationKey = checkedOperationKey(g, response, journal.data.operationKey);
    confirmed = response;
  } else {
    g = run.guard(publicMetadataBase(response.questionMetadataBaseUrl));
    operationKey = checkAskEnvelope(g, response);
    await journal.setStep('ask:planned', { operationKey, metadataBase: g.hashes.metadataBase, paymentMode: run.mode }, { operationKey });
    // With an imported grant, the wallet's claim is held from the budget pull to the payment (src/budget/pull.ts): no
    // other loopsign process on this wallet spends the pulled money in between.
    const ex = (await budgetApplies(run)) ? await executor(run) : undefined;
    const planAndPay = () => checkAndPay(run, g, response, ex);
    const done = ex ? await ex.withWalletLock(planAndPay) : await planAndPay();
    if (done.redeemed) {
      ctx.out.warn(
        "this ask's x402 authorization was already redeemed on chain by a transaction this wallet did not send: it paid for this ask's question (its nonce binds it), so nothing is sent; the submission is proven from the chain",
      );
      confirmed = await service.status(operationKey);
    } else {
      const paid = done.paid!;
      if (!options.confirm) return { state: 'executed_not_confirmed', operationKey, hashes: paid.hashes, transactions: paid.transactions };
      ctx.out.progress('ask.confirm', 'confirming the transactions with the service');
      confirmed = await service.confirm(operationKey, paid.hashes);
      if (confirmed.status !== 'submitted')
        throw new ServiceError('confirm_failed', `the service did not accept the confirmation (status ${String(confirmed.status)})`);
    }
  }
  const proof = await prove(run, g, confirmed);
  await journal.setStep('ask:confirmed', { confirm: confirmed, operationKey }, { operationKey });
  return { state: 'submitted', operationKey, confirmed, guard: g, proof };
}

/**
 * The plan checked (x402: the authorization signed, after the budget pull when a grant applies) and paid, or found
 * redeemed already. `ex` is the executor holding the wallet's claim when a grant applies.
 */
async function checkAndPay(
  run: Run,
  g: GuardContext,
  first: ServiceDoc,
  ex: Executor | undefined,
): Promise<{ redeemed: boolean; paid?: { hashes: Hex[]; transactions: number } }> {
  const { ctx, journal, service } = run;
  let response = first;
  let calls: PlanCall[];
  let redeemed = false;
  // Before the first signature of an ask (a transaction or an x402 authorization): a question already on chain
  // would be refused by the registry only after the reservation and approval were mined.
  if (journal.txs().length === 0 && journal.authorizations().length === 0) await refuseSubmittedQuestions(run.client, g);
  if (run.mode === 'wallet_calls') {
    calls = checkWalletPlan(g, response);
  } else {
    // A transaction of a wallet_calls plan of this ask already on chain (or signed) with no authorization ever signed
    // for it: an x402 plan cannot account for it, so the run would end in plan_changed anyway. Refuse before signing:
    // an authorization signed now would count against the ask's cap until it expires, barring the wallet_calls rerun.
    const walletCall = journal.authorizations().length === 0 ? journal.txsFor('ask').find(isLive) : undefined;
    if (walletCall)
      throw new RefusedError(
        'plan_changed',
        `this ask was started with --payment-mode wallet_calls and its transaction ${walletCall.hash} is ${walletCall.status}: an x402 authorization would be a second way to pay; nothing was signed`,
        { hint: 'run the same ask again with --payment-mode wallet_calls: it resumes from the journal' },
      );
    // The budget pull is mined before the authorization is signed: USDC checks the payer's balance when it is redeemed.
    // The service's request is checked first: a refused one must not have moved the owner's money.
    if (ex) {
      await checkX402Answer(run, g, response);
      await (await import('../budget/pull.js')).pullBefore(run, ex, 'ask', 'x402');
    }
    const signed = await signX402(run, g, response);
    response = await service.ask({ ...run.body, paymentAuthorization: signed.payload });
    checkAskEnvelope(g, response);
    calls = checkX402Plan(g, response, signed.message, signed.signature);
    // Anyone may send the payer's authorization to the X402QuestionSubmitter (the live contract has no sender
    // check); its nonce binds this very question, so once it is used the ask is paid, whoever sent it.
    redeemed =
      (await authorizationUsed(run.client, run.chain, run.wallet, signed.message.nonce)) && journal.txsFor('ask').every((t) => !isLive(t));
  }
  ctx.out.progress('ask.checked', `the plan passed every check (${calls.length} call${calls.length === 1 ? '' : 's'})`, {
    operationKey: journal.data.operationKey,
  });
  if (redeemed) return { redeemed };
  return { redeemed, paid: await pay(run, g, response, calls) };
}

/** The checked plan, executed (funds checked first on a fresh run; an expired reservation cancelled, then renewed). */
async function pay(run: Run, g: GuardContext, response: ServiceDoc, calls: PlanCall[]): Promise<{ hashes: Hex[]; transactions: number }> {
  const { journal, client } = run;
  // Fresh: nothing of this ask signed yet but its budget pull (src/budget/pull.ts), if any.
  const fresh = journal.txs().every((t) => t.stage === pullStage('ask'));
  const ex = await executor(run);
  const atomicPlan = objectField(response, 'transactionPlan')?.requiresAtomicExecution === true && calls.length > 1;
  const mode: ExecutionMode = atomicPlan ? 'atomic' : run.atomic ? 'segmented' : 'ordered';
  // Under the wallet's claim from the budget pull to the payment (a claim this run already holds is not taken again).
  // The pull's machinery (MetaMask's codecs) is loaded only when a budget applies to this wallet.
  const budget = (await budgetApplies(run)) ? await import('../budget/pull.js') : undefined;
  return ex.withWalletLock(async () => {
    const funds = (covers: Partial<Record<'USDC' | 'LREP', bigint>>) => checkFunds(client, g, run.wallet, calls, run.ctx.out, covers);
    const pull = budget
      ? await budget.pullBefore(run, ex, 'ask', run.mode === 'x402_authorization' ? 'x402' : mode, fresh ? funds : undefined)
      : { covers: {}, fundsChecked: false };
    if (fresh && !pull.fundsChecked) await funds(pull.covers);
    await cancelExpiredReservation(run, g, calls, ex);
    const result = await ex.execute('ask', budget ? budget.withPull(run, calls, pull.batched) : calls, mode);
    await journal.setStep('ask:executed', { askHashes: result.hashes });
    return { hashes: result.hashes, transactions: result.transactions };
  });
}

/** The chain's word, not the service's: which questions this wallet's own transaction submitted. */
function prove(run: Run, g: GuardContext, confirmed: ServiceDoc): Promise<SubmissionProof> {
  return proveSubmission(
    run.client,
    run.chain,
    run.wallet,
    run.ask,
    run.journal,
    candidateTransactions(run.journal, confirmed.transactionHashes),
    g.verifyPayload ? g.hashes.salts : undefined,
  );
}

/**
 * The operationKey of an answer that says "submitted": it must have the exact form, equal what this ask hashes to
 * (live-shaped asks), and equal any key journaled before. Nothing else from such an answer is used unchecked.
 */
function checkedOperationKey(g: GuardContext, response: ServiceDoc, journaled: Hex | undefined): Hex {
  const key = response.operationKey;
  if (typeof key !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(key)) refuse('bad_operation_key', 'operationKey is not 0x + 64 hex');
  if (g.verifyPayload && !sameHex(key, g.hashes.operationKey))
    refuse('operation_key_mismatch', `operationKey ${key} is not the one this ask hashes to (${g.hashes.operationKey})`);
  if (journaled && !sameHex(key, journaled))
    refuse('operation_key_mismatch', `operationKey ${key} is not the one journaled for this ask (${journaled})`);
  return key.toLowerCase() as Hex;
}
