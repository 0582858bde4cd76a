// The caveats of a USDC budget grant (issue 38, notes/agent-budget.md §2.2), encoded and decoded with MetaMask's own
// terms codecs (@metamask/delegation-core): exactly five, in this order, each at its pinned enforcer.
//
//   ERC20PeriodTransferEnforcer  token ‖ perDay ‖ 86400 ‖ start               at most perDay per UTC day
//   MultiTokenPeriodEnforcer     token ‖ per30Days ‖ 2592000 ‖ start          at most per30Days per 30 days (args 0)
//   AllowedCalldataEnforcer      offset 4 ‖ abi.encode(session)                the transfer's recipient is the session
//   TimestampEnforcer            uint128(0) ‖ uint128(expiry)                  redeemable only before expiry
//   NonceEnforcer                owner's nonce at grant time                   one incrementNonce revokes every grant
//
// No ValueLteEnforcer: ERC20PeriodTransferEnforcer itself requires value 0, a single call to the token, `transfer` and
// 68 bytes of calldata, so a sixth caveat would add gas and no bound.
import {
  createAllowedCalldataTerms,
  createERC20TokenPeriodTransferTerms,
  createMultiTokenPeriodTerms,
  createNonceTerms,
  createTimestampTerms,
  decodeAllowedCalldataTerms,
  decodeERC20TokenPeriodTransferTerms,
  decodeMultiTokenPeriodTerms,
  decodeNonceTerms,
  decodeTimestampTerms,
} from '@metamask/delegation-core';
import { encodeAbiParameters, getAddress, isAddressEqual, numberToHex, type Hex } from 'viem';
import type { Address } from '../chains/table.js';
import type { DelegationContracts } from '../chains/delegation.js';

export const DAY_SECONDS = 86_400;
export const PERIOD_30_DAYS_SECONDS = 30 * DAY_SECONDS;
/** The offset of `transfer(address to, uint256)`'s recipient in its calldata (after the 4-byte selector). */
export const RECIPIENT_OFFSET = 4;

export interface Caveat {
  enforcer: Address;
  terms: Hex;
  args: Hex;
}

/** What a grant allows, in atomic units and unix seconds. */
export interface GrantLimits {
  token: Address;
  session: Address;
  perDay: bigint;
  per30Days: bigint;
  /** The first period's start: 00:00 UTC of the grant's day (chain time). */
  start: number;
  expiresAt: number;
  /** The owner's NonceEnforcer nonce the grant is bound to. */
  nonce: bigint;
}

/** The start of the UTC day containing `unixSeconds`. */
export function utcDayStart(unixSeconds: number): number {
  return Math.floor(unixSeconds / DAY_SECONDS) * DAY_SECONDS;
}

export function grantCaveats(contracts: DelegationContracts, l: GrantLimits): Caveat[] {
  return [
    {
      enforcer: contracts.erc20PeriodTransferEnforcer,
      terms: createERC20TokenPeriodTransferTerms({
        tokenAddress: l.token,
        periodAmount: l.perDay,
        periodDuration: DAY_SECONDS,
        startDate: l.start,
      }),
      args: '0x',
    },
    {
      enforcer: contracts.multiTokenPeriodEnforcer,
      terms: createMultiTokenPeriodTerms({
        tokenConfigs: [{ token: l.token, periodAmount: l.per30Days, periodDuration: PERIOD_30_DAYS_SECONDS, startDate: l.start }],
      }),
      // The token's index in the terms; the redeemer supplies args (they are not signed), and with one token the
      // only index that passes is 0.
      args: numberToHex(0, { size: 32 }),
    },
    {
      enforcer: contracts.allowedCalldataEnforcer,
      terms: createAllowedCalldataTerms({
        startIndex: RECIPIENT_OFFSET,
        value: encodeAbiParameters([{ type: 'address' }], [l.session]),
      }),
      args: '0x',
    },
    {
      enforcer: contracts.timestampEnforcer,
      terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: l.expiresAt }),
      args: '0x',
    },
    {
      enforcer: contracts.nonceEnforcer,
      terms: createNonceTerms({ nonce: numberToHex(l.nonce, { size: 32 }) }),
      args: '0x',
    },
  ];
}

/** Why a caveat list is not a grant's exact shape (one sentence), for the refusals of `budget import` and `show`. */
export class GrantShapeError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads the limits back from a caveat list, refusing anything but the exact shape above at the pinned enforcers:
 * a missing, extra, reordered or foreign caveat, mismatched tokens or starts, a second token, a recipient that is not
 * a whole address, a "not before" bound, or periods other than a day and 30 days.
 */
export function decodeGrantCaveats(contracts: DelegationContracts, caveats: readonly { enforcer: string; terms: Hex }[]): GrantLimits {
  const order = [
    contracts.erc20PeriodTransferEnforcer,
    contracts.multiTokenPeriodEnforcer,
    contracts.allowedCalldataEnforcer,
    contracts.timestampEnforcer,
    contracts.nonceEnforcer,
  ];
  if (caveats.length !== order.length)
    throw new GrantShapeError('caveat_count', `the delegation has ${caveats.length} caveats; a budget grant has exactly ${order.length}`);
  caveats.forEach((c, i) => {
    if (!isAddressEqual(c.enforcer as Address, order[i]!))
      throw new GrantShapeError('unknown_enforcer', `caveat ${i + 1}'s enforcer ${c.enforcer} is not the pinned one (${order[i]})`);
  });
  const day = decodeERC20TokenPeriodTransferTerms(caveats[0]!.terms);
  const month = decodeMultiTokenPeriodTerms(caveats[1]!.terms);
  const recipient = decodeAllowedCalldataTerms(caveats[2]!.terms);
  const time = decodeTimestampTerms(caveats[3]!.terms);
  const nonce = decodeNonceTerms(caveats[4]!.terms);
  if (Number(day.periodDuration) !== DAY_SECONDS)
    throw new GrantShapeError('period', `the daily cap's period is ${day.periodDuration} s, not one day`);
  if (month.tokenConfigs.length !== 1)
    throw new GrantShapeError('tokens', `the 30-day cap names ${month.tokenConfigs.length} tokens; a grant names one`);
  const m = month.tokenConfigs[0]!;
  if (Number(m.periodDuration) !== PERIOD_30_DAYS_SECONDS)
    throw new GrantShapeError('period', `the 30-day cap's period is ${m.periodDuration} s, not 30 days`);
  if (!isAddressEqual(m.token as Address, day.tokenAddress as Address))
    throw new GrantShapeError('tokens', 'the daily and 30-day caps name different tokens');
  if (Number(m.startDate) !== Number(day.startDate))
    throw new GrantShapeError('period', 'the daily and 30-day caps start at different times');
  if (recipient.startIndex !== RECIPIENT_OFFSET || !/^0x0{24}[0-9a-fA-F]{40}$/.test(recipient.value))
    throw new GrantShapeError('recipient', 'the allowed calldata is not a transfer recipient (offset 4, one whole address)');
  if (time.afterThreshold !== 0) throw new GrantShapeError('expiry', 'the grant has a "not before" time; loopsign grants have none');
  if (time.beforeThreshold === 0) throw new GrantShapeError('expiry', 'the grant has no expiry');
  return {
    token: getAddress(day.tokenAddress),
    session: getAddress(`0x${recipient.value.slice(-40)}`),
    perDay: day.periodAmount,
    per30Days: m.periodAmount,
    start: Number(day.startDate),
    expiresAt: time.beforeThreshold,
    nonce: BigInt(nonce.nonce),
  };
}
