// The taker of a nonce (src/wallet/finality.ts takerOf) is believed only once the wallet's signature says so: the
// transaction a node shows at the nonce must hash, with its signature, to its hash and recover the wallet. A node that
// hides the slot's own mined transaction could otherwise answer its block with a made-up transaction, or the slot's own
// under another hash, and the slot would be void: its calls signed a second time (test/slot-model.test.ts, "a node that
// lies about the taker"). Here the proof is run on what a real node (anvil) answers for every transaction type a wallet
// sends, so that an honest taker is never refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, keccak256, toHex, type Hex, type PublicClient } from 'viem';
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
    const latest = await pub.getBlockNumber();
    for (const s of sent) {
      const tx = await minedTx(s.hash);
      const taker = await takerOf(pub, account.address, tx.nonce, latest);
      expect(taker).toEqual({ hash: s.hash, block: tx.blockNumber });
    }
  });
});
