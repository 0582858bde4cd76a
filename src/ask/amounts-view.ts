// Display amounts (2.5 USDC) beside the atomic units of a quote or an ask, for people. Only values of a checked
// form are shown: an ask's from the user's own file, a quote's from the service's document when they are plain
// decimal strings of a token loopsign knows (its decimals are loopsign's, never the service's `decimals` field).
import { displayAmount } from '../amounts.js';
import type { NormalizedAsk } from '../protocol/ask-normalize.js';
import { objectField, type ServiceDoc } from '../service/doc.js';

/**
 * The frontend fee both escrows take from what raters receive, in basis points: the question reward pool escrow's
 * and the feedback bonus escrow's default (300, at most 500; RateLoop 0b442ae). A rater who answers through a
 * frontend gets the amount less this share, so that is what loopsign shows as reaching raters. The asker pays the
 * whole amount either way.
 */
export const FRONTEND_FEE_BPS = 300n;

/** What reaches raters of `atomic` after the frontend fee (the escrows round the fee down). */
export function afterFrontendFee(atomic: bigint): bigint {
  return atomic - (atomic * FRONTEND_FEE_BPS) / 10_000n;
}

export interface AmountView {
  atomic: string;
  asset: string;
  display: string;
}

function view(atomic: unknown, asset: unknown): AmountView | undefined {
  if (typeof asset !== 'string' || (typeof atomic !== 'string' && typeof atomic !== 'bigint')) return undefined;
  const text = String(atomic);
  const display = displayAmount(text, asset);
  return display === undefined ? undefined : { atomic: text, asset, display };
}

/** The view of what reaches raters of an amount already shown (so of a checked form). */
function afterFee(v: AmountView | undefined): AmountView | undefined {
  return v ? view(afterFrontendFee(BigInt(v.atomic)), v.asset) : undefined;
}

/** The bounty and any bonus as paid, and what of each reaches raters after the frontend fee (the keys every view uses). */
function paidAndToRaters(bounty: AmountView | undefined, bonus: AmountView | undefined): Record<string, AmountView> {
  const out: Record<string, AmountView> = {};
  if (bounty) out.bounty = bounty;
  if (bonus) out.feedbackBonus = bonus;
  const bountyToRaters = afterFee(bounty);
  if (bountyToRaters) out.bountyAfterFrontendFee = bountyToRaters;
  const bonusToRaters = afterFee(bonus);
  if (bonusToRaters) out.feedbackBonusAfterFrontendFee = bonusToRaters;
  return out;
}

/** What the user's ask pays: the bounty, any feedback bonus, and the most it may spend. */
export function askAmounts(ask: Pick<NormalizedAsk, 'bounty' | 'feedbackBonus' | 'maxPaymentAmount'>): Record<string, AmountView> {
  const out = paidAndToRaters(
    view(ask.bounty.amount, ask.bounty.asset),
    ask.feedbackBonus ? view(ask.feedbackBonus.amount, ask.feedbackBonus.asset) : undefined,
  );
  const max = ask.maxPaymentAmount === null ? undefined : view(ask.maxPaymentAmount, ask.bounty.asset);
  if (max) out.maxPayment = max;
  return out;
}

/**
 * What an ask's status document (or a result's `operation`, the same document) says it pays: its `bounty` and
 * `feedbackBonus` (service-api.md §5.4–5.6), and what reaches raters of each after the frontend fee. Only values of a
 * checked form are shown, as for a quote.
 */
export function statusAmounts(s: ServiceDoc | undefined): Record<string, AmountView> {
  const bounty = objectField(s, 'bounty');
  const bonus = objectField(s, 'feedbackBonus');
  return paidAndToRaters(bounty && view(bounty.amount, bounty.asset), bonus && view(bonus.amount, bonus.asset));
}

/** A quote's total and the service's max payment hint, as display amounts (only of a checked form). */
export function quoteAmounts(q: ServiceDoc): Record<string, AmountView> {
  const p = objectField(q, 'payment') ?? {};
  const out: Record<string, AmountView> = {};
  const total = view(p.totalAmount ?? p.amount, p.asset);
  if (total) out.total = total;
  const hint = view(q.maxPaymentAmountHint, p.asset);
  if (hint) out.maxPaymentHint = hint;
  const bounty = afterFee(view(p.bountyAmount, p.asset));
  if (bounty) out.bountyAfterFrontendFee = bounty;
  const bonus = afterFee(view(p.feedbackBonusAmount, p.feedbackBonusAsset));
  if (bonus) out.feedbackBonusAfterFrontendFee = bonus;
  return out;
}
