// A viem public client for the configured chain. The RPC's eth_chainId is checked before anything else is done
// with it: an RPC for another chain is a refusal, not a warning.
import { createPublicClient, defineChain, type PublicClient } from 'viem';
import { ChainError, UsageError } from '../errors.js';
import { redactUrl } from '../output.js';
import type { ResolvedChain } from './index.js';
import { rpcTransport } from './rpc-transport.js';

export function viemChain(resolved: ResolvedChain, rpcUrl: string) {
  return defineChain({
    id: resolved.chain.chainId,
    name: resolved.chain.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function rpcUrlOf(resolved: ResolvedChain): string {
  const url = resolved.rpcUrl.value;
  if (url === undefined) {
    throw new UsageError('rpc_url_required', `no RPC URL for chain ${resolved.chain.chainId}`, {
      hint:
        resolved.chain.chainId === 31337
          ? 'start `loopsign sandbox` (it writes the RPC URL to its manifest) or pass --rpc-url'
          : 'pass --rpc-url or set LOOPSIGN_RPC_URL',
    });
  }
  return url;
}

export async function connectChain(resolved: ResolvedChain): Promise<PublicClient> {
  const url = rpcUrlOf(resolved);
  const client = createPublicClient({
    chain: viemChain(resolved, url),
    // Receipts are polled at the chain's pace: Base and Base Sepolia make a block every 2 s, so a receipt is seen
    // within a quarter block (viem's default 4 s, or 2 s, would add up to a block to every wait); the local dev
    // chain mines at once, or as often as `sandbox --block-time` says.
    pollingInterval: resolved.chain.chainId === 31337 ? 100 : 500,
    // A stalled node fails each request after rpcTimeoutMs; viem retries twice, then the command reports it. The
    // requests go over node:http, not fetch (src/chains/rpc-transport.ts).
    transport: rpcTransport(url, { timeout: resolved.rpcTimeoutMs, retryCount: 2 }),
  }) as PublicClient;
  let reported: number;
  try {
    reported = await client.getChainId();
  } catch (error) {
    throw new ChainError(
      'rpc_unreachable',
      `the RPC at ${redactUrl(url)} (from ${resolved.rpcUrl.source}) did not answer eth_chainId: ${shortMessage(error)}`,
      {
        hint:
          resolved.rpcUrl.source === 'env ETH_RPC_URL'
            ? "ETH_RPC_URL (Foundry's variable) is used when loopsign has no RPC URL of its own: fix it, or give --rpc-url / LOOPSIGN_RPC_URL"
            : 'check --rpc-url and that the node is running',
        cause: error,
      },
    );
  }
  if (reported !== resolved.chain.chainId) {
    throw new ChainError(
      'rpc_chain_mismatch',
      `the RPC at ${redactUrl(url)} (from ${resolved.rpcUrl.source}) is on chain ${reported}, but loopsign is configured for ${resolved.chain.chainId}`,
      {
        hint:
          resolved.rpcUrl.source === 'env ETH_RPC_URL'
            ? "ETH_RPC_URL (Foundry's variable) points at another chain: give --rpc-url / LOOPSIGN_RPC_URL for this one, or change --chain-id"
            : 'point --rpc-url at a node for the configured chain, or change --chain-id',
      },
    );
  }
  return readsChecked(client);
}

/**
 * The client, with the errors its actions throw while reading an answer made the chain's: viem turns what the node
 * said into values as it reads it (`hexToBigInt`, its formatters), and an answer that is not well-formed hex ("0xzz",
 * "hello" for a nonce) throws there as a plain SyntaxError or RangeError, which would read as loopsign's own bug
 * (internal_error, exit 1). Only those two: loopsign never calls an action with arguments that could throw them.
 */
function readsChecked(client: PublicClient): PublicClient {
  const unreadable = (e: unknown): e is Error => e instanceof SyntaxError || e instanceof RangeError;
  const bad = (action: PropertyKey, error: unknown) => {
    // Some actions wrap what they met (estimateGas: EstimateGasExecutionError, its cause the SyntaxError).
    const walk = (error as { walk?: (fn: (e: unknown) => boolean) => unknown }).walk;
    const found = unreadable(error) ? error : typeof walk === 'function' ? walk.call(error, unreadable) : undefined;
    if (!unreadable(found)) return error;
    return new ChainError('rpc_bad_answer', `the RPC's answer to ${String(action)} cannot be read: ${found.message}`, {
      hint: 'the node is faulty or is not an Ethereum JSON-RPC endpoint: check --rpc-url, then run the same command again',
      cause: error,
    });
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(target, args);
        } catch (error) {
          throw bad(prop, error);
        }
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw bad(prop, error);
            })
          : result;
      };
    },
  });
}

export function shortMessage(error: unknown): string {
  const e = error as { name?: string; shortMessage?: string; message?: string; details?: unknown; status?: unknown };
  const short = (e.shortMessage ?? e.message ?? String(error)).split('\n')[0]!;
  if (e.name !== 'HttpRequestError') return short;
  // viem's "HTTP request failed." alone says nothing of why; its status and details do (a certificate the node's TLS
  // does not pass, a refused connection, a redirect, a proxy's error page).
  const status = typeof e.status === 'number' ? ` (HTTP ${e.status})` : '';
  const details = typeof e.details === 'string' ? e.details.split('\n')[0]!.slice(0, 300) : '';
  return `${short.replace(/\.$/, '')}${status}${details ? `: ${details}` : ''}`;
}
