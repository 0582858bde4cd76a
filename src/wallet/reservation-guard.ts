// The guard of the one call loopsign builds itself for an ask (chain.md §6.11): cancelling its own expired
// reservation. The registry keeps an expired reservation's slot taken until the submitter cancels it (or a submit
// consumes it), so a resumed ask whose reservation is past its 30 minutes must cancel it before it reserves again.
// The call is made from the pinned ABI entry, never from the service's plan, and checked like every call loopsign
// signs: the chain's pinned ContentRegistry, the pinned selector, the commitment this ask hashes to from the user's own
// file and this wallet, which must also be the one the journaled reservation carried; and it moves no money.
import { encodeFunctionData, type Hex } from 'viem';
import { sameHex } from '../hex.js';
import { contentRegistryAbi } from '../protocol/abi.js';
import { bundleRevealCommitment, revealCommitment } from '../protocol/ask-hashes.js';
import { decode, expectTo, refuse, trusted, type GuardContext, type PlanCall } from './plan-guard.js';
import { callEffects, type CallLike } from './spend-effects.js';

/** `cancelReservedSubmission(bytes32 revealCommitment)` on the ContentRegistry (chain.md §4.1). */
export const CANCEL_RESERVATION_SELECTOR = '0x1be1bfa0';
export const CANCEL_RESERVATION_PHASE = 'cancel_expired_reservation';

/** The reveal commitment this ask reserves, recomputed from the user's file and the signer (as checkWalletPlan does). */
export function askRevealCommitment(ctx: GuardContext): Hex {
  return ctx.ask.isBundle ? bundleRevealCommitment(ctx.ask, ctx.hashes, ctx.signer) : revealCommitment(ctx.ask, ctx.hashes, ctx.signer);
}

/** loopsign's own cancel of this ask's journaled reservation (`reserved`: the call its signed bytes carried), checked. */
export function cancelReservationCall(ctx: GuardContext, reserved: CallLike): PlanCall {
  const call: PlanCall = {
    id: 'cancel-expired-reservation',
    phase: CANCEL_RESERVATION_PHASE,
    functionName: 'cancelReservedSubmission',
    description: "Cancel this ask's own expired reservation so that it can be reserved again",
    to: trusted(ctx.chain, 'contentRegistry'),
    data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'cancelReservedSubmission', args: [askRevealCommitment(ctx)] }),
    value: '0',
  };
  checkReservationCancel(ctx, call, reserved);
  return call;
}

/** Refuses (exit 5, plan_refused) a cancel that is not exactly this ask's, of its journaled reservation, moving nothing. */
export function checkReservationCancel(ctx: GuardContext, call: PlanCall, reserved: CallLike): void {
  const registry = trusted(ctx.chain, 'contentRegistry');
  const where = { call: 0, phase: call.phase };
  expectTo(call, 0, registry, 'ContentRegistry');
  if (call.value !== '0') refuse('native_value', `value ${call.value} is not 0`, where);
  if (call.data.slice(0, 10).toLowerCase() !== CANCEL_RESERVATION_SELECTOR)
    refuse('wrong_function', `selector ${call.data.slice(0, 10)} is not cancelReservedSubmission (${CANCEL_RESERVATION_SELECTOR})`, where);
  const [commitment] = decode(contentRegistryAbi, call, 0, 'cancelReservedSubmission') as [Hex];
  const expected = askRevealCommitment(ctx);
  if (!sameHex(commitment, expected))
    refuse(
      'reveal_commitment_mismatch',
      `the cancel names commitment ${commitment}, not the one this ask hashes to from this wallet (${expected})`,
      where,
    );
  // The journaled reservation, read from its signed bytes: the same registry, the same commitment.
  const journaled = { phase: 'reserve_submission', to: reserved.to, data: reserved.data, value: '0' };
  expectTo(journaled, 0, registry, 'ContentRegistry');
  const [reservedCommitment] = decode(contentRegistryAbi, journaled, 0, 'reserveSubmission') as [Hex];
  if (!sameHex(reservedCommitment, commitment))
    refuse(
      'reveal_commitment_mismatch',
      `the journaled reservation holds commitment ${reservedCommitment}, not this ask's ${commitment}; loopsign cancels only its own reservation of this ask`,
      where,
    );
  if (callEffects(ctx.chain, call).length > 0) refuse('unexpected_effects', 'a reservation cancel must move no money', where);
}
