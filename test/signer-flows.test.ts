// Every money flow through each external signer (issue 21): AWS KMS and Cloud KMS through their real clients against
// loopback fakes (high-s signatures on purpose), and a JSON-RPC signer (anvil's own eth_signTransaction for an
// unlocked account) — with the in-process sandbox as the service: an ordered ask with a bonus, an atomic one where
// the source signs EIP-7702 (refused before anything is signed where it does not), an x402 ask, a vote, an image
// upload. Balances and nonces are read from the chain. A signer that answers for another address, or returns a
// transaction with one field changed, is refused (exit 5) and nothing is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createPublicClient, createWalletClient, erc20Abi, http, keccak256, toHex, type Address, type Hex, type PublicClient } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { startInProcess, type InProcess } from './helpers/in-process.js';
import { startFakeAwsKms, type FakeKms } from './helpers/fake-aws-kms.js';
import { startFakeGcpKms, type FakeGcp } from './helpers/fake-gcp-kms.js';
import { startHostileRpc, type HostileRpc } from './helpers/hostile-rpc.js';
import { openWallet, type OpenWalletOptions } from '../src/wallet/signers/open.js';
import type { ResolvedSigner } from '../src/wallet/signers/spec.js';
import type { Wallet } from '../src/wallet/signers/types.js';
import { runAsk, type AskOutcome } from '../src/ask/flow.js';
import { runRate } from '../src/rate/flow.js';
import { uploadImages } from '../src/images/upload.js';
import { resolveChain } from '../src/chains/index.js';
import { capture } from './helpers/capture.js';

const AWS_KEY = keccak256(toHex('loopsign flows aws key'));
const GCP_KEY = keccak256(toHex('loopsign flows gcp key'));
const OTHER_KEY = keccak256(toHex('loopsign flows another key'));
const AWS_KEY_ID = '2234abcd-12ab-34cd-56ef-1234567890ab';
const GCP_VERSION = 'projects/loopsign-test/locations/global/keyRings/flows/cryptoKeys/signer/cryptoKeyVersions/1';

let env: InProcess;
let pub: PublicClient;
let aws: FakeKms;
let gcp: FakeGcp;
let rpc: HostileRpc;
let rpcFrom: Address;
let n = 0;
const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-signer-flows-'));

beforeAll(async () => {
  env = await startInProcess();
  pub = createPublicClient({ transport: http(env.sb.manifest.rpcUrl), pollingInterval: 50 }) as PublicClient;
  aws = await startFakeAwsKms({ keyId: AWS_KEY_ID, privateKey: AWS_KEY });
  gcp = await startFakeGcpKms({ keyVersion: GCP_VERSION, privateKey: GCP_KEY });
  // anvil's unlocked account 1 signs through eth_signTransaction (the sandbox deploys with 0 and rates and submits
  // with 2 and above); account 0 is the "other" signer of the hostile mode.
  const accounts = (
    await (
      await fetch(env.sb.manifest.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_accounts', params: [] }),
      })
    ).json()
  ).result as Address[];
  rpcFrom = accounts[1]!;
  rpc = await startHostileRpc(env.sb.manifest.rpcUrl, accounts[0]!);
  for (const address of [privateKeyToAccount(AWS_KEY).address, privateKeyToAccount(GCP_KEY).address, rpcFrom]) {
    await env.control('/__sandbox/fund', { address, usdc: '50000000', lrep: '50000000', eth: '10' });
  }
}, 90_000);
afterAll(async () => {
  await Promise.all([env?.stop(), aws?.stop(), gcp?.stop(), rpc?.stop()]);
});

type Source = 'aws' | 'gcp' | 'rpc';

async function wallet(source: Source): Promise<Wallet> {
  const settings = await resolveChain(await env.context(privateKeyToAccount(AWS_KEY)).config(), env.env, env.paths);
  const options: OpenWalletOptions = {
    config: {} as never,
    env: {},
    out: { progress: () => undefined, warn: () => undefined } as never,
    chainId: 31337,
    delegate: settings.chain.batchDelegate as Address,
    aws: {
      clientConfig: {
        endpoint: aws.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDLOOPSIGNTEST', secretAccessKey: 'loopsign-test-secret' },
        maxAttempts: 1,
      },
    },
    gcp: { clientOptions: gcp.clientOptions },
  };
  const resolved: ResolvedSigner =
    source === 'aws'
      ? { source: { kind: 'aws', keyId: AWS_KEY_ID }, from: privateKeyToAccount(AWS_KEY).address, origin: 'flag' }
      : source === 'gcp'
        ? { source: { kind: 'gcp', keyVersion: GCP_VERSION }, from: privateKeyToAccount(GCP_KEY).address, origin: 'flag' }
        : (() => {
            const s = { kind: 'rpc', endpoint: 'http://127.0.0.1' } as { kind: 'rpc'; endpoint: string; url: string };
            Object.defineProperty(s, 'url', { value: rpc.url(), enumerable: false });
            return { source: s, from: rpcFrom, origin: 'flag' as const };
          })();
  return openWallet(resolved, options);
}

/** A Context that signs with `source` (the in-process harness's own wallet replaced by the external one). */
async function contextFor(source: Source) {
  const w = await wallet(source);
  const ctx = env.context(privateKeyToAccount(AWS_KEY), { wallet: async () => w, walletAddress: async () => w.address });
  return { ctx, from: w.address };
}

function askFile(extra: Record<string, unknown> = {}): string {
  n++;
  const file = path.join(dir, `ask-${n}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `signer-flows-${process.pid}-${n}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      feedbackBonus: { amount: '1000000', asset: 'USDC' },
      question: { title: `Signer flow ${n}`, contextUrl: 'https://example.com/signers', categoryId: '1', tags: ['signers'] },
      ...extra,
    }),
  );
  return file;
}

const token = (asset: 'USDC' | 'LREP', a: Address) =>
  pub.readContract({ address: env.sb.manifest.tokens[asset].address as Hex, abi: erc20Abi, functionName: 'balanceOf', args: [a] });
const ask = (
  ctx: Parameters<typeof runAsk>[0],
  file: string,
  o: { paymentMode?: 'wallet_calls' | 'x402_authorization'; atomic?: boolean } = {},
) =>
  runAsk(ctx, {
    file,
    paymentMode: o.paymentMode ?? 'wallet_calls',
    dryRun: false,
    confirm: true,
    wait: false,
    timeoutSeconds: 60,
    atomic: o.atomic === true,
  }) as Promise<AskOutcome>;

/** Every transaction the chain has from `from` since `fromBlock` was sent by it (not by another signer). */
async function sentFrom(from: Address, hashes: string[]) {
  for (const hash of hashes) expect((await pub.getTransaction({ hash: hash as Hex })).from.toLowerCase()).toBe(from.toLowerCase());
}

describe.each(['aws', 'gcp', 'rpc'] as const)('through the %s signer', (source) => {
  it('an ordered ask with a bonus: paid once, every transaction from --from', async () => {
    const { ctx, from } = await contextFor(source);
    const before = await token('USDC', from);
    const r = await ask(ctx, askFile());
    expect(r).toMatchObject({ status: 'submitted', feedbackBonus: { status: 'funded' } });
    expect(before - (await token('USDC', from))).toBe(2_500_000n);
    await sentFrom(from, r.transactionHashes);
    capture.count('signer flows', `${source} ordered ask`);
  });

  it(
    source === 'rpc'
      ? 'an atomic ask is refused before anything is signed: the remote signer cannot sign the 7702 authorization'
      : 'an atomic ask: the wallet delegated to the pinned delegate in one type-4 transaction, paid once',
    async () => {
      const { ctx, from } = await contextFor(source);
      const before = await token('USDC', from);
      const nonce = await pub.getTransactionCount({ address: from });
      if (source === 'rpc') {
        const error = await ask(ctx, askFile(), { atomic: true }).catch((e) => e);
        expect(error).toMatchObject({ code: 'signer_cannot_delegate', exitCode: 5 });
        expect(await pub.getTransactionCount({ address: from })).toBe(nonce);
        expect(await token('USDC', from)).toBe(before);
        return;
      }
      const r = await ask(ctx, askFile(), { atomic: true });
      expect(r).toMatchObject({ status: 'submitted', feedbackBonus: { status: 'funded' } });
      expect(before - (await token('USDC', from))).toBe(2_500_000n);
      const settings = await resolveChain(await ctx.config(), ctx.env, ctx.paths);
      expect(((await pub.getCode({ address: from })) ?? '').toLowerCase()).toBe(
        `0xef0100${settings.chain.batchDelegate!.slice(2).toLowerCase()}`,
      );
      capture.count('signer flows', `${source} atomic ask`);
    },
  );

  it('an x402 ask: the authorization signed by --from, the bounty paid once', async () => {
    const { ctx, from } = await contextFor(source);
    const before = await token('USDC', from);
    const r = await ask(ctx, askFile({ feedbackBonus: undefined, maxPaymentAmount: '1500000' }), { paymentMode: 'x402_authorization' });
    expect(r).toMatchObject({ status: 'submitted', paymentMode: 'x402_authorization' });
    expect(before - (await token('USDC', from))).toBe(1_500_000n);
    capture.count('signer flows', `${source} x402 ask`);
  });

  it('a vote: staked once from --from', async () => {
    const { ctx, from } = await contextFor(source);
    const contentId = String((await env.control('/__sandbox/content', {})).contentId);
    const before = await token('LREP', from);
    const r = await runRate(ctx, { contentId, isUp: false, prediction: '35', stake: '1', acceptTerms: false, atomic: false });
    expect(r).toMatchObject({ contentId, stakeWei: '1000000' });
    expect(before - (await token('LREP', from))).toBe(1_000_000n);
    await sentFrom(from, r.transactionHashes as string[]);
    capture.count('signer flows', `${source} vote`);
  });

  it('an image upload: the upload challenge signed by --from (EIP-191)', async () => {
    const { ctx } = await contextFor(source);
    const file = path.join(dir, `shot-${source}.png`);
    writeFileSync(
      file,
      await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 10, g: 90, b: 160 } } })
        .png()
        .toBuffer(),
    );
    const [r] = await uploadImages(ctx, [file]);
    expect(r).toMatchObject({ ok: true, imageUrl: expect.stringMatching(/#sha256=0x[0-9a-f]{64}$/) });
    capture.count('signer flows', `${source} image upload`);
  });
});

describe('a remote signer once the wallet is delegated', () => {
  it('runs an atomic ask: every batch is then a plain self-call, no authorization to sign', async () => {
    // The key holder delegates the wallet once, with a signer that can (here: the key itself, as a keystore would).
    const key = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 1 });
    expect(key.address.toLowerCase()).toBe(rpcFrom.toLowerCase());
    const settings = await resolveChain(await env.context(key).config(), env.env, env.paths);
    const delegate = settings.chain.batchDelegate as Address;
    const walletClient = createWalletClient({
      account: key,
      chain: {
        id: 31337,
        name: 'sandbox',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [env.sb.manifest.rpcUrl] } },
      },
      transport: http(env.sb.manifest.rpcUrl),
    });
    const authorization = await walletClient.signAuthorization({ contractAddress: delegate, executor: 'self' });
    await pub.waitForTransactionReceipt({
      hash: await walletClient.sendTransaction({ authorizationList: [authorization], to: key.address, data: '0x' }),
    });
    expect(((await pub.getCode({ address: rpcFrom })) ?? '').toLowerCase()).toBe(`0xef0100${delegate.slice(2).toLowerCase()}`);
    const { ctx, from } = await contextFor('rpc');
    const before = await token('USDC', from);
    const r = await ask(ctx, askFile(), { atomic: true });
    expect(r).toMatchObject({ status: 'submitted', feedbackBonus: { status: 'funded' } });
    expect(before - (await token('USDC', from))).toBe(2_500_000n);
  });
});

describe('a signer that lies is refused, and nothing is sent', () => {
  it.each([
    ['aws', 'signs with another key'],
    ['gcp', 'signs with another key'],
    ['rpc', 'signs with another unlocked account'],
    ['rpc', 'returns the transaction with its value changed'],
    ['rpc', 'returns the transaction with its target changed'],
  ] as const)('%s %s: exit 5, no transaction, nothing paid', async (source, how) => {
    if (source === 'aws') aws.setMode({ signWith: OTHER_KEY });
    if (source === 'gcp') gcp.setMode({ signWith: OTHER_KEY });
    if (source === 'rpc') rpc.mode = how.includes('value') ? 'change-value' : how.includes('target') ? 'change-to' : 'other-signer';
    try {
      const { ctx, from } = await contextFor(source);
      const before = await token('USDC', from);
      const nonce = await pub.getTransactionCount({ address: from });
      const error = await ask(ctx, askFile()).catch((e) => e);
      expect(error.exitCode, String(error.stack)).toBe(5);
      expect(await pub.getTransactionCount({ address: from })).toBe(nonce);
      expect(await token('USDC', from)).toBe(before);
      capture.count('hostile signers refused with exit 5', `${source}: ${how}`);
    } finally {
      aws.setMode({});
      gcp.setMode({});
      rpc.mode = 'honest';
    }
  });
});
