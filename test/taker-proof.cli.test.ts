// The taker of a nonce (src/wallet/finality.ts takerOf) is believed only once the wallet's signature says so: the
// transaction a node shows at the nonce must hash, with its signature, to its hash and recover the wallet. A node that
// hides the slot's own mined transaction could otherwise answer its block with a made-up transaction, or the slot's own
// under another hash, and the slot would be void: its calls signed a second time (test/slot-model.test.ts, "a node that
// lies about the taker"). Here the proof is run on what a real node (anvil) answers for every transaction type a wallet
// sends, so that an honest taker is never refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, custom, http, keccak256, toHex, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../src/sandbox/anvil.js';
import { signedBy, takerOf } from '../src/wallet/finality.js';

// anvil's first dev account (its public, well-known mnemonic).
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const other = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const TO = '0x000000000000000000000000000000000000dEaD' as Hex;

let anvil: AnvilProcess;
let pub: PublicClient;
const sent: { type: string; hash: Hex }[] = [];

beforeAll(async () => {
  anvil = await startAnvil({ accounts: 2 });
  pub = createPublicClient({ chain: foundry, transport: http(anvil.rpcUrl) }) as PublicClient;
  const wallet = createWalletClient({ account, chain: foundry, transport: http(anvil.rpcUrl) });
  const send = async (type: string, hash: Promise<Hex>) => {
    const h = await hash;
    await pub.waitForTransactionReceipt({ hash: h, pollingInterval: 50 });
    sent.push({ type, hash: h });
  };
  await send('legacy', wallet.sendTransaction({ type: 'legacy', to: TO, value: 1n, data: '0x1234' }));
  await send('eip2930', wallet.sendTransaction({ type: 'eip2930', to: TO, value: 0n, accessList: [{ address: TO, storageKeys: [] }] }));
  await send('eip1559', wallet.sendTransaction({ type: 'eip1559', to: TO, data: '0xabcdef' }));
  // A self-executed EIP-7702 authorization (the transaction takes nonce n, the authorization n + 1).
  const nonce = await pub.getTransactionCount({ address: account.address });
  const authorization = await account.signAuthorization({ chainId: foundry.id, address: TO, nonce: nonce + 1 });
  await send('eip7702', wallet.sendTransaction({ type: 'eip7702', to: account.address, data: '0x', authorizationList: [authorization] }));
}, 120_000);

afterAll(async () => {
  await anvil?.stop();
});

async function minedTx(hash: Hex) {
  const receipt = await pub.getTransactionReceipt({ hash });
  const block = await pub.getBlock({ blockNumber: receipt.blockNumber, includeTransactions: true });
  const tx = block.transactions.find((t) => typeof t === 'object' && t.hash === hash);
  if (typeof tx !== 'object') throw new Error(`${hash} is not in its block`);
  return tx;
}

describe("a nonce's taker is the wallet's only when its signature says so", () => {
  it('every transaction type anvil answers in a block body is proven the wallet’s, and no other wallet’s', async () => {
    expect(sent.map((s) => s.type)).toEqual(['legacy', 'eip2930', 'eip1559', 'eip7702']);
    for (const s of sent) {
      const tx = await minedTx(s.hash);
      expect(await signedBy(tx, account.address), s.type).toBe(true);
      expect(await signedBy(tx, other.address), s.type).toBe(false);
    }
  });

  it('the same transaction renamed, or with a field changed, is proven nobody’s', async () => {
    for (const s of sent) {
      const tx = await minedTx(s.hash);
      expect(await signedBy({ ...tx, hash: keccak256(toHex(`renamed:${tx.hash}`)) }, account.address), s.type).toBe(false);
      expect(await signedBy({ ...tx, input: '0xdeadbeef' }, account.address), s.type).toBe(false);
      expect(await signedBy({ ...tx, nonce: tx.nonce + 7 }, account.address), s.type).toBe(false);
    }
  });

  it('takerOf finds each nonce’s transaction on an honest node', async () => {
    // Not viem's cached block number (the receipt waits above polled it): the chain's head now.
    const latest = await pub.getBlockNumber({ cacheTime: 0 });
    for (const s of sent) {
      const tx = await minedTx(s.hash);
      const taker = await takerOf(pub, account.address, tx.nonce, latest);
      expect(taker).toEqual({ hash: s.hash, block: tx.blockNumber });
    }
  });
});

describe('a taker that carries no wallet signature stops the verdict (rpc_inconsistent), naming what it is', () => {
  // A node (viem's custom transport) whose wallet count passes nonce 0 at block 5, where it shows `taker`.
  const nodeShowing = (taker: Record<string, unknown>) =>
    createPublicClient({
      chain: foundry,
      transport: custom({
        request: async ({ method, params }: { method: string; params?: unknown[] }) => {
          if (method === 'eth_getTransactionCount') return Number(params?.[1]) >= 5 ? '0x1' : '0x0';
          if (method === 'eth_getBlockByNumber')
            return {
              number: params?.[0],
              hash: keccak256(toHex(`block ${String(params?.[0])}`)),
              parentHash: `0x${'00'.repeat(32)}`,
              timestamp: '0x1',
              transactions: Number(params?.[0]) === 5 ? [taker] : [],
            };
          throw new Error(`unexpected ${method}`);
        },
      }),
    }) as PublicClient;
  const base = {
    hash: keccak256(toHex('made up')),
    from: account.address,
    to: TO,
    nonce: '0x0',
    input: '0x',
    value: '0x0',
    gas: '0x5208',
    blockNumber: '0x5',
    blockHash: keccak256(toHex('block 5')),
    transactionIndex: '0x0',
  };

  it('a made-up transaction of the wallet', async () => {
    const made = {
      ...base,
      type: '0x2',
      chainId: '0x7a69',
      maxFeePerGas: '0x1',
      maxPriorityFeePerGas: '0x1',
      r: '0x1',
      s: '0x1',
      yParity: '0x0',
      v: '0x0',
    };
    await expect(takerOf(nodeShowing(made), account.address, 0, 9n)).rejects.toMatchObject({
      code: 'rpc_inconsistent',
      message: expect.stringMatching(/do not hash to that hash or do not carry the wallet's signature/),
    });
  });

  it('an OP-stack deposit from the wallet (no signature to check)', async () => {
    const deposit = { ...base, type: '0x7e', sourceHash: keccak256(toHex('source')), mint: '0x0', isSystemTx: false };
    await expect(takerOf(nodeShowing(deposit), account.address, 0, 9n)).rejects.toMatchObject({
      code: 'rpc_inconsistent',
      message: expect.stringMatching(/an L1 deposit .* carries no signature loopsign can check/),
    });
  });
});
