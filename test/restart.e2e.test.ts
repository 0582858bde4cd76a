// A journal written on one instance of a chain, met again on another (issue 19 §3: the sandbox restarted, its chain
// new, the same wallet, the same ask file). The rerun says what happened and how to go on (exit 4, never the
// hostile-service code 5, never silently); --set-aside-stale keeps the old record aside and asks afresh, paying once.
import { describe, expect, it } from 'vitest';
import { makeHome, runCli, TEST_ADDRESS, TEST_PRIVATE_KEY } from './helpers/cli.js';
import { startSandbox, type SandboxHandle } from './helpers/sandbox.js';
import { withStore } from './helpers/store.js';
import { createPublicClient, http, parseAbi } from 'viem';

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

async function fundedSandbox(): Promise<SandboxHandle> {
  // Sandboxes of its own: the test stops one and starts another (a chain restarted under the same journal).
  const sb = await startSandbox();
  await sb.control('/__sandbox/fund', { address: TEST_ADDRESS, usdc: '10000000', eth: '10' });
  return sb;
}

const usdc = (sb: SandboxHandle) =>
  createPublicClient({ transport: http(sb.info.rpcUrl) }).readContract({
    address: sb.info.tokens.USDC.address,
    abi: erc20,
    functionName: 'balanceOf',
    args: [TEST_ADDRESS as `0x${string}`],
  });

describe('the same ask on a restarted chain', () => {
  it('is told apart from a hostile service (exit 4, what happened and how to go on); --set-aside-stale starts afresh and pays once', async () => {
    const home = makeHome();
    const file = home.file(
      'ask.json',
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `restart-${process.pid}-${Date.now()}`,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: 'Restart test',
          contextUrl: `https://example.com/restart/${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
          categoryId: '1',
          tags: ['restart'],
        },
      }),
    );
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const wallet = { LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY, LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined };

    const first = await fundedSandbox();
    const paid = await runCli(args, home, { env: { ...first.env(), ...wallet } });
    expect(paid.code, paid.stdout + paid.stderr).toBe(0);
    await first.stop();

    const second = await fundedSandbox();
    try {
      const before = await usdc(second);
      const rerun = await runCli(args, home, { env: { ...second.env(), ...wallet } });
      expect(rerun.code, rerun.stdout).toBe(4);
      expect(rerun.json().error.code).toBe('journal_other_chain');
      expect(rerun.json().error.message).toMatch(/another chain 31337 instance .*restarted or replaced/);
      expect(rerun.json().error.hint).toMatch(/new clientRequestId .*--set-aside-stale/);
      expect(await usdc(second)).toBe(before);

      const fresh = await runCli([...args, '--set-aside-stale'], home, { env: { ...second.env(), ...wallet } });
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(fresh.stderr).toMatch(/belonged to another instance of chain 31337; it is kept as ask-[0-9a-f]{32}~other-chain-\d+/);
      expect(fresh.json()).toMatchObject({ status: 'submitted', resumed: false, operation: paid.json().operation });
      expect(before - (await usdc(second))).toBe(1_500_000n);
      // Both records are kept: the old one under its new name.
      const ids = withStore(home, (db) =>
        (db.prepare("SELECT id FROM operations WHERE kind = 'ask' ORDER BY created_at").all() as { id: string }[]).map((r) => r.id),
      );
      expect(ids).toEqual([expect.stringMatching(/~other-chain-/), paid.json().operation]);
    } finally {
      await second.stop();
    }
  });
});

describe('an ask that signed nothing before the chain restarted', () => {
  it('is of the new instance: stopped again once it paid there, its rerun resumes (no journal_other_chain), and it pays once', async () => {
    // The first run reaches the chain (its block 0 is recorded) and is stopped once planned, before any signature. On
    // the restarted chain the rerun signed there (the reservation, mined) and was stopped; its journal still named the
    // old instance's block 0, so the next rerun was told its transactions were another instance's, "nothing
    // journaled is on it" (journal_other_chain, exit 4) — and --set-aside-stale would have started afresh beside
    // what it had paid.
    const home = makeHome();
    const file = home.file(
      'ask.json',
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `restart-unsigned-${process.pid}-${Date.now()}`,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: 'Restart before signing',
          contextUrl: `https://example.com/restart/${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
          categoryId: '1',
          tags: ['restart'],
        },
      }),
    );
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const wallet = { LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY, LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined };

    const first = await fundedSandbox();
    try {
      const planned = await runCli(args, home, { env: { ...first.env(), ...wallet, LOOPSIGN_CRASH_AFTER: 'ask:planned' } });
      expect(planned.code, planned.stdout + planned.stderr).toBe(-1);
    } finally {
      await first.stop();
    }

    const second = await fundedSandbox();
    try {
      const before = await usdc(second);
      const reserved = await runCli(args, home, { env: { ...second.env(), ...wallet, LOOPSIGN_CRASH_AFTER: 'ask:mined:0' } });
      expect(reserved.code, reserved.stdout + reserved.stderr).toBe(-1);
      const rerun = await runCli(args, home, { env: { ...second.env(), ...wallet } });
      expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
      expect(rerun.json()).toMatchObject({ status: 'submitted' });
      expect(before - (await usdc(second))).toBe(1_500_000n);
    } finally {
      await second.stop();
    }
  });
});
