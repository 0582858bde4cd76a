// --signer rpc:URL against anvil's own eth_signTransaction / eth_signTypedData_v4 / personal_sign for an unlocked
// account, through a loopback proxy that can turn hostile. Untested here: Clef's account_* namespace and its
// approval rules, Web3Signer's TLS client authentication and key stores (only their eth_* surface is exercised).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverMessageAddress } from 'viem';
import { openWallet } from '../src/wallet/signers/open.js';
import { parseSignerSpec, type ResolvedSigner } from '../src/wallet/signers/spec.js';
import type { Address } from '../src/wallet/signers/types.js';
import { startHostileRpc, type HostileRpc } from './helpers/hostile-rpc.js';
import {
  CHAIN_ID,
  DELEGATE,
  DELEGATOR,
  NO_CONFIG,
  OTHER_DELEGATE,
  TARGET,
  expectExit,
  expectLowS,
  expectTypedDataAndMessage,
  fees,
  quietOut,
  receiveWithAuthorization,
  signAndMineCall,
  startChain,
  type Chain,
} from './helpers/signers.js';

// anvil's first two unlocked dev accounts.
const FROM: Address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const OTHER: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

let chain: Chain;
let rpc: HostileRpc;

beforeAll(async () => {
  chain = await startChain();
  rpc = await startHostileRpc(chain.anvil.rpcUrl, OTHER);
});
afterAll(async () => {
  await rpc?.stop();
  await chain?.stop();
});

function open(from: Address = FROM, url = rpc.url(), pinned: { deleGator?: Address } = {}) {
  const resolved: ResolvedSigner = { source: parseSignerSpec(`rpc:${url}`), from, origin: 'flag' };
  return openWallet(resolved, {
    config: NO_CONFIG,
    out: quietOut(),
    chainId: CHAIN_ID,
    delegate: DELEGATE,
    ...pinned,
    rpc: { timeoutMs: 20_000 },
  });
}
const signingCalls = () => rpc.methods.filter((m) => m !== 'eth_accounts').length;
async function call(account: Awaited<ReturnType<typeof open>>['account'] extends Promise<infer A> ? A : never) {
  const nonce = await chain.pub.getTransactionCount({ address: FROM, blockTag: 'pending' });
  return account.signTransaction({
    type: 'eip1559',
    chainId: CHAIN_ID,
    to: TARGET,
    data: '0xabcd',
    value: 5n,
    nonce,
    gas: 60_000n,
    ...(await fees(chain)),
  });
}

describe('JSON-RPC remote signer', () => {
  it('signs an EIP-1559 call with eth_signTransaction that anvil mines from --from', async () => {
    rpc.mode = 'honest';
    const wallet = await open();
    expect(wallet.address).toBe(FROM);
    expect(JSON.stringify(wallet.source)).not.toContain('/signer');
    await signAndMineCall(chain, await wallet.account);
    expect(rpc.methods).toContain('eth_signTransaction');
  });

  it('signs EIP-712 (eth_signTypedData_v4) and EIP-191 (personal_sign) that recover to --from', async () => {
    rpc.mode = 'honest';
    await expectTypedDataAndMessage(await (await open()).account);
  });

  it('normalises high-s signatures from the signer, and the transaction still mines', async () => {
    rpc.mode = 'high-s';
    const account = await (await open()).account;
    const receipt = await signAndMineCall(chain, account);
    expect(receipt.status).toBe('success');
    const signature = await account.signMessage({ message: 'high' });
    expectLowS(signature);
    expect(await recoverMessageAddress({ message: 'high', signature })).toBe(FROM);
    await expectTypedDataAndMessage(account);
  });

  it('cannot sign an EIP-7702 authorization: capability off with the reason, refused (exit 5) without asking the signer', async () => {
    rpc.mode = 'honest';
    const wallet = await open();
    expect(wallet.capabilities).toMatchObject({
      authorization: false,
      authorizationReason: expect.stringMatching(/no method to sign an EIP-7702 authorization/),
    });
    const account = await wallet.account;
    const before = signingCalls();
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'signer_cannot_delegate');
    expect(signingCalls()).toBe(before);
  });

  it("the pinned budget DeleGator is a delegate it may name: refused for the signer's reason, not as a foreign delegate", async () => {
    rpc.mode = 'honest';
    const account = await (await open(FROM, rpc.url(), { deleGator: DELEGATOR })).account;
    const before = signingCalls();
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 1 }), 5, 'signer_cannot_delegate');
    await expectExit(
      account.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 1 }),
      5,
      'authorization_foreign_delegate',
    );
    expect(signingCalls()).toBe(before);
  });

  it('refuses a --from the signer does not hold (exit 6) before anything is signed', async () => {
    rpc.mode = 'honest';
    const before = signingCalls();
    await expectExit((await open('0x000000000000000000000000000000000000dEaD')).account, 6, 'signer_address_mismatch');
    expect(signingCalls()).toBe(before);
  });

  it('refuses (exit 5) every signature by another account, and nothing is sent', async () => {
    const account = await (await open()).account;
    rpc.mode = 'other-signer';
    const nonce = await chain.pub.getTransactionCount({ address: FROM });
    await expectExit(call(account), 5, 'signature_not_from_signer');
    await expectExit(account.signTypedData(receiveWithAuthorization(FROM)), 5, 'signature_not_from_signer');
    await expectExit(account.signMessage({ message: 'hi' }), 5, 'signature_not_from_signer');
    expect(await chain.pub.getTransactionCount({ address: FROM })).toBe(nonce);
    rpc.mode = 'honest';
  });

  it('refuses (exit 5) a transaction signed with one field changed, naming the field', async () => {
    const account = await (await open()).account;
    rpc.mode = 'change-value';
    const value = await expectExit(call(account), 5, 'transaction_changed');
    expect(value.message).toMatch(/value differs/);
    rpc.mode = 'change-to';
    expect((await expectExit(call(account), 5, 'transaction_changed')).message).toMatch(/\bto differs/);
    rpc.mode = 'honest';
  });

  it("a signer that declines is a refusal (exit 5); an unreachable one is exit 6 and never shows the URL's credentials", async () => {
    const account = await (await open()).account;
    rpc.mode = 'decline';
    await expectExit(account.signMessage({ message: 'hi' }), 5, 'signer_declined');
    rpc.mode = 'honest';
    // Credentials in the URL travel as a Basic authorization header, never in a message.
    await (await open(FROM, rpc.url('alice:s3cret-signer-pass'))).account;
    expect(rpc.authorizations.at(-1)).toBe(`Basic ${Buffer.from('alice:s3cret-signer-pass').toString('base64')}`);
    const dead = await expectExit(
      (await open(FROM, 'http://bob:an0ther-secret-pw@127.0.0.1:9/signer?token=abcdefgh12345')).account,
      6,
      'signer_unreachable',
    );
    expect(`${dead.message} ${JSON.stringify(dead)}`).not.toMatch(/an0ther-secret-pw|abcdefgh12345|\/signer/);
  });
});
