// --signer gcp:KEY_VERSION through the real @google-cloud/kms 5.x client (google-gax, gRPC) against a loopback fake
// KeyManagementService built from the protos that ship with the client; it signs with a test key, always high-s.
// Untested here: Application Default Credentials discovery, IAM roles, TLS to Google, HSM latency.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { openWallet } from '../src/wallet/signers/open.js';
import type { ResolvedSigner } from '../src/wallet/signers/spec.js';
import { SECP256K1_N } from '../src/wallet/signers/signature.js';
import { startFakeGcpKms, type FakeGcp } from './helpers/fake-gcp-kms.js';
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

const KEY_VERSION = 'projects/loopsign-test/locations/global/keyRings/ring/cryptoKeys/signer/cryptoKeyVersions/1';
const KEY = keccak256(toHex('loopsign gcp kms test key'));
const OTHER_KEY = keccak256(toHex('loopsign another key'));
const FROM = privateKeyToAccount(KEY).address;

let chain: Chain;
let gcp: FakeGcp;

beforeAll(async () => {
  [chain, gcp] = await Promise.all([startChain(), startFakeGcpKms({ keyVersion: KEY_VERSION, privateKey: KEY })]);
  await chain.fund(FROM);
});
afterAll(async () => {
  await Promise.all([chain?.stop(), gcp?.stop()]);
});

function open(from = FROM, keyVersion = KEY_VERSION, pinned: { deleGator?: typeof DELEGATOR } = {}) {
  const resolved: ResolvedSigner = { source: { kind: 'gcp', keyVersion }, from, origin: 'flag' };
  return openWallet(resolved, {
    config: NO_CONFIG,
    out: quietOut(),
    chainId: CHAIN_ID,
    delegate: DELEGATE,
    ...pinned,
    gcp: { clientOptions: gcp.clientOptions },
  });
}
const signCalls = () => gcp.calls.filter((c) => c.method === 'AsymmetricSign').length;

describe('Cloud KMS signer', () => {
  it('signs an EIP-1559 call that anvil mines from --from, with the high-s signature normalised', async () => {
    gcp.setMode({});
    const wallet = await open();
    expect(wallet.address).toBe(FROM);
    const before = signCalls();
    const receipt = await signAndMineCall(chain, await wallet.account);
    const tx = await chain.pub.getTransaction({ hash: receipt.transactionHash });
    expect(BigInt(tx.s) <= SECP256K1_N / 2n).toBe(true);
    expect(signCalls()).toBe(before + 1);
    expect(gcp.calls.at(-1)).toMatchObject({ method: 'AsymmetricSign', name: KEY_VERSION, digestLength: 32 });
    await wallet.close();
  });

  it('signs EIP-712 and EIP-191 that recover to --from, low-s with v 27/28', async () => {
    gcp.setMode({});
    const wallet = await open();
    await expectTypedDataAndMessage(await wallet.account);
    await wallet.close();
  });

  it('refuses a --from the key does not hold, a key of another algorithm, a missing key (exit 6)', async () => {
    gcp.setMode({});
    const before = signCalls();
    await expectExit((await open(privateKeyToAccount(OTHER_KEY).address)).account, 6, 'signer_address_mismatch');
    gcp.setMode({ algorithm: 'EC_SIGN_P256_SHA256' });
    await expectExit((await open()).account, 6, 'kms_key_unsuitable');
    gcp.setMode({});
    const missing = await expectExit((await open(FROM, KEY_VERSION.replace(/1$/, '9'))).account, 6, 'kms_unavailable');
    expect(missing.message).toMatch(/GetPublicKey failed \(gRPC 5/);
    expect(signCalls()).toBe(before);
  });

  it('refuses a signature whose checksum does not verify (exit 6), and one by another key (exit 5)', async () => {
    gcp.setMode({});
    const wallet = await open();
    const account = await wallet.account;
    gcp.setMode({ corruptSignatureCrc: true });
    await expectExit(account.signMessage({ message: 'hi' }), 6, 'kms_corrupted');
    gcp.setMode({ signWith: OTHER_KEY });
    await expectExit(account.signTypedData(receiveWithAuthorization(FROM)), 5, 'signature_not_from_signer');
    await expectExit(account.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATE, nonce: 1 }), 5, 'signature_not_from_signer');
    await expectExit(
      account.signTransaction({
        type: 'eip1559',
        chainId: CHAIN_ID,
        to: FROM,
        nonce: 0,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      }),
      5,
      'signature_not_from_signer',
    );
    gcp.setMode({});
    await wallet.close();
  });

  it('refuses chain-id-0 and foreign-delegate authorizations before Cloud KMS is asked', async () => {
    gcp.setMode({});
    const wallet = await open();
    const account = await wallet.account;
    const before = signCalls();
    await expectExit(account.signAuthorization!({ chainId: 0, address: DELEGATE, nonce: 1 }), 5, 'authorization_any_chain');
    await expectExit(
      account.signAuthorization!({ chainId: CHAIN_ID, address: OTHER_DELEGATE, nonce: 1 }),
      5,
      'authorization_foreign_delegate',
    );
    expect(signCalls()).toBe(before);
    await wallet.close();
  });

  it('signs the self-executed EIP-7702 delegation: one type-4 transaction mined, the designator set', async () => {
    gcp.setMode({});
    const wallet = await open();
    await delegateAndMine(chain, await wallet.account);
    await wallet.close();
  });
  it("signs the EIP-7702 delegation to the pinned budget DeleGator (an owner's first grant); unpinned, that address is refused", async () => {
    gcp.setMode({});
    const unpinned = await (await open()).account;
    await expectExit(unpinned.signAuthorization!({ chainId: CHAIN_ID, address: DELEGATOR, nonce: 1 }), 5, 'authorization_foreign_delegate');
    const wallet = await open(FROM, undefined, { deleGator: DELEGATOR });
    const receipt = await delegateAndMine(chain, await wallet.account, DELEGATOR);
    const mined = await chain.pub.getTransaction({ hash: receipt.transactionHash });
    expect(mined.authorizationList?.[0]?.address.toLowerCase()).toBe(DELEGATOR.toLowerCase());
    await wallet.close();
  });
});
