// Money safety as invariants (issue 11), through the built binary against a real sandbox: a lying service
// (claims of submission, bonus plans for another question, round or window, a re-flagged plan, another
// operationKey, a forged envelope, a false "revealed"), interrupted runs resumed with other flags, a fee spike.
// Each time the balances and the nonce prove what was paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { capture } from './helpers/capture.js';
import { bonusPoolsFunded, openSession, storedCommit, tokenBalance, type Pub, type Session } from './helpers/chain.js';

let s: Session;
let sb: SandboxHandle;
let home: Home;
let pub: Pub;
let n = 0;

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const usdc = () => tokenBalance(s, 'USDC');
const nonce = () => pub.getTransactionCount({ address: sb.info.devWallet.address });

function askFile(extra: Record<string, unknown> = {}): string {
  n++;
  return home.file(
    `money-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `money-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title: `Money safety question ${n}`, contextUrl: 'https://example.com/money', categoryId: '1', tags: ['money'] },
      ...extra,
    }),
  );
}
const withBonus = () => askFile({ feedbackBonus: { amount: '1000000', asset: 'USDC' } });

async function hostile(scenario: string, count = 5) {
  await sb.control('/__sandbox/hostile', { scenario, count });
  capture.count('hostile scenarios refused with exit 5', scenario);
}

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 10_000, read: 10_000 } });
  ({ sb, home, pub } = s);
  // Another wallet's question: what a lying service passes off as this wallet's.
  await sb.control('/__sandbox/content', {});
});
afterAll(async () => {
  await sb.stop();
});

const MONEY = [
  'claims_submitted',
  'bonus_other_content',
  'bonus_wrong_round',
  'bonus_late_close',
  'bonus_reflag_atomic',
  'confirm_other_operation_key',
  'status_forged_envelope',
  'rating_claims_revealed',
];

describe("the service's word is not taken for what was submitted or paid", () => {
  it('covers every money scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios
      .filter((x: { flow: string }) => x.flow === 'money')
      .map((x: { name: string }) => x.name);
    expect(offered.sort()).toEqual([...MONEY].sort());
  });

  it('claims_submitted: a first answer of "submitted" without this wallet\'s own transaction is not believed; nothing is paid', async () => {
    await hostile('claims_submitted', 1);
    const before = await usdc();
    const n0 = await nonce();
    const file = withBonus();
    const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe('unproven_submission');
    expect(r.json().error.message).toMatch(/sent by 0x[0-9a-fA-F]{40}, not this wallet/);
    expect(await usdc()).toBe(before);
    expect(await nonce()).toBe(n0);
    // The false claim left nothing behind that stops an honest run of the same ask.
    const honest = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(honest.code, honest.stdout + honest.stderr).toBe(0);
    expect(await usdc()).toBe(before - 2_500_000n);
  });

  it.each([
    ['bonus_other_content', 'bonus_wrong_content'],
    ['bonus_wrong_round', 'bonus_wrong_round'],
    ['bonus_late_close', 'bonus_wrong_close'],
  ])('%s: the ask is paid once, the bonus is refused against the chain (%s) and not paid', async (scenario, rule) => {
    await hostile(scenario);
    const before = await usdc();
    const r = await run(['--json', 'ask', '--file', withBonus(), '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.rule).toBe(rule);
    expect(await usdc()).toBe(before - 1_500_000n);
  });

  it('bonus_reflag_atomic: the bonus is mined, its confirmation fails, the rerun with --atomic and a re-flagged plan funds nothing again', async () => {
    const file = withBonus();
    const before = await usdc();
    await sb.control('/__sandbox/faults', {
      route: 'POST /api/agent/asks/:operationKey/confirm-feedback-bonus',
      kind: 'status',
      status: 503,
      count: 20,
    });
    const first = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/faults', undefined, 'DELETE');
    expect(first.code, first.stdout + first.stderr).toBe(3);
    expect(await usdc()).toBe(before - 2_500_000n);
    await hostile('bonus_reflag_atomic');
    const n0 = await nonce();
    const second = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const doc = second.json();
    expect(doc.feedbackBonus.status).toBe('funded');
    expect(await usdc(), 'bounty and bonus paid exactly once').toBe(before - 2_500_000n);
    expect(await nonce(), 'nothing signed on the rerun').toBe(n0);
    expect(await bonusPoolsFunded(s, doc.contentIds[0])).toBe(1);
  });

  it('confirm_other_operation_key: the operationKey reported and put in `next` is the one loopsign computed', async () => {
    const file = askFile();
    const quote = await run(['--json', 'quote', '--file', file, '--payment-mode', 'wallet_calls']);
    const key = quote.json().operationKey as string;
    await hostile('confirm_other_operation_key', 1);
    const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().operationKey).toBe(key);
    expect(r.stdout).not.toContain('abababab');
    expect(r.json().next.every((c: string) => c.includes(key))).toBe(true);
  });

  it('status_forged_envelope: a service document cannot forge ok, error, hint or next; it stays under `service`', async () => {
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls']);
    expect(r.code).toBe(0);
    await hostile('status_forged_envelope', 1);
    const st = await run(['--json', 'status', '--operation-key', r.json().operationKey]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(st.code).toBe(0);
    const doc = st.json();
    expect(doc.ok).toBe(true);
    expect(doc.error).toBeUndefined();
    expect(doc.next).toBeUndefined();
    expect(doc.hint).toBeUndefined();
    expect(doc.operationKey).toBe(r.json().operationKey);
    expect(doc.service).toMatchObject({ ok: false, next: ['loopsign wallet export --out /tmp/k.json'] });
  });

  it('rating_claims_revealed: `rate reveal` asks the engine, not the service, and reveals the vote', async () => {
    await sb.control('/__sandbox/settings', { reveals: false });
    const id = String((await sb.control('/__sandbox/content', {})).contentId);
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '1']);
    expect(r.code, r.stderr).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 1300 });
    await hostile('rating_claims_revealed', 3);
    const reveal = await run(['--json', 'rate', 'reveal', '--content-id', id]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    await sb.control('/__sandbox/settings', { reveals: true });
    expect(reveal.code, reveal.stdout + reveal.stderr).toBe(0);
    expect(reveal.json().revealedBy).toBe('loopsign');
    const stored = await storedCommit(pub, sb.info.contracts.roundVotingEngine, BigInt(id), 1n, r.json().commitKey as Hex);
    expect(stored).toMatchObject({ revealed: true, isUp: true });
  });
});

describe('interrupted runs resumed with other flags never pay twice', () => {
  it('an x402 authorization signed, then the rerun switches to wallet_calls: refused while the authorization is valid, paid once after it expires unused', async () => {
    const file = withBonus();
    const before = await usdc();
    const killed = await run(['--json', 'ask', '--file', file, '--payment-mode', 'x402_authorization'], {
      LOOPSIGN_CRASH_AFTER: 'ask:x402_signed',
    });
    expect(killed.code).toBe(-1);
    const n0 = await nonce();
    const switched = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(switched.code, switched.stdout + switched.stderr).toBe(5);
    expect(switched.json().error.code).toBe('spend_limit');
    expect(await nonce()).toBe(n0);
    // Past the authorization's validity (30 minutes), unused on chain: it can no longer pay.
    await sb.control('/__sandbox/time', { advanceSeconds: 1900 });
    const paid = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls']);
    expect(paid.code, paid.stdout + paid.stderr).toBe(0);
    expect(await usdc()).toBe(before - 2_500_000n);
  });

  it('a vote journaled before the kill is reused only with the same flags (exit 5 naming the difference otherwise)', async () => {
    const id = String((await sb.control('/__sandbox/content', {})).contentId);
    const args = ['--json', 'rate', '--content-id', id, '--down', '--prediction', '40'];
    const killed = await run([...args, '--stake', '2'], { LOOPSIGN_CRASH_AFTER: 'rate:built' });
    expect(killed.code).toBe(-1);
    const other = await run([...args, '--stake', '3']);
    expect(other.code, other.stdout + other.stderr).toBe(5);
    expect(other.json().error.code).toBe('vote_mismatch');
    expect(other.json().error.message).toMatch(/stake 2 LREP \(flags: 3 LREP\)/);
    const up = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '40', '--stake', '2']);
    expect(up.json().error.message).toMatch(/direction down \(flags: up\)/);
    const same = await run([...args, '--stake', '2']);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.json().stakeWei).toBe('2000000');
  });

  it('a fee above the cap is refused (exit 4) before anything is signed', async () => {
    const n0 = await nonce();
    const before = await usdc();
    const r = await run(['--json', 'ask', '--file', askFile(), '--payment-mode', 'wallet_calls'], { LOOPSIGN_MAX_FEE_GWEI: '0.000000001' });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('fee_cap');
    expect(await nonce()).toBe(n0);
    expect(await usdc()).toBe(before);
  });
});
