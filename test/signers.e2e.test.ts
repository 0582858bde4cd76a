// --signer and --from as a user gives them to the built binary (issue 21): an ask signed by AWS KMS (the real
// client, pointed at a loopback fake KMS by the SDK's own AWS_ENDPOINT_URL_KMS), the signer named in `config show`
// and `wallet address`; and every refusal before anything is signed — two signers named at once (exit 2), a --from
// the signer does not hold (exit 6), --atomic with a signer that cannot delegate (exit 5), an MCP server asked to
// serve an external signer with no spending policy (exit 2).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import { openSession, type Session } from './helpers/chain.js';
import { startFakeAwsKms, type FakeKms } from './helpers/fake-aws-kms.js';
import { createPublicClient, erc20Abi, http } from 'viem';

const KEY = keccak256(toHex('loopsign e2e aws key'));
const FROM = privateKeyToAccount(KEY).address;
const KEY_ID = '3234abcd-12ab-34cd-56ef-1234567890ab';

let s: Session;
let kms: FakeKms;
let home: Home;

beforeAll(async () => {
  [s, kms] = await Promise.all([
    openSession({ rateLimits: { write: 10_000, read: 10_000 } }),
    startFakeAwsKms({ keyId: KEY_ID, privateKey: KEY }),
  ]);
  await s.sb.control('/__sandbox/fund', { address: FROM, usdc: '10000000', eth: '10' });
  home = makeHome();
});
afterAll(async () => {
  await Promise.all([s?.sb.stop(), kms?.stop()]);
});

// The sandbox's chain, service and dev keystore — and the AWS SDK's own settings for where KMS is.
const awsEnv = () => ({
  ...s.sb.env(),
  AWS_ENDPOINT_URL_KMS: kms.endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDLOOPSIGNTEST',
  AWS_SECRET_ACCESS_KEY: 'loopsign-test-secret',
});

describe('--signer aws through the binary', () => {
  it('asks and pays from the KMS key; config show and wallet address name the signer; nothing of the keystore is unlocked', async () => {
    const file = home.file(
      'aws-ask.json',
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `signers-e2e-${process.pid}-${Date.now()}`,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: 'Signed by KMS',
          contextUrl: `https://example.com/kms/${process.pid}-${Date.now()}`,
          categoryId: '1',
          tags: ['kms'],
        },
      }),
    );
    const pub = createPublicClient({ transport: http(s.sb.info.rpcUrl) });
    const usdc = () => pub.readContract({ address: s.sb.info.tokens.USDC.address, abi: erc20Abi, functionName: 'balanceOf', args: [FROM] });
    const before = await usdc();
    const signer = ['--signer', `aws:${KEY_ID}`, '--from', FROM];
    const r = await runCli(['--json', ...signer, 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, {
      env: { ...awsEnv(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'submitted' });
    expect(before - (await usdc())).toBe(1_500_000n);
    expect(kms.calls.filter((c) => c.target === 'TrentService.Sign').length).toBeGreaterThanOrEqual(3);
    for (const hash of r.json().transactionHashes) expect((await pub.getTransaction({ hash })).from.toLowerCase()).toBe(FROM.toLowerCase());

    const shown = await runCli(['--json', ...signer, 'config', 'show'], home, { env: awsEnv() });
    expect(shown.json().settings.signer).toMatchObject({ value: `aws:${KEY_ID}`, source: 'flag', from: FROM });
    const address = await runCli(['--json', ...signer, 'wallet', 'address'], home, { env: awsEnv() });
    expect(address.json()).toMatchObject({ address: FROM, signer: `aws:${KEY_ID}`, keystore: null });
  });
});

describe('refused before anything is signed', () => {
  const file = () =>
    home.file(
      'refused.json',
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `refused-${Date.now()}`,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: { title: 'Refused', contextUrl: `https://example.com/r/${process.pid}-${Date.now()}`, categoryId: '1', tags: ['r'] },
      }),
    );

  it('--signer with --keystore names two signers: exit 2, never a silent priority', async () => {
    const r = await runCli(
      ['--json', '--signer', `aws:${KEY_ID}`, '--from', FROM, '--keystore', s.sb.info.devWallet.keystore, 'ask', '--file', file()],
      home,
      { env: awsEnv() },
    );
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error.code).toBe('signer_conflict');
  });

  it('an external signer without --from: exit 2, naming the flag', async () => {
    const r = await runCli(['--json', '--signer', `aws:${KEY_ID}`, 'wallet', 'address'], home, { env: awsEnv() });
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'from_required' });
  });

  it('a --from the KMS key does not hold: exit 6, nothing sent', async () => {
    const other = privateKeyToAccount(keccak256(toHex('someone else'))).address;
    const pub = createPublicClient({ transport: http(s.sb.info.rpcUrl) });
    const nonce = await pub.getTransactionCount({ address: FROM });
    const r = await runCli(
      ['--json', '--signer', `aws:${KEY_ID}`, '--from', other, 'ask', '--file', file(), '--payment-mode', 'wallet_calls'],
      home,
      { env: awsEnv() },
    );
    expect(r.code, r.stdout).toBe(6);
    expect(await pub.getTransactionCount({ address: FROM })).toBe(nonce);
  });

  it('--atomic with a remote JSON-RPC signer: exit 5 before the service is asked', async () => {
    const r = await runCli(['--json', '--signer', 'rpc:http://127.0.0.1:9', '--from', FROM, 'ask', '--file', file(), '--atomic'], home, {
      env: awsEnv(),
    });
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('signer_cannot_delegate');
  });

  it('an MCP server with an external signer and no spending policy does not start (exit 2, why)', async () => {
    const r = await runCli(['--json', '--signer', `aws:${KEY_ID}`, '--from', FROM, 'mcp'], home, { env: awsEnv() });
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error.code).toBe('policy_required');
    expect(r.json().error.message).toMatch(/external signer signs for the agent/);
  });
});

describe('an owner whose key is in KMS grants a budget (issue 38)', () => {
  it("the first grant points the KMS key's account at the configured chain's pinned DeleGator, then signs the grant", async () => {
    const deleGator = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8')).delegation.contracts.deleGator as string;
    const agent = privateKeyToAccount(keccak256(toHex('loopsign e2e budget agent'))).address;
    const out = path.join(home.dir, 'kms-grant.json');
    const r = await runCli(
      [
        '--json',
        '--signer',
        `aws:${KEY_ID}`,
        '--from',
        FROM,
        'budget',
        'grant',
        '--to',
        agent,
        '--usdc-per-day',
        '1',
        '--usdc-per-30-days',
        '5',
        '--expires',
        '7d',
        '--out',
        out,
        '--yes',
      ],
      home,
      { env: { ...awsEnv(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined } },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ owner: FROM, session: agent, ownerCode: 'none' });
    const pub = createPublicClient({ transport: http(s.sb.info.rpcUrl) });
    const tx = await pub.getTransaction({ hash: r.json().delegationTx });
    expect(tx.from.toLowerCase()).toBe(FROM.toLowerCase());
    expect(tx.authorizationList?.[0]?.address.toLowerCase()).toBe(deleGator.toLowerCase());
    expect((await pub.getCode({ address: FROM }))?.toLowerCase()).toBe(`0xef0100${deleGator.slice(2).toLowerCase()}`);
  });
});
