// Transaction plans with byte-exact calldata for the sandbox contracts (chain.md §3.4, §5), built the way the
// live service builds them, from the same shared derivations the client uses to check them.
import { encodeFunctionData, hexToSignature, type Hex } from 'viem';
import { contentRegistryAbi, erc20Abi, feedbackBonusEscrowAbi, x402SubmitterAbi } from '../../protocol/abi.js';
import { ASSET_ENUM, profileOf, type NormalizedAsk } from '../../protocol/ask-normalize.js';
import {
  bundleRevealCommitment,
  onChainQuestion,
  confidentialityTuple,
  revealCommitment,
  rewardTermsTuple,
  roundConfigTuple,
  tagsString,
  type AskHashes,
} from '../../protocol/ask-hashes.js';
import { TEMPLATES, resultSpecHash } from '../../protocol/templates.js';
import type { SandboxAddresses } from '../chain.js';
import type { PlanCall, TransactionPlan, X402State } from './store.js';

/** A template version's result-spec hash, as the service derives it for the plans it builds and the templates it lists. */
export const resolver = (id: string, v: number) => resultSpecHash(id, v, TEMPLATES.find((t) => t.id === id)!.voteSemantics);

export function tokenOf(addresses: SandboxAddresses, asset: 'USDC' | 'LREP'): Hex {
  return asset === 'USDC' ? addresses.usdc : addresses.lrep;
}

// The submit call carries each question as it goes on chain: a gated question's URLs blanked (chain.md §5.1).
function questionArgs(ask: NormalizedAsk, hashes: AskHashes) {
  const q = onChainQuestion(ask.questions[0]!, profileOf(ask));
  const h = hashes.questions[0]!;
  return [
    q.contextUrl,
    q.imageUrls,
    q.videoUrl,
    q.title,
    tagsString(q),
    q.categoryId,
    { detailsUrl: q.detailsUrl, detailsHash: q.detailsHash },
    hashes.salts[0]!,
    rewardTermsTuple(ask.bounty),
    roundConfigTuple(ask.roundConfig),
    { questionMetadataHash: h.questionMetadataHash, resultSpecHash: h.resultSpecHash },
  ] as const;
}

export function commitmentOf(ask: NormalizedAsk, hashes: AskHashes, wallet: Hex): Hex {
  return ask.isBundle ? bundleRevealCommitment(ask, hashes, wallet) : revealCommitment(ask, hashes, wallet);
}

export function walletCallsPlan(
  ask: NormalizedAsk,
  hashes: AskHashes,
  wallet: Hex,
  addresses: SandboxAddresses,
  atomic: boolean,
): TransactionPlan {
  const commitment = commitmentOf(ask, hashes, wallet);
  const asset = ask.bounty.asset;
  let submitData: Hex;
  if (ask.isBundle) {
    submitData = encodeFunctionData({
      abi: contentRegistryAbi,
      functionName: 'submitQuestionBundleWithRewardAndRoundConfig',
      args: [
        ask.questions
          .map((question, i) => onChainQuestion(question, profileOf(ask)))
          .map((q, i) => ({
            contextUrl: q.contextUrl,
            imageUrls: q.imageUrls,
            videoUrl: q.videoUrl,
            title: q.title,
            tags: tagsString(q),
            categoryId: q.categoryId,
            details: { detailsUrl: q.detailsUrl, detailsHash: q.detailsHash },
            salt: hashes.salts[i]!,
            spec: { questionMetadataHash: hashes.questions[i]!.questionMetadataHash, resultSpecHash: hashes.questions[i]!.resultSpecHash },
          })),
        rewardTermsTuple(ask.bounty),
        roundConfigTuple(ask.roundConfig),
      ],
    });
  } else {
    submitData = encodeFunctionData({
      abi: contentRegistryAbi,
      functionName: 'submitQuestionWithRewardAndRoundConfig',
      args: [...questionArgs(ask, hashes), confidentialityTuple(ask.questions[0]!)],
    });
  }
  const calls: PlanCall[] = [
    {
      id: 'reserve-submission',
      phase: 'reserve_submission',
      functionName: 'reserveSubmission',
      description: 'Reserve the deterministic question commitment from the wallet signer',
      to: addresses.contentRegistry,
      data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [commitment] }),
      value: '0',
    },
    {
      id: asset === 'USDC' ? 'approve-usdc' : 'approve-lrep',
      phase: asset === 'USDC' ? 'approve_usdc' : 'approve_lrep',
      functionName: 'approve',
      description: `Approve the question reward escrow to pull the ${asset} bounty`,
      to: tokenOf(addresses, asset),
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [addresses.questionRewardPoolEscrow, ask.bounty.amount] }),
      value: '0',
    },
    {
      id: 'submit-question',
      phase: 'submit_question',
      functionName: ask.isBundle ? 'submitQuestionBundleWithRewardAndRoundConfig' : 'submitQuestionWithRewardAndRoundConfig',
      description: 'Reveal the reserved question and fund its bounty',
      to: addresses.contentRegistry,
      data: submitData,
      value: '0',
    },
  ];
  return atomic ? { calls, requiresOrderedExecution: true, requiresAtomicExecution: true } : { calls, requiresOrderedExecution: true };
}

export function x402Plan(
  ask: NormalizedAsk,
  hashes: AskHashes,
  x402: X402State,
  bonusAwarder: Hex | null,
  addresses: SandboxAddresses,
): TransactionPlan {
  const signed = x402.signed!;
  const sig = hexToSignature(signed.signature);
  const auth = {
    from: signed.from,
    to: signed.to,
    value: signed.value,
    validAfter: signed.validAfter,
    validBefore: signed.validBefore,
    nonce: signed.nonce,
    v: Number(sig.v ?? BigInt(sig.yParity! + 27)),
    r: sig.r,
    s: sig.s,
  };
  const bonus = ask.feedbackBonus;
  const data = bonus
    ? encodeFunctionData({
        abi: x402SubmitterAbi,
        functionName: 'submitQuestionWithX402OneShotPayment',
        args: [
          ...questionArgs(ask, hashes),
          confidentialityTuple(ask.questions[0]!),
          { amount: bonus.amount, awarder: bonusAwarder!, executeBy: signed.validBefore },
          auth,
        ],
      })
    : encodeFunctionData({
        abi: x402SubmitterAbi,
        functionName: 'submitQuestionWithX402Payment',
        args: [...questionArgs(ask, hashes), confidentialityTuple(ask.questions[0]!), auth],
      });
  return {
    calls: [
      {
        id: bonus ? 'submit-x402-one-shot-question' : 'submit-x402-question',
        phase: 'submit_x402_question',
        functionName: bonus ? 'submitQuestionWithX402OneShotPayment' : 'submitQuestionWithX402Payment',
        description: 'Submit the question; the signed USDC authorization pays the bounty',
        to: addresses.x402QuestionSubmitter,
        data,
        value: '0',
      },
    ],
    requiresOrderedExecution: true,
  };
}

export function bonusPlan(
  bonus: { amount: bigint; asset: 'USDC' | 'LREP'; awarder: Hex },
  contentId: bigint,
  roundId: bigint,
  feedbackClosesAt: bigint,
  addresses: SandboxAddresses,
  atomic: boolean,
): TransactionPlan {
  const suffix = bonus.asset === 'USDC' ? 'usdc' : 'lrep';
  const calls: PlanCall[] = [
    {
      id: `approve-feedback-bonus-${suffix}`,
      phase: `approve_feedback_bonus_${suffix}`,
      functionName: 'approve',
      description: 'Approve the feedback bonus escrow to pull the bonus',
      to: tokenOf(addresses, bonus.asset),
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [addresses.feedbackBonusEscrow, bonus.amount] }),
      value: '0',
    },
    {
      id: 'create-feedback-bonus-pool',
      phase: 'create_feedback_bonus_pool',
      functionName: 'createFeedbackBonusPoolWithAsset',
      description: 'Create the feedback bonus pool for the submitted question',
      to: addresses.feedbackBonusEscrow,
      data: encodeFunctionData({
        abi: feedbackBonusEscrowAbi,
        functionName: 'createFeedbackBonusPoolWithAsset',
        args: [contentId, roundId, ASSET_ENUM[bonus.asset], bonus.amount, feedbackClosesAt, bonus.awarder],
      }),
      value: '0',
    },
  ];
  return atomic ? { calls, requiresOrderedExecution: true, requiresAtomicExecution: true } : { calls, requiresOrderedExecution: true };
}
