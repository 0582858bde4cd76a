// The paid round as a user runs it: the built binary against a real sandbox, every payment mode through to a
// settled result, the plan guard against every hostile scenario (balances prove nothing moved), retries on
// faults, and the lookups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createPublicClient, decodeFunctionData, parseAbi, type Hex } from 'viem';
import { contentRegistryAbi, x402SubmitterAbi } from '../src/protocol/abi.js';
import { filesUnder, findSecret, runCli, SETTLE_TIMEOUT, VECTORS, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';
import { capture } from './helpers/capture.js';
import { recorded } from './helpers/store.js';

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
let sb: SandboxHandle;
let home: Home;
let pub: ReturnType<typeof createPublicClient>;
let dev: Hex;
let n = 0;

function askFile(extra: Record<string, unknown> = {}, question: Record<string, unknown> = {}): string {
  const body = {
    chainId: 31337,
    clientRequestId: `ask-e2e-${process.pid}-${Date.now()}-${n++}`,
    maxPaymentAmount: '1500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
    question: {
      title: `Should this agent proceed? (${n})`,
      contextUrl: 'https://example.com/context',
      categoryId: '1',
      tags: ['agent'],
      ...question,
    },
    ...extra,
  };
  return home.file(`${body.clientRequestId}.json`, JSON.stringify(body, null, 2));
}

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const balance = async (asset: 'USDC' | 'LREP') =>
  (await pub.readContract({ address: sb.info.tokens[asset].address, abi: erc20, functionName: 'balanceOf', args: [dev] })) as bigint;
const nonce = () => pub.getTransactionCount({ address: dev });

beforeAll(async () => {
  ({ sb, home, pub } = await openSession({ autoAdvance: true, pollAfterMs: 200, rateLimits: { write: 10_000, read: 10_000 } }));
  dev = sb.info.devWallet.address;
});

afterAll(async () => {
  await sb.stop();
  // Nothing loopsign wrote (journals included) may hold the key or a password.
  for (const file of filesUnder(path.join(home.dir, 'state'))) {
    expect(findSecret(readFileSync(file, 'utf8')), file).toBeUndefined();
    expect((statSync(file).mode & 0o777).toString(8), file).toBe('600');
  }
});

describe('asks through to a settled result', () => {
  it('wallet calls, ordered, with --wait', async () => {
    const before = await balance('USDC');
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls', '--wait', '--timeout', SETTLE_TIMEOUT]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc).toMatchObject({ ok: true, status: 'submitted', paymentMode: 'wallet_calls', transactions: 3 });
    expect(doc.transactionHashes).toHaveLength(3);
    expect(doc.result.ready).toBe(true);
    expect(doc.result.voteCount).toBe(3);
    expect(await balance('USDC')).toBe(before - 1_500_000n);
    // Progress went to stderr as JSON lines.
    for (const line of r.stderr.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('--atomic: the ask costs 2 transactions and its USDC bonus 1, through EIP-7702 delegation', async () => {
    const before = await balance('USDC');
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile({ maxPaymentAmount: '2500000', feedbackBonus: { amount: '1000000', asset: 'USDC' } }),
      '--payment-mode',
      'wallet_calls',
      '--atomic',
      '--wait',
      '--timeout',
      '120',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.transactions).toBe(2);
    expect(doc.feedbackBonus).toMatchObject({ status: 'funded' });
    expect(doc.result.ready).toBe(true);
    const code = await pub.getCode({ address: dev });
    expect(code?.toLowerCase()).toBe(`0xef0100${sb.info.batchDelegate.slice(2).toLowerCase()}`);
    expect(await balance('USDC')).toBe(before - 2_500_000n);
    const journal = recorded(home, doc.operation);
    expect(journal.txs.filter((t: { stage: string }) => t.stage === 'bonus')).toHaveLength(1);
  });

  it('x402: a signed ReceiveWithAuthorization and a one-call plan', async () => {
    const before = await balance('USDC');
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile(),
      '--payment-mode',
      'x402_authorization',
      '--wait',
      '--timeout',
      SETTLE_TIMEOUT,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ paymentMode: 'x402_authorization', transactions: 1 });
    expect(r.json().result.ready).toBe(true);
    expect(await balance('USDC')).toBe(before - 1_500_000n);
  });

  it('x402 one-shot with a USDC bonus', async () => {
    const before = await balance('USDC');
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile({ maxPaymentAmount: '2500000', feedbackBonus: { amount: '1000000', asset: 'USDC' } }),
      '--payment-mode',
      'x402_authorization',
      '--wait',
      '--timeout',
      '120',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().feedbackBonus.status).toBe('funded');
    expect(await balance('USDC')).toBe(before - 2_500_000n);
  });

  it('an LREP bonus is approved to and pulled by the bonus escrow', async () => {
    const usdc = await balance('USDC');
    const lrep = await balance('LREP');
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile({ feedbackBonus: { amount: '5000000', asset: 'LREP' } }),
      '--payment-mode',
      'wallet_calls',
      '--wait',
      '--timeout',
      '120',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().feedbackBonus.status).toBe('funded');
    expect(await balance('USDC')).toBe(usdc - 1_500_000n);
    expect(await balance('LREP')).toBe(lrep - 5_000_000n);
  });

  it('a bundle of the shared example asks (3 questions, one payment)', async () => {
    const body = JSON.parse(readFileSync(path.join(VECTORS, 'asks/answer-variant-safety-review.json'), 'utf8'));
    body.chainId = 31337;
    body.clientRequestId = `bundle-${Date.now()}`;
    const before = await balance('USDC');
    const r = await run(['--json', 'ask', '--file', home.file('bundle.json', JSON.stringify(body)), '--wait', '--timeout', SETTLE_TIMEOUT]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.paymentMode).toBe('wallet_calls');
    expect(doc.contentIds).toHaveLength(3);
    expect(await balance('USDC')).toBe(before - 3_000_000n);
    const res = await run(['--json', 'result', '--operation-key', doc.operationKey, '--content-id', doc.contentIds[1]]);
    expect(res.json().ready).toBe(true);
    const ambiguous = await run(['--json', 'result', '--operation-key', doc.operationKey]);
    expect(ambiguous.code).toBe(3);
    expect(ambiguous.json().error.message).toMatch(/multiple contentIds/);
  });

  it('a dry run sends nothing', async () => {
    const n0 = await nonce();
    const r = await run(['--json', 'ask', '--file', askFile(), '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      dryRun: true,
      status: 'dry_run',
      service: { status: 'dry_run', paymentRequired: false, transactionPlan: null },
    });
    expect(await nonce()).toBe(n0);
  });

  it('three asks at once from one wallet: each pays exactly once (plans take turns under the wallet lock: nonces and exact approvals)', async () => {
    const before = await balance('USDC');
    const n0 = await nonce();
    const runs = await Promise.all([0, 1, 2].map(() => run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls'])));
    for (const r of runs) {
      expect(r.code, r.stdout + r.stderr.slice(-1500)).toBe(0);
      expect(r.json()).toMatchObject({ ok: true, status: 'submitted', transactions: 3 });
    }
    expect(await balance('USDC')).toBe(before - 3n * 1_500_000n);
    expect(await nonce()).toBe(n0 + 9);
  });

  it('quote and templates', async () => {
    const q = await run(['--json', 'quote', '--file', askFile()]);
    expect(q.code).toBe(0);
    expect(q.json().operationKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(q.json().service.wallet.address.toLowerCase()).toBe(dev.toLowerCase());
    const t = await run(['templates']);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/head_to_head_ab\s+Head-to-Head A\/B\s+\(inputs: optionAKey, optionALabel, optionBKey, optionBLabel\)/);
    expect(t.stdout).toMatch(/feature_acceptance_test\s+Feature Acceptance Test\n/);
  });
});

describe('--auto-advance and an x402 ask in flight', () => {
  it("the keeper's clock never jumps past an authorization the service just asked a wallet to sign (it would expire under the ask)", async () => {
    await sb.control('/__sandbox/settings', { autoAdvance: true, keeperBackground: false });
    try {
      // A round with a two-hour epoch: its raters vote, the clock jumps to the epoch's end; the next pass reveals and
      // settles (SettlementPending), and the one after would jump the snapshot timeout's hour.
      const long = await run([
        '--json',
        'ask',
        '--file',
        askFile({ roundConfig: { questionDurationSeconds: '7200', minVoters: '3', maxVoters: '100' } }),
      ]);
      expect(long.code, long.stderr.slice(-1500)).toBe(0);
      for (let i = 0; i < 6; i++) if ((await sb.control('/__sandbox/keeper/tick', {})).keeper.advanced === 1) break;
      const latest = async () => Number((await pub.getBlock({ blockTag: 'latest' })).timestamp);
      // The service asks for an authorization valid 30 minutes (as the live one does); the asker has not signed yet.
      const body = JSON.parse(readFileSync(askFile({ walletAddress: dev, paymentMode: 'x402_authorization' }), 'utf8'));
      const res = await fetch(`${sb.info.baseUrl}/api/agent/asks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const asked = await res.json();
      expect(asked.nextAction, JSON.stringify(asked)).toBe('sign_x402_authorization');
      const validBefore = Number(asked.x402AuthorizationRequest.authorization.validBefore);
      const jumps = [];
      for (let i = 0; i < 3; i++) jumps.push((await sb.control('/__sandbox/keeper/tick', {})).keeper.advanced);
      expect(jumps).toContain(1); // the clock did move, up to the authorization and no further
      expect(await latest()).toBeLessThan(validBefore);
    } finally {
      await sb.control('/__sandbox/settings', { keeperBackground: true });
    }
  });
});

describe('asks as the live service takes them (issue 12 §3)', () => {
  it('a seed-shaped file is sent live-shaped (one-epoch round, one settled round, windows = the duration) and paid by x402: its hashes are verified', async () => {
    const before = await balance('USDC');
    const file = askFile({
      bounty: {
        amount: '1500000',
        asset: 'USDC',
        requiredVoters: '3',
        requiredSettledRounds: '1',
        bountyStartBy: '0',
        bountyWindowSeconds: '900',
        feedbackWindowSeconds: '900',
      },
      roundConfig: { epochDuration: '900', maxDuration: '900', minVoters: '3', maxVoters: '100' },
    });
    const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'x402_authorization']);
    expect(r.code, r.stdout + r.stderr.slice(-1500)).toBe(0);
    expect(r.json()).toMatchObject({ status: 'submitted', paymentMode: 'x402_authorization', transactions: 1 });
    expect(await balance('USDC')).toBe(before - 1_500_000n);
    // What was sent (journaled) carries none of the seed fields: the sandbox, like the service, would refuse them.
    const sent = recorded(home, r.json().operation).data.request;
    expect(sent.roundConfig).toEqual({ minVoters: '3', maxVoters: '100', questionDurationSeconds: '900' });
    expect(sent.bounty).toEqual({ amount: '1500000', asset: 'USDC', requiredVoters: '3' });
  });

  it('a seed field with no live equivalent is refused locally (exit 2, the field and what the service offers named); nothing is asked', async () => {
    const ops = (await sb.control('/__sandbox/state')).operations;
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile({ roundConfig: { epochDuration: '600', maxDuration: '1800', minVoters: '3', maxVoters: '100' } }),
    ]);
    expect(r.code).toBe(2);
    expect(r.json().error.field).toBe('roundConfig.maxDuration');
    expect(r.json().error.message).toMatch(/one-epoch rounds.*questionDurationSeconds/);
    expect((await sb.control('/__sandbox/state')).operations).toBe(ops);
  });

  it.each(['wallet_calls', 'x402_authorization'])(
    'a gated question with hosted details and no bond (%s): URLs empty on chain, a zero LREP bond, accepted by the registry',
    async (mode) => {
      const hosted = await sb.control('/__sandbox/content', { gated: true, details: `Confidential brief ${mode}` });
      const before = await balance('USDC');
      const file = askFile(
        {},
        {
          contextUrl: undefined,
          title: `Gated question (${mode}, ${n})`,
          detailsUrl: hosted.details.url,
          detailsHash: hosted.details.sha256,
          confidentiality: { visibility: 'gated' },
        },
      );
      const r = await run(['--json', 'ask', '--file', file, '--payment-mode', mode]);
      expect(r.code, r.stdout + r.stderr.slice(-1500)).toBe(0);
      expect(await balance('USDC')).toBe(before - 1_500_000n);
      // The submit transaction this wallet signed carries the question with its URLs blanked and the details hash kept.
      const journal = recorded(home, r.json().operation);
      const submit = journal.txs.map((t: { hash: Hex }) => t.hash).at(-1) as Hex;
      const tx = await pub.getTransaction({ hash: submit });
      const { args } = decodeFunctionData({ abi: [...contentRegistryAbi, ...x402SubmitterAbi], data: tx.input }) as { args: any[] };
      expect([args[0], args[1], args[2], args[6].detailsUrl]).toEqual(['', [], '', '']);
      expect(args[6].detailsHash).toBe(hosted.details.sha256);
      expect(args[11]).toEqual({ gated: true, bondAsset: 0, bondAmount: 0n, flags: 1 });
    },
  );

  it('a bundle the service fails with HTTP 500 (the live bug at 0b442ae): exit 3 with one clear error, nothing signed or paid', async () => {
    const body = JSON.parse(readFileSync(path.join(VECTORS, 'asks/answer-variant-safety-review.json'), 'utf8'));
    body.chainId = 31337;
    body.clientRequestId = `bundle-500-${Date.now()}`;
    const file = home.file(`${body.clientRequestId}.json`, JSON.stringify(body));
    await sb.control('/__sandbox/hostile', { scenario: 'bundle_internal_error', count: 100 });
    const usdc = await balance('USDC');
    const n0 = await nonce();
    const json = await run(['--json', 'ask', '--file', file]);
    const text = await run(['--quiet', 'ask', '--file', file]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(json.code, json.stdout).toBe(3);
    expect(json.json().error).toMatchObject({ code: 'failed_submission', status: 500 });
    expect(json.json().error.message).toMatch(
      /HTTP 500 failed_submission: Cannot read properties of undefined \(reading 'detailsUrl'\)\): a known fault of this service version with multi-question \(bundle\) asks \(profile rateloop-main-2026-08\); it returned no plan, so nothing was signed or paid/,
    );
    expect(text.code).toBe(3);
    // (A `warning:` line about the spending policy may come first; the failure itself is one error line and its hint.)
    expect(
      text.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('warning:')),
    ).toEqual([
      expect.stringMatching(/^error: the service failed \(HTTP 500/),
      expect.stringMatching(/^hint: ask the questions one at a time/),
    ]);
    expect(await balance('USDC')).toBe(usdc);
    expect(await nonce()).toBe(n0);
    capture.count('hostile scenarios refused with exit 5', 'bundle_internal_error (exit 3)');
  });

  it('84532: no trusted deployment of the paid-round contracts, said before anything is sent (exit 2, what to configure)', async () => {
    const r = await run(
      ['--json', '--chain-id', '84532', '--base-url', 'http://127.0.0.1:9', 'ask', '--file', askFile({ chainId: 84532 })],
      { LOOPSIGN_SANDBOX_MANIFEST: '' },
    );
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'no_trusted_deployment' });
    expect(r.json().error.message).toMatch(
      /chain 84532 \(Base Sepolia\): the service has no published deployment of its paid-round contracts/,
    );
    expect(r.json().error.hint).toMatch(/chains\.84532\.contracts\.\{contentRegistry, questionRewardPoolEscrow/);
  });
});

describe('local validation: exit 2 before any network call', () => {
  it.each([
    ['minVoters differs', { roundConfig: { questionDurationSeconds: '1200', minVoters: '4', maxVoters: '100' } }, /roundConfig\.minVoters/],
    ['a number amount', { bounty: { amount: 1500000, asset: 'USDC', requiredVoters: '3' } }, /bounty\.amount/],
    ['maxPayment below bounty', { maxPaymentAmount: '1499999' }, /maxPaymentAmount/],
    ['another chain', { chainId: 8453 }, /chainId 8453 is not the configured chain/],
    ['bonus in ETH', { maxPaymentAmount: '2500000', feedbackBonus: { amount: '1000000', asset: 'ETH' } }, /feedbackBonus\.asset/],
    ['no maxPaymentAmount', { maxPaymentAmount: undefined }, /maxPaymentAmount: is required/],
  ])('%s', async (_n, extra, message) => {
    const file = askFile(extra as Record<string, unknown>);
    // A dead service URL proves no request is made: a network attempt would be exit 3, not 2.
    const r = await run(['--json', '--base-url', 'http://127.0.0.1:9', 'ask', '--file', file]);
    expect(r.code).toBe(2);
    expect(r.json().error.message).toMatch(message);
  });

  it('a missing file, unreadable JSON, and a details file whose hash differs', async () => {
    expect((await run(['--json', 'ask', '--file', path.join(home.dir, 'none.json')])).json().error.code).toBe('file_not_found');
    expect((await run(['--json', 'ask', '--file', home.file('bad.json', '{oops')])).json().error.code).toBe('invalid_json');
    const details = home.file('details.txt', 'the details');
    const file = askFile({}, { detailsUrl: 'https://example.com/details', detailsHash: `0x${'11'.repeat(32)}` });
    const r = await run(['--json', 'ask', '--file', file, '--details-file', details]);
    expect(r.code).toBe(2);
    expect(r.json().error.message).toMatch(/detailsHash: does not match the SHA-256/);
  });
});

describe('the plan guard refuses every hostile scenario with exit 5, and nothing moves', () => {
  const askScenarios: [string, string][] = [
    ['wrong_target', 'wallet_calls'],
    ['inflated_approval', 'wallet_calls'],
    ['unlimited_approval', 'wallet_calls'],
    ['wrong_spender', 'wallet_calls'],
    ['native_value', 'wallet_calls'],
    ['extra_call', 'wallet_calls'],
    ['wrong_chain', 'wallet_calls'],
    ['wrong_wallet', 'wallet_calls'],
    ['changed_question', 'wallet_calls'],
    ['wrong_operation_key', 'wallet_calls'],
    ['changed_question', 'x402_authorization'],
    ['permit_typed_data', 'x402_authorization'],
    ['x402_wrong_recipient', 'x402_authorization'],
    ['x402_inflated_value', 'x402_authorization'],
    ['x402_long_validity', 'x402_authorization'],
    ['x402_wrong_nonce', 'x402_authorization'],
    ['x402_wrong_token', 'x402_authorization'],
  ];
  it.each(askScenarios)('%s (%s)', async (scenario, mode) => {
    await sb.control('/__sandbox/hostile', { scenario, count: 5 });
    const usdc = await balance('USDC');
    const n0 = await nonce();
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', mode]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe('plan_refused');
    expect(r.json().error.message).toMatch(/^refused: /);
    expect(await balance('USDC')).toBe(usdc);
    expect(await nonce()).toBe(n0);
    capture.count('hostile scenarios refused with exit 5', scenario);
  });

  const bonusScenarios = ['bonus_inflated_approval', 'bonus_wrong_awarder', 'bonus_wrong_target'];

  it('covers every ask, x402 and bonus scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios
      .filter((s: { flow: string }) => ['ask', 'x402', 'bonus'].includes(s.flow))
      .map((s: { name: string }) => s.name);
    const tested = new Set([...askScenarios.map(([s]) => s), ...bonusScenarios, 'bundle_internal_error']);
    expect(offered.filter((s: string) => !tested.has(s))).toEqual([]);
  });

  it.each(bonusScenarios)('%s: the ask is paid, the bonus is refused and not paid', async (scenario) => {
    await sb.control('/__sandbox/hostile', { scenario, count: 5 });
    const usdc = await balance('USDC');
    const r = await run([
      '--json',
      'ask',
      '--file',
      askFile({ maxPaymentAmount: '2500000', feedbackBonus: { amount: '1000000', asset: 'USDC' } }),
      '--payment-mode',
      'wallet_calls',
    ]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(await balance('USDC')).toBe(usdc - 1_500_000n);
    capture.count('hostile scenarios refused with exit 5', scenario);
  });

  it('a plan that must run atomically is refused when the batch would revert, and without consent to delegate', async () => {
    await sb.control('/__sandbox/settings', { atomicPlans: true });
    const usdc = await balance('USDC');
    const n0 = await nonce();
    const reverting = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls', '--atomic']);
    await sb.control('/__sandbox/settings', { atomicPlans: false });
    expect(reverting.code).toBe(5);
    expect(reverting.json().error.code).toBe('atomic_simulation_reverted');
    expect(await balance('USDC')).toBe(usdc);
    expect(await nonce()).toBe(n0);
  });
});

describe('faults: retried only where safe, with a clear outcome', () => {
  it('429 with Retry-After and a 503 on the ask, then an error after commit on confirm: one submission, one payment', async () => {
    const usdc = await balance('USDC');
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/asks', kind: 'status', status: 429, retryAfter: 1, count: 1 });
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/quote', kind: 'status', status: 503, count: 1 });
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/asks/', kind: 'after_commit', count: 1 });
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/faults', undefined, 'DELETE');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/"event":"service.retry"/);
    expect(r.json().contentIds).toHaveLength(1);
    expect(await balance('USDC')).toBe(usdc - 1_500_000n);
  });

  it('a 400 is never retried and says what to do', async () => {
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/asks', kind: 'status', status: 400, count: 1 });
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/faults', undefined, 'DELETE');
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/service.retry/);
  });

  it('an unreachable service is exit 3 with a hint to rerun', async () => {
    const r = await run(['--json', '--base-url', 'http://127.0.0.1:9', 'status', '--operation-key', `0x${'11'.repeat(32)}`]);
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe('service_unreachable');
  });
});

describe('confirm, status and result', () => {
  it('--no-confirm leaves the confirmation to `loopsign confirm`, which takes the hashes from the journal', async () => {
    const file = askFile();
    const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--no-confirm']);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.status).toBe('executed_not_confirmed');
    const before = await run(['--json', 'status', '--operation-key', doc.operationKey]);
    expect(before.json().status).toBe('awaiting_wallet_signature');
    const c = await run(['--json', 'confirm', '--operation-key', doc.operationKey]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.json().status).toBe('submitted');
    const again = await run(['--json', 'confirm', '--operation-key', doc.operationKey]);
    expect(again.json().status).toBe('submitted');
    const body = JSON.parse(readFileSync(file, 'utf8'));
    const byId = await run(['--json', 'status', '--client-request-id', body.clientRequestId, '--wait', '--timeout', SETTLE_TIMEOUT]);
    expect(byId.code).toBe(0);
    expect(byId.json().ready).toBe(true);
    const res = await run(['--json', 'result', '--client-request-id', body.clientRequestId]);
    expect(res.json().service.operation.operationKey).toBe(doc.operationKey);
    // Where a user sees the ask's amounts, what reaches raters after the escrows' 300 bps frontend fee too (as quote
    // and ask show it): the sandbox's status and result documents, read by the built binary.
    const toRaters = { atomic: '1455000', asset: 'USDC', display: '1.455 USDC' };
    expect(byId.json().amounts).toMatchObject({ bounty: { atomic: '1500000', display: '1.5 USDC' }, bountyAfterFrontendFee: toRaters });
    expect(res.json().amounts).toMatchObject({ bountyAfterFrontendFee: toRaters });
    for (const command of ['status', 'result']) {
      const text = await run([command, '--client-request-id', body.clientRequestId]);
      expect(text.stdout, command).toMatch(/bounty +1\.5 USDC \(1\.455 USDC to raters after the 3 % frontend fee\)/);
    }
  });

  it('a wait that times out is exit 7 and says how to continue', async () => {
    await sb.control('/__sandbox/settings', { raters: false });
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls', '--wait', '--timeout', '2']);
    await sb.control('/__sandbox/settings', { raters: true });
    expect(r.code).toBe(7);
    expect(r.json().error).toMatchObject({ code: 'wait_timeout' });
    expect(r.json().error.hint).toMatch(/loopsign status --operation-key 0x[0-9a-f]{64} --wait/);
    const res = await run(['--json', 'result', '--operation-key', r.json().error.operationKey, '--require-final']);
    expect(res.code).toBe(7);
  });

  it('rerunning a finished ask pays nothing and reports the same operation', async () => {
    const file = askFile();
    const first = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const usdc = await balance('USDC');
    const n0 = await nonce();
    const second = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(second.code).toBe(0);
    expect(second.json().operationKey).toBe(first.json().operationKey);
    expect(second.json().resumed).toBe(true);
    expect(await balance('USDC')).toBe(usdc);
    expect(await nonce()).toBe(n0);
  });
});
