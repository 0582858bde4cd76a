// A node's answer that viem cannot read is the chain's failure (rpc_bad_answer, exit 4), not loopsign's bug: viem
// converts what the node said as it reads it, and garbage hex throws there as a plain SyntaxError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { connectChain } from '../src/chains/client.js';
import { exitCodeOf } from '../src/errors.js';
import type { ResolvedChain } from '../src/chains/index.js';

// What the node answers, by method; eth_chainId is the local dev chain's, so that connectChain takes it.
const ANSWERS: Record<string, unknown> = {
  eth_chainId: '0x7a69',
  eth_getBalance: '0xzz',
  eth_getTransactionCount: 'hello',
  eth_blockNumber: '0x',
  eth_getTransactionReceipt: { status: '0x1', blockNumber: 'garbage', transactionHash: `0x${'11'.repeat(32)}`, logs: [] },
  eth_gasPrice: '0x3b9aca00',
  eth_estimateGas: '0xzz',
};

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const rpc = JSON.parse(body) as { id: number; method: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: ANSWERS[rpc.method] ?? null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function client() {
  const resolved = { chain: { chainId: 31337, name: 'local' }, rpcUrl: { value: url, source: 'flag' }, rpcTimeoutMs: 5_000 };
  return connectChain(resolved as unknown as ResolvedChain);
}

const WALLET = '0x0000000000000000000000000000000000000001';

describe('an answer that is not well-formed', () => {
  it.each([
    ['getBalance', 'Cannot convert 0xzz to a BigInt'],
    ['getTransactionCount', 'Cannot convert hello to a BigInt'],
    ['getBlockNumber', 'Cannot convert 0x to a BigInt'],
    ['getTransactionReceipt', 'Cannot convert garbage to a BigInt'],
    // viem wraps this one (EstimateGasExecutionError, caused by the SyntaxError).
    ['estimateGas', 'Cannot convert 0xzz to a BigInt'],
  ])('%s: rpc_bad_answer, exit 4, naming the action', async (action, words) => {
    const c = await client();
    const calls: Record<string, () => Promise<unknown>> = {
      getBalance: () => c.getBalance({ address: WALLET }),
      getTransactionCount: () => c.getTransactionCount({ address: WALLET }),
      getBlockNumber: () => c.getBlockNumber({ cacheTime: 0 }),
      getTransactionReceipt: () => c.getTransactionReceipt({ hash: `0x${'11'.repeat(32)}` }),
      estimateGas: () => c.estimateGas({ account: WALLET, to: WALLET, data: '0x' }),
    };
    const e = await calls[action]!().catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'rpc_bad_answer', message: `the RPC's answer to ${action} cannot be read: ${words}` });
    expect(exitCodeOf(e)).toBe(4);
  });

  it("a well-formed answer and viem's own errors pass through unchanged", async () => {
    const c = await client();
    expect(await c.getGasPrice()).toBe(1_000_000_000n);
    expect(await c.getChainId()).toBe(31337);
    // A missing receipt is viem's own error, for the caller to read as it always has.
    ANSWERS.eth_getTransactionReceipt = null;
    const e = await c.getTransactionReceipt({ hash: `0x${'22'.repeat(32)}` }).catch((x: unknown) => x);
    expect((e as Error).name).toBe('TransactionReceiptNotFoundError');
  });
});
