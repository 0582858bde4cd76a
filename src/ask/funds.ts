// Before the first transaction of an ask: the wallet holds the bounty, any bonus, and gas (or an imported grant pulls
// the part it lacks: src/budget/pull.ts) — or nothing is sent.
import { erc20Abi, formatUnits, type Hex, type PublicClient } from 'viem';
import type { Output } from '../output.js';
import { ChainError } from '../errors.js';
import type { GuardContext, PlanCall } from '../wallet/plan-guard.js';

export async function checkFunds(
  client: PublicClient,
  ctx: GuardContext,
  wallet: Hex,
  calls: PlanCall[],
  out: Output,
  /** What an imported grant pulls for this ask beyond the balance now (src/budget/pull.ts), checked on chain already. */
  covered: Partial<Record<'USDC' | 'LREP', bigint>> = {},
): Promise<void> {
  const needs = new Map<'USDC' | 'LREP', bigint>();
  const add = (asset: 'USDC' | 'LREP', amount: bigint) => needs.set(asset, (needs.get(asset) ?? 0n) + amount);
  add(ctx.ask.bounty.asset, ctx.ask.bounty.amount);
  if (ctx.ask.feedbackBonus) add(ctx.ask.feedbackBonus.asset, ctx.ask.feedbackBonus.amount);
  const missing: string[] = [];
  for (const [asset, amount] of needs) {
    const token = ctx.chain.tokens[asset].address as Hex;
    const balance =
      (await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })) + (covered[asset] ?? 0n);
    if (balance < amount)
      missing.push(`${formatUnits(amount - balance, 6)} ${asset} (has ${formatUnits(balance, 6)}, needs ${formatUnits(amount, 6)})`);
  }
  const fees = await client.estimateFeesPerGas();
  const gasNeeded = BigInt(calls.length + 2) * 600_000n * (fees.maxFeePerGas ?? 0n);
  const eth = await client.getBalance({ address: wallet });
  if (eth < gasNeeded) missing.push(`about ${formatUnits(gasNeeded - eth, 18)} ETH for gas (has ${formatUnits(eth, 18)})`);
  if (missing.length) {
    throw new ChainError('insufficient_funds', `wallet ${wallet} is short of ${missing.join(' and ')}; nothing was sent`, {
      hint: 'fund the wallet and run the same command again',
    });
  }
  out.progress('ask.funds', `balances${covered.USDC || covered.LREP ? " and the owner's grant" : ''} cover the bounty, any bonus, and gas`);
}
