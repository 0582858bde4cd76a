// takerOf (src/wallet/finality.ts): the transaction that used a nonce counts only if the wallet signed it. The signed
// bytes are rebuilt from the fields a node answers for each type a wallet signs (legacy, EIP-2930, EIP-1559, EIP-7702),
// and their hash and signer checked; a made-up body (fields changed under a real signature) is rpc_inconsistent.
import { describe, expect, it } from 'vitest';
import { createPublicClient, custom, keccak256, parseTransaction, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { takerOf } from '../src/wallet/finality.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

const account = privateKeyToAccount(TEST_PRIVATE_KEY);
const BLOCK_HASH = `0x${'11'.repeat(32)}` as Hex;

/** A node whose block 1 holds `raw` as eth_getBlockByNumber answers it (with `lie` over its fields), the nonce used there. */
function nodeWith(raw: Hex, lie: Record<string, unknown> = {}) {
  const p = parseTransaction(raw);
  const tx = {
    hash: keccak256(raw),
    nonce: toHex(p.nonce!),
    from: account.address,
    to: p.to,
    input: p.data ?? '0x',
    value: toHex(p.value ?? 0n),
    gas: toHex(p.gas!),
    type: { legacy: '0x0', eip2930: '0x1', eip1559: '0x2', eip7702: '0x4' }[p.type as string],
    chainId: p.chainId === undefined ? undefined : toHex(p.chainId),
    ...(p.gasPrice !== undefined ? { gasPrice: toHex(p.gasPrice) } : {}),
    ...(p.maxFeePerGas !== undefined ? { maxFeePerGas: toHex(p.maxFeePerGas), maxPriorityFeePerGas: toHex(p.maxPriorityFeePerGas!) } : {}),
    ...(p.accessList ? { accessList: p.accessList } : {}),
    ...(p.authorizationList
      ? {
          authorizationList: p.authorizationList.map((a) => ({
            address: a.address,
            chainId: toHex(a.chainId),
            nonce: toHex(a.nonce),
            r: a.r,
            s: a.s,
            yParity: toHex(a.yParity!),
          })),
        }
      : {}),
    v: toHex(p.v ?? BigInt(p.yParity!)),
    r: p.r,
    s: p.s,
    ...(p.yParity !== undefined ? { yParity: toHex(p.yParity) } : {}),
    blockHash: BLOCK_HASH,
    blockNumber: '0x1',
    transactionIndex: '0x0',
    ...lie,
  };
  const block = {
    number: '0x1',
    hash: BLOCK_HASH,
    parentHash: `0x${'00'.repeat(32)}`,
    timestamp: '0x1',
    transactions: [tx],
    baseFeePerGas: '0x1',
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    logsBloom: `0x${'00'.repeat(256)}`,
    miner: `0x${'00'.repeat(20)}`,
    extraData: '0x',
    uncles: [],
    difficulty: '0x0',
    nonce: '0x0000000000000000',
  };
  return createPublicClient({
    transport: custom({
      request: async ({ method, params }: { method: string; params: unknown[] }) => {
        if (method === 'eth_getTransactionCount') return Number(params[1]) >= 1 ? '0x1' : '0x0';
        if (method === 'eth_getBlockByNumber') return block;
        throw new Error(`unexpected ${method}`);
      },
    }),
  });
}

const base = { to: '0x000000000000000000000000000000000000dEaD' as Hex, nonce: 0, gas: 21_000n, value: 0n, chainId: 8453 };

describe('takerOf: the taker of a nonce is a transaction the wallet signed', () => {
  it.each([
    ['legacy', () => account.signTransaction({ ...base, type: 'legacy', gasPrice: 1n })],
    ['eip2930', () => account.signTransaction({ ...base, type: 'eip2930', gasPrice: 1n, accessList: [] })],
    ['eip1559', () => account.signTransaction({ ...base, type: 'eip1559', maxFeePerGas: 2n, maxPriorityFeePerGas: 1n })],
    [
      'eip7702',
      async () =>
        account.signTransaction({
          ...base,
          type: 'eip7702',
          maxFeePerGas: 2n,
          maxPriorityFeePerGas: 1n,
          authorizationList: [
            await account.signAuthorization({ chainId: 8453, address: '0x000000000000000000000000000000000000bEEF', nonce: 1 }),
          ],
        }),
    ],
  ])('a %s transaction the wallet signed is the taker', async (_, sign) => {
    const raw = await sign();
    expect(await takerOf(nodeWith(raw) as never, account.address, 0, 1n)).toEqual({ hash: keccak256(raw), block: 1n });
  });

  it('a made-up body (another input under the signature, another hash) is no taker: rpc_inconsistent', async () => {
    const raw = await account.signTransaction({ ...base, type: 'eip1559', maxFeePerGas: 2n, maxPriorityFeePerGas: 1n });
    const node = nodeWith(raw, { input: '0xdead', hash: keccak256('0xdead') });
    await expect(takerOf(node as never, account.address, 0, 1n)).rejects.toMatchObject({ code: 'rpc_inconsistent' });
  });

  it('a signed transaction named by another hash is no taker', async () => {
    const raw = await account.signTransaction({ ...base, type: 'eip1559', maxFeePerGas: 2n, maxPriorityFeePerGas: 1n });
    const node = nodeWith(raw, { hash: keccak256('0xbeef') });
    await expect(takerOf(node as never, account.address, 0, 1n)).rejects.toMatchObject({ code: 'rpc_inconsistent' });
  });
});
