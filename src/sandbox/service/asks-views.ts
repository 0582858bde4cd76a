// What the ask side of the sandbox service answers (service-api.md §4–5), built from what it holds: the templates,
// a quote, the first answer to an ask, a dry run, the x402 authorization request, an operation's status (with its
// feedback bonus) and a question's result. Each is a function of its arguments, changing nothing: the protocol
// (asks.ts) decides when each is sent, and a hostile service (asks-hostile.ts) tampers with them once built.
import type { Hex } from 'viem';
import { RECEIVE_WITH_AUTHORIZATION } from '../../protocol/abi.js';
import { defaultPaymentMode, sameAssetTotal, type NormalizedAsk, type PaymentMode } from '../../protocol/ask-normalize.js';
import { computeAskHashes, roundConfigJson, sha256hex, type AskHashes } from '../../protocol/ask-hashes.js';
import { TEMPLATES } from '../../protocol/templates.js';
import type { SandboxAddresses } from '../chain.js';
import { resolver, tokenOf } from './plans.js';
import type { Operation } from './store.js';

export type Obj = Record<string, unknown>;

/** What the views read of the service: its contracts, its origin and the polling hint it gives. */
export interface ViewContext {
  addresses: SandboxAddresses;
  baseUrl: string;
  pollAfterMs: number;
}

/** A question's current round as the voting engine reports it. */
export interface RoundView {
  roundId: bigint;
  startTime: number;
  state: number;
  voteCount: number;
  revealedCount: number;
  totalStake: bigint;
  settledAt: number;
  ratingBps: number;
  upCount: number;
  downCount: number;
  upStake: bigint;
  downStake: bigint;
  /** When a SettlementPending round became ready for its payout snapshot (0 in any other state). */
  payoutReadyAt: number;
}

const ROUND_STATE_LABEL = ['Open', 'Settled', 'Cancelled', 'Tied', 'RevealFailed', 'SettlementPending'];
/** Settled, Cancelled, Tied, RevealFailed: the round has its final word. SettlementPending (5) has a public verdict
 * but waits for its payout snapshot: not final, as the live service says. */
export const TERMINAL_ROUND_STATES = new Set([1, 2, 3, 4]);
const SETTLEMENT_PENDING = 5;
/** The live service's normal payout-finality path: the snapshot (or its timeout) within an hour of settlement. */
const NORMAL_PAYOUT_FINALITY_MAX_DELAY_SECONDS = 3600;

/** The live result package's finality fields for a round state (RateLoop 0b442ae, resultPackage.ts). */
function finalityOf(r: RoundView, now: number) {
  if (TERMINAL_ROUND_STATES.has(r.state)) return { blockedReason: null, estimatedReadyAt: null, finalityStatus: 'final', stalled: false };
  if (r.state === SETTLEMENT_PENDING) {
    const readyAt = r.payoutReadyAt + NORMAL_PAYOUT_FINALITY_MAX_DELAY_SECONDS;
    const stalled = now > readyAt;
    return {
      blockedReason: stalled ? 'payout_finality_sla_exceeded' : 'normal_payout_finality',
      estimatedReadyAt: String(readyAt),
      finalityStatus: stalled ? 'stalled' : 'normal_finality',
      stalled,
    };
  }
  if (r.state === 0)
    return { blockedReason: 'round_not_closed', estimatedReadyAt: null, finalityStatus: 'waiting_for_round_close', stalled: false };
  return { blockedReason: 'non_terminal_round_state', estimatedReadyAt: null, finalityStatus: 'not_final', stalled: false };
}

export function templatesBody(): Obj {
  return {
    templates: TEMPLATES.map((t) => {
      const [proceedRatingBps, proceedConservativeRatingBps, cautionRatingBps, reviseRatingBps] = t.interpretation;
      return {
        id: t.id,
        title: t.title,
        description: `${t.title} (sandbox template).`,
        voteSemantics: t.voteSemantics,
        interpretation: { proceedRatingBps, proceedConservativeRatingBps, cautionRatingBps, reviseRatingBps },
        recommendedUse: [t.id],
        submissionPattern: t.submissionPattern,
        bundleStrategy: t.bundleStrategy,
        templateInputsSchema: {
          additionalProperties: true,
          properties: Object.fromEntries(t.inputs.map((k) => [k, { type: 'string' }])),
          ...(t.requiredInputs.length ? { required: t.requiredInputs } : {}),
          type: 'object',
        },
        templateInputsExample: Object.fromEntries(t.inputs.map((k) => [k, `example ${k}`])),
        ratingSystem: 'rateloop.robust_bts_binary.v1',
        resultSpecHash: resolver(t.id, t.version),
        version: t.version,
      };
    }),
  };
}

/** What the ask pays and to whom: the escrow for wallet calls, the X402QuestionSubmitter (bounty plus bonus) for x402. */
export function paymentBody(ask: NormalizedAsk, mode: PaymentMode, addresses: SandboxAddresses): Obj {
  const bonus = ask.feedbackBonus;
  const total = sameAssetTotal(ask);
  const base: Obj = {
    amount: (mode === 'x402_authorization' ? total : ask.bounty.amount).toString(),
    asset: ask.bounty.asset,
    bountyAmount: ask.bounty.amount.toString(),
    decimals: 6,
    spender: mode === 'x402_authorization' ? addresses.x402QuestionSubmitter : addresses.questionRewardPoolEscrow,
    tokenAddress: tokenOf(addresses, ask.bounty.asset),
  };
  if (bonus)
    Object.assign(base, { feedbackBonusAmount: bonus.amount.toString(), feedbackBonusAsset: bonus.asset, totalAmount: total.toString() });
  return base;
}

export function quoteBody(ask: NormalizedAsk, wallet: Hex, mode: PaymentMode, hashes: AskHashes, now: number, ctx: ViewContext): Obj {
  const bonus = ask.feedbackBonus;
  const amount = ask.bounty.amount;
  return {
    canSubmit: true,
    chainId: ask.chainId,
    clientRequestId: ask.clientRequestId,
    fastLane: {
      conservativeStartingBountyAtomic: amount.toString(),
      estimatedTimeToResultSeconds: ask.roundConfig.questionDurationSeconds,
      estimatedResultAt: now + ask.roundConfig.questionDurationSeconds,
      expectedResponse: {
        healthyTargetVoters: String(ask.bounty.requiredVoters + 1),
        likelyOutcome: 'healthy',
        minimumExpectedVoters: String(ask.bounty.requiredVoters),
      },
      guidance: ['quote_first', 'set_budget_before_submit'],
      minimumViableQuorum: String(ask.bounty.requiredVoters),
      perRequiredSignalUnitAtomic: (amount / BigInt(ask.bounty.requiredVoters)).toString(),
      pricingConfidence: 'high',
      recommendedAction: 'start_small',
      requiredSignalUnits: String(ask.bounty.requiredVoters),
      speed: 'fast',
      stretchBountyAmountAtomic: ((amount * 3n) / 2n).toString(),
      suggestedBountyAmountAtomic: amount.toString(),
      warnings: [],
    },
    feedbackBonus: bonus
      ? {
          amount: bonus.amount.toString(),
          asset: bonus.asset,
          awarder: bonus.awarder ?? wallet,
          enabled: true,
          feedbackClosesAt: null,
          nextTool: 'rateloop_confirm_ask_transactions',
          status: 'pending_question_confirmation',
        }
      : { enabled: false, status: 'not_requested' },
    feedbackBonusGuidance: {
      included: bonus !== null,
      note: 'A feedback bonus rewards written feedback.',
      recommended: true,
      suggestedAmountAtomic: '2000000',
    },
    legalNotice: {
      acceptance: 'Submitting accepts the terms.',
      notice: 'Sandbox: no real funds move.',
      privacyUrl: `${ctx.baseUrl}/legal/privacy`,
      termsUrl: `${ctx.baseUrl}/legal/terms`,
    },
    maxPaymentAmountHint: sameAssetTotal(ask).toString(),
    operationKey: hashes.operationKey,
    payloadHash: hashes.payloadHash,
    payment: {
      ...paymentBody(ask, mode, ctx.addresses),
      feedbackBonusAmount: bonus?.amount.toString() ?? '0',
      feedbackBonusAsset: bonus?.asset ?? null,
      totalAmount: sameAssetTotal(ask).toString(),
    },
    paymentMode: mode,
    questionCount: ask.questions.length,
    resolvedCategoryIds: ask.questions.map((q) => q.categoryId.toString()),
    walletPolicyRequired: false,
    wallet: { address: wallet, fundingMode: 'permissionless_wallet', note: 'The wallet that signs the plan pays the bounty.' },
    ...(ask.dryRun ? { dryRun: true, executionMode: 'dry_run', paymentRequired: false, sandbox: true } : {}),
  };
}

/**
 * The first answer to a live ask, before its payment step (the wallet-calls plan or the x402 step) is added. `ask`
 * and `hashes` are this request's (a retry's operation keeps the first request's).
 */
export function askBody(ask: NormalizedAsk, hashes: AskHashes, op: Operation, feedbackBonus: Obj, ctx: ViewContext): Obj {
  return {
    bounty: {
      amount: ask.bounty.amount.toString(),
      asset: ask.bounty.asset,
      requiredVoters: String(ask.bounty.requiredVoters),
      bountyEligibility: String(ask.bounty.bountyEligibility),
    },
    chainId: ask.chainId,
    clientRequestId: ask.clientRequestId,
    operationKey: op.operationKey,
    payloadHash: op.payloadHash,
    payment: paymentBody(ask, op.paymentMode, ctx.addresses),
    questionCount: ask.questions.length,
    questionMetadataBaseUrl: hashes.metadataBase,
    ready: false,
    roundConfig: roundConfigJson(ask),
    status: 'awaiting_wallet_signature',
    terminal: false,
    paymentMode: op.paymentMode,
    confirmTool: 'rateloop_confirm_ask_transactions',
    statusTool: 'rateloop_get_question_status',
    fastLane: {},
    feedbackBonus,
    feedbackBonusGuidance: {},
    legalNotice: {},
    managedBudget: null,
    pollAfterMs: ctx.pollAfterMs,
    publicUrl: null,
    walletPolicyRequired: false,
    webhook: null,
    warnings: [],
  };
}

/** A dry run: the ask parsed and hashed, nothing stored, nothing to pay, a canned result. */
export function dryRunBody(ask: NormalizedAsk): Obj {
  const wallet = (ask.walletAddress ?? '0x000000000000000000000000000000000000dEaD').toLowerCase() as Hex;
  const mode = ask.paymentMode ?? defaultPaymentMode(ask);
  const hashes = computeAskHashes(ask, wallet, resolver);
  const operationKey = `0x${sha256hex(`rateloop:dry-run:${ask.chainId}:${ask.clientRequestId}`)}`;
  return {
    status: 'dry_run',
    executionMode: 'dry_run',
    paymentRequired: false,
    sandbox: true,
    dryRun: true,
    chainId: ask.chainId,
    clientRequestId: ask.clientRequestId,
    operationKey,
    payloadHash: hashes.payloadHash,
    paymentMode: mode,
    transactionPlan: null,
    x402AuthorizationRequest: null,
    confirmTool: null,
    ready: true,
    terminal: true,
    nextAction: 'call_rateloop_get_result',
    result: {
      answer: 'dry_run_complete',
      ready: true,
      distribution: { ratingBps: 6700, revealedCount: 3, up: { count: 2 }, down: { count: 1 } },
      voteCount: 3,
    },
    operation: {
      chainId: ask.chainId,
      clientRequestId: ask.clientRequestId,
      contentId: null,
      contentIds: [],
      dryRun: true,
      executionMode: 'dry_run',
      operationKey,
      payloadHash: hashes.payloadHash,
      paymentMode: mode,
      paymentScheme: mode === 'x402_authorization' ? 'eip3009_usdc_authorization' : 'wallet_calls',
      questionCount: ask.questions.length,
      status: 'dry_run',
    },
    warnings: ['dry_run_no_payment', 'dry_run_no_onchain_submission'],
    wallet: { address: wallet, fundingMode: 'dry_run' },
  };
}

/** The USDC ReceiveWithAuthorization the wallet is asked to sign for an x402 ask (op.x402 holds its terms). */
export function x402RequestBody(op: Operation, addresses: SandboxAddresses): Obj {
  const x = op.x402!;
  const message = {
    from: op.wallet,
    to: addresses.x402QuestionSubmitter,
    value: x.value.toString(),
    validAfter: x.validAfter.toString(),
    validBefore: x.validBefore.toString(),
    nonce: x.nonce,
  };
  return {
    authorization: { ...message },
    scheme: 'eip3009_usdc_authorization',
    questionMetadataBaseUrl: op.hashes.metadataBase,
    eip712: {
      domain: { chainId: 31337, name: 'USD Coin', verifyingContract: addresses.usdc, version: '2' },
      message,
      primaryType: 'ReceiveWithAuthorization',
      types: { ReceiveWithAuthorization: RECEIVE_WITH_AUTHORIZATION },
    },
    submitTool: 'rateloop_ask_humans',
  };
}

/** The feedbackBonus of an ask that has none. */
export const noBonusBody = (): Obj => ({ enabled: false, status: 'not_requested' });

/** An ask's feedback bonus; while it awaits the wallet, with its payment and a copy of its plan. */
export function bonusBody(op: Operation, addresses: SandboxAddresses): Obj {
  const b = op.bonus!;
  const out: Obj = {
    amount: b.amount.toString(),
    asset: b.asset,
    awarder: b.awarder,
    contentId: b.contentId,
    enabled: true,
    error: b.error,
    feedbackClosesAt: b.feedbackClosesAt,
    poolId: b.poolId,
    roundId: b.roundId,
    status: b.status,
    transactionHashes: b.transactionHashes,
  };
  if (b.status === 'awaiting_wallet_signature' && b.plan) {
    out.payment = {
      amount: b.amount.toString(),
      asset: b.asset,
      decimals: 6,
      spender: addresses.feedbackBonusEscrow,
      tokenAddress: tokenOf(addresses, b.asset),
    };
    out.transactionPlan = structuredClone(b.plan);
    out.confirmTool = 'rateloop_confirm_feedback_bonus_transactions';
  }
  return out;
}

/** An operation as it stands (the answer to a confirm and the core of a status). */
export function statusBody(op: Operation, feedbackBonus: Obj, ctx: ViewContext): Obj {
  return {
    bounty: {
      amount: op.ask.bounty.amount.toString(),
      asset: op.ask.bounty.asset,
      bountyEligibility: String(op.ask.bounty.bountyEligibility),
    },
    bundleId: op.bundleId,
    chainId: op.chainId,
    clientRequestId: op.clientRequestId,
    contentId: op.contentIds[0] ?? null,
    contentIds: op.contentIds,
    error: op.error,
    feedbackBonus,
    operationKey: op.operationKey,
    payerAddress: op.wallet,
    payloadHash: op.payloadHash,
    payment: {
      amount: op.ask.bounty.amount.toString(),
      asset: op.ask.bounty.asset,
      decimals: 6,
      tokenAddress: tokenOf(ctx.addresses, op.ask.bounty.asset),
    },
    questionCount: op.ask.questions.length,
    rewardPoolId: op.rewardPoolId,
    status: op.status,
    transactionHashes: op.transactionHashes,
    updatedAt: op.updatedAt,
    publicUrl: op.contentIds[0] ? `${ctx.baseUrl}/rate?content=${op.contentIds[0]}` : null,
    warnings: [],
    nextAction: op.status === 'submitted' ? 'poll_rateloop_get_question_status' : 'execute_transaction_plan',
    pollAfterMs: ctx.pollAfterMs,
    ready: false,
    resultTool: null,
    terminal: false,
  };
}

/** A status body with what the poller should do next, given whether the operation's rounds are all terminal. */
export function withHints(body: Obj, op: Operation, ready: boolean, pollAfterMs: number): Obj {
  const terminal = ready || op.status === 'failed';
  return {
    ...body,
    callbackDeliveries: [],
    liveAskGuidance: null,
    ready,
    terminal,
    nextAction: op.status === 'failed' ? 'manual_review' : ready ? 'call_rateloop_get_result' : 'poll_rateloop_get_question_status',
    pollAfterMs: terminal ? null : pollAfterMs,
    resultTool: ready ? 'rateloop_get_result' : null,
  };
}

export function notFoundBody(): Obj {
  return {
    status: 'not_found',
    callbackDeliveries: [],
    liveAskGuidance: null,
    publicUrl: null,
    nextAction: 'verify_operation_identifiers',
    pollAfterMs: null,
    ready: false,
    resultTool: null,
    terminal: true,
  };
}

export function resultNotFoundBody(operationKey: string | undefined): Obj {
  return {
    operation: { operationKey: operationKey ?? null, status: 'not_found' },
    answer: 'not_found',
    ready: false,
    recommendedNextAction: 'verify_operation_identifiers',
    wait: { code: 'operation_not_found', recoverWith: 'verify_operation_identifiers' },
  };
}

/** The result of an ask that is not submitted yet. */
export function resultPendingBody(operation: Obj): Obj {
  return {
    operation,
    answer: 'pending',
    ready: false,
    finalityStatus: 'not_final',
    recommendedNextAction: 'wait_for_settlement',
    protocolState: { operationStatus: 'not_final' },
    wait: { code: 'still_settling', recoverWith: 'poll_rateloop_get_question_status' },
  };
}

/** A question's result from its current round (the rating bands are the templates' interpretation). */
export function resultBody(contentId: bigint, r: RoundView, operation: Obj | null, baseUrl: string, now: number): Obj {
  const ready = TERMINAL_ROUND_STATES.has(r.state);
  const settled = r.state === 1;
  const total = r.upCount + r.downCount;
  const finality = finalityOf(r, now);
  // As live: pending until the payout snapshot settles the round; a tie is inconclusive; a cancelled or reveal-failed
  // round failed.
  const answer = !ready
    ? 'pending'
    : r.state === 3
      ? 'inconclusive'
      : !settled
        ? 'failed'
        : r.ratingBps >= 7000
          ? 'proceed'
          : r.ratingBps >= 5500
            ? 'proceed_with_caution'
            : r.ratingBps >= 4000
              ? 'revise_and_resubmit'
              : 'do_not_proceed';
  const next: Record<string, string> = {
    pending: 'wait_for_settlement',
    inconclusive: 'collect_more_votes',
    failed: 'manual_review',
    proceed: 'proceed',
    proceed_with_caution: 'proceed_after_addressing_objections',
    revise_and_resubmit: 'revise_and_resubmit',
    do_not_proceed: 'do_not_proceed',
  };
  const share = (n: number) => (total === 0 ? 0 : Math.round((n * 10000) / total) / 10000);
  return {
    operation,
    answer,
    answerScopes: { allAnswers: answer, bountyEligibleAnswers: answer },
    cohortSummary: null,
    targetAudienceMatch: null,
    confidence: { level: !ready ? 'none' : total >= 5 ? 'medium' : 'low', score: ready ? Math.min(1, total / 10) : 0 },
    blockedReason: finality.blockedReason,
    distribution: {
      conservativeRatingBps: Math.max(0, r.ratingBps - 500),
      down: { count: r.downCount, share: share(r.downCount), stake: r.downStake.toString() },
      evidence: { down: r.downCount, total, up: r.upCount },
      rating: r.ratingBps / 100,
      ratingBps: r.ratingBps,
      revealedCount: r.revealedCount,
      state: r.state,
      stateLabel: ROUND_STATE_LABEL[r.state] ?? 'Unknown',
      up: { count: r.upCount, share: share(r.upCount), stake: r.upStake.toString() },
    },
    dissentingView: null,
    estimatedReadyAt:
      r.state === SETTLEMENT_PENDING ? finality.estimatedReadyAt : ready ? null : new Date((r.startTime + 1200) * 1000).toISOString(),
    featureTest: null,
    finalityStatus: finality.finalityStatus,
    feedbackQuality: null,
    includesVetoWindow: false,
    liveAskGuidance: null,
    limitations: ['sandbox: simulated raters, simplified economics'],
    majorObjections: [],
    methodology: { ratingSystem: 'rateloop.robust_bts_binary.v1', stakeWeighted: true },
    normalMaxDelaySeconds: 3600,
    protocolState: {
      operationStatus: ready ? 'result_ready' : 'not_final',
      contentId: contentId.toString(),
      roundId: r.roundId.toString(),
      roundState: r.state,
    },
    publicUrl: `${baseUrl}/rate?content=${contentId}`,
    rationaleSummary: ready
      ? `[RATELOOP_UNTRUSTED_DATA_BEGIN source="rater_feedback"]${r.upCount} up, ${r.downCount} down[RATELOOP_UNTRUSTED_DATA_END]`
      : null,
    ready,
    recommendedNextAction: next[answer] ?? 'manual_review',
    sourceUrls: [],
    stakeMass: {
      down: r.downStake.toString(),
      total: (r.upStake + r.downStake).toString(),
      unit: 'raw_staked_voting_power',
      up: r.upStake.toString(),
    },
    stalled: finality.stalled,
    voteCount: r.voteCount,
    wait: ready ? null : { code: 'still_settling', recoverWith: 'poll_rateloop_get_question_status' },
  };
}
