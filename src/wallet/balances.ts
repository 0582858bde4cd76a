// Native and token balances of an address on the configured chain.
import { erc20Abi, formatUnits, type PublicClient } from 'viem';
import type { ResolvedChain } from '../chains/index.js';

export interface Balance {
  symbol: 'ETH' | 'USDC' | 'LREP';
  atomic: string | null;
  decimals: number;
  formatted: string | null;
  /** The token contract (null for ETH, or a token not configured on this chain). Public, so shown; named so that the
   * output's redaction of `token` (bearer tokens) does not hide it. */
  tokenAddress: string | null;
}

export async function readBalances(resolved: ResolvedChain, client: PublicClient, address: `0x${string}`): Promise<Balance[]> {
  const eth = await client.getBalance({ address });
  const out: Balance[] = [{ symbol: 'ETH', atomic: eth.toString(), decimals: 18, formatted: formatUnits(eth, 18), tokenAddress: null }];
  for (const symbol of ['USDC', 'LREP'] as const) {
    const token = resolved.chain.tokens[symbol];
    if (!token.address) {
      out.push({ symbol, atomic: null, decimals: token.decimals, formatted: null, tokenAddress: null });
      continue;
    }
    const value = await client.readContract({ address: token.address, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    out.push({
      symbol,
      atomic: value.toString(),
      decimals: token.decimals,
      formatted: formatUnits(value, token.decimals),
      tokenAddress: token.address,
    });
  }
  return out;
}
