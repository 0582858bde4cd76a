// --signer aws:KEY through the real @aws-sdk/client-kms (SigV4, retries, its JSON 1.1 protocol) against a loopback
// fake KMS that signs with a test key and returns only high-s signatures; what the wallet signs is mined by anvil.
// Untested here: IAM policies and grants, real quotas and latency, key rotation, CloudTrail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { openWallet } from '../src/wallet/signers/open.js';
import type { ResolvedSigner } from '../src/wallet/signers/spec.js';
import { startFakeAwsKms, type FakeKms } from './helpers/fake-aws-kms.js';
import {
  CHAIN_ID,
  DELEGATE,
  DELEGATOR,
  NO_CONFIG,
  OTHER_DELEGATE,
  delegateAndMine,
  expectExit,
  expectTypedDataAndMessage,
  quietOut,
  receiveWithAuthorization,
  signAndMineCall,
  startChain,
  type Chain,
} from './helpers/signers.js';
import { SECP256K1_N } from '../src/wallet/signers/signature.js';

const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab';
const KEY = keccak256(toHex('loopsign aws kms test key'));
const OTHER_KEY = keccak256(toHex('loopsign another key'));
const FROM = privateKeyToAccount(KEY).address;

let chain: Chain;
let kms: FakeKms;

beforeAll(async () => {
  [chain, kms] = await Promise.all([startChain(), startFakeAwsKms({ keyId: KEY_ID, privateKey: KEY })]);
  await chain.fund(FROM);
});
afterAll(async () => {
  await Promise.all([chain?.stop(), kms?.stop()]);
});

function open(from = FROM, keyId = KEY_ID, pinned: { deleGator?: typeof DELEGATOR } = {}) {
  const resolved: ResolvedSigner = { source: { kind: 'aws', keyId }, from, origin: 'flag' };
  return openWallet(resolved, {
    config: NO_CONFIG,
    out: quietOut(),
    chainId: CHAIN_ID,
    delegate: DELEGATE,
    ...pinned,
    aws: {
      clientConfig: {
        endpoint: kms.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDLOOPSIGNTEST', secretAccessKey: 'loopsign-test-secret' },
        maxAttempts: 1,
      },
    },
  });
}
const signCalls = () => kms.calls.filter((c) => c.target === 'TrentService.Sign').length;

describe('AWS KMS signer', () => {
  it('signs an EIP-1559 call that anvil mines from --from, with the high-s KMS signature normalised', async () => {
    kms.setMode({});
    const wallet = await open();
    expect(wallet.address).toBe(FROM);
    expect(wallet.capabilities).toEqual({ transaction: true, typedData: true, message: true, authorization: true });
    expect(JSON.stringify(wallet.source)).toBe(`{"kind":"aws","keyId":"${KEY_ID}"}`);
    const account = await wallet.account;
    const before = signCalls();
    const receipt = await signAndMineCall(chain, account);
    const tx = await chain.pub.getTransaction({ hash: receipt.transactionHash });
    expect(BigInt(tx.s) <= SECP256K1_N / 2n).toBe(true);
    // One Sign call, a 32-byte DIGEST, from the real client's SigV4-signed request.
    expect(signCalls()).toBe(before + 1);
    expect(kms.calls.at(-1)).toMatchObject({ target: 'TrentService.Sign', messageType: 'DIGEST', keyId: KEY_ID });
    expect(kms.authorizations.at(-1)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDLOOPSIGNTEST\/\d{8}\/us-east-1\/kms\/aws4_request/);
    await wallet.close();
  });

  it('signs EIP-712 and EIP-191 that recover to --from, low-s with v 27/28', async () => {
    kms.setMode({});
    const wallet = await open();
    await expectTypedDataAndMessage(await wallet.account);
    await wallet.close();
  });

  it('refuses a --from the key does not hold (exit 6) before anything is signed', async () => {
    kms.setMode({});
    const before = signCalls();
    const wallet = await open(privateKeyToAccount(OTHER_KEY).address);
    await expectExit(wallet.account, 6, 'signer_address_mismatch');
    expect(signCalls()).toBe(before);
    await wallet.close();
  });

  it('refuses a key that is not secp256k1, and a key that does not exist (exit 6)', async () => {
    kms.setMode({ keySpec: 'ECC_NIST_P256' });
    await expectExit((await open()).account, 6, 'kms_key_unsuitable');
    kms.setMode({});
    const missing = await expectExit((await open(FROM, '00000000-0000-0000-0000-000000000000')).account, 6, 'kms_unavailable');
    expect(missing.message).toMatch(/GetPublicKey failed \(NotFoundException/);
  });

  it('refuses (exit 5) every signature made by another key, and returns nothing', async () => {
    kms.setMode({});
    const wallet = await open();
    const account = await wallet.account;
    kms.setMode({ signWith: OTHER_KEY });
    const nonce = await chain.pub.getTransactionCount({ address: FROM });
    await expectExit(
      account.signTransaction({
        type: 'eip1559',
        chainId: CHAIN_ID,
        to: FROM,
        nonce,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      }),
      5,
      'signature_not_from_signer',
    );
    await expectExit(account.signTypedData(receiveWithAuthorization(FROM)), 5, 'signature_not_from_signer');
    await expectExit(account.signMessage({ message: 'hi' }), 5, 'signature_not_from_signer');
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'signature_not_from_signer');
    expect(await chain.pub.getTransactionCount({ address: FROM })).toBe(nonce);
    kms.setMode({});
    await wallet.close();
  });

  it('refuses chain-id-0 and foreign-delegate authorizations before KMS is asked', async () => {
    kms.setMode({});
    const account = await (await open()).account;
    const before = signCalls();
    await expectExit(account.signAuthorization!({ chainId: 0, address: DELEGATE, nonce: 1 }), 5, 'authorization_any_chain');
    await expectExit(
      account.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 1 }),
      5,
      'authorization_foreign_delegate',
    );
    await expectExit(account.signAuthorization!({ chainId: 8453, address: DELEGATE, nonce: 1 }), 5, 'authorization_wrong_chain');
    expect(signCalls()).toBe(before);
  });

  it('signs the self-executed EIP-7702 delegation: one type-4 transaction mined, the designator set', async () => {
    kms.setMode({});
    const wallet = await open();
    const receipt = await delegateAndMine(chain, await wallet.account);
    const raw = await chain.pub.getTransaction({ hash: receipt.transactionHash });
    expect(raw.type).toBe('eip7702');
    expect(raw.authorizationList?.[0]?.address.toLowerCase()).toBe(DELEGATE.toLowerCase());
    await wallet.close();
  });
  it("signs the EIP-7702 delegation to the pinned budget DeleGator (an owner's first grant); unpinned, that address is refused", async () => {
    kms.setMode({});
    const unpinned = await (await open()).account;
    await expectExit(unpinned.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 1 }), 5, 'authorization_foreign_delegate');
    const wallet = await open(FROM, undefined, { deleGator: DELEGATOR });
    const receipt = await delegateAndMine(chain, await wallet.account, DELEGATOR);
    const mined = await chain.pub.getTransaction({ hash: receipt.transactionHash });
    expect(mined.authorizationList?.[0]?.address.toLowerCase()).toBe(DELEGATOR.toLowerCase());
    await wallet.close();
  });
});
