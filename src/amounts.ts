// Amounts for people and for the chain: atomic units (what is signed) shown beside display units (2.5 USDC), and
// display units typed by a person parsed exactly (decimal text, never a float). Also the bound beyond which an
// amount cannot be a real payment: above it nothing is sent.
import { UsageError } from './errors.js';

export const TOKEN_DECIMALS: Record<string, number> = { USDC: 6, LREP: 6, ETH: 18 };

/** The largest value a uint256 can hold. */
export const UINT256_MAX = 2n ** 256n - 1n;

/**
 * The most any single amount of an ask may be: 1,000,000,000 tokens (10^15 atomic units at 6 decimals). Far above
 * any real bounty and above what any wallet holds (USDC's whole supply is some tens of billions): an amount beyond
 * it is a typo or a unit mistake (atomic units where display units were meant), never a payment.
 */
export const MAX_TOKEN_AMOUNT = 1_000_000_000n;

/** Atomic units as display text: formatUnits(2500000n, 6) = "2.5". */
export function formatUnits(atomic: bigint, decimals: number): string {
  const negative = atomic < 0n;
  const abs = negative ? -atomic : atomic;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const frac = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** "2.5 USDC" for 2500000n USDC; undefined for an asset whose decimals loopsign does not know. */
export function displayAmount(atomic: bigint | string, asset: string): string | undefined {
  // Own entries only: an asset a service names 'constructor' or '__proto__' is no token, not Object.prototype's member.
  const decimals = Object.hasOwn(TOKEN_DECIMALS, asset) ? TOKEN_DECIMALS[asset] : undefined;
  if (decimals === undefined) return undefined;
  const value = typeof atomic === 'bigint' ? atomic : /^[0-9]{1,100}$/.test(atomic) ? BigInt(atomic) : undefined;
  return value === undefined ? undefined : `${formatUnits(value, decimals)} ${asset}`;
}

/** A display amount a person typed ("2.5") as atomic units, exactly; `what` names the flag. */
export function parseDisplayAmount(text: string, decimals: number, what: string): bigint {
  const t = text.trim();
  if (!/^[0-9]+(\.[0-9]+)?$/.test(t))
    throw new UsageError('invalid_amount', `${what} ${text} is not an amount (a decimal number such as 2.5)`);
  const [whole, frac = ''] = t.split('.') as [string, string?];
  if (frac.length > decimals) throw new UsageError('invalid_amount', `${what} ${text} has more than ${decimals} decimal places`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/** Refuses (exit 2) an amount no payment can have: above uint256, or above MAX_TOKEN_AMOUNT tokens. */
export function checkPayable(atomic: bigint, asset: string, field: string, where?: string): void {
  const decimals = (Object.hasOwn(TOKEN_DECIMALS, asset) ? TOKEN_DECIMALS[asset] : undefined) ?? 6;
  const named = where === undefined ? field : `${where}: ${field}`;
  if (atomic > UINT256_MAX) {
    throw new UsageError(
      'amount_too_large',
      `${named}: ${atomic} does not fit in a uint256: no token amount can be that large; nothing was sent`,
      {
        hint: `amounts are atomic units (${decimals} decimals for ${asset}: 2.5 ${asset} is ${parseDisplayAmount('2.5', decimals, field)})`,
        details: { field },
      },
    );
  }
  const cap = MAX_TOKEN_AMOUNT * 10n ** BigInt(decimals);
  if (atomic > cap) {
    throw new UsageError(
      'amount_too_large',
      `${named}: ${atomic} atomic units is ${formatUnits(atomic, decimals)} ${asset}, above the ${formatUnits(MAX_TOKEN_AMOUNT, 0)} ${asset} that any one payment may be; nothing was sent`,
      {
        hint: `amounts are atomic units (${decimals} decimals for ${asset}: 2.5 ${asset} is ${parseDisplayAmount('2.5', decimals, field)})`,
        details: { field },
      },
    );
  }
}
