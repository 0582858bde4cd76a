// Crash recovery: the ask and the rate flows are SIGKILLed right after each journaled step (LOOPSIGN_CRASH_AFTER),
// then run again unchanged. Every time: exit 0, exactly one question submitted and one payment (bounty + bonus),
// or exactly one vote committed with one stake paid and the same commit (salt and ciphertext) as before the kill.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createWalletClient, http, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { decryptKeystore } from '../src/wallet/keystore.js';
import { runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { capture } from './helpers/capture.js';
import { openSession, storedCommit, submissionsTitled as titled, tokenBalance, type Pub, type Session } from './helpers/chain.js';

let s: Session;
let sb: SandboxHandle;
let home: Home;
let pub: Pub;
let n = 0;

const WALLET_POINTS = [
  'ask:planned',
  'ask:signed:0',
  'ask:mined:0',
  'ask:signed:1',
  'ask:mined:1',
  'ask:signed:2',
  'ask:mined:2',
  'ask:executed',
  'ask:confirmed',
  'bonus:planned',
  'bonus:signed:0',
  'bonus:mined:0',
  'bonus:signed:1',
  'bonus:mined:1',
  'bonus:executed',
  'bonus:confirmed',
];
const X402_POINTS = ['ask:planned', 'ask:x402_signed', 'ask:signed:0', 'ask:mined:0', 'ask:executed', 'ask:confirmed'];
// A vote on a fresh question lands in round 1; the plan is commitVote alone (the allowance already covers it).
const RATE_POINTS = ['rate:built', 'rate:planned', 'rate:1:signed:0', 'rate:1:mined:0', 'rate:confirmed'];

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 10_000, read: 10_000 }, raters: false });
  ({ sb, home, pub } = s);
});
afterAll(async () => {
  await sb.stop();
});

const usdc = () => tokenBalance(s, 'USDC');
const lrep = () => tokenBalance(s, 'LREP');
const submissionsTitled = (title: string) => titled(s, title);

/** An ask file in the test home: a 1.5 USDC bounty, and with `bonus` a 1 USDC feedback bonus (the cap covers both). */
function askFile(name: string, title: string, tag: string, bonus = false): string {
  return home.file(
    `${name}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `${name}-${process.pid}-${Date.now()}`,
      maxPaymentAmount: bonus ? '2500000' : '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      ...(bonus ? { feedbackBonus: { amount: '1000000', asset: 'USDC' } } : {}),
      question: { title, contextUrl: `https://example.com/${tag}/${name}-${process.pid}-${Date.now()}`, categoryId: '1', tags: [tag] },
    }),
  );
}

async function crashThenResume(point: string, mode: 'wallet_calls' | 'x402_authorization'): Promise<void> {
  const title = `Crash test ${point} ${mode} ${n++}`;
  const file = askFile(`crash-${n}`, title, 'crash', true);
  const env = sb.env();
  const before = await usdc();
  const killed = await runCli(['--json', 'ask', '--file', file, '--payment-mode', mode], home, {
    env: { ...env, LOOPSIGN_CRASH_AFTER: point },
  });
  expect(killed.code, `${point}: the first run must be killed at the step, got ${killed.code}\n${killed.stderr}`).toBe(-1);
  const resumed = await runCli(['--json', 'ask', '--file', file, '--payment-mode', mode], home, { env });
  expect(resumed.code, `${point}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
  const doc = resumed.json();
  expect(doc.status).toBe('submitted');
  expect(doc.contentIds).toHaveLength(1);
  expect(doc.feedbackBonus.status).toBe('funded');
  expect(await submissionsTitled(title), `${point}: exactly one submission`).toBe(1);
  expect(await usdc(), `${point}: exactly one payment of bounty + bonus`).toBe(before - 2_500_000n);
  capture.count('kill points recovered', `${mode} ${point}`);
}

async function rateCrashThenResume(point: string): Promise<void> {
  const contentId = String((await sb.control('/__sandbox/content', {})).contentId);
  const args = ['--json', 'rate', '--content-id', contentId, '--down', '--prediction', '40', '--stake', '3'];
  const env = sb.env();
  const before = await lrep();
  const killed = await runCli(args, home, { env: { ...env, LOOPSIGN_CRASH_AFTER: point } });
  expect(killed.code, `${point}: the first run must be killed at the step, got ${killed.code}\n${killed.stderr}`).toBe(-1);
  const resumed = await runCli(args, home, { env });
  expect(resumed.code, `${point}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
  const doc = resumed.json();
  expect(doc.roundId).toBe('1');
  const stored = await storedCommit(pub, sb.info.contracts.roundVotingEngine, BigInt(contentId), 1n, doc.commitKey);
  expect(stored.commitHash, `${point}: the committed vote is the one reported`).toBe(doc.commitHash);
  expect(stored.stake).toBe(3_000_000n);
  expect(await lrep(), `${point}: exactly one stake paid`).toBe(before - 3_000_000n);
  // A third run changes nothing: the vote is already committed in this round.
  const again = await runCli(args, home, { env });
  expect(again.code).toBe(0);
  expect(again.json()).toMatchObject({ commitHash: doc.commitHash, resumed: true });
  expect(await lrep()).toBe(before - 3_000_000n);
  capture.count('kill points recovered', `rate ${point}`);
}

describe('SIGKILL at every step, then rerun: one submission, one payment', () => {
  it.each(RATE_POINTS)('rate (staked vote), killed after %s', (point) => rateCrashThenResume(point));
  it.each(WALLET_POINTS)('wallet_calls with a bonus, killed after %s', (point) => crashThenResume(point, 'wallet_calls'));
  it.each(X402_POINTS)('x402 one-shot with a bonus, killed after %s', (point) => crashThenResume(point, 'x402_authorization'));

  it('a second loopsign on the same ask is refused while the first holds the journal', async () => {
    const file = askFile('lock', `Lock test ${Date.now()}`, 'lock');
    const env = sb.env();
    await sb.control('/__sandbox/faults', { route: 'POST /api/agent/asks', kind: 'timeout', delayMs: 4000, count: 1 });
    const first = runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, { env });
    await new Promise((r) => setTimeout(r, 1500));
    const second = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, { env });
    expect(second.code).toBe(9);
    expect(second.json().error.code).toBe('journal_locked');
    expect((await first).code).toBe(0);
  });

  it('a transaction sent from the wallet by other software takes the journaled nonce: the rerun signs nothing until that is final, then pays once', async () => {
    const title = `Nonce taken ${Date.now()}`;
    const file = askFile('nonce-taken', title, 'nonce');
    const env = sb.env();
    const before = await usdc();
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    expect((await runCli(args, home, { env: { ...env, LOOPSIGN_CRASH_AFTER: 'ask:signed:0' } })).code).toBe(-1);
    // The same key, used elsewhere: a plain self-transfer takes the nonce the journaled reservation was signed with.
    const password = readFileSync(sb.info.devWallet.passwordFile, 'utf8').replace(/\n$/, '');
    const { privateKey } = await decryptKeystore(JSON.parse(readFileSync(sb.info.devWallet.keystore, 'utf8')), password);
    const other = createWalletClient({ account: privateKeyToAccount(toHex(privateKey)), transport: http(sb.info.rpcUrl) });
    await pub.waitForTransactionReceipt({ hash: await other.sendTransaction({ chain: null, to: sb.info.devWallet.address, value: 0n }) });
    // Not final yet (the taker is at the head): the reservation is not signed anew, whatever the rerun. Before nonce
    // slots this said nonce_used_elsewhere on every rerun ("ask again with a new clientRequestId").
    const rerun = await runCli(args, home, { env });
    expect(rerun.code, rerun.stdout).toBe(4);
    expect(rerun.json().error.code, rerun.stdout).toBe('nonce_not_final');
    expect(rerun.json().error.message).toMatch(
      /nonce \d+ is used by a transaction that is not 0x[0-9a-f]{64}; whether this step paid becomes final at block \d+/,
    );
    expect(await submissionsTitled(title)).toBe(0);
    expect(await usdc()).toBe(before);
    // Two blocks later the sandbox's finalized block (head − 2) has passed the taker: the slot is void, signed anew.
    for (let i = 0; i < 2; i++) await pub.request({ method: 'evm_mine' as never, params: [] as never });
    const final = await runCli(args, home, { env });
    expect(final.code, final.stdout + final.stderr).toBe(0);
    expect(final.stderr).toMatch(/"event":"tx\.void"/);
    expect(await submissionsTitled(title)).toBe(1);
    expect(before - (await usdc())).toBe(1_500_000n);
  });

  it('a rerun that switches to x402 after a wallet_calls transaction of the ask is on chain is refused before it signs an authorization, and the wallet_calls rerun then pays once', async () => {
    const title = `Mode switch ${Date.now()}`;
    const file = askFile('mode-switch', title, 'crash', true);
    const env = sb.env();
    const before = await usdc();
    const walletCalls = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    expect((await runCli(walletCalls, home, { env: { ...env, LOOPSIGN_CRASH_AFTER: 'ask:mined:0' } })).code).toBe(-1);
    const x402 = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'x402_authorization'], home, { env });
    expect(x402.code, x402.stdout).toBe(5);
    expect(x402.json().error.code).toBe('plan_changed');
    expect(x402.stderr, 'no authorization may be signed for a plan that cannot be followed').not.toContain('ask.x402');
    // Without that authorization in the ledger, the ask can still be finished the way it was started.
    const rerun = await runCli(walletCalls, home, { env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(await submissionsTitled(title)).toBe(1);
    expect(before - (await usdc())).toBe(2_500_000n);
    // A finished ask rerun with the other mode pays nothing more, and reports the mode it was paid in, not the flag's.
    const again = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'x402_authorization'], home, { env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ resumed: true, paymentMode: 'wallet_calls' });
    expect(before - (await usdc())).toBe(2_500_000n);
  });
});

export const KILL_POINTS = WALLET_POINTS.length + X402_POINTS.length + RATE_POINTS.length;
