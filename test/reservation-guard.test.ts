// The guard of loopsign's own cancel of an ask's expired reservation (src/wallet/reservation-guard.ts): the call is
// built from the pinned ABI entry, to the chain's pinned ContentRegistry, naming the commitment this ask hashes to
// from the user's file and wallet, which must be the one the journaled reservation carried; it moves no money. Each
// way it could be wrong is refused (plan_refused, exit 5, the rule named).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { encodeFunctionData, toFunctionSelector, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { chainForProfile } from '../src/chains/index.js';
import { contentRegistryAbi } from '../src/protocol/abi.js';
import { computeAskHashes } from '../src/protocol/ask-hashes.js';
import { normalizeAsk } from '../src/protocol/ask-normalize.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { callEffects } from '../src/wallet/spend-effects.js';
import {
  CANCEL_RESERVATION_SELECTOR,
  askRevealCommitment,
  cancelReservationCall,
  checkReservationCancel,
} from '../src/wallet/reservation-guard.js';
import { TEST_ADDRESS, VECTORS } from './helpers/cli.js';

const example = JSON.parse(readFileSync(path.join(VECTORS, 'asks/world-cup-2026-48-teams.json'), 'utf8'));
const ask = normalizeAsk({ ...example, chainId: 8453, walletAddress: TEST_ADDRESS, paymentMode: 'wallet_calls' });
const resolver = (id: string, v: number) => resultSpecHash(id, v, TEMPLATES.find((t) => t.id === id)!.voteSemantics);
const chain = chainForProfile(8453);
const ctx = {
  chain,
  signer: TEST_ADDRESS.toLowerCase() as Hex,
  ask,
  hashes: computeAskHashes(ask, TEST_ADDRESS, resolver),
  verifyPayload: true,
};
const registry = chain.contracts.contentRegistry as Hex;
const commitment = askRevealCommitment(ctx);
const reserve = (c: Hex, to: Hex = registry) => ({
  to,
  data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [c] }),
});
const cancelData = (c: Hex) => encodeFunctionData({ abi: contentRegistryAbi, functionName: 'cancelReservedSubmission', args: [c] });
const OTHER = `0x${'ab'.repeat(32)}` as Hex;

function refusal(fn: () => unknown): { code?: string; rule?: string; message: string } {
  try {
    fn();
  } catch (e) {
    const err = e as { code?: string; details?: { rule?: string }; message: string };
    return { code: err.code, rule: err.details?.rule, message: err.message };
  }
  throw new Error('not refused');
}

describe("the cancel of an ask's own expired reservation", () => {
  it('is built from the pinned entry: the pinned registry, selector 0x1be1bfa0, this ask’s commitment, no value, no spend', () => {
    expect(CANCEL_RESERVATION_SELECTOR).toBe(toFunctionSelector('function cancelReservedSubmission(bytes32 revealCommitment)'));
    const call = cancelReservationCall(ctx, reserve(commitment));
    expect(call.to).toBe(registry);
    expect(call.data).toBe(cancelData(commitment));
    expect(call.data.slice(0, 10)).toBe('0x1be1bfa0');
    expect(call.value).toBe('0');
    expect(callEffects(chain, call)).toEqual([]);
  });

  it.each([
    ['a journaled reservation of another commitment', () => cancelReservationCall(ctx, reserve(OTHER)), 'reveal_commitment_mismatch'],
    [
      'a journaled reservation on another contract',
      () => cancelReservationCall(ctx, reserve(commitment, `0x${'11'.repeat(20)}`)),
      'untrusted_target',
    ],
    [
      'a journaled transaction that is no reservation',
      () => cancelReservationCall(ctx, { to: registry, data: cancelData(commitment) }),
      'wrong_function',
    ],
    [
      'a cancel to another contract',
      () =>
        checkReservationCancel(
          ctx,
          { phase: 'x', to: `0x${'22'.repeat(20)}`, data: cancelData(commitment), value: '0' },
          reserve(commitment),
        ),
      'untrusted_target',
    ],
    [
      'a cancel of another commitment (the journal agreeing)',
      () => checkReservationCancel(ctx, { phase: 'x', to: registry, data: cancelData(OTHER), value: '0' }, reserve(OTHER)),
      'reveal_commitment_mismatch',
    ],
    [
      'another function under the cancel',
      () => checkReservationCancel(ctx, { phase: 'x', to: registry, ...reserve(commitment), value: '0' }, reserve(commitment)),
      'wrong_function',
    ],
    [
      'trailing bytes after the commitment',
      () => checkReservationCancel(ctx, { phase: 'x', to: registry, data: `${cancelData(commitment)}00`, value: '0' }, reserve(commitment)),
      'non_canonical_calldata',
    ],
    [
      'a native value',
      () => checkReservationCancel(ctx, { phase: 'x', to: registry, data: cancelData(commitment), value: '1' }, reserve(commitment)),
      'native_value',
    ],
    [
      'a chain with no pinned ContentRegistry',
      () =>
        cancelReservationCall(
          { ...ctx, chain: { ...chain, contracts: { ...chain.contracts, contentRegistry: undefined } } as typeof chain },
          reserve(commitment),
        ),
      'untrusted_chain_config',
    ],
  ])('%s: refused', (_what, fn, rule) => {
    const r = refusal(fn);
    expect(r.code).toBe('plan_refused');
    expect(r.rule).toBe(rule);
  });
});
