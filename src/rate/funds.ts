// Before a vote signs anything: the wallet must hold the stake (LREP) and ETH for the gas of the rating's
// transactions, as `ask` checks before it pays. Without this a wallet with no ETH met a failed transaction creation
// deep in the executor ("rerun"), when the only fix is to fund it.
import { erc20Abi, type Hex, type PublicClient } from 'viem';
import { formatUnits } from '../amounts.js';
import type { ChainConfig } from '../chains/table.js';
import { ChainError } from '../errors.js';
import type { Output } from '../output.js';

/** Gas a rating may spend at most, per transaction (open the round, approve the stake, commit), as `ask` budgets. */
const GAS_PER_TX = 600_000n;
const MAX_TXS = 3n;

export async function checkRateFunds(client: PublicClient, chain: ChainConfig, wallet: Hex, stake: bigint, out: Output): Promise<void> {
  const missing: string[] = [];
  if (stake > 0n) {
    const token = chain.tokens.LREP.address as Hex;
    const balance = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
    if (balance < stake)
      missing.push(
        `${formatUnits(stake - balance, 6)} LREP for the stake (has ${formatUnits(balance, 6)}, needs ${formatUnits(stake, 6)})`,
      );
  }
  const fees = await client.estimateFeesPerGas();
  const gasNeeded = MAX_TXS * GAS_PER_TX * (fees.maxFeePerGas ?? 0n);
  const eth = await client.getBalance({ address: wallet });
  if (eth < gasNeeded) missing.push(`about ${formatUnits(gasNeeded - eth, 18)} ETH for gas (has ${formatUnits(eth, 18)})`);
  if (missing.length) {
    throw new ChainError('insufficient_funds', `wallet ${wallet} is short of ${missing.join(' and ')}; nothing was signed`, {
      hint:
        chain.chainId === 31337
          ? `fund it with \`loopsign sandbox fund ${wallet}\` and run the same command again`
          : 'fund the wallet and run the same command again',
    });
  }
  out.progress('rate.funds', 'balances cover the stake and gas');
}
