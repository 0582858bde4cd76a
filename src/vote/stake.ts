// Stake and prediction inputs (chain.md §9.2, §9.10). Parsed exactly from decimal text, never through floats.

export class VoteInputError extends Error {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }

  /** The flag (rate, rate commit) that sets this field, if one does. */
  get flag(): string | undefined {
    return VOTE_FLAGS[this.field];
  }

  /** The message as a command-line user should read it: naming the flag they typed, not the protocol's field. */
  forFlags(): string {
    return this.flag ? `${this.flag} ${this.detail}` : this.message;
  }
}

/** The flag (rate, rate commit) that sets each vote field. */
const VOTE_FLAGS: Record<string, string> = { stakeAmount: '--stake', predictedUpPercent: '--prediction' };

export const LREP_DECIMALS = 6;
export const MIN_STAKE = 1_000_000n; // 1 LREP, on-chain MIN_STAKE
export const MAX_STAKE = 10_000_000n; // 10 LREP per identity per round

/** LREP display amount → 6-decimal atomic units. "2.5" → 2500000; "0" → 0 (advisory vote). */
export function parseStake(value: string | number): bigint {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'NaN') : value.trim();
  if (!/^\d+(\.\d+)?$/.test(text)) throw new VoteInputError('stakeAmount', `"${text}" must be a finite, non-negative decimal LREP amount`);
  const [whole, frac = ''] = text.split('.') as [string, string?];
  if (frac.length > LREP_DECIMALS) throw new VoteInputError('stakeAmount', `"${text}" has more than ${LREP_DECIMALS} decimal places`);
  return BigInt(whole) * 10n ** BigInt(LREP_DECIMALS) + BigInt(frac.padEnd(LREP_DECIMALS, '0') || '0');
}

export function checkStakeBounds(stake: bigint): void {
  if (stake === 0n) return;
  if (stake < MIN_STAKE || stake > MAX_STAKE) {
    throw new VoteInputError(
      'stakeAmount',
      `a staked vote must be between 1 and 10 LREP (got ${Number(stake) / 1e6}); use 0 for an advisory vote`,
    );
  }
}

/** predictedUpPercent (1…99, at most two decimals) → basis points 100…9900. */
export function predictedUpBps(percent: string | number): number {
  const text = String(percent).trim();
  if (!/^\d+(\.\d{1,2})?$/.test(text)) throw new VoteInputError('predictedUpPercent', `"${text}" must be a number from 1 to 99`);
  const bps = Math.round(Number(text) * 100);
  if (bps < 100 || bps > 9900) throw new VoteInputError('predictedUpPercent', `${text} is outside 1 … 99`);
  return bps;
}
