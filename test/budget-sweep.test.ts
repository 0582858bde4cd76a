// What `budget sweep` keeps and what `config show` warns about, as pure functions: an ask's need from its own
// request (as src/ask/caps.ts's total), the amounts above float + reserve, and the policy-versus-grant comparison.
import { describe, expect, it } from 'vitest';
import { askNeeds, sweepAmounts } from '../src/budget/sweep.js';
import { policyLooserThanGrants } from '../src/budget/policy-compare.js';
import type { RecordedGrant } from '../src/budget/records.js';
import type { LoadedPolicy } from '../src/policy/file.js';

describe('askNeeds', () => {
  it('the bounty, plus a bonus in its own asset, capped by maxPaymentAmount for the bounty asset', () => {
    expect(askNeeds({ bounty: { amount: '1500000', asset: 'USDC' } })).toEqual({ USDC: 1_500_000n, LREP: 0n });
    expect(askNeeds({ bounty: { amount: '1500000', asset: 'USDC' }, feedbackBonus: { amount: '1000000', asset: 'USDC' } })).toEqual({
      USDC: 2_500_000n,
      LREP: 0n,
    });
    expect(
      askNeeds({
        bounty: { amount: '1500000', asset: 'USDC' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        maxPaymentAmount: '2000000',
      }),
    ).toEqual({ USDC: 2_000_000n, LREP: 0n });
    expect(askNeeds({ bounty: { amount: '3', asset: 'LREP' }, feedbackBonus: { amount: '2', asset: 'USDC' } })).toEqual({
      USDC: 2n,
      LREP: 3n,
    });
  });

  it('undefined for a request it cannot read (then the sweep refuses rather than guess)', () => {
    for (const r of [null, 'x', {}, { bounty: { amount: '1.5', asset: 'USDC' } }, { bounty: { amount: '1', asset: 'ETH' } }])
      expect(askNeeds(r)).toBeUndefined();
    expect(askNeeds({ bounty: { amount: '1', asset: 'USDC' }, feedbackBonus: { amount: 'x', asset: 'USDC' } })).toBeUndefined();
  });
});

describe('sweepAmounts', () => {
  it('balance minus float minus reserve, never below 0', () => {
    expect(sweepAmounts({ USDC: 10n, LREP: 5n }, { USDC: 2n, LREP: 2n }, { USDC: 3n, LREP: 4n })).toEqual({ USDC: 5n, LREP: 0n });
    expect(sweepAmounts({ USDC: 0n, LREP: 0n }, { USDC: 0n, LREP: 0n }, { USDC: 0n, LREP: 0n })).toEqual({ USDC: 0n, LREP: 0n });
  });
});

describe('policyLooserThanGrants', () => {
  const grant = (perDay: string, per30Days: string, chainId = 31337): RecordedGrant =>
    ({
      file: 'g.json',
      grant: { chainId, owner: '0xO', session: '0xS', delegations: [{ hash: '0xab', limits: { perDay, per30Days } }] },
    }) as unknown as RecordedGrant;
  const policy = (p: Record<string, unknown>): LoadedPolicy => ({ file: 'p.json', source: 'config folder', policy: { version: 1, ...p } });

  it('warns per window where no policy sets a limit or the tightest is above the grant', () => {
    const w = policyLooserThanGrants([], 31337, [grant('10', '25')]);
    expect(w.map((x) => [x.policyLimit, x.policyCap])).toEqual([
      ['rolling24h', null],
      ['calendarMonth', null],
      ['perAsk', null],
    ]);
    const two = [
      policy({ rolling24h: { '31337': { maxUsdc: '50' } }, perAsk: { maxUsdc: '5' } }),
      policy({ rolling24h: { '31337': { maxUsdc: '12' } }, calendarMonth: { '31337': { maxUsdc: '25' } } }),
    ];
    // Every policy file applies: the tightest of them (12) is compared; 25 = the grant's is not looser.
    expect(policyLooserThanGrants(two, 31337, [grant('10', '25')]).map((x) => [x.policyLimit, x.policyCap, x.grantCap])).toEqual([
      ['rolling24h', '12', '10'],
    ]);
    expect(policyLooserThanGrants(two, 31337, [grant('12', '25')])).toEqual([]);
    // Another chain's limits and grants do not count.
    expect(policyLooserThanGrants(two, 8453, [grant('10', '25')])).toEqual([]);
  });
});
