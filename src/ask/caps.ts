// What one ask may pay, from the user's file alone (issue 11 §1): the bounty once (with the USDC bonus when an
// x402 one-shot authorization carries both), the bonus once, and never more in all than maxPaymentAmount covers
// for the bounty's asset. Nothing here comes from the service, the plan or this run's flags other than the
// payment mode the user chose.
import type { Amounts, SpendCaps } from '../store/ledger.js';
import type { NormalizedAsk, PaymentMode } from '../protocol/ask-normalize.js';

export function askSpendCaps(ask: NormalizedAsk, file: string, mode: PaymentMode): SpendCaps {
  const b = ask.bounty;
  const bonus = ask.feedbackBonus;
  const oneShot = mode === 'x402_authorization' && bonus !== null && bonus.asset === 'USDC';
  const askStage: Amounts = { [b.asset]: b.amount + (oneShot ? bonus.amount : 0n) };
  const bonusStage: Amounts = bonus && !oneShot ? { [bonus.asset]: bonus.amount } : {};
  const sameAsset = bonus && bonus.asset === b.asset ? bonus.amount : 0n;
  const planned = b.amount + sameAsset;
  const total: Amounts = { [b.asset]: ask.maxPaymentAmount !== null && ask.maxPaymentAmount < planned ? ask.maxPaymentAmount : planned };
  if (bonus && bonus.asset !== b.asset) total[bonus.asset] = bonus.amount;
  return {
    stage: (stage) => (stage === 'ask' ? askStage : stage === 'bonus' ? bonusStage : {}),
    total,
    source: `the bounty, feedbackBonus and maxPaymentAmount of ${file}`,
  };
}
