// The caveats of a budget grant (issue 38): the byte layouts MetaMask's enforcers read (their getTermsInfo), and the
// decoder that refuses anything but the exact shape at the pinned enforcers.
import { describe, expect, it } from 'vitest';
import { concat, numberToHex, pad, type Hex } from 'viem';
import { createMultiTokenPeriodTerms, createTimestampTerms, createAllowedCalldataTerms } from '@metamask/delegation-core';
import { decodeGrantCaveats, GrantShapeError, grantCaveats, utcDayStart, type GrantLimits } from '../src/budget/terms.js';
import type { DelegationContracts } from '../src/chains/delegation.js';

const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as `0x${string}`;
const contracts: DelegationContracts = {
  delegationManager: a(1),
  deleGator: a(2),
  erc20PeriodTransferEnforcer: a(3),
  multiTokenPeriodEnforcer: a(4),
  allowedCalldataEnforcer: a(5),
  timestampEnforcer: a(6),
  nonceEnforcer: a(7),
};
const limits: GrantLimits = {
  token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  session: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  perDay: 10_000_000n,
  per30Days: 25_000_000n,
  start: utcDayStart(1_786_100_000),
  expiresAt: 1_793_836_800,
  nonce: 3n,
};
const u256 = (v: bigint | number) => numberToHex(BigInt(v), { size: 32 });

describe('grant caveats', () => {
  it('encode the five terms in the layouts the enforcers read', () => {
    const c = grantCaveats(contracts, limits);
    expect(c.map((x) => x.enforcer)).toEqual([
      contracts.erc20PeriodTransferEnforcer,
      contracts.multiTokenPeriodEnforcer,
      contracts.allowedCalldataEnforcer,
      contracts.timestampEnforcer,
      contracts.nonceEnforcer,
    ]);
    const period = (amount: bigint, seconds: number) =>
      concat([limits.token, u256(amount), u256(seconds), u256(limits.start)]).toLowerCase();
    expect(c[0]!.terms.toLowerCase()).toBe(period(10_000_000n, 86_400));
    expect(c[1]!.terms.toLowerCase()).toBe(period(25_000_000n, 2_592_000));
    expect(c[1]!.args).toBe(u256(0));
    expect(c[2]!.terms.toLowerCase()).toBe(concat([u256(4), pad(limits.session)]).toLowerCase());
    expect(c[3]!.terms).toBe(concat([numberToHex(0, { size: 16 }), numberToHex(limits.expiresAt, { size: 16 })]));
    expect(c[4]!.terms).toBe(u256(3));
    expect(limits.start % 86_400).toBe(0);
  });

  it('decode back to the same limits', () => {
    expect(decodeGrantCaveats(contracts, grantCaveats(contracts, limits))).toEqual(limits);
  });

  const refusals: [string, string, (c: { enforcer: string; terms: Hex }[]) => { enforcer: string; terms: Hex }[]][] = [
    ['a missing caveat', 'caveat_count', (c) => c.slice(0, 4)],
    ['an extra caveat', 'caveat_count', (c) => [...c, { enforcer: a(9), terms: '0x' }]],
    ['two caveats swapped', 'unknown_enforcer', (c) => [c[1]!, c[0]!, ...c.slice(2)]],
    ['a foreign enforcer', 'unknown_enforcer', (c) => [{ ...c[0]!, enforcer: a(99) }, ...c.slice(1)]],
    [
      'a second token in the 30-day cap',
      'tokens',
      (c) => [
        c[0]!,
        {
          enforcer: c[1]!.enforcer,
          terms: createMultiTokenPeriodTerms({
            tokenConfigs: [
              { token: limits.token, periodAmount: 1n, periodDuration: 2_592_000, startDate: limits.start },
              { token: a(77), periodAmount: 1n, periodDuration: 2_592_000, startDate: limits.start },
            ],
          }),
        },
        ...c.slice(2),
      ],
    ],
    [
      'a 30-day cap on another token',
      'tokens',
      (c) => [
        c[0]!,
        {
          enforcer: c[1]!.enforcer,
          terms: createMultiTokenPeriodTerms({
            tokenConfigs: [{ token: a(77), periodAmount: 1n, periodDuration: 2_592_000, startDate: limits.start }],
          }),
        },
        ...c.slice(2),
      ],
    ],
    [
      'allowed calldata at the amount, not the recipient',
      'recipient',
      (c) => [
        ...c.slice(0, 2),
        { enforcer: c[2]!.enforcer, terms: createAllowedCalldataTerms({ startIndex: 36, value: u256(1) }) },
        ...c.slice(3),
      ],
    ],
    [
      'a "not before" time',
      'expiry',
      (c) => [
        ...c.slice(0, 3),
        { enforcer: c[3]!.enforcer, terms: createTimestampTerms({ afterThreshold: 5, beforeThreshold: 9e9 }) },
        c[4]!,
      ],
    ],
  ];
  for (const [what, reason, change] of refusals) {
    it(`refuse ${what}`, () => {
      const caveats = change(grantCaveats(contracts, limits));
      let error: unknown;
      try {
        decodeGrantCaveats(contracts, caveats);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(GrantShapeError);
      expect((error as GrantShapeError).reason).toBe(reason);
    });
  }
});
